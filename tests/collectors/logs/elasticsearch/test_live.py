"""The log collector against a real OpenSearch-API server (osmem-server) for every scenario of the project, through
the official client: discovery from labels, signature events, and live == snapshot (events_from_documents over
the same NDJSON for the same scope)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from whathappened.collectors.logs import parse as log_parse
from whathappened.collectors.logs.elasticsearch.collector import LogCollector, make_client

from synth.catalog import SHIPPED
from tests.fixtures.search import SearchServer, default_indices
from tests.support import Scenario, all_scenarios
from whathappened.config import ElasticsearchSettings
from whathappened.kinds import Kind
from whathappened.model import PodInfo, TimelineEvent, Window
from whathappened.scope import Query, Scope, merge_pods

SCENARIOS = all_scenarios()

# scenario -> (kind, pod or node name suffix, attrs that must be there): what each story of the project's generator
# printed (synth/stories_core.py), read back through the real log store
EXPECTED: dict[str, list[tuple[Kind, str, dict[str, Any]]]] = {
    "app-traceback": [
        (Kind.APP_EXCEPTION, "master-0", {"exception": "KeyError", "file": "/app/sft/data.py", "line": 88}),
        (Kind.LAUNCHER_TEARDOWN, "master-0", {"exit_code": 1, "local_rank": 0, "pid": 4000}),
        (Kind.LAUNCHER_TEARDOWN, "worker-0", {"signal": "SIGTERM"}),
    ],
    "cuda-oom": [
        (Kind.CUDA_OOM, "master-0", {"tried": "3.12 GiB", "gpu": "0", "exception": "torch.OutOfMemoryError"}),
        (Kind.LAUNCHER_TEARDOWN, "worker-0", {"signal": "SIGTERM"}),
    ],
    "deleted-by-user": [
        (Kind.SIGTERM_RECEIVED, "master-0", {"signal": "SIGTERM"}),
        (Kind.SIGTERM_RECEIVED, "worker-0", {"signal": "SIGTERM"}),
    ],
    "ecc-dbe": [
        (Kind.GPU_XID, "compute.internal", {"xid": 48, "pci": "0000:75:00", "pid": 20931, "process": "python"}),
        (Kind.CUDA_ERROR, "worker-0", {"error": "uncorrectable ECC error encountered"}),
        (Kind.LAUNCHER_TEARDOWN, "worker-0", {"local_rank": 2, "exit_code": 1}),
        (Kind.NCCL_ERROR, "master-0", {"remote": True, "rank": 0}),
        (Kind.NCCL_ERROR, "worker-1", {"remote": True, "rank": 16}),
    ],
    "history-after-deletion": [  # the archived Kubernetes events and the pods' own lines
        (Kind.MAINTENANCE_NOTICE, "vmss000000", {"reason": "RebootScheduled"}),
        (Kind.NODE_CORDONED, "vmss000000", {"reason": "NodeNotSchedulable"}),
        (Kind.KILLING, "master-0", {}),
        (Kind.NCCL_ERROR, "worker-0", {"remote": True, "rank": 8}),
    ],
    "maintenance-eviction": [
        (Kind.SIGTERM_RECEIVED, "worker-2", {"signal": "SIGTERM"}),
        (Kind.NCCL_ERROR, "worker-1", {"remote": True, "rank": 16}),
    ],
    "nccl-timeout-unknown": [
        (
            Kind.NCCL_TIMEOUT,
            "workers-0-0",
            {"rank": 0, "seq": 208113, "op": "ALLREDUCE", "timeout_ms": 1800000, "ran_ms": 1800043},
        ),
        (Kind.NCCL_TIMEOUT, "workers-0-3", {"rank": 24}),
        (Kind.NCCL_ERROR, "workers-0-3", {"abort": True}),
    ],
    "oom-killed": [
        (Kind.KERNEL_OOM, "r07-n01", {"pid": 52110, "process": "python", "cgroup": True, "anon_rss_kb": 66977912}),
    ],
    "xid79-fallen-off-bus": [
        (Kind.GPU_XID, "p7kl", {"xid": 79, "pci": "0000:85:00", "text": "GPU has fallen off the bus."}),
        (Kind.CUDA_ERROR, "workers-0-2", {"error": "unspecified launch failure"}),
        (Kind.LAUNCHER_TEARDOWN, "workers-0-2", {"local_rank": 5}),
        (Kind.NCCL_TIMEOUT, "workers-0-0", {"seq": 91544, "op": "ALLREDUCE", "timeout_ms": 1800000}),
    ],
    "spot-preemption": [(Kind.SIGTERM_RECEIVED, "seed3-1-", {"signal": "SIGTERM"})],
    "node-pressure-eviction": [(Kind.CHECKPOINT_SAVED, "r1-0-", {"step": 13650})],
    "unschedulable": [],
}
# The same incidents as other shippers store them (no preset named): the same lines must come back, with the same
# facts, from every shape (metricbeat's snake_case Events, journald keys, uptime prefixes, resource attributes).
EXPECTED.update({name: EXPECTED[base] for name, (base, _shipper) in SHIPPED.items()})


NEVER_STARTED = {"unschedulable", "config-error"}


def read_ndjson(path: Path) -> list[tuple[str, dict[str, Any]]]:
    docs, index = [], "logs"
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        value = json.loads(line)
        if len(value) == 1 and "create" in value:
            index = value["create"]["_index"]
            continue
        docs.append((index, value))
    return docs


def query_of(scenario: Scenario) -> Query:
    return Query(scenario.experiment, scenario.namespace, Window(scenario.start, scenario.end))


def collector_for(server: SearchServer, scenario: Scenario, preset: str = "auto") -> LogCollector:
    indices = server.load_scenario(scenario)
    settings = ElasticsearchSettings(
        url=server.url, log_index=indices.log_index, event_index=indices.event_index, preset=preset
    )
    return LogCollector(make_client(settings, flavor="opensearch"), settings)


def comparable(events: list[TimelineEvent]) -> list[tuple[Any, ...]]:
    return sorted((str(e.identity), e.severity, tuple(sorted((k, str(v)) for k, v in e.attrs.items()))) for e in events)


def named(event: TimelineEvent) -> str:
    return event.subject.pod or event.subject.node or ""


@pytest.mark.servers
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_scenario_live_events(search_server: SearchServer, scenario: Scenario) -> None:
    collector = collector_for(search_server, scenario)
    query = query_of(scenario)
    found = collector.discover(query)
    expected_pods = {e["pod"] for e in scenario.expected}
    if scenario.name in NEVER_STARTED:  # the log store has nothing of pods that never ran
        assert found.pods == ()
    else:
        assert expected_pods <= {p.name for p in found.pods}
    others = [PodInfo(name=name, namespace=scenario.namespace) for name in sorted(expected_pods)]
    scope = Scope(query, merge_pods([found.pods, others]), found.nodes)
    events = collector.collect(scope)
    signature_events = [e for e in events if e.kind != Kind.LOG_LINE]
    for kind, who, attrs in EXPECTED.get(scenario.name, ()):
        matching = [e for e in signature_events if e.kind == kind and who in named(e)]
        assert matching, f"no {kind} for {who} in {[(e.kind, named(e)) for e in signature_events]}"
        assert any(attrs.items() <= dict(e.attrs).items() for e in matching), [dict(e.attrs) for e in matching]
    assert all(e.source == "logs" and scope.window.start <= e.at for e in events)
    assert collector.requests > 0 and "events" in collector.detail

    offline = log_parse.events_from_documents(read_ndjson(scenario.path / "logs.ndjson"), scope, collector.reading)
    assert comparable(events) == comparable(offline)
    offline_found = log_parse.discover_from_documents(
        read_ndjson(scenario.path / "logs.ndjson"), query, collector.reading
    )
    assert [(p.name, p.node) for p in found.pods] == [(p.name, p.node) for p in offline_found.pods]


@pytest.mark.servers
def test_ended_containers_get_their_last_lines(search_server: SearchServer) -> None:
    scenario = next(s for s in SCENARIOS if s.name == "ecc-dbe")
    collector = collector_for(search_server, scenario)
    found = collector.discover(query_of(scenario))
    events = collector.collect(Scope(query_of(scenario), found.pods, found.nodes))
    lines = [e for e in events if e.kind == Kind.LOG_LINE and e.subject.pod == "olmo-13b-anneal-c-worker-0"]
    assert lines and len(lines) <= collector.limits.last_lines
    assert any("uncorrectable ECC error" in line.summary for line in lines[-3:])  # before torchrun's summary


@pytest.mark.servers
def test_unknown_experiment_gives_candidates(search_server: SearchServer) -> None:
    scenario = next(s for s in SCENARIOS if s.name == "maintenance-eviction")
    collector = collector_for(search_server, scenario)
    query = Query("phi-3-medium-pt-r6", scenario.namespace, Window(scenario.start, scenario.end))
    found = collector.discover(query)
    assert found.pods == () and "phi-3-medium-pt-r5" in found.candidates
    offline = log_parse.discover_from_documents(read_ndjson(scenario.path / "logs.ndjson"), query, collector.reading)
    assert set(offline.candidates) == set(found.candidates)


@pytest.mark.servers
def test_per_pod_cap_keeps_the_earliest_and_matches_offline(search_server: SearchServer) -> None:
    scenario = next(s for s in SCENARIOS if s.name == "ecc-dbe")
    collector = collector_for(search_server, scenario)
    collector.limits = log_parse.Limits(per_pod=1, last_lines=0)
    collector.page_size = 1
    found = collector.discover(query_of(scenario))
    scope = Scope(query_of(scenario), found.pods, found.nodes)
    events = collector.collect(scope)
    per_pod = [e for e in events if e.subject.pod == "olmo-13b-anneal-c-master-0"]
    assert [e.at.isoformat() for e in per_pod] == ["2026-11-15T06:36:50+00:00"]  # its first checkpoint line
    offline = log_parse.events_from_documents(
        read_ndjson(scenario.path / "logs.ndjson"), scope, collector.reading, collector.limits
    )
    assert comparable(events) == comparable(offline)


@pytest.mark.servers
def test_export_snapshot_round_trips(search_server: SearchServer, tmp_path: Path) -> None:
    scenario = next(s for s in SCENARIOS if s.name == "xid79-fallen-off-bus")
    collector = collector_for(search_server, scenario)
    found = collector.discover(query_of(scenario))
    scope = Scope(query_of(scenario), found.pods, found.nodes)
    events = collector.collect(scope)
    path = collector.export_snapshot(tmp_path)
    again = log_parse.events_from_documents(read_ndjson(path), scope, collector.reading)
    assert comparable(again) == comparable(events)
    exported = read_ndjson(path)
    assert 0 < len(exported) <= collector.documents
    assert all(index.startswith("xid79-fallen-off-bus--") for index, _doc in exported)


@pytest.mark.servers
def test_mixed_mappings_keyword_and_text_indices_are_both_read(search_server: SearchServer) -> None:
    """ECS templates map names as keyword, dynamic mappings as text + .keyword; one pattern may hold both."""
    import httpx

    names = ("kubernetes.pod.name", "kubernetes.namespace", "kubernetes.node.name", "kubernetes.container.name")
    properties: dict[str, Any] = {"@timestamp": {"type": "date"}, "message": {"type": "text"}}
    for name in names:
        node = properties
        *parents, last = name.split(".")
        for part in parents:
            node = node.setdefault(part, {"properties": {}})["properties"]
        node[last] = {"type": "keyword"}
    httpx.put(f"{search_server.url}/mixed--logs-ecs", json={"mappings": {"properties": properties}}).raise_for_status()
    lines = []
    for index, minute in (("logs-ecs", 1), ("logs-dynamic", 2)):
        doc = {
            "@timestamp": f"2026-11-20T07:0{minute}:00Z",
            "message": f"NCCL WARN failure in {index}",
            "kubernetes": {
                "namespace": "ns",
                "pod": {"name": "p-0"},
                "node": {"name": "n-0"},
                "container": {"name": "c"},
            },
        }
        lines += [json.dumps({"create": {"_index": index}}), json.dumps(doc)]
    search_server.load_ndjson("mixed", "\n".join(lines))
    settings = ElasticsearchSettings(url=search_server.url, log_index="mixed--logs-*", event_index="mixed--ev-*")
    collector = LogCollector(make_client(settings, flavor="opensearch"), settings)
    window = Window(datetime(2026, 11, 20, 6, tzinfo=UTC), datetime(2026, 11, 20, 8, tzinfo=UTC))
    events = collector.collect(Scope(Query("e", "ns", window), (PodInfo(name="p-0", namespace="ns", phase="Running"),)))
    assert sorted(e.attrs["detail"] for e in events) == ["failure in logs-dynamic", "failure in logs-ecs"]


SHIPPER_SCENARIOS = [s for s in SCENARIOS if s.name in SHIPPED]


@pytest.fixture(scope="module")
def every_shipper(search_server: SearchServer) -> LogCollector:
    """One store holding what six shippers wrote (each under its own default index names), searched with the
    default patterns and no preset: the collector tells the shapes apart from the index mappings."""
    for scenario in SHIPPER_SCENARIOS:
        search_server.load_ndjson("every-shipper", (scenario.path / "logs.ndjson").read_text(encoding="utf-8"))
    indices = default_indices("every-shipper")
    settings = ElasticsearchSettings(
        url=search_server.url, log_index=indices.log_index, event_index=indices.event_index
    )
    return LogCollector(make_client(settings, flavor="opensearch"), settings)


@pytest.mark.servers
@pytest.mark.parametrize("scenario", SHIPPER_SCENARIOS, ids=[s.name for s in SHIPPER_SCENARIOS])
def test_one_store_many_shippers(every_shipper: LogCollector, scenario: Scenario) -> None:
    collector = every_shipper
    query = query_of(scenario)
    found = collector.discover(query)
    assert {e["pod"] for e in scenario.expected} <= {p.name for p in found.pods}
    shapes = {shape.mapping.name: shape.index for shape in collector._resolve(query.label_keys)}
    assert set(shapes) == {"ecs", "fluent-bit", "vector", "otel", "ss4o"}
    # each shape searches only its own indices: Fluent Bit's and Fluentd's logstash-* (one shape), Vector's
    assert all(i.startswith("every-shipper--logstash-") for i in shapes["fluent-bit"].split(","))
    assert shapes["vector"].startswith("every-shipper--vector-") and "," not in shapes["ss4o"]
    events = collector.collect(Scope(query, found.pods, found.nodes))
    signature_events = [e for e in events if e.kind != Kind.LOG_LINE]
    for kind, who, attrs in EXPECTED[scenario.name]:
        matching = [e for e in signature_events if e.kind == kind and who in named(e)]
        assert matching, f"no {kind} for {who} in {[(e.kind, named(e)) for e in signature_events]}"
        assert any(attrs.items() <= dict(e.attrs).items() for e in matching), [dict(e.attrs) for e in matching]
    assert "ecs, fluent-bit, otel, ss4o, vector fields" in collector.detail


@pytest.mark.servers
def test_a_narrow_window_searches_only_its_days_indices(search_server: SearchServer) -> None:
    """A month of daily indices: a window of one day searches that day's index and the ones either side (a line
    shipped late sits in the next day's), not the other days', and finds what the whole pattern finds."""
    lines = []
    for day in range(14, 27):
        for at, index_day in ((f"2026-11-{day:02d}T07:30:00Z", day), (f"2026-11-{day:02d}T23:59:30Z", day + 1)):
            doc = {
                "@timestamp": at,
                "message": f"NCCL WARN failure at {at}",
                "kubernetes": {"namespace": "ns", "pod": {"name": "p-0"}, "node": {"name": "n-0"}},
            }
            lines += [json.dumps({"create": {"_index": f"logs-k8s-2026.11.{index_day:02d}"}}), json.dumps(doc)]
    search_server.load_ndjson("daily", "\n".join(lines))
    settings = ElasticsearchSettings(url=search_server.url, log_index="daily--logs-*", event_index="daily--ev-*")
    collector = LogCollector(make_client(settings, flavor="opensearch"), settings)
    searched: list[str] = []
    real_msearch, real_search = collector._requests.msearch, collector._requests.search

    def msearch(searches: Any) -> Any:
        searched.extend(line["index"] for line in searches if "index" in line)
        return real_msearch(searches)

    def search(index: str, body: Any) -> Any:
        searched.append(index)
        return real_search(index, body)

    collector._requests.msearch, collector._requests.search = msearch, search  # type: ignore[method-assign]
    day = Window(datetime(2026, 11, 20, tzinfo=UTC), datetime(2026, 11, 20, 23, 59, 59, tzinfo=UTC))
    pod = PodInfo(name="p-0", namespace="ns", phase="Running")
    events = collector.collect(Scope(Query("e", "ns", day), (pod,)))
    assert sorted(e.attrs["detail"] for e in events) == [
        "failure at 2026-11-20T07:30:00Z",
        "failure at 2026-11-20T23:59:30Z",  # in 2026.11.21's index
    ]
    logs = [name for index in searched for name in index.split(",") if name.startswith("daily--logs")]
    assert sorted(set(logs)) == [f"daily--logs-k8s-2026.11.{d}" for d in (19, 20, 21)]
