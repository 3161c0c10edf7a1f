"""Fault injection end to end: each source down, stalled, refusing, rate-limiting, lying or flooding.

The installed CLI must still make its report from the other sources, within its deadline plus a second,
with exit 3, the right status for the faulty source, and never a traceback or a secret.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.acceptance import BIN, run_cli, scenario_args
from tests.doubles.faulty import Faulty
from tests.fixtures.kube import TOKEN, write_kubeconfig
from tests.support import SCENARIOS_DIR, free_port, load_scenario

SCENARIO = load_scenario(SCENARIOS_DIR / "maintenance-eviction")
DEADLINE_S = 12.0  # generous: the other sources must answer within it on a loaded 2-core machine
EXPECTED = {
    "stall": {"timeout"},
    "status-401": {"forbidden"},
    "status-403": {"forbidden"},
    "status-429": {"failed", "timeout"},
    "status-500": {"failed"},
    "truncated": {"failed", "unreachable"},  # the connection breaks mid-answer
    "malformed": {"failed"},
    "huge": {"failed", "ok"},  # 32 MiB of well-formed JSON that holds nothing: read, found empty, not fatal
    "lie": {"failed", "ok"},  # well-formed nonsense may be read as "nothing here", which is not a crash
    "refused": {"unreachable"},
}


@pytest.fixture
def live_args(kube_double, prometheus_servers, search_server):
    kube = kube_double(SCENARIO)
    indices = search_server.load_scenario(SCENARIO)
    return {
        "kubernetes": ["--kubeconfig", str(kube.kubeconfig)],
        "prometheus": ["--prometheus-url", prometheus_servers.url_for(SCENARIO.name)],
        "logs": indices.arguments(search_server.url),
    }


def _bad_target(source: str, mode: str, faulty: Faulty, tmp_path: Path) -> list[str]:
    url = f"http://127.0.0.1:{free_port()}" if mode == "refused" else faulty.url(mode)
    if source == "kubernetes":
        return ["--kubeconfig", str(write_kubeconfig(tmp_path / "kubeconfig", url, SCENARIO.namespace))]
    if source == "prometheus":
        return ["--prometheus-url", url]
    return ["--elasticsearch-url", url]


def _timed(args: list[str]) -> tuple[float, int, dict[str, Any] | None, str]:
    started = time.monotonic()
    code, document, stderr = run_cli(*args)
    return time.monotonic() - started, code, document, stderr


@pytest.fixture(scope="module")
def startup_s() -> float:
    """What a run costs with no waiting at all: imports, a failed connect per source, rendering."""
    dead = f"http://127.0.0.1:{free_port()}"
    started = time.monotonic()
    run_cli(*scenario_args(SCENARIO), "--prometheus-url", dead, "--elasticsearch-url", dead, "--without", "kubernetes")
    return time.monotonic() - started


@pytest.mark.parametrize("mode", list(EXPECTED))
@pytest.mark.parametrize("source", ["kubernetes", "prometheus", "logs"])
def test_a_faulty_source_never_stops_the_report(source, mode, live_args, faulty, tmp_path, startup_s):
    args = [*scenario_args(SCENARIO), "--deadline", f"{DEADLINE_S}s"]
    for name, given in live_args.items():
        args += _bad_target(name, mode, faulty, tmp_path) if name == source else given
    elapsed, code, document, stderr = _timed(args)
    assert "Traceback" not in stderr
    assert document is not None, stderr
    status = {s["name"]: s["status"] for s in document["sources"]}
    assert status[source] in EXPECTED[mode], (status, stderr)
    assert code == (0 if status[source] == "ok" else 3)
    for other in set(live_args) - {source}:
        assert status[other] == "ok", status
    assert document["pods"], "the other sources still name the experiment's pods"
    assert elapsed <= DEADLINE_S + 1.0 + startup_s + 1.0, f"{elapsed:.1f}s with a {DEADLINE_S}s deadline"


def test_kubernetes_429_storm_and_403_on_events(kube_double, live_args):
    kube = kube_double(SCENARIO)
    kube.faults.add(path="/events", status=403, times=-1)
    kube.faults.add(path="/pods", status=429, retry_after=1, times=2)
    code, document, stderr = run_cli(
        *scenario_args(SCENARIO),
        *live_args["kubernetes"],
        *live_args["prometheus"],
        *live_args["logs"],
        "--deadline",
        f"{DEADLINE_S}s",
    )
    assert document is not None, stderr
    kubernetes = next(s for s in document["sources"] if s["name"] == "kubernetes")
    assert kubernetes["status"] == "forbidden"
    assert "events" in kubernetes["detail"]  # names the missing permission
    assert code == 3


def test_secrets_never_appear_in_any_output(live_args, search_server, tmp_path):
    es_password = "Es-Pa55word-9d1f"
    prom_token = "prom-bearer-7Q2x9w"
    api_key = "ZXMtYXBpLWtleS1zZWNyZXQ="
    user_url = search_server.url.replace("http://", f"http://elastic:{es_password}@")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "WHATHAPPENED_PROMETHEUS_TOKEN": prom_token,
        "WHATHAPPENED_ELASTICSEARCH_API_KEY": api_key,
    }
    dead = f"http://elastic:{es_password}@127.0.0.1:{free_port()}"
    indices = live_args["logs"][2:]
    runs = [
        [*live_args["kubernetes"], *live_args["prometheus"], "--elasticsearch-url", user_url, *indices],
        [*live_args["kubernetes"], "--prometheus-url", dead, "--elasticsearch-url", dead],
    ]
    for extra in runs:
        for output in ("json", "markdown", "rich", "html"):
            result = subprocess.run(
                [
                    str(BIN),
                    *scenario_args(SCENARIO),
                    *extra,
                    "--output",
                    output,
                    "--debug",
                    "--deadline",
                    f"{DEADLINE_S}s",
                ],
                capture_output=True,
                text=True,
                timeout=120,
                env=env,
            )
            text = result.stdout + result.stderr
            assert result.returncode in (0, 3), result.stderr[-2000:]
            for source in ("kubernetes", "prometheus", "logs"):
                assert f"debug: {source}: " in result.stderr  # --debug shows each source's requests
            for secret in (TOKEN, es_password, prom_token, api_key):
                assert secret not in text, f"{secret[:4]}… leaked in --output {output}"
    assert os.environ.get("WHATHAPPENED_PROMETHEUS_TOKEN") != prom_token  # the test did not leak into itself
