"""Helpers for tests: the project's own scenarios, free loopback ports, and server processes with readiness
checks."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import yaml

REPO = Path(__file__).resolve().parents[1]
# The tests read only what the repository holds: the incidents the project's generator wrote. The shared
# scenarios beside the repository are the acceptance suite's (acceptance/shared.py), never the tests'.
SCENARIOS_DIR = REPO / "tests" / "scenarios"


@dataclass(frozen=True)
class Scenario:
    name: str
    path: Path
    experiment: str
    namespace: str
    label_key: str
    start: datetime
    end: datetime
    captured_at: datetime
    expected: tuple[dict[str, Any], ...]

    @property
    def key(self) -> str:
        """A name unique across the project's scenarios and others of the same name elsewhere (the shared ones,
        incidents a test wrote), in lowercase as index names must be: servers and indices are cached by it."""
        key = self.name if self.path.parent == SCENARIOS_DIR else f"{self.path.parent.name}-{self.name}"
        return key.lower()

    @property
    def window_args(self) -> list[str]:
        return [
            "--start",
            self.start.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "--end",
            self.end.strftime("%Y-%m-%dT%H:%M:%SZ"),
        ]


def _time(value: Any) -> datetime:
    from whathappened.timeutils import parse_time

    return parse_time(str(value))


def load_scenario(path: Path) -> Scenario:
    spec = yaml.safe_load((path / "scenario.yaml").read_text())
    return Scenario(
        name=spec["name"],
        path=path,
        experiment=spec["experiment"],
        namespace=spec["namespace"],
        label_key=spec["label_key"],
        start=_time(spec["window"]["start"]),
        end=_time(spec["window"]["end"]),
        captured_at=_time(spec["captured_at"]),
        expected=tuple(spec.get("expected") or ()),
    )


def all_scenarios(root: Path = SCENARIOS_DIR) -> list[Scenario]:
    """Every scenario in a folder (the project's own by default); a missing folder is a failure, not an empty list."""
    if not root.is_dir():
        raise FileNotFoundError(f"scenarios not found at {root}")
    return [load_scenario(p) for p in sorted(root.iterdir()) if (p / "scenario.yaml").is_file()]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def require_binary(name: str) -> str:
    """The path of a server binary; a missing one fails the test (make test installs them)."""
    path = shutil.which(name)
    if path is None:
        raise RuntimeError(f"{name} is not installed: run `make test`, which installs it")
    return path


def wait_until_ready(url: str, process: subprocess.Popen[bytes] | None = None, timeout: float = 60.0) -> None:
    """Poll a readiness URL until it answers 2xx; fail early if the process died."""
    deadline = time.monotonic() + timeout
    last: str = ""
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode} before {url} was ready")
        try:
            response = httpx.get(url, timeout=2.0)
            if response.status_code < 300:
                return
            last = f"HTTP {response.status_code}"
        except httpx.HTTPError as exc:
            last = type(exc).__name__
        time.sleep(0.05)  # readiness poll interval, not a wait for an effect
    raise TimeoutError(f"{url} not ready after {timeout}s ({last})")


@contextlib.contextmanager
def server_process(
    args: Sequence[str], ready_url: str, log: Path, timeout: float = 60.0
) -> Iterator[subprocess.Popen[bytes]]:
    """Start a server, wait for its readiness URL, and stop it afterwards."""
    with log.open("wb") as out:
        process = subprocess.Popen(list(args), stdout=out, stderr=subprocess.STDOUT)
        try:
            try:
                wait_until_ready(ready_url, process, timeout)
            except Exception as exc:
                raise RuntimeError(f"{exc}; log:\n{log.read_text(errors='replace')[-2000:]}") from exc
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextlib.contextmanager
def http_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A threaded loopback HTTP server for a test double or a fault server; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.handle_error = _quiet  # type: ignore[method-assign]  # a client hanging up mid-answer is expected here
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _quiet(request: object, client_address: object) -> None:
    return
