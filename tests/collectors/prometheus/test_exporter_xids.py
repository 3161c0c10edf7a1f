"""The project's exporter's Xid counters read by the CLI, from real Prometheus and real VictoriaMetrics: a counter
made in the window is an Xid there (NVML's event API counts each one; the exporter makes a code's counter at its
first), one already there is none, another node's is none; live, offline and from a snapshot written live alike.

The labels are those the exporter served on an H100 (bench/README.md), plus what the shipped ServiceMonitor's scrape
adds without honorLabels: instance, job, and the exporter's own pod, namespace and container."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from whathappened.collectors.prometheus.collector import PrometheusCollector
from whathappened.collectors.prometheus.openmetrics import parse_openmetrics
from whathappened.collectors.prometheus.series import events_from_series
from whathappened.collectors.prometheus.snapshot import SnapshotPrometheus, write_series

from whathappened.config import PrometheusSettings
from whathappened.kinds import Kind
from whathappened.model import PodInfo, Window
from whathappened.scope import Query, Scope

T0 = 1_795_154_400  # 2026-11-20T06:00:00Z, the window's start
NODE, UUID = "gpu-node-3", "GPU-e46b0822-870e-7031-b8a3-a16cef241e7f"
MADE_AT = T0 + 1815  # 06:30:15, the scrape after NVML reported Xid 79


def _labels(node: str, xid: str) -> str:
    return (
        f'gpu="5",node="{node}",uuid="{UUID}",xid="{xid}",container="exporter",endpoint="metrics",'
        'instance="10.0.3.7:9977",job="whathappened-exporter",namespace="whathappened",'
        'pod="whathappened-exporter-7xk2p",service="whathappened-exporter"'
    )


def _history() -> str:
    lines = ["# TYPE whathappened_gpu_xid_errors counter"]
    for at in range(T0 - 7200, T0 + 7200, 15):
        lines.append(f"whathappened_gpu_xid_errors_total{{{_labels(NODE, '31')}}} 2 {at}")  # since before
        lines.append(f"whathappened_gpu_xid_errors_total{{{_labels('gpu-node-9', '13')}}} 1 {at}")  # elsewhere
        if at >= MADE_AT:
            lines.append(f"whathappened_gpu_xid_errors_total{{{_labels(NODE, '79')}}} 1 {at}")
    return "\n".join(lines) + "\n# EOF\n"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("exporter-xids") / "prometheus.om.gz"
    path.write_bytes(gzip.compress(_history().encode()))
    return path


def _scope() -> Scope:
    pod = PodInfo(
        name="run-worker-1",
        namespace="team-lm",
        node=NODE,
        created=datetime.fromtimestamp(T0 + 60, UTC),
        started=datetime.fromtimestamp(T0 + 90, UTC),
    )
    start = datetime.fromtimestamp(T0, UTC)
    return Scope(Query("run", "team-lm", Window(start, start + timedelta(hours=2))), (pod,), gpus={NODE: ("5",)})


def _xids(events: list) -> list[tuple[str, int, str | None, str | None, str | None]]:
    return [
        (e.at.isoformat(), e.attrs["xid"], e.subject.node, e.subject.gpu, e.subject.pod)
        for e in events
        if e.kind == Kind.GPU_XID
    ]


@pytest.mark.servers
@pytest.mark.parametrize("backend", ["prometheus", "victoria"])
def test_the_exporters_xid_read_live_offline_and_from_a_snapshot(
    backend: str, recorded: Path, prometheus_servers, victoria_servers, tmp_path: Path
) -> None:
    servers = prometheus_servers if backend == "prometheus" else victoria_servers
    collector = PrometheusCollector(PrometheusSettings(url=servers.url_for("exporter-xids", recorded)))
    scope = _scope()
    live = list(collector.collect(scope))
    want = [("2026-11-20T06:30:15+00:00", 79, NODE, "5", "run-worker-1")]
    assert _xids(live) == want
    # only the counter that moved or appeared is read sample by sample: not a long-past Xid's, not another node's
    fetched = {s.labels.get("xid") for s in collector.fetched if s.name == "whathappened_gpu_xid_errors_total"}
    assert fetched == {"79"}
    series, problems = parse_openmetrics(gzip.decompress(recorded.read_bytes()).decode())
    assert problems == [] and _xids(events_from_series(series, scope)) == want
    path = write_series(tmp_path, collector.fetched)
    assert _xids(SnapshotPrometheus(tmp_path, path).collect(scope)) == want
