"""The exporter end to end: three metadata servers, three exporters, a real Prometheus scraping them on loopback.

Also ``promtool check metrics`` on the exposition, and ``/healthz``.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from prometheus_client import CollectorRegistry
from whathappened.exporters import catalog
from whathappened.exporters.app import Exporter, ExporterConfig

from tests.doubles.metadata import MetadataServer, samples
from tests.support import free_port, require_binary, server_process
from whathappened.timeutils import parse_timestamp

NOW = datetime(2026, 4, 11, 22, 0, tzinfo=UTC)  # the exporters' clock: no wall-clock in what they export


class NoGpu:
    """An NVML stand-in whose nvmlInit fails the way it does on a host without the driver."""

    class NVMLError(Exception):
        pass

    def nvmlInit(self) -> None:
        raise self.NVMLError("NVML Shared Library Not Found")


@dataclass
class Stack:
    prometheus: str
    exporters: dict[str, Exporter]
    metadata: dict[str, MetadataServer]


def _feed(provider: str, server: MetadataServer) -> None:
    s = samples()
    server.state.providers = {provider}
    if provider == "azure":
        server.state.azure_vm_name = "vm-spot"
        server.state.azure_document = s["azure"]["spot_preempt_example_Z5"]
    elif provider == "aws":
        server.state.aws_scheduled = s["aws"]["scheduled_maintenance_example_A1_comment_in_ec2metadata.go"]
        server.state.aws_spot = s["aws"]["spot_instance_action_example_A2_AEMM_README"]
    else:
        server.state.gcp_maintenance = "TERMINATE_ON_HOST_MAINTENANCE"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    work = tmp_path_factory.mktemp("exporter-prom")
    servers = {p: MetadataServer().start() for p in ("azure", "aws", "gcp")}
    exporters: dict[str, Exporter] = {}
    try:
        for provider, server in servers.items():
            _feed(provider, server)
            config = ExporterConfig(
                provider="auto",
                metadata_url=server.url,
                node=f"node-{provider}",
                port=0,
                host="127.0.0.1",
                poll_interval=timedelta(seconds=1),
            )
            exporters[provider] = Exporter(
                config, clock=lambda: NOW, registry=CollectorRegistry(), nvml=NoGpu()
            ).start()
        targets = [f"127.0.0.1:{e.server.port}" for e in exporters.values()]
        config_file = work / "prometheus.yml"
        config_file.write_text(
            yaml.safe_dump(
                {
                    "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
                    "scrape_configs": [{"job_name": "whathappened-exporter", "static_configs": [{"targets": targets}]}],
                }
            )
        )
        port = free_port()
        args = [
            require_binary("prometheus"),
            f"--config.file={config_file}",
            f"--storage.tsdb.path={work / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ]
        url = f"http://127.0.0.1:{port}"
        with server_process(args, f"{url}/-/ready", work / "prometheus.log"):
            yield Stack(url, exporters, servers)
    finally:
        for exporter in exporters.values():
            exporter.stop()
        for server in servers.values():
            server.stop()


def _query_until(url: str, promql: str, want: int, timeout: float = 30.0) -> list[dict[str, Any]]:
    """Poll the query API until ``want`` series answer (scrapes arrive on their own schedule)."""
    deadline = time.monotonic() + timeout
    result: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        body = httpx.get(f"{url}/api/v1/query", params={"query": promql}, timeout=5).json()
        result = body["data"]["result"]
        if len(result) >= want:
            return result
        time.sleep(0.2)  # query-API poll interval, not a wait for an effect
    raise AssertionError(f"{promql}: {len(result)} series after {timeout}s, wanted {want}: {result}")


def test_prometheus_scrapes_every_provider(stack: Stack) -> None:
    series = _query_until(stack.prometheus, catalog.MAINTENANCE_SCHEDULED.name, 4)
    got = sorted((s["metric"]["provider"], s["metric"]["event_type"], s["metric"]["node"]) for s in series)
    assert got == [
        ("aws", "spot-interruption", "node-aws"),
        ("aws", "system-reboot", "node-aws"),
        ("azure", "Preempt", "node-azure"),
        ("gcp", "TERMINATE_ON_HOST_MAINTENANCE", "node-gcp"),
    ]
    assert all(s["value"][1] == "1" for s in series)
    assert set(series[0]["metric"]) == {"__name__", "job", "instance", *catalog.MAINTENANCE_LABELS}


def test_not_before_values_arrive(stack: Stack) -> None:
    series = _query_until(stack.prometheus, catalog.MAINTENANCE_NOT_BEFORE.name, 4)
    by_id = {s["metric"]["event_id"]: float(s["value"][1]) for s in series}
    azure_id = "C1BF8322-4CBF-4FC4-9C45-B40CF3106D0E"
    assert by_id[azure_id] == parse_timestamp("Tue, 09 Aug 2022 17:07:32 GMT").timestamp()  # type: ignore[union-attr]
    assert by_id["instance-event-0d59937288b749b32"] == parse_timestamp("21 Jan 2019 09:00:43 GMT").timestamp()  # type: ignore[union-attr]
    gcp_series = [s for s in series if s["metric"]["provider"] == "gcp"]
    assert float(gcp_series[0]["value"][1]) == NOW.timestamp() + 60  # the 60-second lead of maintenance-event


def test_preflight_gauge_and_poll_outcomes(stack: Stack) -> None:
    preflight = _query_until(stack.prometheus, catalog.PREFLIGHT_OK.name, 3)
    assert {s["metric"]["node"]: s["value"][1] for s in preflight} == {
        "node-azure": "0",
        "node-aws": "0",
        "node-gcp": "0",
    }
    success = _query_until(stack.prometheus, catalog.LAST_POLL_SUCCESS.name, 3)
    assert sorted(s["metric"]["provider"] for s in success) == ["aws", "azure", "gcp"]
    assert all(float(s["value"][1]) == NOW.timestamp() for s in success)
    gpu = _query_until(stack.prometheus, catalog.GPU_HEALTH_ENABLED.name, 3)
    assert {s["value"][1] for s in gpu} == {"0"}


def test_notice_ends_and_errors_count(stack: Stack) -> None:
    stack.metadata["gcp"].state.set_gcp_maintenance("NONE")  # maintenance done: the series must go away
    gone = f'absent({catalog.MAINTENANCE_SCHEDULED.name}{{provider="gcp"}})'
    assert _query_until(stack.prometheus, gone, 1)[0]["value"][1] == "1"
    stack.metadata["aws"].state.malformed = True
    errors = _query_until(stack.prometheus, f'{catalog.POLL_ERRORS.name}{{provider="aws"}} > 0', 1)
    assert errors[0]["metric"]["provider"] == "aws"
    stack.metadata["aws"].state.malformed = False


def test_promtool_check_metrics_and_healthz(stack: Stack, tmp_path: Path) -> None:
    for provider, exporter in stack.exporters.items():
        base = f"http://127.0.0.1:{exporter.server.port}"
        text = httpx.get(f"{base}/metrics").text
        assert catalog.PREFLIGHT_OK.name in text
        checked = subprocess.run(
            [require_binary("promtool"), "check", "metrics"], input=text, capture_output=True, text=True
        )
        assert checked.returncode == 0, f"{provider}: {checked.stdout}{checked.stderr}"
        health = httpx.get(f"{base}/healthz")
        assert health.status_code == 200 and f"provider={provider}" in health.text
        assert httpx.get(f"{base}/nope").status_code == 404
    openmetrics = httpx.get(f"{base}/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"})
    assert openmetrics.headers["content-type"].startswith("application/openmetrics-text") and openmetrics.text.endswith(
        "# EOF\n"
    )
