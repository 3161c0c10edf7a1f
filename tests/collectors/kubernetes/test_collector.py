"""The live Kubernetes collector against the API test double, for every scenario of the project.

Every pod, event and node the scenario's API still holds comes back at its time, the request budget holds
(at most 10 requests besides logs, all GETs), and the live timeline equals what the pure parsers make of the
recorded files (snapshot == live).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from whathappened.collectors.kube_objects.parse import WINDOW_SLACK, events_from_objects
from whathappened.collectors.kubernetes.collector import LOG_READERS, KubernetesCollector, build_api_client

from tests.fixtures.kube import KubeSession
from tests.support import REPO, Scenario, all_scenarios
from whathappened.config import KubernetesSettings, Settings
from whathappened.kinds import Kind
from whathappened.model import PodInfo, TimelineEvent, Window
from whathappened.scope import Query, Scope
from whathappened.timeutils import parse_timestamp

# The shared acceptance scenarios, plus the project's own extra ones where they exist (same format).
EXTRA = REPO / "tests" / "scenarios"
SCENARIOS = all_scenarios() + (all_scenarios(EXTRA) if EXTRA.is_dir() else [])
BUDGET = 10


def collector_for(session: KubeSession, **overrides: Any) -> KubernetesCollector:
    api_client, namespace = build_api_client(KubernetesSettings(kubeconfig=str(session.kubeconfig)))
    settings = Settings(**overrides)
    return KubernetesCollector(api_client, namespace, settings)


def query_for(scenario: Scenario, namespace: str | None = None) -> Query:
    return Query(scenario.experiment, namespace, Window(scenario.start, scenario.end))


def items(scenario: Scenario, name: str) -> list[dict[str, Any]]:
    return json.loads((scenario.path / "kubernetes" / f"{name}.json").read_text())["items"]


def scenario_pods(scenario: Scenario) -> list[dict[str, Any]]:
    return [
        p for p in items(scenario, "pods") if p["metadata"]["labels"].get(scenario.label_key) == scenario.experiment
    ]


def run(session: KubeSession, scenario: Scenario) -> tuple[KubernetesCollector, Scope, list[TimelineEvent]]:
    """Discover, then collect for the discovered pods plus the expected ones other sources would name."""
    collector = collector_for(session)
    query = query_for(scenario)
    discovery = collector.discover(query)
    known = {p.name for p in discovery.pods}
    others = tuple(PodInfo(e["pod"], scenario.namespace) for e in scenario.expected if e["pod"] not in known)
    scope = Scope(query, discovery.pods + others, discovery.nodes)
    return collector, scope, collector.collect(scope)


_OUTCOMES: dict[str, dict[str, Any]] = {}


@pytest.fixture(params=SCENARIOS, ids=[s.name for s in SCENARIOS])
def outcome(request: pytest.FixtureRequest, kube_double: Any) -> dict[str, Any]:
    """One collector run per scenario, shared by the tests that read it (they do not change it)."""
    scenario: Scenario = request.param
    if scenario.name not in _OUTCOMES:
        session = kube_double(scenario)
        collector, scope, timeline = run(session, scenario)
        _OUTCOMES[scenario.name] = {
            "scenario": scenario,
            "requests": session.requests,
            "api_requests": session.double.api_requests(),
            "collector": collector,
            "scope": scope,
            "timeline": timeline,
        }
    return _OUTCOMES[scenario.name]


def test_every_pod_of_the_scenario_is_found(outcome: dict[str, Any]) -> None:
    scenario: Scenario = outcome["scenario"]
    expected = sorted(p["metadata"]["name"] for p in scenario_pods(scenario))
    found = sorted(p.name for p in outcome["scope"].pods if p.sources == frozenset({"kubernetes"}))
    assert found == expected
    assert {e["pod"] for e in scenario.expected} <= {p.name for p in outcome["scope"].pods}


def test_every_node_of_the_pods_comes_back(outcome: dict[str, Any]) -> None:
    scenario: Scenario = outcome["scenario"]
    recorded = {n["metadata"]["name"]: n for n in items(scenario, "nodes")}
    wanted = {p["spec"].get("nodeName") for p in scenario_pods(scenario)} & set(recorded)
    assert {n.name for n in outcome["scope"].nodes} == wanted
    for node in outcome["scope"].nodes:
        assert node.labels == recorded[node.name]["metadata"]["labels"]


def _event_time(obj: dict[str, Any]) -> Any:
    return parse_timestamp(obj.get("eventTime") or obj.get("lastTimestamp") or obj.get("firstTimestamp"))


def test_every_event_comes_back_at_its_time(outcome: dict[str, Any]) -> None:
    scenario: Scenario = outcome["scenario"]
    scope: Scope = outcome["scope"]
    pods, nodes = {p.name for p in scope.pods}, set(scope.node_names)
    owners = {(p.owner_kind, p.owner_name) for p in scope.pods}
    window = scope.window
    wanted = {}
    for obj in items(scenario, "events"):
        involved = obj["involvedObject"]
        ours = involved["name"] in (pods if involved["kind"] == "Pod" else nodes)
        ours = ours or (involved["kind"], involved["name"]) in owners
        # the workload that ran the pods, named like the experiment or prefixing a pod's name
        ours = ours or (
            involved["kind"] in ("Job", "JobSet", "PyTorchJob", "MPIJob", "RayJob", "LeaderWorkerSet")
            and (involved["name"] == scenario.experiment or any(p.startswith(involved["name"] + "-") for p in pods))
        )
        at = _event_time(obj)
        if ours and window.start - WINDOW_SLACK <= at <= window.end + WINDOW_SLACK:
            wanted[obj["metadata"]["uid"]] = at
    got = {e.attrs["uid"]: e.at for e in outcome["timeline"] if "uid" in e.attrs}
    assert got == wanted
    assert outcome["collector"].detail.split(", ")[1] == f"{len(wanted)} events"


def test_container_endings_come_back_at_their_time(outcome: dict[str, Any]) -> None:
    ended = {
        (e.subject.pod, e.subject.container, e.at, e.attrs.get("previous"))
        for e in outcome["timeline"]
        if e.kind == Kind.CONTAINER_TERMINATED
    }
    window: Window = outcome["scope"].window
    for pod in scenario_pods(outcome["scenario"]):
        for status in pod["status"].get("containerStatuses") or []:
            for block, previous in ((status["state"], False), (status.get("lastState") or {}, True)):
                finished = parse_timestamp((block.get("terminated") or {}).get("finishedAt"))
                if finished is not None and window.contains(finished):
                    assert (pod["metadata"]["name"], status["name"], finished, previous) in ended


def test_request_budget_and_read_only_verbs(outcome: dict[str, Any]) -> None:
    api = outcome["api_requests"]
    assert 1 <= len(api) <= BUDGET, [r.path for r in api]
    assert all(r.method == "GET" for r in outcome["requests"])
    assert outcome["collector"].requests == len(outcome["requests"])


def test_live_equals_snapshot(outcome: dict[str, Any]) -> None:
    scenario: Scenario = outcome["scenario"]
    offline = events_from_objects(
        items(scenario, "pods"), items(scenario, "events"), items(scenario, "nodes"), outcome["scope"]
    )
    live = [e for e in outcome["timeline"] if e.kind != Kind.LOG_LINE]
    assert Counter(e.identity for e in live) == Counter(e.identity for e in offline)
    held = items(scenario, "pods") or items(scenario, "events")
    assert bool(live) == bool(held), "what the API still holds shows on the timeline"


def test_failed_containers_bring_their_last_lines(outcome: dict[str, Any]) -> None:
    failed = {
        (p["metadata"]["name"], s["name"])
        for p in scenario_pods(outcome["scenario"])
        for s in p["status"].get("containerStatuses") or []
        if (s["state"].get("terminated") or {}).get("exitCode")
        or ((s.get("lastState") or {}).get("terminated") or {}).get("exitCode")
    }
    lines = [e for e in outcome["timeline"] if e.kind == Kind.LOG_LINE]
    assert {(e.subject.pod, e.subject.container) for e in lines} == failed
    per_container: dict[tuple[Any, ...], int] = {}
    for line in lines:
        key = (line.subject.pod, line.subject.container, line.attrs["previous"])
        per_container[key] = per_container.get(key, 0) + 1
    assert all(count <= 50 for count in per_container.values())


def test_export_snapshot_reads_back_the_same(outcome: dict[str, Any], tmp_path: Path) -> None:
    collector: KubernetesCollector = outcome["collector"]
    collector.export_snapshot(tmp_path)
    written = {n: json.loads((tmp_path / "kubernetes" / f"{n}.json").read_text()) for n in ("pods", "events", "nodes")}
    assert [written[n]["kind"] for n in ("pods", "events", "nodes")] == ["PodList", "EventList", "NodeList"]
    again = events_from_objects(
        written["pods"]["items"], written["events"]["items"], written["nodes"]["items"], outcome["scope"]
    )
    live = [e for e in outcome["timeline"] if e.kind != Kind.LOG_LINE]
    assert Counter(e.identity for e in again) == Counter(e.identity for e in live)


def test_a_snapshot_keeps_the_container_logs_read(outcome: dict[str, Any], tmp_path: Path) -> None:
    """The failed containers' last lines are evidence too (the only logs where no log store is configured): the
    snapshot records them as served and reads them back to the same timeline, log lines included."""
    from whathappened.collectors.kubernetes.snapshot import SnapshotKubernetes

    outcome["collector"].export_snapshot(tmp_path)
    again = SnapshotKubernetes(tmp_path).collect(outcome["scope"])
    assert Counter(e.identity for e in again) == Counter(e.identity for e in outcome["timeline"])
    lines = [e for e in again if e.kind == Kind.LOG_LINE]
    assert bool(lines) == any(e.kind == Kind.LOG_LINE for e in outcome["timeline"])
    assert all(e.subject.node and e.source == "kubernetes" for e in lines)


def test_all_namespaces_finds_the_same_pods(kube_double: Any) -> None:
    scenario = next(s for s in SCENARIOS if s.name == "maintenance-eviction")
    session = kube_double(scenario)
    collector = collector_for(session, all_namespaces=True)
    discovery = collector.discover(query_for(scenario))
    assert {p.name for p in discovery.pods} == {p["metadata"]["name"] for p in scenario_pods(scenario)}
    assert all("/namespaces/" not in r.path for r in session.requests if r.path.endswith("/pods"))


def test_unknown_experiment_offers_candidates(kube_double: Any) -> None:
    scenario = next(s for s in SCENARIOS if s.name == "oom-killed")
    session = kube_double(scenario)
    discovery = collector_for(session).discover(replace(query_for(scenario), experiment="tokenize-pile-shard4"))
    assert discovery.pods == ()
    assert scenario.experiment in discovery.candidates


def test_context_namespace_is_the_default(kube_double: Any) -> None:
    scenario = next(s for s in SCENARIOS if s.name == "oom-killed")
    session = kube_double(scenario)
    _, namespace = build_api_client(KubernetesSettings(kubeconfig=str(session.kubeconfig)))
    _, other = build_api_client(KubernetesSettings(kubeconfig=str(session.kubeconfig), context="other"))
    assert (namespace, other) == (scenario.namespace, "elsewhere")


def test_only_the_earliest_ended_containers_logs_are_read(kube_double: Any) -> None:
    scenario = next(s for s in SCENARIOS if s.name == "xid79-fallen-off-bus")
    session = kube_double(scenario)
    collector = collector_for(session, kubernetes=KubernetesSettings(log_containers=1))
    discovery = collector.discover(query_for(scenario))
    collector.collect(Scope(query_for(scenario), discovery.pods, discovery.nodes))
    logs = [r for r in session.requests if r.is_log]
    assert len(logs) == 1  # four ranks failed; the rank that ended first holds the start of the story
    assert "workers-0-2" in logs[0].path


def test_failed_containers_logs_are_read_a_few_at_a_time(kube_double: Any) -> None:
    scenario = next(s for s in SCENARIOS if s.name == "xid79-fallen-off-bus")
    session = kube_double(scenario)
    session.faults.add(delay_s=0.3, path="/log", times=-1)  # slow enough that reads made together overlap
    collector = collector_for(session)
    discovery = collector.discover(query_for(scenario))
    timeline = collector.collect(Scope(query_for(scenario), discovery.pods, discovery.nodes))
    logs = [r for r in session.requests if r.is_log]
    assert len(logs) == 4 and session.double.peak_in_flight >= 2
    assert len({e.subject.pod for e in timeline if e.kind == Kind.LOG_LINE}) == 4
    assert collector.requests == len(session.requests) == len(collector.request_log)
    api_client, _ = build_api_client(KubernetesSettings(kubeconfig=str(session.kubeconfig)))
    assert api_client.configuration.connection_pool_maxsize >= LOG_READERS  # no connection opened and dropped


def test_forbidden_logs_are_skipped_with_a_note(kube_double: Any) -> None:
    scenario = next(s for s in SCENARIOS if s.name == "xid79-fallen-off-bus")
    session = kube_double(scenario)
    session.faults.add(status=403, path="/log", times=-1)
    collector = collector_for(session)
    discovery = collector.discover(query_for(scenario))
    timeline = collector.collect(Scope(query_for(scenario), discovery.pods, discovery.nodes))
    assert not [e for e in timeline if e.kind == Kind.LOG_LINE]
    assert f"; logs skipped: cannot get pods/log in namespace {scenario.namespace} (403 Forbidden" in collector.detail
    assert any(e.kind == Kind.CONTAINER_TERMINATED for e in timeline)  # the rest of the source still answers
