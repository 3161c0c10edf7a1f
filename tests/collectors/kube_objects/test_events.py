"""Kubernetes Events in both API shapes and the archived one, and the reason table that reads them."""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

import pytest
from whathappened.collectors.kube_objects.parse import (
    REASONS,
    parse_event,
)

from tests.collectors.kube_objects.test_parse import SCENARIOS, at, node_event, recorded
from tests.doubles.kube.store import to_events_v1
from whathappened.kinds import Kind
from whathappened.model import Severity

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
    (
        "FailedCreatePodSandBox",
        'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "nvidia" is configured',
        "Pod",
        Kind.CONFIG_ERROR,
    ),
    (
        "FailedCreatePodSandBox",
        'Failed to create pod sandbox: rpc error: code = Unknown desc = RuntimeHandler "nvidia" not supported',
        "Pod",
        Kind.CONFIG_ERROR,
    ),
    (
        "FailedCreatePodSandBox",
        'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "0a1b": plugin type="calico" failed (add)',
        "Pod",
        Kind.KUBE_EVENT,
    ),
    ("DisruptionTerminating", "Disrupting Node: Drifted", "Node", Kind.DRAIN),
    ("SpotInterrupted", "Spot interruption warning was triggered", "Node", Kind.SPOT_INTERRUPTION),
    ("InstanceUnhealthy", "An unhealthy warning was triggered for the instance", "Node", Kind.MAINTENANCE_NOTICE),
    ("EvictedDueToPodsReadyTimeout", "Exceeded the PodsReady timeout ml/job-7", "Pod", Kind.EVICTION_API),
    ("Evicted", "Evicted pod", "Pod", Kind.EVICTION_API),
    (
        "Unhealthy",
        "Liveness probe errored: rpc error: code = DeadlineExceeded desc = failed to exec in container: timeout 2s",
        "Pod",
        Kind.KUBE_EVENT,
    ),
    # a controller's pod the API server refused: a quota as capacity, a spec the namespace refuses as set-up, a
    # webhook out of reach as neither
    ("FailedCreate", 'Error creating: pods "w-0" is forbidden: exceeded quota: gpu, requested: nvidia.com/gpu=8', "Job",
     Kind.FAILED_SCHEDULING),
    ("FailedCreate", 'Error creating: pods "w-0" is forbidden: violates PodSecurity "restricted:latest": privileged',
     "Job", Kind.CONFIG_ERROR),
    ("FailedCreate", 'Error creating: pods "w-0" is forbidden: failed quota: kf: must specify cpu,memory', "Job",
     Kind.CONFIG_ERROR),
    ("FailedCreate", 'Error creating: pods "w-0" is forbidden: maximum cpu usage per Container is 16, but request is 17.',
     "ReplicaSet", Kind.CONFIG_ERROR),
    ("FailedCreatePod", 'Error creating: admission webhook "validation.gatekeeper.sh" denied the request: [no-gpu-limit]',
     "PyTorchJob", Kind.CONFIG_ERROR),
    # the same words about another object than a pod (a Deployment, a JobSet, a Job): no pod of it was made
    ("FailedCreate", 'error: failed to create deployment: admission webhook "validate.kyverno.svc-fail" denied the'
     " request: resource Deployment/ml/trainer was blocked due to the following policies", "Deployment", Kind.KUBE_EVENT),
    ("FailedCreate", 'admission webhook "mjobset.kb.io" denied the request: queue doesn\'t exist', "JobSet",
     Kind.KUBE_EVENT),
    ("FailedCreate", 'jobs.batch "w" is forbidden: exceeded quota: gpu, requested: count/jobs.batch=1', "Job",
     Kind.KUBE_EVENT),
    ("FailedCreate", "deployments.apps \"t\" is forbidden: ValidatingAdmissionPolicy 'gpu' with binding 'b' denied"
     " request: no GPUs", "Deployment", Kind.KUBE_EVENT),
    ("FailedCreate", "Error creating: pods \"w-0\" is forbidden: ValidatingAdmissionPolicy 'gpu' with binding 'b'"
     " denied request: no GPUs", "Job", Kind.CONFIG_ERROR),
    ("FailedCreate", "Error creating: pods \"w-0\" is forbidden: ValidatingAdmissionPolicy 'gpu' denied request: no",
     "Job", Kind.CONFIG_ERROR),
    # a pod controller's own words: whatever webhook refused there refused its pod, or the claim its pod needs
    ("FailedCreate", 'Error creating: admission webhook "mjob.kb.io" denied the request: no host aliases', "Job",
     Kind.CONFIG_ERROR),
    ("FailedCreatePod", 'Error creating: admission webhook "mpodcpurequestreduce.kb.io" denied the request: x',
     "PyTorchJob", Kind.CONFIG_ERROR),
    ("FailedCreate", 'create Claim data-w-0 for Pod w-0 in StatefulSet w failed error: persistentvolumeclaims'
     ' "data-w-0" is forbidden: exceeded quota: storage, requested: requests.storage=500Gi', "StatefulSet",
     Kind.FAILED_SCHEDULING),
    ("FailedCreate", 'Error creating: pods "w-" is forbidden: PodSecurityPolicy: unable to admit pod: [spec.hostPID:'
     " Invalid value: true: Host PID is not allowed to be used]", "DaemonSet", Kind.CONFIG_ERROR),
    ("FailedCreate", 'Error creating: Pod "w-" is forbidden: cpu is limited by quota, must make explicit request.',
     "ReplicationController", Kind.CONFIG_ERROR),
    # a mount that failed because the CSI driver's sidecar ended: its own status in the pod tells why
    ("FailedMount", 'MountVolume.SetUp failed for volume "d" : rpc error: code = Internal desc = the sidecar container'
     " terminated due to ContainerStatusUnknown, exit code: 137", "Pod", Kind.KUBE_EVENT),
    ("FailedMount", 'MountVolume.SetUp failed for volume "d" : rpc error: code = PermissionDenied desc = the sidecar'
     " container failed with error: mountWithArgs: permission denied", "Pod", Kind.CONFIG_ERROR),
    ("FailedCreate", 'Error creating: Internal error occurred: failed calling webhook "mpod.kb.io": failed to call'
     ' webhook: Post "https://jobset-webhook-service.jobset-system.svc:443/mutate--v1-pod?timeout=10s": no endpoints'
     ' available for service "jobset-webhook-service"', "ReplicaSet", Kind.KUBE_EVENT),
    # the GPU Operator's upgrade controller: its pod-deletion step deletes the node's GPU pods, its other states not
    ("GPUDriverUpgrade", "Successfully updated node state label to [pod-deletion-required]", "Node", Kind.DRAIN),
    ("GPUDriverUpgrade", "Successfully updated node state label to upgrade-required", "Node", Kind.KUBE_EVENT),
    ("GPUDriverUpgrade", "Failed to update node state label to pod-deletion-required, conflict", "Node", Kind.KUBE_EVENT),
    ("GPUDriverUpgrade", "Deleted workload pods on the node for the driver upgrade", "Node", Kind.DRAIN),
    ("PreemptScheduled", "IMDS query failed, exit code: 28\nConnection timed out after 24 seconds.", "Node", Kind.KUBE_EVENT),
    ("VMEventScheduled", "VM has no scheduled event", "Node", Kind.KUBE_EVENT),
    # (Argo's event on the Workflow about one of its steps names no pod: read by none of its pods)
    ("WorkflowNodeFailed", "Failed node wf-v2ljb[0].fanout(3:4): Pod was active on the node longer than the specified deadline", "Workflow", Kind.KUBE_EVENT),
    ("WorkflowNodeFailed", "Failed node wf-v2ljb[0].train: Error (exit code 1)", "Workflow", Kind.KUBE_EVENT),
    ("Stopped", "Preempted to accommodate a workload (UID: 5f1e, JobUID: 9a2c) due to prioritization in the ClusterQueue", "Pod", Kind.PREEMPTED),
    ("FailedCreatePodSandBox", 'create mapped mount for "/var/lib/containers/storage/overlay" on "/var/lib/x/mapped/0": mount_setattr /var/lib/containers/storage/overlay: invalid argument', "Pod", Kind.CONFIG_ERROR),
    ("FailedScheduling", "0/4 nodes are available: request gpu/a100: device class a100.nvidia.com does not exist.", "Pod", Kind.CONFIG_ERROR),
    ("Stopped", "Exceeded the PodsReady timeout default/job-abc", "Pod", Kind.EVICTION_API),
    ("FailedPullImage", 'Failed to pull image "ghcr.io/x/base:py3.10": rpc error: code = FailedPrecondition desc = failed size validation', "Pod", Kind.IMAGE_PULL_FAILED),
    ("Evict", "Pod is evicted, because of preempt", "Pod", Kind.PREEMPTED),
    ("Evict", "Pod is evicted, because of reclaim", "Pod", Kind.PREEMPTED),
    ("FailedCreate", 'Error creating: pods "apiserver-" is forbidden: no PriorityClass with name test was found', "DaemonSet", Kind.CONFIG_ERROR),
    ("FailedCreate", 'pods "kubeip-7545b86569-" is forbidden: pods with system-cluster-critical priorityClass is not permitted in default namespace', "ReplicaSet", Kind.CONFIG_ERROR),
    ("FailedCreate", 'pods "verify" is forbidden: the integer value of priority (0) must not be provided in pod spec; priority admission controller computed 1000000000 from the given PriorityClass name', "Job", Kind.CONFIG_ERROR),
    ("EvictedDueToPreempted", "Preempted to accommodate a workload (UID: 5f1e, JobUID: UNKNOWN) due to Fair Sharing within the cohort", "Workload", Kind.PREEMPTED),
    ("FailedScheduling", "0/2 nodes are available: request gpu: device class gpu.nvidia.com does not exist. preemption: 0/2 nodes are available", "Pod", Kind.CONFIG_ERROR),
    ("FailedCreatePodSandBox", 'Failed to create pod sandbox: rpc error: code = Unknown desc = create mapped mount for "/var/lib/containers/storage/overlay" on "/run/x": invalid argument', "Pod", Kind.CONFIG_ERROR),
    ("FailedCreatePodSandBox", "failed to mount: mount callback failed on /tmp/containerd-mount1: container ID 498008064 cannot be mapped to a host ID", "Pod", Kind.CONFIG_ERROR),
    ("PodFailurePolicy", "Pod default/job-x-8ckj8 has condition DisruptionTarget matching FailJob rule at index 1", "Job", Kind.DEADLINE_EXCEEDED),
    ("GPUXid", "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.", "Node", Kind.GPU_XID),
]  # fmt: skip


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


def test_a_health_agents_node_event_says_what_its_condition_would() -> None:
    """NVSentinel's catch-all watch names the Xid only in its message; an IMEX daemon not running is no GPU fault."""
    xid = parse_event(
        node_event(
            "GpuAllWatchIsNotHealthy",
            "ErrorCode:DCGM_FR_UNCONTAINED_ERROR GPU:0 PCI:0000:16:00.0 GPU_UUID:GPU-65e4956a-8db1-af7f-47f8-b355e3b7bf07"
            " GPU had an uncontained error (XID 95) Drain the GPU and reset it or reboot the node.",
            component="nvsentinel",
            type="Warning",
        )
    )
    imex = parse_event(
        node_event(
            "GpuNvlinkWatchIsNotHealthy",
            "ErrorCode:DCGM_FR_IMEX_UNHEALTHY GPU:0 PCI:0000:9d:00.0 IMEX daemon status is -3 (not READY)",
            type="Warning",
        )
    )
    assert xid is not None and (xid.kind, xid.attrs["xid"], xid.subject.gpu) == (Kind.GPU_XID, 95, "0")
    assert imex is not None and imex.kind == Kind.NODE_CONDITION


def test_a_service_meshs_own_hook_on_its_proxy_is_not_the_pods_spec() -> None:
    """Istio's postStart hook on its sidecar waits for the proxy ("pilot-agent wait"); since 1.26 the Event says only
    "PostStartHook failed" and names the container in its fieldPath. The mesh's proxy slow to be ready is no fault
    of the pod's spec; the same Event on the pod's own container is."""
    for reason, message in (("FailedPostStartHook", "PostStartHook failed"), ("Killing", "FailedPostStartHook")):
        for container, kind in (
            ("istio-proxy", Kind.KUBE_EVENT),
            ("linkerd-proxy", Kind.KUBE_EVENT),
            ("trainer", Kind.CONFIG_ERROR),
        ):
            obj = node_event(reason, message, kind="Pod")
            obj["involvedObject"]["fieldPath"] = f"spec.containers{{{container}}}"
            event = parse_event(obj)
            assert event is not None and event.kind == kind, (reason, container)


def test_a_failjob_rule_on_a_pods_exit_code_is_that_pods_failure() -> None:
    """The Job's pod failure policy matching a container's exit code names the pod: the program's failure its
    users declared not worth retrying, that pod's and not every pod's of the Job."""
    message = "Container main for pod default/job-x-8ckj8 failed with exit code 42 matching FailJob rule at index 0"
    event = parse_event(node_event("PodFailurePolicy", message, kind="Job"))
    assert event is not None and (event.kind, event.subject.pod) == (Kind.APP_EXCEPTION, "job-x-8ckj8")
