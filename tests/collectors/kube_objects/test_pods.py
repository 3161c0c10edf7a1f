"""Pods' own timelines: their status, containers and endings, in the shapes of every Kubernetes version."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from whathappened.collectors.kube_objects.parse import (
    parse_pod,
    pod_events,
    pod_experiment,
)

from tests.collectors.kube_objects.test_parse import at, recorded
from whathappened.kinds import Kind
from whathappened.scope import DEFAULT_LABEL_KEYS

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
    ("reason", "message", "kind"),
    [
        ("StoppedByKueue", "Exceeded the PodsReady timeout default/group", Kind.EVICTION_API),
        ("StoppedByKueue", "No matching Workload; restoring pod templates according to existent Workload", Kind.EVICTION_API),
        ("StoppedByKueue", "Preempted to accommodate a higher priority Workload", Kind.PREEMPTED),
        # Kueue 0.7+: the eviction's own reason
        ("WorkloadEvictedDueToPodsReadyTimeout", "Workload evicted due to a PodsReady timeout", Kind.EVICTION_API),
        ("WorkloadEvictedDueToPreempted", "Workload evicted due to preemption", Kind.PREEMPTED),
        ("NotAdmitted", "Not admitted by cluster queue", Kind.EVICTION_API),
    ],
)  # fmt: skip
def test_kueues_termination_target_is_a_controllers_stop(reason: str, message: str, kind: Kind) -> None:
    """Kueue's own condition on a pod it stops (TerminationTarget): its eviction of the workload, or a preemption
    where it says so, in 0.5-0.6's StoppedByKueue and 0.7+'s reasons."""
    condition = {
        "type": "TerminationTarget",
        "status": "True",
        "reason": reason,
        "message": message,
        "lastTransitionTime": "2026-11-20T07:00:00Z",
    }
    events = pod_events(failed_pod({"conditions": [condition]}))
    stops = [e for e in events if e.kind in (Kind.EVICTION_API, Kind.PREEMPTED)]
    assert [e.kind for e in stops] == [kind] and Kind.DISRUPTION_TARGET in {e.kind for e in events}
