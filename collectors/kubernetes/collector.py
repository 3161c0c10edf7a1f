"""The live Kubernetes source, on the official ``kubernetes`` client's configuration and transport: pods, events,
nodes and last log lines.

Requests stay flat as experiments grow: pods come from server-side label selectors (one LIST per label key
tried, paginated), events from one LIST per namespace plus one LIST of node events, nodes from one LIST (or a
GET each when there are only a few), and only the logs of the containers that failed first are read, a few at
a time. Every payload is read raw and goes through the same pure parsers as a snapshot (collectors/kube_objects/parse.py),
so a live answer and a recorded one give the same timeline; events are kept page by page, only those about the
scope, so a namespace's 50,000 events are never all held. Requests go through collectors.kubernetes.api.KubeApi: the
client's ApiClient without its generated API classes, which cost more CPU to import than the collector spends.

Read-only by construction: KubeApi only GETs, on paths named after collectors.kubernetes.access.PERMISSIONS, and
deploy/base/rbac.yaml grants exactly those.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from whathappened.collectors.kube_objects.parse import (
    discover_from_objects,
    events_from_objects,
    in_window,
    parse_node,
    scope_event_objects,
)
from whathappened.collectors.kubernetes.access import (
    Call,
    Expired,
    retry_after,
    safe_server,
    status_error,
    transport_error,
)
from whathappened.collectors.kubernetes.api import (
    CONNECTIONS,
    JSON,
    LOG,
    METADATA_ONLY,
    KubeApi,
    Unanswered,
    build_api_client,
)
from whathappened.collectors.kubernetes.container_logs import failed_containers, finished_at, log_events
from whathappened.collectors.kubernetes.events import LeftPages, fetch_events, fetch_left
from whathappened.collectors.kubernetes.snapshot import LogTail, write_lists

from whathappened.config import KubernetesSettings, Settings
from whathappened.errors import SourceError, SourceForbidden, SourceTimeout
from whathappened.model import NodeInfo, Subject, TimelineEvent
from whathappened.scope import Discovery, Query, Scope

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

# Every LIST in pages of at most this many objects, the size the API server's own clients use: a 50,000-event
# namespace read in one page costs the server (and etcd) that page's whole memory at once.
MAX_PAGE = 500
NODE_GET_MAX = 3  # up to this many nodes, GET each instead of listing every node of the cluster
LOG_READERS = CONNECTIONS - 2  # log reads in flight: enough to hide round trips, few enough to spare the server
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
Params = Sequence[tuple[str, Any]]
__all__ = ["KubernetesCollector", "build_api_client", "create_collector"]


class KubernetesCollector:
    name = "kubernetes"

    def __init__(
        self,
        api_client: ApiClient,
        namespace: str = "default",
        settings: Settings | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.requests = 0
        self.detail = ""
        self.request_log: list[str] = []  # "list pods in namespace research: 200", for --debug (no secrets)
        self.namespace = namespace
        self._settings = settings or Settings()
        self._api = KubeApi(api_client)
        self._server = safe_server(self._api.host)
        self._counting = threading.Lock()  # logs are read from a few threads at once
        self._clock, self._sleep = clock, sleep
        self._deadline: float | None = None
        self._pods: dict[tuple[str, str], dict[str, Any]] = {}
        self._nodes: dict[str, dict[str, Any]] = {}
        self._events: list[Mapping[str, Any]] = []
        self._left: tuple[LeftPages, ...] = ()
        self._tails: list[LogTail] = []  # the container logs read, as served: a snapshot records them
        self._counts: tuple[int, int, str] = (0, 0, "")  # pods, nodes, the log reads' note: for ``detail``
        self._listed_nodes = False
        self._gone_nodes: set[str] = set()

    # --- the Collector protocol ---

    def discover(self, query: Query) -> Discovery:
        self._start()
        namespace = self._namespace(query)
        scoped = replace(query, namespace=namespace)
        candidates: tuple[str, ...] = ()
        if namespace is None:
            found = self._pods_by_labels(scoped)
        else:
            found, candidates = self._pods_in_namespace(scoped, namespace)
        discovery = discover_from_objects(found, scoped)
        self._pods = {p_key(o): o for o in found}
        nodes = self._fetch_nodes({p.node for p in discovery.pods if p.node})
        return Discovery(pods=discovery.pods, nodes=tuple(nodes), candidates=candidates or discovery.candidates)

    def collect(self, scope: Scope) -> list[TimelineEvent]:
        if self._deadline is None:
            self._start()
        self._fetch_nodes(set(scope.node_names))
        listed = fetch_events(scope, self._paged, archive=self._archive)
        self._events, self._left = scope_event_objects(listed.events, scope), listed.left  # one per uid
        wanted = {p.key for p in scope.pods}
        pods = [o for key, o in self._pods.items() if key in wanted]
        timeline = events_from_objects(pods, self._events, self._nodes.values(), scope, self.name)
        logs, log_note = self._failed_logs(pods, scope)
        nodes = [n for n in scope.node_names if n in self._nodes]
        self._counts = (len(pods), len(nodes), log_note)
        self.detail = self._summary()
        return timeline + logs

    def export_snapshot(self, folder: Path) -> None:
        """Write what was fetched as kubernetes/{pods,events,nodes}.json in kubectl's List shape, and the container
        logs read as kubernetes/logs/NAMESPACE/POD/CONTAINER[.previous].log."""
        write_lists(folder, list(self._pods.values()), self._events, list(self._nodes.values()), self._tails)

    # --- resolution ---

    def _namespace(self, query: Query) -> str | None:
        if query.namespace is not None:
            return query.namespace
        return None if self._settings.all_namespaces else self.namespace

    def _pods_in_namespace(self, query: Query, namespace: str) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
        """One metadata-only LIST picks the label key that wins (or the owners), then one selector LIST.

        Two requests whichever of the ten label keys matches, and exact first-key-wins semantics; the
        metadata of a namespace's pods is small, and the full pods still come through a server-side selector.
        """
        call, where = Call("list", "pods", namespace), {"namespace": namespace}
        listed = self._list(call, "pods", where, accept=METADATA_ONLY)
        metadata = [{"metadata": item.get("metadata") or {}} for item in listed]
        chosen = discover_from_objects(metadata, query)
        if not chosen.pods:
            self._check_namespace(namespace)
            return [], chosen.candidates
        key = next((k for k in query.label_keys if any(p.labels.get(k) == query.experiment for p in chosen.pods)), None)
        if key is not None:
            selector = [("labelSelector", f"{key}={query.experiment}")]
            return self._list(call, "pods", where, selector), chosen.candidates
        # Found through owner references only: no selector names them, so read the namespace's pods.
        wanted = {p.key for p in chosen.pods}
        everything = self._list(call, "pods", where)
        return [o for o in everything if p_key(o) in wanted], chosen.candidates

    def _pods_by_labels(self, query: Query) -> list[dict[str, Any]]:
        """All namespaces: one server-side selector LIST per label key, in order, until one matches."""
        value = query.experiment
        if len(value) > 63 or not _LABEL_VALUE.match(value):
            return []  # not a valid label value: no selector can match it
        for key in query.label_keys:
            found = self._list(Call("list", "pods"), "all-pods", None, [("labelSelector", f"{key}={value}")])
            if found:
                return found
        return []

    def _check_namespace(self, namespace: str) -> None:
        try:
            found = self._get_optional(Call("get", "namespaces"), "namespace", {"name": namespace})
        except SourceForbidden:
            return  # not allowed to look: the empty result stands on its own
        if found is None:
            raise SourceError(f"namespace {namespace} not found")

    # --- fetching ---

    def _fetch_nodes(self, names: set[str]) -> list[NodeInfo]:
        missing = {n for n in names if n not in self._nodes and n not in self._gone_nodes}
        if missing and not self._listed_nodes:
            if len(missing) <= NODE_GET_MAX:
                for name in sorted(missing):
                    node = self._get_optional(Call("get", "nodes"), "node", {"name": name})
                    if node is None:
                        self._gone_nodes.add(name)  # deleted (spot reclaim, scale-down): do not ask again
                    else:
                        self._nodes[name] = node
            else:
                for node in self._list(Call("list", "nodes"), "nodes"):
                    self._nodes[node["metadata"]["name"]] = node
                self._listed_nodes = True
        return [parse_node(self._nodes[n]) for n in sorted(names) if n in self._nodes]

    @property
    def _archive(self) -> bool:
        """Whether an event archive is configured (read by the log source alongside)."""
        return bool(self._settings.elasticsearch.url or self._settings.elasticsearch.cloud_id)

    @property
    def left_to_archive(self) -> bool:
        """Whether the last ``collect`` left a namespace's further event pages to the event archive."""
        return bool(self._left)

    def collect_left(self, scope: Scope) -> list[TimelineEvent]:
        """The event pages ``collect`` left to the archive, read after all (the archive had none of the scope's
        events): the timeline events of the Events not seen before."""
        self.detail += "; the namespace's further event pages unread (no archived event of the experiment)"
        known = len(self._events)  # all kept again, first: one of each event seen twice
        self._events = scope_event_objects([*self._events, *fetch_left(self._left, scope, self._paged)], scope)
        self._left = ()
        self.detail = self._summary()
        return events_from_objects((), self._events[known:], (), scope, self.name)

    def _summary(self) -> str:
        pods, nodes, log_note = self._counts
        left = ", ".join(sorted({pages.namespace for pages in self._left}))
        archived = f" (further event pages of {left} left to the event archive)" if left else ""
        return f"{pods} pods, {len(self._events)} events{archived}, {nodes} nodes{log_note}"

    def _failed_logs(self, pods: list[dict[str, Any]], scope: Scope) -> tuple[list[TimelineEvent], str]:
        """The last lines of the containers that failed first: where a failure began is in the earliest ends,
        and a 512-rank job whose ranks all died must not cost 512 log reads."""
        ended = sorted(
            ((finished_at(obj, container, previous), n, obj, container, previous)
             for n, obj in enumerate(pods) for container, previous in failed_containers(obj)),
            key=lambda item: (item[0], item[1]),
        )  # fmt: skip
        chosen = [(obj, container, previous) for _, _, obj, container, previous in ended[: self._kube.log_containers]]
        self._tails = []
        lines, note = self._read_logs(chosen)
        return [e for e in lines if in_window(scope, e)], note

    def _read_logs(self, chosen: Sequence[tuple[Mapping[str, Any], str, bool]]) -> tuple[list[TimelineEvent], str]:
        """The containers' lines in the order asked, read LOG_READERS at a time; a 403 ends the reading."""
        lines: list[TimelineEvent] = []
        if not chosen:
            return lines, ""
        pool = ThreadPoolExecutor(min(LOG_READERS, len(chosen)), thread_name_prefix="kube-logs")
        try:
            for future in [pool.submit(self._log_or_forbidden, *item) for item in chosen]:
                found = future.result()
                if isinstance(found, SourceForbidden):
                    return lines, f"; logs skipped: {found}"
                lines += found
            return lines, ""
        finally:
            pool.shutdown(wait=True, cancel_futures=True)  # after a 403 or a timeout, reads not started are not made

    def _log_or_forbidden(
        self, obj: Mapping[str, Any], container: str, previous: bool
    ) -> list[TimelineEvent] | SourceForbidden:
        try:
            return self._log(obj, container, previous)
        except SourceForbidden as error:
            return error

    def _log(self, obj: Mapping[str, Any], container: str, previous: bool) -> list[TimelineEvent]:
        meta = obj["metadata"]
        call = Call("get", "pods/log", meta["namespace"])
        params = [
            ("container", container),
            ("previous", previous),
            ("tailLines", self._kube.log_lines),
            ("timestamps", True),
        ]
        where = {"namespace": meta["namespace"], "name": meta["name"]}
        raw = self._get_optional(call, "pod-log", where, params, accept=LOG, decode=False)
        if raw:
            self._tails.append(LogTail(meta["namespace"], meta["name"], container, previous, raw))
        subject = Subject(meta["namespace"], meta["name"], container, (obj.get("spec") or {}).get("nodeName"))
        return log_events(raw or b"", subject, previous, self.name)

    # --- requests ---

    @property
    def _kube(self) -> KubernetesSettings:
        return self._settings.kubernetes

    def _start(self) -> None:
        self._deadline = self._clock() + self._settings.deadline_s

    def _list(
        self,
        call: Call,
        endpoint: str,
        where: Mapping[str, str] | None = None,
        params: Params = (),
        accept: str = JSON,
        keep: Callable[[Mapping[str, Any]], bool] | None = None,
    ) -> list[Any]:
        """Every item (that ``keep`` keeps), following continue tokens; a 410 on a continue token starts again."""
        return self._paged(call, endpoint, where, params, accept, keep)[0]

    def _paged(
        self,
        call: Call,
        endpoint: str,
        where: Mapping[str, str] | None = None,
        params: Params = (),
        accept: str = JSON,
        keep: Callable[[Mapping[str, Any]], bool] | None = None,
        start: str | None = None,
        pages: int | None = None,
    ) -> tuple[list[Any], str | None]:
        """The items (that ``keep`` keeps) from the ``start`` continue token on, ``pages`` pages at the most, and
        the token to go on from (None at the end); a 410 on a continue token starts the list again."""
        items: list[Any] = []
        token, asked, restarts = start, 0, 0
        while True:
            paging = [*params, ("limit", min(self._kube.page_size, MAX_PAGE)), ("continue", token)]
            try:
                body = self._request(call, endpoint, where, paging, accept)
            except Expired:
                if token is None or restarts >= 3:
                    raise SourceError(f"the list expired again and again while trying to {call.describe()}") from None
                items, token, asked, restarts = [], None, 0, restarts + 1
                continue
            if not isinstance(body, dict) or not isinstance(body.get("items", False), list | None):
                # a proxy's error page or a truncated answer that still parsed: not an empty list
                raise SourceError(f"the API server's answer is not a list while trying to {call.describe()}")
            found = body.get("items") or []
            items += found if keep is None else [o for o in found if isinstance(o, dict) and keep(o)]
            token = (body.get("metadata") or {}).get("continue") or None
            asked += 1
            if token is None or (pages is not None and asked >= pages):
                return items, token

    def _get_optional(
        self,
        call: Call,
        endpoint: str,
        where: Mapping[str, str],
        params: Params = (),
        accept: str = JSON,
        decode: bool = True,
    ) -> Any:
        """A GET whose 404 (or 400 for a log that is gone) means simply 'not there any more'."""
        try:
            return self._request(call, endpoint, where, params, accept, decode)
        except _Absent:
            return None

    def _request(
        self,
        call: Call,
        endpoint: str,
        where: Mapping[str, str] | None,
        params: Params,
        accept: str = JSON,
        decode: bool = True,
    ) -> Any:
        while True:
            remaining = (self._deadline or 0.0) - self._clock()
            if remaining <= 0:
                raise SourceTimeout(f"deadline reached before trying to {call.describe()}")
            self._count()
            try:
                answer = self._api.get(endpoint, where, params, accept, timeout=(min(remaining, 10.0), remaining))
            except Unanswered as failure:
                self._note(f"{call.describe()}: {failure.kind}")
                raise transport_error(failure.kind, call, self._server) from None
            self._note(f"{call.describe()}: {answer.status}")
            if 200 <= answer.status < 300:
                return _json(answer.body, call) if decode else answer.body
            wait = retry_after(answer.headers)
            if answer.status == 429 and wait < (self._deadline or 0.0) - self._clock():
                self._sleep(wait)  # the server asked us to wait this long
                continue
            if (
                call.verb == "get"
                and answer.status in (400, 404)
                and call.resource in ("nodes", "namespaces", "pods/log")
            ):
                raise _Absent()
            raise status_error(answer.status, call)

    def _count(self) -> None:
        with self._counting:
            self.requests += 1

    def _note(self, line: str) -> None:
        with self._counting:
            self.request_log.append(line)


def _json(body: bytes, call: Call) -> Any:
    try:
        return json.loads(body)
    except ValueError:  # truncated, or not JSON at all (an HTML error page from a proxy)
        raise SourceError(f"the API server's answer is not JSON while trying to {call.describe()}") from None


class _Absent(Exception):
    """The object asked for does not exist (any more)."""


def p_key(obj: Mapping[str, Any]) -> tuple[str, str]:
    return (obj["metadata"].get("namespace", ""), obj["metadata"].get("name", ""))


def create_collector(settings: Settings, utilization: bool = True) -> KubernetesCollector:
    """The collector for these settings (the source registry's factory; ``utilization`` is Prometheus's)."""
    api_client, namespace = build_api_client(settings.kubernetes, settings.verify_tls)
    return KubernetesCollector(api_client, namespace, settings)
