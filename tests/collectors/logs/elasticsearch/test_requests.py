"""How the log collector talks to the server: few round trips (independent searches share one ``_msearch``), the
last lines of ended containers from one aggregation with exact follow-ups where a pod's newest lines are not
the container's own (a sidecar, a restarted container), and an import that leaves the async transports out."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from whathappened.collectors.kube_objects import parse as kube_parse
from whathappened.collectors.logs import parse as log_parse
from whathappened.collectors.logs.elasticsearch import query as log_query
from whathappened.collectors.logs.elasticsearch.collector import LogCollector, make_client

from tests.collectors.logs.elasticsearch.test_live import comparable
from tests.fixtures.search import SearchServer
from whathappened.config import ElasticsearchSettings
from whathappened.kinds import Kind
from whathappened.model import ContainerInfo, NodeInfo, PodInfo, Window
from whathappened.scope import Query, Scope, merge_nodes, merge_pods

T0 = datetime(2026, 11, 20, 7, tzinfo=UTC)
WINDOW = Window(T0 - timedelta(hours=1), T0 + timedelta(hours=1))
QUERY = Query("exp-req", "ns", WINDOW)
PREFIX = "requests"


def line(at: datetime, pod: str, container: str, message: str) -> dict[str, Any]:
    return {
        "@timestamp": at.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "message": message,
        "kubernetes": {
            "namespace": "ns",
            "pod": {"name": pod},
            "node": {"name": "n-0"},
            "container": {"name": container},
            "labels": {"experiment": "exp-req"},
        },
        "host": {"name": "n-0"},
    }


def documents() -> list[dict[str, Any]]:
    docs = []
    # p-0: the trainer dies at T0+29s; its sidecar logs on afterwards (the pod's newest lines are the sidecar's)
    docs += [line(T0 + timedelta(seconds=s), "p-0", "trainer", f"trainer step {s}") for s in range(29)]
    docs.append(
        line(T0 + timedelta(seconds=29), "p-0", "trainer", "RuntimeError: CUDA error: unspecified launch failure")
    )
    docs += [line(T0 + timedelta(minutes=1, seconds=s), "p-0", "sidecar", f"sidecar beat {s}") for s in range(30)]
    # p-1: one container, ends at T0+2m: its newest lines are its own
    docs += [line(T0 + timedelta(minutes=2, seconds=s - 25), "p-1", "trainer", f"p1 step {s}") for s in range(25)]
    # p-2: restarted at T0+10s (previous instance ended), the new instance logs on
    docs += [line(T0 + timedelta(seconds=s), "p-2", "trainer", f"first run {s}") for s in range(10)]
    docs += [line(T0 + timedelta(minutes=3, seconds=s), "p-2", "trainer", f"second run {s}") for s in range(30)]
    docs.append({"@timestamp": "2026-11-20T07:00:31.000Z", "host": {"name": "n-0"}, "message": "NVRM: Xid (PCI:0000:9b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."})  # fmt: skip
    return docs


def scope_pods() -> tuple[PodInfo, ...]:
    def ended(at: datetime) -> ContainerInfo:
        return ContainerInfo(name="trainer", state="terminated", exit_code=1, finished=at)

    sidecar = ContainerInfo(name="sidecar", state="running")
    restarted = ContainerInfo(
        name="trainer", state="running", restarts=1, last_exit_code=1, last_finished=T0 + timedelta(seconds=10)
    )
    return (
        PodInfo("p-0", "ns", node="n-0", phase="Running", containers=(ended(T0 + timedelta(seconds=30)), sidecar)),
        PodInfo("p-1", "ns", node="n-0", phase="Failed", containers=(ended(T0 + timedelta(minutes=2)),)),
        PodInfo("p-2", "ns", node="n-0", phase="Running", containers=(restarted,)),
    )


@pytest.fixture(scope="module")
def loaded(search_server: SearchServer) -> ElasticsearchSettings:
    bulk = []
    for doc in documents():
        bulk += [json.dumps({"create": {"_index": "logs-k8s"}}), json.dumps(doc)]
    search_server.load_ndjson(PREFIX, "\n".join(bulk))
    return ElasticsearchSettings(url=search_server.url, log_index=f"{PREFIX}--logs-*", event_index=f"{PREFIX}--ev-*")


def run(settings: ElasticsearchSettings, limits: log_parse.Limits | None = None) -> tuple[LogCollector, Scope, list]:
    collector = LogCollector(make_client(settings, flavor="opensearch"), settings, limits=limits)
    found = collector.discover(QUERY)
    scope = Scope(QUERY, merge_pods([scope_pods(), found.pods]), merge_nodes([found.nodes]))
    return collector, scope, collector.collect(scope)


def offline(scope: Scope, limits: log_parse.Limits | None = None) -> list:
    limits = limits or log_parse.Limits()
    docs = [("logs-k8s", doc) for doc in documents()]
    return log_parse.events_from_documents(docs, scope, log_parse.mapping_for("ecs"), limits)


@pytest.mark.servers
def test_last_lines_come_from_one_aggregation_and_exact_follow_ups(loaded: ElasticsearchSettings) -> None:
    collector, scope, events = run(loaded)
    assert {p.name for p in scope.pods} == {"p-0", "p-1", "p-2"}
    assert comparable(events) == comparable(offline(scope))
    tails = [e for e in events if e.kind == Kind.LOG_LINE]
    trainer = [e.summary for e in tails if e.subject.pod == "p-0"]
    assert len(trainer) == 20 and trainer[-1].startswith("RuntimeError: CUDA error") and "trainer step 10" in trainer
    assert [e.summary for e in tails if e.subject.pod == "p-2"] == [f"first run {s}" for s in range(10)]
    assert len([e for e in tails if e.subject.pod == "p-1"]) == 20
    assert any(e.kind == Kind.GPU_XID and e.subject.node == "n-0" for e in events)
    # field caps + one round to discover; one round to collect + one for the two containers the aggregation
    # could not settle (p-0's trainer under its sidecar's lines, p-2's first run under its second)
    assert collector.requests == 4, collector.request_log


@pytest.mark.servers
def test_more_last_lines_than_top_hits_allows_take_a_search_each(loaded: ElasticsearchSettings) -> None:
    limits = log_parse.Limits(last_lines=101)
    collector, scope, events = run(loaded, limits)
    assert comparable(events) == comparable(offline(scope, limits))
    assert len([e for e in events if e.kind == Kind.LOG_LINE and e.subject.pod == "p-0"]) == 30
    assert collector.requests == 3, collector.request_log  # the exact searches all go in the collect round


@pytest.mark.servers
def test_pages_of_signature_lines_follow_in_later_rounds(loaded: ElasticsearchSettings) -> None:
    collector = LogCollector(make_client(loaded, flavor="opensearch"), loaded, page_size=1)
    found = collector.discover(QUERY)
    scope = Scope(QUERY, merge_pods([scope_pods(), found.pods]), found.nodes)
    events = collector.collect(scope)
    assert comparable(events) == comparable(offline(scope))
    assert collector.requests > 4


def test_importing_the_collector_leaves_the_async_transports_out() -> None:
    code = (
        "import sys; import whathappened.collectors.logs.elasticsearch.collector; "
        "print('aiohttp' in sys.modules, 'httpx' in sys.modules); import httpx; print(httpx.__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False", "httpx"]


@pytest.mark.servers
def test_all_namespaces_discovery_keys_pods_by_namespace_too(loaded: ElasticsearchSettings) -> None:
    """Bound to a namespace the pod list needs no namespace key; across namespaces it does: both find the same."""
    across = Query(QUERY.experiment, None, WINDOW)
    bound = LogCollector(make_client(loaded, flavor="opensearch"), loaded).discover(QUERY)
    every = LogCollector(make_client(loaded, flavor="opensearch"), loaded).discover(across)
    assert [(p.namespace, p.name, p.node, p.containers) for p in bound.pods] == [
        (p.namespace, p.name, p.node, p.containers) for p in every.pods
    ]
    assert {p.name for p in every.pods} == {"p-0", "p-1", "p-2"}
    assert {c.name for p in every.pods if p.name == "p-0" for c in p.containers} == {"sidecar", "trainer"}


@pytest.mark.servers
def test_a_pod_seen_on_two_nodes_is_on_the_one_it_logged_on_last(search_server: SearchServer) -> None:
    """The pod list carries no times; only for a pod on several nodes one more search asks where it was last
    (here the later node sorts first by name, so bucket order alone would name the wrong one)."""
    docs = [line(T0 + timedelta(minutes=m), "p-9", "trainer", f"step {m}") for m in range(5)]
    for doc in docs[:3]:
        doc["kubernetes"]["node"]["name"] = doc["host"]["name"] = "n-9"
    for doc in docs[3:]:
        doc["kubernetes"]["node"]["name"] = doc["host"]["name"] = "n-1"
    docs.append(line(T0, "p-8", "trainer", "a pod on one node"))
    bulk = [part for doc in docs for part in (json.dumps({"create": {"_index": "logs-k8s"}}), json.dumps(doc))]
    search_server.load_ndjson("moved", "\n".join(bulk))
    settings = ElasticsearchSettings(url=search_server.url, log_index="moved--logs-*", event_index="moved--ev-*")
    collector = LogCollector(make_client(settings, flavor="opensearch"), settings)
    found = collector.discover(QUERY)
    assert [(p.name, p.node) for p in found.pods] == [("p-8", "n-0"), ("p-9", "n-1")]
    offline = log_parse.discover_from_documents([("logs-k8s", d) for d in docs], QUERY, log_parse.mapping_for("ecs"))
    assert [(p.name, p.node) for p in offline.pods] == [(p.name, p.node) for p in found.pods]
    assert collector.requests == 3, collector.request_log  # field caps, one round, where p-9 was last


@pytest.mark.servers
def test_an_unknown_experiment_asks_for_candidates_in_one_more_round(loaded: ElasticsearchSettings) -> None:
    collector = LogCollector(make_client(loaded, flavor="opensearch"), loaded)
    found = collector.discover(Query("exp-typo", "ns", WINDOW))
    assert found.pods == () and found.candidates == ("exp-req",)
    assert collector.requests == 3, collector.request_log  # field caps, the discovery round, the label values


def archived_event(pod: str, reason: str, message: str, at: datetime, kind: str = "Pod") -> dict[str, Any]:
    stamp = at.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "involvedObject": {"apiVersion": "v1", "kind": kind, "name": pod, "namespace": "ns"},
        "metadata": {"name": f"{pod}.{reason.lower()}", "namespace": "ns", "uid": f"uid-{pod}-{reason}"},
        "reason": reason,
        "message": message,
        "type": "Warning",
        "eventTime": stamp.replace(".000Z", ".000000Z"),
        "@timestamp": stamp,
    }


@pytest.mark.servers
def test_a_large_experiment_asks_the_event_archive_by_its_names_prefixes(search_server: SearchServer) -> None:
    """1,500 pods and 1,100 nodes: the archive is asked by the pods' and the nodes' common prefixes (3 KB, not the
    names' 370 KB), and what came back about other objects sharing a prefix is dropped when read."""
    pods = tuple(PodInfo(f"big-train-worker-{i}", "ns", node=f"gpu-node-pool-a-{i % 1100}") for i in range(1500))
    docs = [
        archived_event("big-train-worker-7", "Killing", "Stopping container trainer", T0),
        archived_event("big-train-worker-99999", "Killing", "another job's pod, the same prefix", T0),
        archived_event("gpu-node-pool-a-3", "NodeNotReady", "Node status is now: NodeNotReady", T0, "Node"),
        archived_event("gpu-node-pool-a-5000", "NodeNotReady", "a node of the pool outside the scope", T0, "Node"),
    ]
    bulk = [part for doc in docs for part in (json.dumps({"create": {"_index": "ev-k8s"}}), json.dumps(doc))]
    search_server.load_ndjson("archive", "\n".join(bulk))
    settings = ElasticsearchSettings(url=search_server.url, log_index="archive--logs-*", event_index="archive--ev-*")
    collector = LogCollector(make_client(settings, flavor="opensearch"), settings)
    scope = Scope(
        QUERY, merge_pods([pods]), merge_nodes([tuple(NodeInfo(n) for n in {p.node for p in pods if p.node})])
    )
    events = collector.collect(scope)
    about = sorted((e.subject.pod or e.subject.node, e.attrs.get("reason")) for e in events)
    assert about == [("big-train-worker-7", "Killing"), ("gpu-node-pool-a-3", "NodeNotReady")], about
    names = kube_parse.event_names(scope)
    asked = json.dumps(log_query.archived_events(WINDOW, names, (scope.pod_names, scope.node_names)))
    assert '"big-train-worker-"' in asked and '"gpu-node-pool-a-"' in asked
    assert len(asked) * 20 < len(json.dumps(log_query.archived_events(WINDOW, names)))  # by every name
