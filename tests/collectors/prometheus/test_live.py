"""The live collector against real Prometheus and real VictoriaMetrics, for every recorded scenario.

For each scenario and backend: discovery finds the experiment's pods through kube-state-metrics history, and
the events the server-side edge queries yield equal what the offline analysis finds in the raw OpenMetrics file
for the same scope (the snapshot path), timestamps included. The issue's named facts are checked on both.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

import pytest
from whathappened.collectors.prometheus import queries as pq
from whathappened.collectors.prometheus.collector import PrometheusCollector
from whathappened.collectors.prometheus.model import canonical_series
from whathappened.collectors.prometheus.openmetrics import parse_openmetrics, write_openmetrics
from whathappened.collectors.prometheus.series import Series, discover_from_series, events_from_series
from whathappened.collectors.prometheus.util import pod_of

from synth.catalog import CORE, STYLED
from tests.support import Scenario, all_scenarios
from whathappened.config import PrometheusSettings
from whathappened.kinds import Kind
from whathappened.model import TimelineEvent, Window
from whathappened.scope import Discovery, Query, Scope

# The core incidents on both backends, the other generated ones (other exporter spellings, more signals) on
# Prometheus, to keep the suite short: the backends differ in query semantics, which the core set exercises fully.
SCENARIOS = {s.name: s for s in all_scenarios()}
BOTH = {name: s for name, s in SCENARIOS.items() if name in CORE}
CASES = [(n, b) for n in sorted(SCENARIOS) for b in ("prometheus", "victoria") if b == "prometheus" or n in BOTH]
BACKENDS = ("prometheus", "victoria")
SOURCES = {name: s.path / "prometheus.om.gz" for name, s in SCENARIOS.items()}
_RUNS: dict[tuple[str, str], Run] = {}


@dataclass(frozen=True)
class Run:
    collector: PrometheusCollector
    discovery: Discovery
    scope: Scope
    events: list[TimelineEvent]


@cache
def recorded(name: str) -> tuple[Series, ...]:
    text = gzip.decompress((SCENARIOS[name].path / "prometheus.om.gz").read_bytes()).decode()
    series, problems = parse_openmetrics(text)
    assert problems == []
    return tuple(series)


def query_of(scenario: Scenario) -> Query:
    return Query(scenario.experiment, scenario.namespace, Window(scenario.start, scenario.end))


@pytest.fixture
def live(prometheus_servers, victoria_servers):
    """The collector's discover + collect against one backend, run once per scenario and backend."""
    if not _RUNS:
        prometheus_servers.warm(sorted(SCENARIOS), sources=SOURCES)
        victoria_servers.warm(sorted(BOTH), sources=SOURCES)

    def run(name: str, backend: str) -> Run:
        if (name, backend) not in _RUNS:
            servers = prometheus_servers if backend == "prometheus" else victoria_servers
            collector = PrometheusCollector(PrometheusSettings(url=servers.url_for(name, SOURCES[name])))
            query = query_of(SCENARIOS[name])
            discovery = collector.discover(query)
            scope = Scope(query, discovery.pods, discovery.nodes)
            _RUNS[(name, backend)] = Run(collector, discovery, scope, list(collector.collect(scope)))
        return _RUNS[(name, backend)]

    return run


def at(hhmmss: str, name: str = "xid79-fallen-off-bus") -> datetime:
    """A time of day on the scenario's own day."""
    day = SCENARIOS[name].start.strftime("%Y-%m-%d")
    return datetime.fromisoformat(f"{day}T{hhmmss}+00:00").astimezone(UTC)


def pod_named(name: str, prefix: str) -> str:
    """The scenario's expected pod whose name starts with ``prefix`` (JobSet pods end in a random suffix)."""
    [pod] = [e["pod"] for e in SCENARIOS[name].expected if e["pod"].startswith(prefix)]
    return str(pod)


XID79_POD = pod_named("xid79-fallen-off-bus", "falcon-40b-cpt-s2-workers-0-2")
XID79_NODE = "gke-lm-gke-a3-highgpu-24288c15-p7kl"


def find(events: list[TimelineEvent], kind: str, **subject: str) -> list[TimelineEvent]:
    return [e for e in events if e.kind == kind and all(getattr(e.subject, k) == v for k, v in subject.items())]


@pytest.mark.parametrize(("name", "backend"), CASES)
def test_live_equals_offline_analysis(live, name: str, backend: str) -> None:
    scenario = SCENARIOS[name]
    run = live(name, backend)
    offline = discover_from_series(recorded(name), query_of(scenario))
    assert [p.name for p in run.discovery.pods] == [p.name for p in offline.pods]
    assert {e["pod"] for e in scenario.expected} <= {p.name for p in run.discovery.pods}
    facts = [(p.node, p.created, p.started, p.ended, p.deleted, p.phase) for p in run.discovery.pods]
    assert facts == [(p.node, p.created, p.started, p.ended, p.deleted, p.phase) for p in offline.pods]
    expected = events_from_series(recorded(name), run.scope)
    assert [e.identity for e in run.events] == [e.identity for e in expected]
    assert [dict(e.attrs) for e in run.events] == [dict(e.attrs) for e in expected]
    pods = {p.key for p in run.scope.pods}
    attributed = any(
        s.name == "DCGM_FI_DEV_GPU_UTIL" and pod_of(s.labels) in pods for s in map(canonical_series, recorded(name))
    )
    assert any(e.kind == "gpu-utilization" for e in run.events) == attributed
    assert run.collector.requests <= 30
    assert run.collector.detail


@pytest.mark.parametrize(("name", "backend"), CASES)
def test_edges_located_coarse_to_fine_are_the_same_events(live, prometheus_servers, victoria_servers, name, backend):
    """What a large scope gets (located coarsely first, then exact over the located spans only), forced on every
    scenario: the same events as the edge queries over the whole window, so the same as the offline analysis."""
    run = live(name, backend)
    servers = prometheus_servers if backend == "prometheus" else victoria_servers
    coarse = PrometheusCollector(PrometheusSettings(url=servers.url_for(name, SOURCES[name])), direct_limit=0)
    events = list(coarse.collect(run.scope))
    assert [e.identity for e in events] == [e.identity for e in run.events]
    assert [dict(e.attrs) for e in events] == [dict(e.attrs) for e in run.events]
    assert coarse.requests <= 30


@pytest.mark.parametrize(("name", "backend"), [(n, b) for n in sorted(BOTH) for b in BACKENDS])
def test_many_nodes_ask_the_label_values_api_for_the_same_events(
    live, prometheus_servers, victoria_servers, monkeypatch, name, backend
):
    """Which GPUs and metric families a scope has: from the series API for a few nodes (every scenario here),
    from the label-values API for many (forced): the same events either way, on both backends."""
    run = live(name, backend)
    assert any("/api/v1/series" in line for line in run.collector.request_log)
    assert not any("/api/v1/label/" in line for line in run.collector.request_log)
    monkeypatch.setattr(pq, "SERIES_API_NODES", -1)
    servers = prometheus_servers if backend == "prometheus" else victoria_servers
    many = PrometheusCollector(PrometheusSettings(url=servers.url_for(name, SOURCES[name])))
    events = list(many.collect(run.scope))
    assert any("/api/v1/label/" in line for line in many.request_log)
    assert not any("/api/v1/series" in line for line in many.request_log)
    assert [e.identity for e in events] == [e.identity for e in run.events]
    assert [dict(e.attrs) for e in events] == [dict(e.attrs) for e in run.events]


@pytest.mark.parametrize("backend", BACKENDS)
def test_xid_79_on_the_gpu_that_fell_off_the_bus(live, backend: str) -> None:
    events = live("xid79-fallen-off-bus", backend).events
    [xid] = find(events, "gpu-xid")
    assert (xid.at, xid.subject.node, xid.subject.gpu, xid.subject.pod, xid.attrs["xid"]) == (
        at("06:47:30"),  # the first scrape after the fault, while the rank's pod still held the GPU
        XID79_NODE,
        "5",
        XID79_POD,
        79,
    )
    [missing] = find(events, "gpu-missing")
    # DCGM drops the GPU from its list after its pod ended: the GPU is named, no pod holds it any more
    assert (missing.at, missing.subject.node, missing.subject.gpu, missing.subject.pod) == (
        at("06:48:00"),
        XID79_NODE,
        "5",
        None,
    )
    assert missing.attrs["uuid"] == xid.attrs["uuid"]


def renamed_by_the_scrape(name: str, folder: Path) -> Path:
    """The scenario's history as a scrape without honorLabels stores it: dcgm-exporter's pod and namespace
    become exported_pod and exported_namespace, and pod and namespace name the exporter's own pod."""
    renamed = []
    for one in recorded(name):
        labels = dict(one.labels)
        if one.name.startswith("DCGM_") and "pod" in labels:
            labels["exported_pod"], labels["exported_namespace"] = labels.pop("pod"), labels.pop("namespace", "")
            labels["pod"], labels["namespace"] = f"nvidia-dcgm-exporter-{labels.get('Hostname', '')}", "gpu-operator"
        renamed.append(Series(one.name, labels, one.samples))
    path = folder / "prometheus.om.gz"
    path.write_bytes(gzip.compress(write_openmetrics(renamed).encode()))
    return path


@pytest.mark.parametrize("backend", BACKENDS)
def test_pod_labels_renamed_by_the_scrape_still_name_the_training_pods(
    live, prometheus_servers, victoria_servers, backend: str, tmp_path: Path
) -> None:
    """The same events as with the exporter's own labels, live and offline: the Xid on the pod that held the GPU,
    every pod's utilization strip."""
    name = "xid79-fallen-off-bus"
    source = renamed_by_the_scrape(name, tmp_path)
    servers = prometheus_servers if backend == "prometheus" else victoria_servers
    collector = PrometheusCollector(PrometheusSettings(url=servers.url_for(f"{name}-exported", source)))
    scope = live(name, backend).scope
    events = list(collector.collect(scope))
    series, problems = parse_openmetrics(gzip.decompress(source.read_bytes()).decode())
    assert problems == []
    assert [e.identity for e in events] == [e.identity for e in events_from_series(series, scope)]
    assert [e.identity for e in events] == [e.identity for e in live(name, backend).events]
    [xid] = find(events, "gpu-xid")
    assert (xid.subject.pod, xid.subject.gpu) == (XID79_POD, "5")


@pytest.mark.parametrize("backend", BACKENDS)
def test_gpu_utilization_strip_per_pod(live, backend: str) -> None:
    run = live("xid79-fallen-off-bus", backend)
    strips = {e.subject.pod: e for e in find(run.events, "gpu-utilization")}
    assert sorted(strips) == sorted(e["pod"] for e in SCENARIOS["xid79-fallen-off-bus"].expected)
    for pod, strip in strips.items():
        samples = strip.attrs["samples"]
        assert strip.subject.node is not None and strip.severity == "info"
        assert (strip.attrs["gpus"], strip.attrs["step"]) == (8, 60)  # a 2-hour window: 120 points a minute apart
        assert 40 <= len(samples) <= 120 and all(t % 60 == 0 for t, _ in samples)  # the failed pod ran 42 min
        assert strip.at.timestamp() == samples[0][0] and at("06:00:00").timestamp() < samples[0][0]
        assert 90 <= strip.attrs["mean"] <= 100, pod  # training at full speed
    # the pod whose GPU fell off the bus stops reporting with it; the others run on to the window's end
    assert strips[XID79_POD].attrs["samples"][-1][0] <= at("06:49:00").timestamp()
    survivor = pod_named("xid79-fallen-off-bus", "falcon-40b-cpt-s2-workers-0-0")
    assert strips[survivor].attrs["samples"][-1][0] > at("07:15:00").timestamp()


@pytest.mark.parametrize("backend", BACKENDS)
def test_maintenance_cordon_and_eviction_reason(live, backend: str) -> None:
    name = "maintenance-eviction"
    events = live(name, backend).events
    node = "aks-h100pool-23098820-vmss000003"
    [notice] = find(events, "maintenance-notice", node=node)
    assert notice.at == at("09:00:00", name)
    assert notice.attrs["not_before"] == at("09:15:00", name)
    assert (notice.attrs["provider"], notice.attrs["event_type"]) == ("azure", "Reboot")
    [cordon] = find(events, "node-cordoned")
    assert (cordon.at, cordon.subject.node) == (at("09:02:00", name), node)
    [disruption] = find(events, "disruption-target")
    assert disruption.subject.pod == "phi-3-medium-pt-r5-worker-2"
    assert disruption.attrs["reason"] == "EvictionByEvictionAPI"
    assert disruption.at == at("09:02:30", name)


@pytest.mark.parametrize("backend", BACKENDS)
def test_deleted_pods_found_through_kube_state_metrics(live, backend: str) -> None:
    name = "history-after-deletion"
    run = live(name, backend)
    pods = {p.name: p for p in run.discovery.pods}
    victim = "codegen-7b-longctx-r2-master-0"
    assert sorted(pods) == [victim, "codegen-7b-longctx-r2-worker-0", "codegen-7b-longctx-r2-worker-1"]
    assert pods[victim].deleted == at("07:12:00", name)  # the last scrape that still saw it
    assert pods[victim].node == "aks-a100v4-46607227-vmss000000"
    assert pods[victim].ended == at("06:52:30", name)
    assert all(p.deleted is not None and p.owner_name == "codegen-7b-longctx-r2" for p in pods.values())
    [notice] = find(run.events, "maintenance-notice")
    assert (notice.attrs["event_type"], notice.attrs["not_before"]) == ("Reboot", at("07:05:00", name))


@pytest.mark.parametrize("backend", BACKENDS)
def test_spot_notice_and_ecc(live, backend: str) -> None:
    [spot] = find(live("spot-preemption", backend).events, "spot-interruption")
    assert (spot.attrs["provider"], spot.attrs["not_before"]) == ("aws", at("06:54:06", "spot-preemption"))
    assert spot.subject.node == "ip-10-1-32-56.ec2.internal"
    ecc = live("ecc-dbe", backend).events
    [dbe] = find(ecc, "gpu-ecc-dbe")
    [xid] = find(ecc, "gpu-xid")
    assert (dbe.subject.pod, dbe.subject.gpu, dbe.attrs["increase"], xid.attrs["xid"]) == (
        "olmo-13b-anneal-c-worker-0",
        "2",
        1.0,
        48,
    )


def test_snapshot_written_from_a_live_run_gives_the_same_events(live, tmp_path: Path) -> None:
    run = live("xid79-fallen-off-bus", "prometheus")
    path = run.collector.export_snapshot(tmp_path)
    text = gzip.decompress(path.read_bytes()).decode()
    assert text.endswith("# EOF\n")
    series, problems = parse_openmetrics(text)
    assert problems == []
    assert all(t < 1e10 for s in series for t, _ in s.samples)  # seconds, not milliseconds
    again = events_from_series(series, run.scope)
    assert [e.identity for e in again] == [e.identity for e in run.events]
    assert [dict(e.attrs) for e in again] == [dict(e.attrs) for e in run.events]
    assert any(e.kind == "gpu-utilization" for e in again)
    edges = [line for line in text.splitlines() if not line.startswith("whathappened:pod_gpu_")]
    assert len("\n".join(edges)) < 20_000  # edges only, not the recorded history
    strips = [line for line in text.splitlines() if line.startswith("whathappened:pod_gpu_util_avg{")]
    assert len(strips) <= 4 * 121  # the utilization strips: at most about 120 points per pod


@pytest.mark.parametrize("name", ["history-after-deletion", "jobset-restarted", "job-retried", "xid79-fallen-off-bus"])
def test_a_snapshot_written_from_a_live_run_names_the_same_pods(live, tmp_path: Path, name: str) -> None:
    """Pods the API no longer has (an earlier attempt's, a deleted job's) are known from kube-state-metrics alone:
    the snapshot must name them with the same creation, start and end as the live discovery did."""
    run = live(name, "prometheus")
    series, problems = parse_openmetrics(gzip.decompress(run.collector.export_snapshot(tmp_path).read_bytes()).decode())
    assert problems == [] and run.discovery.pods
    again = discover_from_series(series, query_of(SCENARIOS[name]))
    assert again.pods == run.discovery.pods


def test_unknown_experiment_suggests_names(live, prometheus_servers) -> None:
    scenario = SCENARIOS["oom-killed"]
    collector = PrometheusCollector(PrometheusSettings(url=prometheus_servers.url_for("oom-killed")))
    query = Query("tokenize-redpajama-p1", scenario.namespace, Window(scenario.start, scenario.end))
    discovery = collector.discover(query)
    assert discovery.pods == ()
    assert "tokenize-redpajama-p17" in discovery.candidates


def test_through_gather_the_source_reports_ok_with_its_detail(prometheus_servers) -> None:
    from whathappened.gather import gather

    scenario = SCENARIOS["xid79-fallen-off-bus"]
    source = PrometheusCollector(PrometheusSettings(url=prometheus_servers.url_for(scenario.name)))
    gathered = gather([source], query_of(scenario), deadline_s=60)
    [report] = gathered.sources
    assert (report.name, report.status) == ("prometheus", "ok")
    assert report.requests == source.requests > 0
    assert "dcgm-exporter on 4 of 4 nodes" in report.detail
    assert any(e.kind == "gpu-xid" for e in gathered.timeline)


@pytest.mark.parametrize("name", sorted(STYLED))
def test_each_release_shape_gives_the_events_of_the_default_shape(live, name: str) -> None:
    """The same incident written as another dcgm-exporter release or scrape, or another kube-state-metrics
    release, labels it (no pci_bus_id or err_code, pod_name, exported_pod with the exporter's own pod in pod,
    lower-case hostname, every status reason 0 or 1): the same events, each on the same GPU, pod and node."""
    base = STYLED[name][0]
    styled, default = live(name, "prometheus"), live(base, "prometheus")
    wanted = [e for e in default.events if e.kind not in NOT_IN_RELEASE.get(name, ())]
    assert [e.identity for e in styled.events] == [e.identity for e in wanted]
    assert [p.name for p in styled.discovery.pods] == [p.name for p in default.discovery.pods]
    keep = ("xid", "reason", "uuid", "gpu", "value")
    assert [{k: e.attrs.get(k) for k in keep} for e in styled.events] == [
        {k: e.attrs.get(k) for k in keep} for e in wanted
    ]


# What a release cannot say: kube-state-metrics before v2.19 has no DisruptionTarget reason in any family.
NOT_IN_RELEASE = {"ksm-v2.13": {Kind.DISRUPTION_TARGET}, "ksm-v2.13-exported": {Kind.DISRUPTION_TARGET}}


@pytest.mark.parametrize(
    "name",
    [
        "ksm-servicemonitor-exported",
        "dcgm-2x-old-namespace",
        "dcgm-1x-names",
        "dcgm-gpu-operator-unrelabelled",
        "stack-unrelabelled-fluentd",
    ],
)
def test_a_collector_that_did_not_discover_learns_the_spelling_itself(live, prometheus_servers, name: str) -> None:
    """Pods found by the Kubernetes API alone (no discovery through Prometheus): the collector asks once how
    kube-state-metrics names the workload, and reads the exporter's UUID label and metric names from its GPUs."""
    run = live(name, "prometheus")
    fresh = PrometheusCollector(PrometheusSettings(url=prometheus_servers.url_for(name, SOURCES[name])))
    events = list(fresh.collect(run.scope))
    assert [e.identity for e in events] == [e.identity for e in run.events]
    assert fresh.requests <= 30
