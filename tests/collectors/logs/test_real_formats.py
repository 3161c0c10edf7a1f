"""The log store's real document shapes, read from the verbatim samples in tests/data/real-formats (copied with
their SOURCES.md from shared/reference): each shipper's container line, a node's journald and syslog lines, and
Events archived by Metricbeat / Elastic Agent, with no preset named. Each sample is read as it is, then carries a
real failure line in its own text field, and the failure is found for its own pod or node."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import pytest
from whathappened.collectors.logs import parse as log_parse
from whathappened.collectors.logs.fields import (
    NODE_MAPPING,
    Reading,
    detect,
    event_of,
    host_of,
    label_value,
    message_of,
    name_of,
    set_path,
    time_of,
)

from tests.support import REPO
from whathappened.kinds import Kind
from whathappened.model import NodeInfo, PodInfo, Window
from whathappened.scope import Query, Scope
from whathappened.timeutils import parse_timestamp

SAMPLES = REPO / "tests" / "data" / "real-formats"
AUTO = Reading()


def sample(name: str) -> dict[str, Any]:
    text = (SAMPLES / name).read_text(encoding="utf-8")
    if name.endswith(".out"):  # Fluent Bit's test output: [time, record]
        return json.loads(text)[1]
    if name.endswith(".cue"):
        return _cue_output(text)
    doc = json.loads(text)
    if "_source" in doc:  # an Elasticsearch hit
        return doc["_source"]
    return doc["expected"][0] if "expected" in doc else doc


def _cue_output(text: str) -> dict[str, Any]:
    """Vector's documented ``output: log: {...}`` block: CUE's ``"key": value`` lines as JSON."""
    block = text[text.index("output: log: {") + len("output: log: ") :]
    body = block[: block.rindex("}\n\t\t},") + 1]
    body = re.sub(r'(?m)^(\s*"[^"]+"):\s+', r"\1: ", body)
    body = re.sub(r'(?m)("|\]|\}|true|false|\d)\n(\s*")', r"\1,\n\2", body)
    return json.loads(body)


# file -> (preset detected, pod, namespace, node, container, time, a label key and its value as written)
CONTAINER_SAMPLES: dict[str, tuple[str, str, str, str | None, str, str, tuple[str, str]]] = {
    "elastic-agent-8.1-kubernetes.container_logs-sample_event.json": (
        "ecs", "nginx-deployment-66b6c48dd5-ffdxp", "default", "kind-control-plane", "nginx",
        "2021-12-14T09:42:30.686Z", ("app", "nginx"),
    ),
    "fluentbit-kubernetes-filter-test-output-namespace-labels.out": (
        "fluent-bit", "base-with-namespace-labels-and-annotations", "core", "ip-10-49-18-80.eu-west-1.compute.internal",
        "fluent-bit", "", ("app.kubernetes.io/name", "fluent-bit"),
    ),
    "fluentbit-kubernetes-filter-test-output-owner-references.out": (
        "fluent-bit", "base-with-owner-references", "core", "ip-10-49-18-80.eu-west-1.compute.internal",
        "fluent-bit", "", ("", ""),
    ),
    "fluentbit-0.14-es-hit-logstash-index-cri-parser.json": (
        "fluent-bit", "fluent-bit-wjnfq", "dev-logging", "10.63.56.245", "fluent-bit",
        "2018-11-03T19:31:10.000Z", ("kubernetes.io/cluster-service", "true"),
    ),
    "vector-kubernetes_logs-documented-sample-output.cue": (
        "vector", "storage-provisioner", "kube-system", "minikube", "storage-provisioner",
        "2020-10-15T11:01:46.499555308Z", ("addonmanager.kubernetes.io/mode", "Reconcile"),
    ),
}  # fmt: skip

# file -> (host, time, text) of a node's own document
NODE_SAMPLES: dict[str, tuple[str, str, str]] = {
    "elastic-agent-8.3-journald.log-sample_event.json": ("sleipnir", "2020-07-22T13:17:10.012Z", "System journal"),
    "elastic-agent-8.15-system.syslog-journald-pipeline-expected.json": (
        "bullseye",
        "2025-05-27T11:19:35.000Z",
        "Stopped System Logging Service.",
    ),
    # host.name is the agent's container; host.hostname the machine
    "elastic-agent-8.10-system.syslog-file-sample_event.json": (
        "rmbkmonitor04",
        "1986-04-25T21:23:45.388Z",
        "constraint_0_power_limit_uw exceeded.",
    ),
    "otel-elasticsearchexporter-otel-mode-golden-log.json": (
        "prod-server-01",
        "2024-01-15T10:30:00Z",  # "@timestamp": "1705314600000.0", epoch milliseconds as a string
        "Sample log message with important information",
    ),
    "otel-elasticsearchexporter-ecs-mode-log.json": (
        "my-host",
        "2024-03-12T20:00:41.123456Z",
        "User authentication failed",
    ),
}

CUDA_OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
    "79.15 GiB of which 1.12 GiB is free."
)
XID_79 = "NVRM: Xid (PCI:0000:b3:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."


@pytest.mark.parametrize("name", sorted(CONTAINER_SAMPLES))
def test_container_sample_is_read_as_its_shipper_wrote_it(name: str) -> None:
    preset, pod, namespace, node, container, at, (label, value) = CONTAINER_SAMPLES[name]
    doc = sample(name)
    mapping = AUTO.for_doc(doc)
    assert mapping.name == preset and detect(doc) is mapping
    assert name_of(doc, mapping.pod) == pod and name_of(doc, mapping.namespace) == namespace
    assert name_of(doc, mapping.node) == node and name_of(doc, mapping.container) == container
    assert message_of(doc, mapping) != ""
    if at:
        assert time_of(doc, mapping) == parse_timestamp(at)
    if label:
        assert label_value(doc, mapping, label) == value


@pytest.mark.parametrize("name", sorted(CONTAINER_SAMPLES))
def test_container_sample_carrying_a_failure_explains_its_pod(name: str) -> None:
    """The sample as stored, its text field replaced by a CUDA OOM: found for its own pod, in its own time."""
    _preset, pod, namespace, _node, _container, at, (label, value) = CONTAINER_SAMPLES[name]
    doc = copy.deepcopy(sample(name))
    mapping = AUTO.for_doc(doc)
    text_field = next(f for f in mapping.message if name_of(doc, f) is not None)
    set_path_flat(doc, text_field, CUDA_OOM)
    when = parse_timestamp(at) if at else None
    if when is None:  # Fluent Bit's test output keeps the time outside the record
        when = parse_timestamp("2026-11-20T07:00:00Z")
        set_path(doc, mapping.timestamp[0], "2026-11-20T07:00:00Z")
    assert when is not None
    window = Window(when - timedelta(hours=1), when + timedelta(hours=1))
    query = Query("exp", namespace, window, (label,) if label else ("experiment",))
    scope = Scope(query, (PodInfo(name=pod, namespace=namespace),))
    events = log_parse.events_from_documents([("idx", doc)], scope, AUTO)
    oom = [e for e in events if e.kind == Kind.CUDA_OOM]
    assert len(oom) == 1 and oom[0].subject.pod == pod and oom[0].at == when, events
    if label:
        found = log_parse.discover_from_documents([("idx", doc)], Query(value, namespace, window, (label,)), AUTO)
        assert [p.name for p in found.pods] == [pod]


@pytest.mark.parametrize("name", sorted(NODE_SAMPLES))
def test_node_sample_is_read_as_the_machine_wrote_it(name: str) -> None:
    host, at, text = NODE_SAMPLES[name]
    doc = sample(name)
    assert detect(doc) is None and AUTO.for_doc(doc) is NODE_MAPPING
    assert host_of(doc, NODE_MAPPING, {host}) == host
    assert host_of(doc, NODE_MAPPING) == host  # the machine's own name comes first where both are written
    assert time_of(doc, NODE_MAPPING) == parse_timestamp(at)
    assert message_of(doc, NODE_MAPPING).startswith(text)


@pytest.mark.parametrize("name", sorted(NODE_SAMPLES))
@pytest.mark.parametrize("prefix", ["", "[ 1843.308145] ", "Dec  2 11:38:47 worker4 kernel: [  219.470994] "])
def test_node_sample_carrying_an_xid_explains_its_node(name: str, prefix: str) -> None:
    """The sample with its text replaced by an Xid 79 line, as journald holds it or as a syslog file keeps it
    (the printk uptime, the syslog header): the node's own GPU event, never anyone else's."""
    host, at, _text = NODE_SAMPLES[name]
    doc = copy.deepcopy(sample(name))
    text_field = next(f for f in NODE_MAPPING.message if name_of(doc, f) is not None)
    set_path_flat(doc, text_field, prefix + XID_79)
    when = parse_timestamp(at)
    assert when is not None
    window = Window(when - timedelta(hours=1), when + timedelta(hours=1))
    pod = PodInfo(name="rank-0", namespace="ml", node=host)
    scope = Scope(Query("exp", "ml", window), (pod,), (NodeInfo(name=host),))
    events = log_parse.events_from_documents([("idx", doc)], scope, AUTO)
    xids = [e for e in events if e.kind == Kind.GPU_XID]
    assert len(xids) == 1 and xids[0].subject.node == host and xids[0].attrs.get("xid") == 79, events
    elsewhere = PodInfo(name="rank-0", namespace="ml", node="another-node")
    other = Scope(Query("exp", "ml", window), (elsewhere,), (NodeInfo(name="another-node"),))
    assert not [e for e in log_parse.events_from_documents([("idx", doc)], other, AUTO) if e.kind == Kind.GPU_XID]


# file -> (reason, involved kind, involved name, namespace, first, last)
EVENT_SAMPLES = {
    "elastic-agent-8.0-kubernetes.event-sample_event.json": (
        "AssociationError", "Kibana", "monitor", "beats", "2020-06-25T07:20:25.000Z", "2020-06-25T12:30:27.000Z",
    ),
    "metricbeat-6.0-kubernetes-event-data.json": (
        "SuccessfulCreate", "ReplicaSet", "prometheus-2552087900", "default",
        "2017-05-16T17:30:09Z", "2017-05-16T17:30:09Z",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EVENT_SAMPLES))
def test_metricbeat_event_is_read_back_as_the_api_event(name: str) -> None:
    reason, kind, involved, namespace, first, last = EVENT_SAMPLES[name]
    event = event_of(sample(name))
    assert event is not None
    assert event["reason"] == reason and event["involvedObject"]["kind"] == kind
    assert event["involvedObject"]["name"] == involved and event["involvedObject"]["namespace"] == namespace
    assert (event["firstTimestamp"], event["lastTimestamp"]) == (first, last)
    assert detect(sample(name)) is None  # never a log line


def test_metricbeat_pod_event_joins_the_timeline() -> None:
    """A Metricbeat-archived pod eviction, the sample's shape with the pod's facts: on the pod's timeline."""
    doc = copy.deepcopy(sample("elastic-agent-8.0-kubernetes.event-sample_event.json"))
    event = doc["kubernetes"]["event"]
    event.update(reason="Evicted", type="Warning", message="The node was low on resource: memory.")
    event["involved_object"].update(kind="Pod", name="rank-3", api_version="v1")
    event["metadata"]["namespace"] = "ml"
    at = parse_timestamp(event["timestamp"]["last_occurrence"])
    assert at is not None
    scope = Scope(
        Query("exp", "ml", Window(at - timedelta(hours=1), at + timedelta(hours=1))), (PodInfo("rank-3", "ml"),)
    )
    events = log_parse.events_from_documents([("metrics-kubernetes.event-default", doc)], scope, AUTO)
    assert [(e.kind, e.subject.pod, e.at) for e in events] == [(Kind.EVICTED, "rank-3", at)]


def set_path_flat(doc: dict[str, Any], path: str, value: str) -> None:
    """Replace the value at ``path`` where the document holds it (nested or as a flat dotted key)."""
    if path in doc:
        doc[path] = value
        return
    head, _, rest = path.partition(".")
    inner = doc.get(head)
    if rest and isinstance(inner, Mapping):
        set_path_flat(inner, rest, value)  # type: ignore[arg-type]
        return
    set_path(doc, path, value)
