"""Events of the workload that owned the pods still count after the pods (and their owner references) are gone."""

from datetime import UTC, datetime, timedelta

from whathappened.collectors.kube_objects.parse import scope_event_objects

from whathappened.model import PodInfo, Window
from whathappened.scope import Query, Scope

T0 = datetime(2026, 11, 20, 6, tzinfo=UTC)
SCOPE = Scope(
    Query("nightly-eval", "ml", Window(T0, T0 + timedelta(hours=2))), pods=(PodInfo("nightly-eval-run3-x7k2p", "ml"),)
)


def _event(kind: str, name: str, namespace: str = "ml") -> dict:
    return {
        "metadata": {"name": f"{name}.1", "namespace": namespace, "uid": f"{kind}-{name}-{namespace}"},
        "involvedObject": {"kind": kind, "name": name, "namespace": namespace},
        "reason": "DeadlineExceeded",
        "message": "Job was active longer than specified deadline",
    }


def test_job_named_by_the_pod_prefix_or_the_experiment_is_kept():
    kept = scope_event_objects(
        [
            _event("Job", "nightly-eval-run3"),
            _event("JobSet", "nightly-eval"),
            _event("Job", "nightly-eval-run"),
            _event("Job", "other"),
            _event("Job", "nightly-eval-run3", namespace="elsewhere"),
            _event("Service", "nightly-eval-run3"),
        ],
        SCOPE,
    )
    assert [(e["involvedObject"]["kind"], e["involvedObject"]["name"], e["metadata"]["namespace"]) for e in kept] == [
        ("Job", "nightly-eval-run3", "ml"),
        ("JobSet", "nightly-eval", "ml"),
    ]
