"""A Kubernetes API server test double: real HTTP on loopback, serving a Store read-only (or, started writable, taking
the watch's two opt-in writes: creating an Event, merge-patching a training job; writes.py).

Enough of the API for kubectl and the official Python client: discovery (/version, /api, /apis, /api/v1,
/apis/events.k8s.io/v1), list/get of pods, events (core/v1 and events.k8s.io/v1), nodes and namespaces,
pods/log, label and field selectors, limit/continue pagination, resourceVersion, and WATCH with bookmarks and
410 (watch.py; the test changes the store through ``change``).
Every request is recorded (method, path, query) so tests can hold a collector to its request budget and to
read-only verbs; writes answer 405 unless the double is writable. Faults (401/403/404/429 with Retry-After/410 on continue/5xx/slow/a
garbled 200 body) are injected per path with ``faults.add``.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.doubles.kube.api import (
    GONE_MESSAGE,
    KINDS,
    ApiError,
    Route,
    discovery,
    encode_list,
    get_object,
    list_objects,
    matcher,
    metadata_only,
    pod_log,
    route,
    status_body,
)
from tests.doubles.kube.store import Store
from tests.doubles.kube.tables import as_table
from tests.doubles.kube.watch import Change, ChangeLog, stream
from tests.doubles.kube.writes import body_of, new_event, patched


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: Mapping[str, str]
    status: int
    authorization: str | None = None

    @property
    def is_log(self) -> bool:
        return self.path.endswith("/log")


@dataclass
class Fault:
    status: int | None = None  # None: only delay
    path: str = ""  # substring of the request path
    query: str = ""  # substring of the raw query string
    times: int = 1  # how many requests it hits; -1 for all
    delay_s: float = 0.0
    retry_after: int | None = None
    on_continue: bool = False  # only requests that carry a continue token
    message: str = ""
    body: bytes | None = None  # answer 200 with these bytes instead (a truncated or garbled answer)

    def matches(self, path: str, raw_query: str, params: Mapping[str, str]) -> bool:
        if self.times == 0 or self.path not in path or self.query not in raw_query:
            return False
        return not self.on_continue or bool(params.get("continue"))


@dataclass
class Faults:
    rules: list[Fault] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, **kwargs: Any) -> Fault:
        fault = Fault(**kwargs)
        with self.lock:
            self.rules.append(fault)
        return fault

    def clear(self) -> None:
        with self.lock:
            self.rules.clear()

    def take(self, path: str, raw_query: str, params: Mapping[str, str]) -> Fault | None:
        with self.lock:
            for fault in self.rules:
                if fault.matches(path, raw_query, params):
                    if fault.times > 0:
                        fault.times -= 1
                    return fault
        return None


def _fault_error(fault: Fault, path: str) -> ApiError:
    code = fault.status or 500
    headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
    default = {
        401: "Unauthorized",
        403: f'forbidden: User "system:serviceaccount:research:whathappened" cannot get path "{path}"',
        410: GONE_MESSAGE,
        429: "Too many requests, please try again later.",
    }.get(code, "Internal error occurred: injected fault")
    return ApiError(code, fault.message or default, headers)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up between keep-alive requests is normal; anything else is a double bug.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class KubeDouble:
    """Start with ``start()`` (or as a context manager); ``url`` is the API server address."""

    def __init__(self, store: Store, token: str | None = None, writable: bool = False) -> None:
        self.store = store
        self.token = token  # when set, requests without "Bearer <token>" get 401
        self.writable = writable  # take POST of events and PATCH of owners (writes.py); else every write is 405
        self.faults = Faults()
        self.requests: list[Request] = []
        self.in_flight = 0
        self.peak_in_flight = 0  # the most requests served at once since the last reset
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.changes = ChangeLog()

    @property
    def url(self) -> str:
        assert self._server is not None, "double not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> KubeDouble:
        self.store.warm()
        handler = type("Handler", (_Handler,), {"double": self})
        self._server = _Server(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="kube-double", daemon=True
        )
        self._thread.start()
        return self

    def change(self, kind: str, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """A change to the store (ADDED, MODIFIED, DELETED), streamed to every watch of its list."""
        with self.changes.cond:
            stored = self.store.apply(kind, resource, obj)
            version = int(stored["metadata"]["resourceVersion"])
            self.changes.changes.append(Change(version, kind, resource, stored))
            self.changes.cond.notify_all()
        return stored

    def compact(self) -> None:
        """Forget the changes so far: a watch from an older resourceVersion is answered 410 Expired."""
        with self.changes.cond:
            self.changes.compacted = int(self.store.resource_version)

    def bookmark(self) -> None:
        """Every open watch that allows bookmarks sends one now."""
        with self.changes.cond:
            self.changes.bookmarks += 1
            self.changes.cond.notify_all()

    def drop_watches(self) -> None:
        """End every open watch stream mid-way."""
        with self.changes.cond:
            self.changes.drops += 1
            self.changes.open_at_drop = self.changes.opened
            self.changes.cond.notify_all()

    def stop(self) -> None:
        with self.changes.cond:
            self.changes.closed = True
            self.changes.cond.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> KubeDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reset(self) -> None:
        """Forget recorded requests and armed faults (between tests sharing one double)."""
        with self._lock:
            self.requests.clear()
            self.peak_in_flight = 0
        self.faults.clear()
        self.token = None

    def arrived(self, change: int) -> None:
        with self._lock:
            self.in_flight += change
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def api_requests(self) -> list[Request]:
        """Recorded requests other than logs and discovery."""
        with self._lock:
            return [r for r in self.requests if not r.is_log and route(r.path) is not None]


class _Handler(BaseHTTPRequestHandler):
    double: KubeDouble
    protocol_version = "HTTP/1.1"
    # One buffered write per response and no Nagle: otherwise every keep-alive answer waits on delayed ACKs.
    wbufsize = 1 << 16
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the request log lives in double.requests

    def do_GET(self) -> None:
        split = urlsplit(self.path)
        params = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        self.double.arrived(1)
        try:
            status = self._serve(split.path, split.query, params)
        except ApiError as error:
            status = error.code
            self._json(error.code, status_body(error.code, str(error)), error.headers)
        finally:
            self.double.arrived(-1)
        if not (status == 200 and params.get("watch") in ("true", "1")):  # a watch is recorded as it opens
            self.double.record(Request("GET", split.path, params, status, self.headers.get("Authorization")))

    def _write(self) -> None:
        split = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        params = {k: v[-1] for k, v in parse_qs(split.query).items()}
        self.double.arrived(1)
        try:
            status = self._take(split.path, split.query, params, raw)
        except ApiError as error:
            status = error.code
            self._json(error.code, status_body(error.code, str(error)), error.headers)
        finally:
            self.double.arrived(-1)
        self.double.record(Request(self.command, split.path, params, status, self.headers.get("Authorization")))

    do_POST = do_PUT = do_PATCH = do_DELETE = _write

    def _take(self, path: str, raw_query: str, params: Mapping[str, str], raw: bytes) -> int:
        if not self.double.writable:
            raise ApiError(405, "the test double is read-only")
        answered = self._checked(path, raw_query, params)
        if answered is not None:
            return answered
        r = route(path)
        if r is None:
            raise ApiError(404, "the server could not find the requested resource")
        if self.command == "POST":
            stored = self.double.change("ADDED", "events", new_event(self.double.store, r, body_of(raw)))
            return self._json(201, stored)
        if self.command == "PATCH":
            content_type = self.headers.get("Content-Type") or ""
            result = patched(self.double.store, r, content_type, body_of(raw))
            return self._json(200, self.double.change("MODIFIED", r.plural, result))
        raise ApiError(405, "the test double takes writes only as events it may create and owners it may patch")

    def _checked(self, path: str, raw_query: str, params: Mapping[str, str]) -> int | None:
        """An armed fault and the bearer token, before any request is served; the status when a fault answered."""
        fault = self.double.faults.take(path, raw_query, params)
        if fault is not None:
            time.sleep(fault.delay_s)  # a slow answer is the fault being simulated
            if fault.status is not None:
                raise _fault_error(fault, path)
            if fault.body is not None:
                return self._send(200, "application/json", fault.body)
        token = self.double.token
        if token is not None and self.headers.get("Authorization") != f"Bearer {token}":
            raise ApiError(401, "Unauthorized")
        return None

    def _serve(self, path: str, raw_query: str, params: Mapping[str, str]) -> int:
        answered = self._checked(path, raw_query, params)
        if answered is not None:
            return answered
        host = f"{self.server.server_address[0]}:{self.server.server_address[1]}"
        doc = discovery(path, host)
        if doc is not None:
            return self._json(200, doc)
        r = route(path)
        if r is None:
            raise ApiError(404, "the server could not find the requested resource")
        if r.subresource == "log" and r.resource == "pods":
            return self._text(200, pod_log(self.double.store, r, params))
        if r.subresource is not None:
            raise ApiError(404, "the server could not find the requested resource")
        accept = self.headers.get("Accept") or ""
        if r.name is not None:
            found = get_object(self.double.store, r)
            single = {"kind": f"{found.get('kind', '')}List", "metadata": {}, "items": [found]}
            table = as_table(single) if "as=Table" in accept else None
            return self._json(200, table or found)
        if params.get("watch") in ("true", "1"):
            if r.resource not in KINDS or r.group not in ("", "events.k8s.io"):
                raise ApiError(405, "the test double watches only pods, events, nodes and namespaces")
            return self._watch(r, params)
        listing = list_objects(self.double.store, r, params)
        if "as=PartialObjectMetadataList" in accept:
            return self._json(200, metadata_only(listing))
        table = as_table(listing) if "as=Table" in accept else None
        if table is not None:
            return self._json(200, table)
        return self._send(200, "application/json", encode_list(listing, self.double.store.encoded))

    def _json(self, code: int, body: Any, headers: Mapping[str, str] | None = None) -> int:
        return self._send(code, "application/json", json.dumps(body).encode(), headers)

    def _text(self, code: int, text: str) -> int:
        return self._send(code, "text/plain", text.encode())

    def _send(self, code: int, content_type: str, data: bytes, headers: Mapping[str, str] | None = None) -> int:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        return code

    def _watch(self, r: Route, params: Mapping[str, str]) -> int:
        """A chunked stream of watch events (watch.py); it ends with the watch, and so does the connection."""
        matches = matcher(r, params)
        store = self.double.store

        def current() -> tuple[int, list[Mapping[str, Any]]]:
            listed = list_objects(store, r, {k: v for k, v in params.items() if k not in ("limit", "continue")})
            return int(store.resource_version), listed["items"]

        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        path = urlsplit(self.path).path
        self.double.record(Request("GET", path, dict(params), 200, self.headers.get("Authorization")))

        def write(data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        try:
            stream(self.double.changes, write, current, r.resource, matches, params, KINDS[r.resource])
            write(b"")  # the last chunk
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client hung up: its watch is over
        return 200
