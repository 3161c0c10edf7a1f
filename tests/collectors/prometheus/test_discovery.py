"""Discovery from series: the first label key wins, owners as the fallback, and a deleted pod known from its history."""

from __future__ import annotations

from datetime import UTC, datetime

from whathappened.collectors.prometheus.series import discover_from_series

from tests.collectors.prometheus.test_events import T0, WINDOW, series
from whathappened.scope import Query

# --- discovery -------------------------------------------------------------------------------------------------


def query(experiment: str = "llama-70b-run7", namespace: str | None = "research") -> Query:
    return Query(experiment, namespace, WINDOW)


def test_discovery_first_label_key_wins_and_owner_fallback() -> None:
    base = {"namespace": "research"}
    found = discover_from_series(
        [
            series(
                "kube_pod_labels",
                {**base, "pod": "w-0", "label_training_kubeflow_org_job_name": "llama-70b-run7"},
                [1, 1],
            ),
            # `experiment` comes first in the key order and names another run: not ours
            series(
                "kube_pod_labels",
                {**base, "pod": "w-9", "label_experiment": "other", "label_job_name": "llama-70b-run7"},
                [1],
            ),
            series("kube_pod_labels", {**base, "pod": "job-x"}, [1]),
            series(
                "kube_pod_info",
                {**base, "pod": "job-x", "node": "n2", "created_by_kind": "Job", "created_by_name": "llama-70b-run7"},
                [1],
            ),
            series(
                "kube_pod_info",
                {**base, "pod": "w-0", "node": "n1", "created_by_kind": "JobSet", "created_by_name": "x"},
                [1, 1],
            ),
            series(
                "kube_pod_labels", {"namespace": "elsewhere", "pod": "w-0", "label_experiment": "llama-70b-run7"}, [1]
            ),
        ],
        query(),
    )
    assert [(p.name, p.node) for p in found.pods] == [("job-x", "n2"), ("w-0", "n1")]
    assert found.pods[1].labels["training.kubeflow.org/job-name"] == "llama-70b-run7"
    assert found.candidates == ("llama-70b-run7", "other")
    assert [n.name for n in found.nodes] == ["n1", "n2"]


def test_discovery_of_a_deleted_pod_from_its_history() -> None:
    pod = {"namespace": "research", "pod": "w-0", "uid": "u"}
    found = discover_from_series(
        [
            series("kube_pod_labels", {**pod, "label_experiment": "llama-70b-run7"}, [1] * 80, start=T0 + 120),
            series(
                "kube_pod_info",
                {**pod, "node": "n1", "created_by_kind": "JobSet", "created_by_name": "llama-70b-run7"},
                [1] * 80,
                start=T0 + 120,
            ),
            series("kube_pod_status_phase", {**pod, "phase": "Pending"}, [1] + [0] * 79, start=T0 + 120),
            series("kube_pod_status_phase", {**pod, "phase": "Running"}, [0] + [1] * 60 + [0] * 19, start=T0 + 120),
            series("kube_pod_status_phase", {**pod, "phase": "Failed"}, [0] * 61 + [1] * 19, start=T0 + 120),
        ],
        query(namespace=None),
    )
    [p] = found.pods
    stamp = lambda s: datetime.fromtimestamp(T0 + s, UTC)  # noqa: E731
    assert (p.created, p.started, p.ended, p.deleted, p.phase) == (
        stamp(120),
        stamp(150),
        stamp(1950),
        stamp(2490),
        "Failed",
    )
    assert (p.owner_kind, p.owner_name, p.uid) == ("JobSet", "llama-70b-run7", "u")


def test_a_pod_there_before_the_window_was_not_created_at_its_first_change() -> None:
    """Running when the window began, Failed within it: its first phase edge is its end, not its creation, which
    the history does not show (an earlier attempt's pods must not look created when they died)."""
    pod = {"namespace": "research", "pod": "w-0", "uid": "u"}
    found = discover_from_series(
        [
            series("kube_pod_labels", {**pod, "label_experiment": "llama-70b-run7"}, [1] * 40, start=T0),
            series("kube_pod_info", {**pod, "node": "n1"}, [1] * 40, start=T0),
            series("kube_pod_status_phase", {**pod, "phase": "Running"}, [1] * 30 + [0] * 10, start=T0),
            series("kube_pod_status_phase", {**pod, "phase": "Failed"}, [0] * 30 + [1] * 10, start=T0),
        ],
        query(namespace=None),
    )
    [p] = found.pods
    assert (p.created, p.started, p.ended) == (None, None, datetime.fromtimestamp(T0 + 30 * 30, UTC))


def test_a_pods_gpus_are_its_containers_gpu_requests() -> None:
    """kube_pod_container_resource_requests, as kube-state-metrics writes it for nvidia.com/gpu: the sum over the
    pod's containers (a request that changed counts at its last value); other resources and other pods are not."""
    pod = {"namespace": "research", "pod": "w-0", "node": "n1"}
    requests = "kube_pod_container_resource_requests"
    gpu = {"resource": "nvidia_com_gpu", "unit": "integer"}
    found = discover_from_series(
        [
            series("kube_pod_labels", {**pod, "label_experiment": "llama-70b-run7"}, [1, 1]),
            series("kube_pod_info", pod, [1, 1]),
            series(requests, {**pod, "container": "trainer", **gpu}, [4, 8]),
            series(requests, {**pod, "container": "sidecar", **gpu}, [1]),
            series(requests, {**pod, "container": "trainer", "resource": "cpu", "unit": "core"}, [88]),
            series(requests, {**pod, "pod": "w-1", "container": "trainer", **gpu}, [8]),
        ],
        query(),
    )
    assert [(p.name, p.gpus_requested) for p in found.pods] == [("w-0", 9)]


def test_a_pod_created_again_under_its_name_is_its_newest_generation() -> None:
    """A controller that deletes a failed pod and creates it again under the same name (a Volcano RestartJob, a
    PyTorchJob's ExitCode policy): kube-state-metrics writes each pod's series with its own uid. The pod's life is
    the newest one's (created and started again, not ended); the first one's end stays on the timeline."""
    old, new = (
        {"namespace": "research", "pod": "w-0", "uid": "u1"},
        {"namespace": "research", "pod": "w-0", "uid": "u2"},
    )
    labels = {"label_experiment": "llama-70b-run7"}
    found = discover_from_series(
        [
            series("kube_pod_labels", {**old, **labels}, [1] * 20, start=T0 + 120),
            series("kube_pod_info", {**old, "node": "n1"}, [1] * 20, start=T0 + 120),
            series("kube_pod_status_phase", {**old, "phase": "Pending"}, [1] + [0] * 19, start=T0 + 120),
            series("kube_pod_status_phase", {**old, "phase": "Running"}, [0] + [1] * 15 + [0] * 4, start=T0 + 120),
            series("kube_pod_status_phase", {**old, "phase": "Failed"}, [0] * 16 + [1] * 4, start=T0 + 120),
            series("kube_pod_labels", {**new, **labels}, [1] * 211, start=T0 + 900),
            series("kube_pod_info", {**new, "node": "n2"}, [1] * 211, start=T0 + 900),
            series("kube_pod_status_phase", {**new, "phase": "Pending"}, [1] + [0] * 210, start=T0 + 900),
            series("kube_pod_status_phase", {**new, "phase": "Running"}, [0] + [1] * 210, start=T0 + 900),
        ],
        query(namespace=None),
    )
    [p] = found.pods
    stamp = lambda s: datetime.fromtimestamp(T0 + s, UTC)  # noqa: E731
    assert (p.created, p.started, p.ended, p.phase, p.node, p.uid) == (
        stamp(900),
        stamp(930),
        None,
        "Running",
        "n2",
        "u2",
    )
