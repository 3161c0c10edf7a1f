"""The exporter's HTTP endpoint: ``/metrics`` (Prometheus or OpenMetrics text, by the Accept header) and ``/healthz``.

prometheus_client's own server answers every path with metrics; a liveness probe needs a distinct ``/healthz``,
so this is a small threading server around the same encoders. ``/healthz`` reports whether the poll loop is
alive, not whether the cloud answers: a metadata outage must show in the metrics, not restart the pod.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import REGISTRY, CollectorRegistry

Health = Callable[[], tuple[bool, str]]


def _always_healthy() -> tuple[bool, str]:
    return True, "ok"


def _handler(registry: CollectorRegistry, health: Health) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "whathappened-exporter"
        protocol_version = "HTTP/1.1"  # keep-alive: Prometheus reuses its connection between scrapes
        disable_nagle_algorithm = True  # headers and body go out in two writes; Nagle would hold the body 40 ms

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                encoder, content_type = choose_encoder(self.headers.get("Accept", ""))
                self._send(200, content_type, encoder(registry))
            elif path == "/healthz":
                ok, text = health()
                self._send(200 if ok else 503, "text/plain; charset=utf-8", (text + "\n").encode())
            else:
                self._send(404, "text/plain; charset=utf-8", b"not found: try /metrics or /healthz\n")

        def _send(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return  # one line per scrape would drown the log that matters

    return Handler


class MetricsServer:
    """Serves in a daemon thread; ``port`` is the bound port (pass 0 to get a free one)."""

    def __init__(
        self,
        port: int,
        host: str = "0.0.0.0",
        registry: CollectorRegistry = REGISTRY,
        health: Health = _always_healthy,
    ) -> None:
        self._httpd = ThreadingHTTPServer((host, port), _handler(registry, health))
        self._httpd.daemon_threads = True
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="metrics-http", daemon=True)

    def start(self) -> MetricsServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():  # shutdown() waits for serve_forever, which never ran otherwise
            self._httpd.shutdown()
        self._httpd.server_close()
