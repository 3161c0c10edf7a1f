"""Failures are data: every way a Prometheus-compatible server can fail becomes a contract status, never a crash.

A small local HTTP server answers as a failing Prometheus would (the real servers are used everywhere else);
nothing but 127.0.0.1 is contacted. Messages carry the server's own error text and never a secret.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from whathappened.collectors.prometheus.collector import PrometheusCollector

from tests.support import free_port
from whathappened.config import PrometheusSettings, Secret
from whathappened.errors import SourceError, SourceForbidden, SourceTimeout, SourceUnreachable
from whathappened.model import PodInfo, Window
from whathappened.scope import Query, Scope

WINDOW = Window(datetime(2026, 11, 20, 6, tzinfo=UTC), datetime(2026, 11, 20, 8, tzinfo=UTC))
QUERY = Query("llama-70b-run7", "research", WINDOW)
SCOPE = Scope(QUERY, (PodInfo(name="w-0", namespace="research", node="n1"),))
TOKEN = "s3cr3t-token-value"


class Stub(BaseHTTPRequestHandler):
    """Answers every request with the current ``plan``: (status, content type, body, delay seconds)."""

    plan: ClassVar[tuple[int, str, bytes, float]] = (200, "application/json", b"{}", 0.0)
    seen: ClassVar[list[dict[str, str]]] = []

    def _answer(self) -> None:
        Stub.seen.append({k.lower(): v for k, v in self.headers.items()} | {"path": self.path})
        status, kind, body, delay = Stub.plan
        if status == 200 and self.path.startswith(("/api/v1/label/", "/api/v1/series")):
            body = b'{"status":"success","data":[]}'
        if delay:
            time.sleep(delay)
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        # a stalled answer the client gave up on, as the test means it to: nothing to print
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def stub() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def answer(status: int, body: object, kind: str = "application/json", delay: float = 0.0) -> None:
    Stub.plan = (status, kind, body if isinstance(body, bytes) else json.dumps(body).encode(), delay)
    Stub.seen = []


def collector(url: str, **settings: object) -> PrometheusCollector:
    return PrometheusCollector(PrometheusSettings(url=url, **settings), timeout_s=1.0)  # type: ignore[arg-type]


def test_nothing_listening_is_unreachable() -> None:
    with pytest.raises(SourceUnreachable, match="cannot connect"):
        collector(f"http://127.0.0.1:{free_port()}").discover(QUERY)


def test_a_slow_server_is_a_timeout(stub: str) -> None:
    answer(200, {"status": "success", "data": {"resultType": "vector", "result": []}}, delay=2.0)
    with pytest.raises(SourceTimeout) as caught:
        collector(stub).discover(QUERY)
    assert caught.value.status == "timeout"


def test_bad_query_carries_the_servers_own_error(stub: str) -> None:
    answer(400, {"status": "error", "errorType": "bad_data", "error": "1:12: parse error: unexpected character"})
    with pytest.raises(SourceError) as caught:
        collector(stub).discover(QUERY)
    assert caught.value.status == "failed"
    assert "HTTP 400: bad_data: 1:12: parse error: unexpected character" in str(caught.value)


def test_server_errors_keep_their_text_after_one_retry(stub: str) -> None:
    answer(503, b"Service Unavailable: too many queries in flight", kind="text/plain")
    with pytest.raises(SourceError, match="HTTP 503: Service Unavailable: too many queries") as caught:
        collector(stub).discover(QUERY)
    assert caught.value.status == "failed"
    paths = [seen["path"] for seen in Stub.seen]
    assert all(paths.count(path) == 2 for path in paths)  # each query once more, then the error


@pytest.mark.parametrize("status", [401, 403])
def test_refused_credentials_are_forbidden(stub: str, status: int) -> None:
    answer(status, b"Unauthorized", kind="text/plain")
    with pytest.raises(SourceForbidden) as caught:
        collector(stub).discover(QUERY)
    assert caught.value.status == "forbidden"


def test_not_the_query_api(stub: str) -> None:
    answer(200, b"<html>a login page</html>", kind="text/html")
    with pytest.raises(SourceError, match="not the query API's JSON"):
        collector(stub).discover(QUERY)


def test_empty_results_are_not_an_error(stub: str) -> None:
    answer(200, {"status": "success", "data": {"resultType": "vector", "result": []}})
    source = collector(stub)
    assert source.discover(QUERY).pods == ()
    assert list(source.collect(SCOPE)) == []
    assert "no dcgm-exporter series" in source.detail
    assert source.requests == len(Stub.seen) > 0


def test_partial_responses_and_nan_values_are_reported_not_fatal(stub: str) -> None:
    result = [{"metric": {"Hostname": "n1", "modelName": "NVIDIA H100 80GB HBM3"}, "value": [1795161600, "NaN"]}]
    body = {
        "status": "success",
        "warnings": ["store-gateway-2 unavailable: partial response"],
        "data": {"resultType": "vector", "result": result},
    }
    answer(200, body)
    source = collector(stub)
    assert list(source.collect(SCOPE)) == []
    assert "partial response: store-gateway-2 unavailable" in source.detail


def test_credentials_are_sent_and_never_shown(stub: str, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    answer(500, {"status": "error", "errorType": "internal", "error": "boom"})
    source = collector(
        stub.replace("http://", "http://admin:hunter2@"),
        bearer_token_file=str(token_file),
        headers={"X-Scope-OrgID": "ml-team"},
    )
    with pytest.raises(SourceError) as caught:
        source.discover(QUERY)
    message = str(caught.value)
    assert TOKEN not in message and "hunter2" not in message and "admin" not in message
    assert Stub.seen[0]["authorization"] == f"Bearer {TOKEN}"
    assert Stub.seen[0]["x-scope-orgid"] == "ml-team"


def test_basic_auth(stub: str) -> None:
    answer(200, {"status": "success", "data": {"resultType": "vector", "result": []}})
    collector(stub, username="reader", password=Secret("pa55")).discover(QUERY)
    assert Stub.seen[0]["authorization"] == "Basic cmVhZGVyOnBhNTU="  # reader:pa55


def test_tls_is_verified_by_default(stub: str) -> None:
    with pytest.raises(SourceUnreachable, match="TLS"):
        collector(stub.replace("http://", "https://")).discover(QUERY)


def test_a_missing_ca_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"CA file .*missing\.pem does not exist"):
        collector("https://127.0.0.1:1", ca_file=str(tmp_path / "missing.pem"))


def test_a_custom_ca_is_used_for_verification(stub: str, tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n")
    with pytest.raises(SourceUnreachable, match="TLS"):  # the given CA is read (and here, refused)
        collector(stub.replace("http://", "https://"), ca_file=str(ca)).discover(QUERY)
