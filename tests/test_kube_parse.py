"""The pure Kubernetes parsers on recorded payloads: both Event API shapes and the archived one, the reason
table, maintenance notices, pods' own timelines, nodes, and discovery from objects."""

from __future__ import annotations

import copy
import itertools
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from whathappened.collectors.kube_objects.parse import (
    REASONS,
    discover_from_objects,
    events_from_objects,
    node_events,
    parse_event,
    parse_node,
    parse_pod,
    pod_events,
    pod_experiment,
)

from tests.kube_double.store import to_events_v1
from tests.support import all_scenarios
from whathappened.kinds import Kind
from whathappened.model import PodInfo, Severity, Window
from whathappened.scope import DEFAULT_LABEL_KEYS, Query, Scope

SCENARIOS = {s.name: s for s in all_scenarios()}
WINDOW = Window(datetime(2026, 11, 20, 6, tzinfo=UTC), datetime(2026, 11, 20, 8, tzinfo=UTC))


def recorded(scenario: str, name: str) -> list[dict[str, Any]]:
    return json.loads((SCENARIOS[scenario].path / "kubernetes" / f"{name}.json").read_text())["items"]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def node_event(
    reason: str, message: str, component: str = "kubelet", kind: str = "Node", **extra: Any
) -> dict[str, Any]:
    involved = {
        "kind": kind,
        "name": "node-a" if kind == "Node" else "w-0",
        "namespace": None if kind == "Node" else "ml",
    }
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": "x.1",
            "namespace": "default",
            "uid": f"uid-{reason}",
            "creationTimestamp": "2026-11-20T07:00:00Z",
        },
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "source": {"component": component, "host": "node-a"},
        "firstTimestamp": "2026-11-20T07:00:00Z",
        "lastTimestamp": "2026-11-20T07:00:00Z",
        "count": 1,
        "type": extra.pop("type", "Warning"),
        "eventTime": None,
        **extra,
    }


# --- events: both API shapes and the archive ---


def test_core_v1_maintenance_notice() -> None:
    raw = next(e for e in recorded("maintenance-eviction", "events") if e["reason"] == "RebootScheduled")
    event = parse_event(raw)
    assert event is not None
    assert (event.kind, event.at, event.subject.node) == (
        Kind.MAINTENANCE_NOTICE,
        at("2026-11-13T09:00:00Z"),
        raw["involvedObject"]["name"],
    )
    assert event.attrs["provider"] == "azure"
    assert event.attrs["event_type"] == "Reboot"
    assert event.attrs["not_before"] == at("2026-11-13T09:15:00Z")  # read from the message's own time
    assert event.severity is Severity.WARNING


def test_events_k8s_io_shape_gives_the_same_event() -> None:
    for raw in recorded("maintenance-eviction", "events") + recorded("oom-killed", "events"):
        core, newer = parse_event(raw), parse_event(to_events_v1(raw))
        assert core is not None and newer is not None
        assert core.identity == newer.identity
        assert core.attrs["count"] == newer.attrs["count"]


def test_events_k8s_io_with_event_time_and_series() -> None:
    raw = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "w-0.abc", "namespace": "ml", "uid": "u1", "creationTimestamp": "2026-11-20T06:59:00Z"},
        "eventTime": "2026-11-20T07:00:00.123456Z",
        "series": {"count": 4, "lastObservedTime": "2026-11-20T07:03:00.000001Z"},
        "reportingController": "kubelet",
        "reportingInstance": "node-a",
        "action": "Killing",
        "reason": "Unhealthy",
        "regarding": {
            "kind": "Pod",
            "namespace": "ml",
            "name": "w-0",
            "uid": "p1",
            "fieldPath": "spec.containers{trainer}",
        },
        "note": 'Liveness probe failed: Get "http://10.0.0.1:8080/healthz": context deadline exceeded',
        "type": "Warning",
    }
    event = parse_event(raw)
    assert event is not None
    assert event.kind == Kind.PROBE_FAILED and event.attrs["probe"] == "liveness"
    assert event.at == at("2026-11-20T07:00:00.123456Z")  # eventTime first
    assert (event.subject.namespace, event.subject.pod, event.subject.container, event.subject.node) == (
        "ml",
        "w-0",
        "trainer",
        "node-a",
    )
    assert event.attrs["count"] == 4
    assert event.attrs["last_seen"] == at("2026-11-20T07:03:00.000001Z")


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"eventTime": "2026-11-20T07:05:00Z", "lastTimestamp": "2026-11-20T07:04:00Z"}, "2026-11-20T07:05:00Z"),
        ({"series": {"count": 2, "lastObservedTime": "2026-11-20T07:06:00Z"}}, "2026-11-20T07:06:00Z"),
        ({"firstTimestamp": "2026-11-20T07:01:00Z", "lastTimestamp": None}, "2026-11-20T07:01:00Z"),
        ({"firstTimestamp": None, "lastTimestamp": None}, "2026-11-20T07:00:00Z"),  # creationTimestamp
    ],
)
def test_event_time_precedence(fields: dict[str, Any], expected: str) -> None:
    raw = node_event("NodeNotReady", "Node node-a status is now: NodeNotReady")
    raw.update(firstTimestamp="2026-11-20T06:00:00Z", lastTimestamp=None)
    raw.update(fields)
    event = parse_event(raw)
    assert event is not None and event.at == at(expected)


def test_archived_exporter_event_parses_like_the_api_one() -> None:
    lines = (SCENARIOS["history-after-deletion"].path / "logs.ndjson").read_text().splitlines()
    archived = [json.loads(b) for a, b in itertools.pairwise(lines) if "kube-events" in a]
    assert archived
    for doc in archived:
        plain = copy.deepcopy(doc)
        plain.pop("@timestamp")
        plain["involvedObject"].pop("labels", None)
        assert parse_event(doc) is not None
        assert parse_event(doc).identity == parse_event(plain).identity  # type: ignore[union-attr]


# --- the reason table ---

REQUIRED: list[tuple[str, str, str, Kind]] = [
    ("Killing", "Stopping container pytorch", "Pod", Kind.KILLING),
    ("Evicted", "The node was low on resource: memory. ", "Pod", Kind.EVICTED),
    ("Preempted", "Preempted by pod 3c2b-uid on node node-b", "Pod", Kind.PREEMPTED),
    ("Preempting", "Preempted in order to admit critical pod", "Pod", Kind.PREEMPTED),
    ("FailedScheduling", "0/8 nodes are available: 8 Insufficient nvidia.com/gpu.", "Pod", Kind.FAILED_SCHEDULING),
    ("TaintManagerEviction", "Marking for deletion Pod ml/w-0", "Pod", Kind.TAINT_EVICTION),
    ("NodeNotReady", "Node node-a status is now: NodeNotReady", "Node", Kind.NODE_NOT_READY),
    ("NodeNotSchedulable", "Node node-a status is now: NodeNotSchedulable", "Node", Kind.NODE_CORDONED),
    ("NodeSchedulable", "Node node-a status is now: NodeSchedulable", "Node", Kind.NODE_UNCORDONED),
    ("Rebooted", "Node node-a has been rebooted, boot id: 1b2c", "Node", Kind.NODE_REBOOTED),
    ("EvictionThresholdMet", "Attempting to reclaim memory", "Node", Kind.NODE_PRESSURE),
    (
        "OOMKilling",
        "Memory cgroup out of memory: Killed process 41232 (python) total-vm:1kB, anon-rss:1kB, file-rss:1kB",
        "Node",
        Kind.KERNEL_OOM,
    ),
    ("RebootScheduled", "Reboot Scheduled for Fri, 20 Nov 2026 07:16:00 GMT", "Node", Kind.MAINTENANCE_NOTICE),
    ("FreezeScheduled", "Freeze Scheduled for Fri, 20 Nov 2026 06:55:00 GMT", "Node", Kind.MAINTENANCE_NOTICE),
    ("RedeployScheduled", "Redeploy Scheduled for Fri, 20 Nov 2026 06:55:00 GMT", "Node", Kind.MAINTENANCE_NOTICE),
    ("TerminateScheduled", "Terminate Scheduled for Fri, 20 Nov 2026 06:55:00 GMT", "Node", Kind.MAINTENANCE_NOTICE),
    (
        "PreemptScheduled",
        "Preempt Scheduled: Sat, 01 Aug 2026 05:41:02 GMT. EventId: 40B7BD88-C56E-44E4-93F6-75CEDACE2869",
        "Node",
        Kind.SPOT_INTERRUPTION,
    ),
    (
        "SpotInterruption",
        "Spot ITN received. Instance will be interrupted at 2026-11-20T07:12:00Z \n",
        "Node",
        Kind.SPOT_INTERRUPTION,
    ),
    (
        "ScheduledEvent",
        "system-reboot will occur between 21 Jan 2019 09:00:43 GMT and 21 Jan 2019 09:17:23 GMT because scheduled reboot\n",
        "Node",
        Kind.MAINTENANCE_NOTICE,
    ),
    (
        "RebalanceRecommendation",
        "Rebalance recommendation received. Instance will be cordoned at 2026-11-20T07:00:00Z \n",
        "Node",
        Kind.REBALANCE_RECOMMENDATION,
    ),
    ("CordonAndDrain", "Node successfully cordoned and drained", "Node", Kind.DRAIN),
    ("ImpendingNodeTermination", "Node is going to be terminated", "Node", Kind.MAINTENANCE_NOTICE),
    ("RemovingNode", "Removing Node node-a from Controller", "Node", Kind.NODE_DELETED),
    ("NodeLost", "Node node-a is unresponsive", "Node", Kind.NODE_DELETED),
    ("DeletingNode", "Deleting node node-a because it does not exist in the cloud provider", "Node", Kind.NODE_DELETED),
    ("BackOff", "Back-off restarting failed container app in pod w-0_ml(uid)", "Pod", Kind.BACK_OFF),
    ("BackOff", 'Back-off pulling image "nvcr.io/x:1"', "Pod", Kind.IMAGE_PULL_FAILED),
    ("Failed", 'Failed to pull image "nvcr.io/x:1": rpc error: not found', "Pod", Kind.IMAGE_PULL_FAILED),
    ("Failed", "Error: ErrImagePull", "Pod", Kind.IMAGE_PULL_FAILED),
    ("Failed", "Error: ImagePullBackOff", "Pod", Kind.IMAGE_PULL_FAILED),
    ("Failed", 'Error: secret "hf-token" not found', "Pod", Kind.CONFIG_ERROR),
    ("Failed", "Error: CreateContainerConfigError", "Pod", Kind.CONFIG_ERROR),
    ("FailedMount", 'MountVolume.SetUp failed for volume "data" : configmap "x" not found', "Pod", Kind.CONFIG_ERROR),
    ("Unhealthy", "Liveness probe failed: HTTP probe failed with statuscode: 500", "Pod", Kind.PROBE_FAILED),
    ("DeadlineExceeded", "Job was active longer than specified deadline", "Job", Kind.DEADLINE_EXCEEDED),
    ("BackoffLimitExceeded", "Job has reached the specified backoff limit", "Job", Kind.DEADLINE_EXCEEDED),
    ("Completed", "Job completed", "Job", Kind.JOB_COMPLETED),
    ("SuccessfulDelete", "Deleted pod: w-0", "Job", Kind.POD_DELETED),
    ("Pulled", 'Successfully pulled image "x"', "Pod", Kind.KUBE_EVENT),
    ("KernelDeadlock", "task docker:7 blocked for more than 120 seconds.", "Node", Kind.NODE_CONDITION),
    ("GPUXid", "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.", "Node", Kind.GPU_XID),
]


@pytest.mark.parametrize(("reason", "message", "involved", "kind"), REQUIRED, ids=[f"{r[0]}-{r[3]}" for r in REQUIRED])
def test_reason_table(reason: str, message: str, involved: str, kind: Kind) -> None:
    event = parse_event(node_event(reason, message, kind=involved))
    assert event is not None and event.kind == kind


def test_notice_attributes() -> None:
    spot = parse_event(node_event("SpotInterruption", REQUIRED[17][1], component="aws-node-termination-handler"))
    aws = parse_event(node_event("ScheduledEvent", REQUIRED[18][1]))
    preempt = parse_event(node_event("PreemptScheduled", REQUIRED[16][1]))
    gke = parse_event(node_event("ImpendingNodeTermination", "Node is going to be terminated"))
    assert spot is not None and aws is not None and preempt is not None and gke is not None
    assert (spot.attrs["provider"], spot.attrs["not_before"]) == ("aws", at("2026-11-20T07:12:00Z"))
    assert (aws.attrs["event_type"], aws.attrs["not_before"]) == ("system-reboot", at("2019-01-21T09:00:43Z"))
    assert (preempt.attrs["provider"], preempt.attrs["event_id"]) == ("azure", "40B7BD88-C56E-44E4-93F6-75CEDACE2869")
    assert preempt.attrs["not_before"] == at("2026-08-01T05:41:02Z")
    assert gke.attrs["provider"] == "gcp" and "not_before" not in gke.attrs


def test_kind_attributes() -> None:
    oom = parse_event(node_event(*REQUIRED[11][:2]))
    xid = parse_event(node_event(*REQUIRED[-1][:2]))
    preempted = parse_event(node_event(*REQUIRED[2][:2], kind="Pod"))
    evicted = parse_event(node_event(*REQUIRED[1][:2], kind="Pod"))
    assert oom is not None and (oom.attrs["pid"], oom.attrs["process"]) == (41232, "python")
    assert xid is not None and (xid.attrs["xid"], xid.attrs["pci"]) == (79, "0000:3b:00")
    assert preempted is not None and preempted.attrs["by"] == "3c2b-uid"
    assert evicted is not None and evicted.attrs["resource"] == "memory"


def test_reason_table_is_data_over_known_kinds() -> None:
    assert all(isinstance(row.kind, Kind) for row in REASONS.values())
    assert {"RebootScheduled", "SpotInterruption", "CordonAndDrain", "OOMKilling"} <= set(REASONS)


def test_pod_warning_outside_the_table_is_kept_as_a_warning() -> None:
    event = parse_event(node_event("FailedCreatePodSandBox", "Failed to create pod sandbox: cni failed", kind="Pod"))
    assert event is not None and (event.kind, event.severity) == (Kind.KUBE_EVENT, Severity.WARNING)


# --- pods ---


def test_parse_pod_oom_killed() -> None:
    pod = parse_pod(recorded("oom-killed", "pods")[0])
    assert (pod.name, pod.namespace, pod.node, pod.phase) == (
        "tokenize-redpajama-p17-7h42f",
        "data",
        "cpu-heavy-r07-n01",
        "Failed",
    )
    assert (pod.owner_kind, pod.owner_name) == ("Job", "tokenize-redpajama-p17")
    container = pod.containers[0]
    assert (container.restarts, container.reason, container.exit_code, container.last_reason) == (
        2,
        "OOMKilled",
        137,
        "OOMKilled",
    )
    assert pod.ended == at("2026-11-16T07:44:00Z")
    assert pod.sources == frozenset({"kubernetes"})


def test_gpus_requested_from_limits() -> None:
    assert parse_pod(recorded("maintenance-eviction", "pods")[0]).gpus_requested == 8


def test_pod_events_oom_current_and_previous() -> None:
    events = pod_events(recorded("oom-killed", "pods")[0])
    ooms = sorted((e.at, e.attrs["previous"]) for e in events if e.kind == Kind.OOM_KILLED)
    assert ooms == [(at("2026-11-16T07:21:00Z"), True), (at("2026-11-16T07:44:00Z"), False)]
    restarted = next(e for e in events if e.kind == Kind.CONTAINER_RESTARTED)
    assert restarted.attrs["restarts"] == 2


def test_pod_events_eviction_api_disruption() -> None:
    pod = next(p for p in recorded("maintenance-eviction", "pods") if p["metadata"]["name"].endswith("-2"))
    kinds = {e.kind: e for e in pod_events(pod)}
    assert kinds[Kind.DISRUPTION_TARGET].attrs["reason"] == "EvictionByEvictionAPI"
    assert kinds[Kind.EVICTION_API].at == at("2026-11-13T09:02:03Z")
    assert kinds[Kind.CONTAINER_TERMINATED].attrs["exit_code"] == 143


def test_pod_events_unschedulable() -> None:
    events = pod_events(recorded("unschedulable", "pods")[0])
    failed = next(e for e in events if e.kind == Kind.FAILED_SCHEDULING)
    assert failed.attrs["reason"] == "Unschedulable"
    assert "Insufficient nvidia.com/gpu" in failed.attrs["message"]
    assert failed.at == at("2026-11-19T12:30:01Z")  # the PodScheduled condition's transition


def test_pod_events_node_pressure_eviction() -> None:
    events = pod_events(recorded("node-pressure-eviction", "pods")[0])
    evicted = next(e for e in events if e.kind == Kind.EVICTED)
    assert evicted.attrs["resource"] == "memory"


def test_deletion_is_placed_when_it_was_asked_for() -> None:
    pod = copy.deepcopy(recorded("oom-killed", "pods")[0])
    pod["metadata"].update(deletionTimestamp="2026-11-20T07:30:30Z", deletionGracePeriodSeconds=30)
    deleted = next(e for e in pod_events(pod) if e.kind == Kind.POD_DELETED)
    assert (deleted.at, deleted.attrs["grace_seconds"]) == (at("2026-11-20T07:30:00Z"), 30)


def test_pod_experiment_first_key_present() -> None:
    labels = {"job-name": "b", "training.kubeflow.org/job-name": "a"}
    assert pod_experiment(labels, DEFAULT_LABEL_KEYS) == "a"
    assert pod_experiment({"other": "x"}, DEFAULT_LABEL_KEYS) is None


# --- nodes ---


def test_parse_node_providers_and_taints() -> None:
    azure = parse_node(recorded("maintenance-eviction", "nodes")[3])
    aws = parse_node(recorded("spot-preemption", "nodes")[0])
    assert (azure.provider, azure.instance_type, azure.gpu_count, azure.unschedulable, azure.ready) == (
        "azure", "Standard_ND96isr_H100_v5", 8, True, True,
    )  # fmt: skip
    assert azure.taints == ("node.kubernetes.io/unschedulable:NoSchedule",)
    assert azure.gpu_product == "NVIDIA-H100-80GB-HBM3"
    assert aws.provider == "aws"
    gce = parse_node(
        {
            "metadata": {"name": "g"},
            "spec": {
                "providerID": "gce://p/us-central1-a/g",
                "taints": [{"key": "k", "value": "v", "effect": "NoExecute"}],
            },
        }
    )
    assert (gce.provider, gce.taints) == ("gcp", ("k=v:NoExecute",))


def test_node_events_maintenance_condition_and_cordon_taint() -> None:
    node = recorded("maintenance-eviction", "nodes")[3]
    scenario = SCENARIOS["maintenance-eviction"]
    window = Window(scenario.start, scenario.end)
    events = {e.kind: e for e in node_events(node, window)}
    notice = events[Kind.MAINTENANCE_NOTICE]
    assert (notice.at, notice.attrs["provider"], notice.attrs["not_before"]) == (
        at("2026-11-13T09:00:00Z"), "azure", at("2026-11-13T09:15:00Z"),
    )  # fmt: skip
    assert events[Kind.NODE_CORDONED].at == at("2026-11-13T09:02:00Z")
    assert len(node_events(node, Window(window.start - timedelta(days=1), window.start))) == 0


def test_node_events_pressure_ready_npd_labels_and_taints() -> None:
    node = {
        "metadata": {"name": "n", "labels": {"cloud.google.com/scheduled-maintenance-time": "1795158000"}},
        "spec": {"taints": [{"key": "aws-node-termination-handler/spot-itn", "value": "spot-itn-1", "effect": "NoSchedule", "timeAdded": "2026-11-20T07:10:00Z"}]},
        "status": {"conditions": [
            {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown", "lastTransitionTime": "2026-11-20T07:20:00Z"},
            {"type": "MemoryPressure", "status": "True", "lastTransitionTime": "2026-11-20T07:05:00Z"},
            {"type": "KernelDeadlock", "status": "True", "reason": "DockerHung", "lastTransitionTime": "2026-11-20T07:06:00Z"},
            {"type": "DiskPressure", "status": "False", "lastTransitionTime": "2026-11-20T07:06:00Z"},
        ]},
    }  # fmt: skip
    events = {e.kind: e for e in node_events(node, WINDOW)}
    assert set(events) == {
        Kind.NODE_NOT_READY,
        Kind.NODE_PRESSURE,
        Kind.NODE_CONDITION,
        Kind.SPOT_INTERRUPTION,
        Kind.MAINTENANCE_NOTICE,
    }
    assert events[Kind.NODE_PRESSURE].attrs["resource"] == "memory"
    assert events[Kind.SPOT_INTERRUPTION].attrs["provider"] == "aws"
    gke = events[Kind.MAINTENANCE_NOTICE]
    assert (gke.attrs["provider"], gke.attrs["not_before"]) == ("gcp", datetime.fromtimestamp(1795158000, UTC))


# --- discovery and the scope's timeline ---


def pod(name: str, labels: dict[str, str], owner: str | None = None, namespace: str = "ml") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels}
    if owner:
        meta["ownerReferences"] = [{"kind": "Job", "name": owner, "controller": True}]
    return {"kind": "Pod", "metadata": meta}


def test_discovery_first_key_wins() -> None:
    objects = [
        pod("a", {"training.kubeflow.org/job-name": "exp"}),
        pod("b", {"job-name": "exp"}),
        pod("c", {"experiment": "other"}),
    ]
    found = discover_from_objects(objects, Query("exp", "ml", WINDOW))
    assert [p.name for p in found.pods] == ["a"]
    assert set(found.candidates) == {"exp", "other"}


def test_discovery_walks_owners_when_no_label_matches() -> None:
    job = {
        "kind": "Job",
        "metadata": {
            "name": "exp-workers-0",
            "namespace": "ml",
            "ownerReferences": [{"kind": "JobSet", "name": "exp"}],
        },
    }
    objects = [
        job,
        pod("exp-workers-0-0-x", {}, owner="exp-workers-0"),
        pod("other", {}, owner="unrelated"),
        pod("direct", {}, owner="exp"),
    ]
    found = discover_from_objects(objects, Query("exp", "ml", WINDOW))
    assert [p.name for p in found.pods] == ["direct", "exp-workers-0-0-x"]
    assert discover_from_objects(objects, Query("exp", "elsewhere", WINDOW)).pods == ()


def test_scope_timeline_window_slack_and_dedupe() -> None:
    base = node_event("NodeNotReady", "Node node-a status is now: NodeNotReady")
    inside = dict(base, lastTimestamp="2026-11-20T08:01:30Z")
    outside = dict(base, lastTimestamp="2026-11-20T08:03:00Z", metadata=dict(base["metadata"], uid="late"))
    scope = Scope(Query("exp", "ml", WINDOW), (PodInfo("w-0", "ml", node="node-a"),))
    events = events_from_objects([], [inside, to_events_v1(inside), outside], [], scope)
    assert [e.at for e in events] == [at("2026-11-20T08:01:30Z")]
    unrelated = dict(base, involvedObject={"kind": "Node", "name": "node-z"})
    assert events_from_objects([], [unrelated], [], scope) == []


def test_eviction_status_is_placed_when_the_kubelet_decided() -> None:
    events = pod_events(recorded("node-pressure-eviction", "pods")[0])
    status = next(e for e in events if e.kind == Kind.EVICTED and e.summary.startswith("pod Evicted"))
    disruption = next(e for e in events if e.kind == Kind.DISRUPTION_TARGET)
    assert status.at == disruption.at


# --- GPU health written by other agents (verbatim shapes from the agents' own output, see real-formats.md) ---

HEALTH_WINDOW = Window(datetime(2025, 1, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC))


def condition_events(condition: dict[str, Any]) -> list[Any]:
    return node_events({"metadata": {"name": "n"}, "status": {"conditions": [condition]}}, HEALTH_WINDOW)


def test_gke_xid_critical_error_reads_its_reason_as_a_map_of_xids() -> None:
    # GoogleCloudPlatform/container-engine-accelerators#497
    [event] = condition_events(
        {"lastHeartbeatTime": "2025-06-23T18:58:44Z", "lastTransitionTime": "2025-06-23T18:44:57Z",
         "message": "6e43a052-e544-467b-a972-63d7cd2ce80a", "reason": '{"31":true}', "status": "True",
         "type": "XidCriticalError"}
    )  # fmt: skip
    assert (event.kind, event.attrs["xid"], event.subject.node) == (Kind.GPU_XID, 31, "n")


def test_nvsentinel_conditions_name_the_gpu_and_what_is_wrong() -> None:
    # NVSentinel platform-connector test expectations and a real GB300 node (NVIDIA/aicr#2641)
    [xid] = condition_events(
        {"type": "GpuXidError", "status": "True", "reason": "GpuXidErrorIsNotHealthy",
         "message": "ErrorCode:44 GPU:0 Recommended Action=CONTACT_SUPPORT;", "lastTransitionTime": "2026-09-08T00:00:00Z"}
    )  # fmt: skip
    assert (xid.kind, xid.attrs["xid"], xid.subject.gpu) == (Kind.GPU_XID, 44, "0")
    [nvlink] = condition_events(
        {"type": "GpuNvlinkWatch", "status": "True", "reason": "GpuNvlinkWatchIsNotHealthy",
         "message": "ErrorCode:DCGM_FR_IMEX_UNHEALTHY GPU:0 PCI:0000:9d:00.0 GPU_UUID:GPU-bb3e1419-1111-2222-3333-444455556666"
                    " IMEX daemon status is -3 (not READY)", "lastTransitionTime": "2026-09-08T00:00:00Z"}
    )  # fmt: skip
    assert (nvlink.kind, nvlink.subject.gpu, nvlink.attrs["uuid"]) == (
        Kind.NVLINK_ERROR, "0", "GPU-bb3e1419-1111-2222-3333-444455556666",
    )  # fmt: skip
    healthy = condition_events(
        {"type": "GpuXidError", "status": "False", "reason": "GpuXidErrorIsHealthy", "message": "No Health Failures",
         "lastTransitionTime": "2026-09-08T00:00:00Z"}
    )  # fmt: skip
    assert healthy == []


def test_aks_npd_xid_condition_is_quiet_while_good_and_eks_ready_conditions_count_when_false() -> None:
    # Azure/AgentBaker#8797: a fresh GPU node's conditions
    good = {"type": "XIDError", "status": "False", "lastTransitionTime": "2026-06-30T16:57:54Z",
            "reason": "XIDErrorIsNotPresent", "message": "XID error status is good"}  # fmt: skip
    assert condition_events(good) == []
    [bad] = condition_events({"type": "AcceleratedHardwareReady", "status": "False", "reason": "NotReady",
                              "message": "", "lastTransitionTime": "2026-06-30T16:57:54Z"})  # fmt: skip
    assert bad.kind == Kind.NODE_CONDITION
    assert condition_events({"type": "AcceleratedHardwareReady", "status": "True", "reason": "Ready",
                             "lastTransitionTime": "2026-06-30T16:57:54Z"}) == []  # fmt: skip


# --- pod shapes across Kubernetes versions (real-formats.md section 5) ---


READY_LOST = {"type": "Ready", "status": "False", "reason": "PodFailed", "lastTransitionTime": "2026-11-20T07:00:05Z"}


def failed_pod(status: dict[str, Any]) -> dict[str, Any]:
    """A pod as the API returns it after the fact: its Ready condition says when it stopped."""
    base = copy.deepcopy(recorded("oom-killed", "pods")[0])
    conditions = [READY_LOST, *status.pop("conditions", [])]
    base["status"] = {"phase": "Failed", "startTime": "2026-11-20T06:00:00Z", "conditions": conditions, **status}
    return base


def terminated(reason: str, code: int, started: str | None, finished: str | None) -> list[dict[str, Any]]:
    state = {"exitCode": code, "reason": reason, "startedAt": started, "finishedAt": finished}
    return [{"name": "pytorch", "ready": False, "restartCount": 0, "state": {"terminated": state}}]


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        # 1.21: graceful node shutdown said Shutdown
        ({"reason": "Shutdown", "message": "Node is shutting, evicting pods"}, Kind.NODE_SHUTDOWN),
        # 1.22+: Terminated, and 1.22 left the pod Running
        (
            {
                "phase": "Running",
                "reason": "Terminated",
                "message": "Pod was terminated in response to imminent node shutdown.",
            },
            Kind.NODE_SHUTDOWN,
        ),
        # 1.32: a node-pressure eviction with no status.reason, only the DisruptionTarget condition
        (
            {
                "conditions": [
                    {
                        "type": "DisruptionTarget",
                        "status": "True",
                        "reason": "TerminationByKubelet",
                        "message": "The node was low on resource: memory. Threshold quantity: 100Mi, available: 51200Ki.",
                        "lastTransitionTime": "2026-11-20T07:00:00Z",
                    }
                ],
                "containerStatuses": terminated("ContainerStatusUnknown", 137, None, None),
            },
            Kind.DISRUPTION_TARGET,
        ),
    ],
    ids=["shutdown-1.21", "terminated-1.22", "disruption-only-1.32"],
)
def test_pod_status_shapes_across_versions(status: dict[str, Any], kind: Kind) -> None:
    events = pod_events(failed_pod(status))
    assert kind in {e.kind for e in events}, [(e.kind, e.summary) for e in events]
    assert all(e.at is not None for e in events)  # null container times never break a timeline


def test_container_status_unknown_with_null_times_still_says_137() -> None:
    pod = failed_pod({"containerStatuses": terminated("ContainerStatusUnknown", 137, None, None)})
    ended = [e for e in pod_events(pod) if e.kind == Kind.CONTAINER_TERMINATED]
    assert [(e.attrs.get("exit_code"), e.attrs.get("reason")) for e in ended] == [(137, "ContainerStatusUnknown")]
    assert ended[0].at == at("2026-11-20T07:00:05Z")  # when the pod stopped being ready


@pytest.mark.parametrize(
    ("scenario", "pod_suffix", "kind"),
    [
        ("k8s-1.21-shutdown", "worker-0", Kind.NODE_SHUTDOWN),
        ("k8s-1.22-shutdown", "worker-0", Kind.NODE_SHUTDOWN),
        ("k8s-1.32-eviction", "", Kind.DISRUPTION_TARGET),
    ],
)
def test_generated_release_shapes_keep_their_cause(scenario: str, pod_suffix: str, kind: Kind) -> None:
    """The generator's pods in each release's wording (no DisruptionTarget before 1.26, none of the status reason
    on 1.32 evictions): the pod object alone still says what ended it."""
    pods = [p for p in recorded(scenario, "pods") if p["metadata"]["name"].endswith(pod_suffix)]
    assert pods and any(kind in {e.kind for e in pod_events(p)} for p in pods)


@pytest.mark.parametrize(
    ("scenario", "xid", "gpu"), [("agent-nvsentinel", 79, "5"), ("agent-gke", 79, None), ("agent-eks", 48, None)]
)
def test_generated_agent_conditions_carry_the_xid(scenario: str, xid: int, gpu: str | None) -> None:
    """The incident's Xid exists only in the agent's node condition: read from it, on its GPU where named."""
    window = Window(at("2026-11-01T00:00:00Z"), at("2026-12-01T00:00:00Z"))
    xids = [e for n in recorded(scenario, "nodes") for e in node_events(n, window) if e.kind == Kind.GPU_XID]
    assert [(e.attrs["xid"], e.subject.gpu) for e in xids] == [(xid, gpu)]


@pytest.mark.parametrize(
    ("reason", "kind", "xid"),
    [
        ("NvidiaXID79Error", Kind.GPU_XID, 79),
        ("NvidiaXID13Warning", Kind.GPU_XID, 13),
        ("NvidiaDoubleBitError", Kind.GPU_ECC_DBE, None),
        ("NvidiaNVLinkError", Kind.NVLINK_ERROR, None),
        ("NvidiaThermalError", Kind.GPU_THERMAL, None),
        ("NotReady", Kind.NODE_CONDITION, None),
    ],
)
def test_eks_node_monitoring_agent_reasons_name_the_gpu_fault(reason: str, kind: Kind, xid: int | None) -> None:
    # aws/eks-node-monitoring-agent: AcceleratedHardwareReady=False with the classified reason
    [event] = condition_events({"type": "AcceleratedHardwareReady", "status": "False", "reason": reason,
                                "message": "", "lastTransitionTime": "2026-06-30T16:57:54Z"})  # fmt: skip
    assert (event.kind, event.attrs.get("xid")) == (kind, xid)


def test_a_cordon_by_nvsentinel_names_the_remediator_and_its_reason() -> None:
    """NVSentinel's fault-quarantine cordons the node and leaves its health event in an annotation: the cordon
    is its act (nvsentinel common QuarantineHealthEventAnnotationKey and QuarantineHealthEventIsCordoned)."""
    event = {"checkName": "GpuXidError", "errorCode": ["79"], "componentClass": "GPU", "isFatal": True}
    node = {
        "metadata": {
            "name": "gpu-7",
            "annotations": {"quarantineHealthEvent": json.dumps([event]), "quarantineHealthEventIsCordoned": "True"},
        },
        "spec": {"unschedulable": True, "taints": [
            {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": "2026-09-08T00:01:00Z"}
        ]},
    }  # fmt: skip
    [cordon] = [e for e in node_events(node, HEALTH_WINDOW) if e.kind == Kind.NODE_CORDONED]
    assert (cordon.attrs["remediator"], cordon.attrs["remediation_reason"]) == (
        "NVSentinel",
        "GpuXidError ErrorCode:79",
    )
    assert cordon.summary.endswith("by NVSentinel (GpuXidError ErrorCode:79)")
    node["metadata"]["annotations"] = {"quarantineHealthEvent": "not json"}
    [plain] = [e for e in node_events(node, HEALTH_WINDOW) if e.kind == Kind.NODE_CORDONED]
    assert plain.attrs["remediator"] == "NVSentinel" and "remediation_reason" not in plain.attrs


@pytest.mark.parametrize(("reason", "xid"), [("NvidiaXID79Error", 79), ("NvidiaXID13Warning", 13)])
def test_eks_agent_xid_events_on_the_node(reason: str, xid: int) -> None:
    """The EKS node monitoring agent's Event per Xid (a Warning-only code never sets the condition)."""
    event = {
        "involvedObject": {"kind": "Node", "name": "ip-10-0-1-20.ec2.internal"},
        "reason": reason,
        "message": "",
        "type": "Warning",
        "source": {"component": "eks-node-monitoring-agent"},
        "lastTimestamp": "2026-06-30T16:57:54Z",
    }
    parsed = parse_event(event)
    assert parsed is not None
    assert (parsed.kind, parsed.attrs["xid"], parsed.subject.node) == (Kind.GPU_XID, xid, "ip-10-0-1-20.ec2.internal")
    assert parse_event({**event, "reason": "NvidiaXIDError"}).kind != Kind.GPU_XID  # no number, no Xid
