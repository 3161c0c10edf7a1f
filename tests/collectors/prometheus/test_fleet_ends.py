"""The fleet's first pass on hand-made answers: an experiment pod's end is the first step of each run of steps
that show it, pods without an experiment label are not ends, a namespace narrows; and the step stays within the
server's points limit over a month or a year."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from whathappened.collectors.prometheus.fleet import (
    MAX_STEPS,
    covered,
    end_queries,
    fleet_step,
    pod_ends,
    roster_queries,
)

from whathappened.model import PodEnd, Window
from whathappened.scope import DEFAULT_LABEL_KEYS

T0 = datetime(2026, 11, 12, 6, 0, tzinfo=UTC)
STEP = 600


def at(*minutes: int) -> list[list[Any]]:
    return [[(T0 + timedelta(minutes=m)).timestamp(), "1"] for m in minutes]


def series(namespace: str, pod: str, values: list[list[Any]]) -> dict[str, Any]:
    return {"metric": {"namespace": namespace, "pod": pod}, "values": values}


def member(namespace: str, pod: str, **labels: str) -> dict[str, Any]:
    return {"metric": {"namespace": namespace, "pod": pod, **labels}, "value": [0, "1"]}


def test_each_run_of_steps_is_one_end_at_its_first() -> None:
    members = [
        member("ml", "w-0", label_jobset_sigs_k8s_io_jobset_name="llama"),
        member("ml", "w-1", label_experiment="llama"),
        member("other", "w-0", label_experiment="bert"),
    ]
    answers = {
        "failed": [series("ml", "w-0", at(10, 20, 30)), series("ml", "sidecar", at(10))],  # the sidecar: no label
        "restarted": [series("ml", "w-1", at(10, 90))],  # two restarts an hour apart
        "gone": [series("other", "w-0", at(50)), series("ml", "w-1", at(200))],  # at 200 the history had ended
        "alive": [{"metric": {}, "values": at(*range(0, 200, 10))}],
    }
    placements = [{"metric": {"namespace": "ml", "pod": "w-0", "node": "n1"}, "value": [0, "1"]}]
    ends = pod_ends(answers, members, placements, DEFAULT_LABEL_KEYS, STEP)
    step = timedelta(seconds=STEP)
    assert ends == [
        PodEnd("ml", "w-0", "llama", T0 + timedelta(minutes=10) - step, "failed", "n1"),
        PodEnd("ml", "w-1", "llama", T0 + timedelta(minutes=10) - step, "restarted", None),
        PodEnd("other", "w-0", "bert", T0 + timedelta(minutes=50) - step, "gone", None),
        PodEnd("ml", "w-1", "llama", T0 + timedelta(minutes=90) - step, "restarted", None),
    ]
    assert [e.pod for e in pod_ends(answers, members, placements, DEFAULT_LABEL_KEYS, STEP, "other")] == ["w-0"]


def test_the_queries_read_pod_series_at_a_coarse_step() -> None:
    month = Window(T0, T0 + timedelta(days=30))
    assert fleet_step(month.seconds) == 540 and month.seconds / 540 <= MAX_STEPS
    assert fleet_step(timedelta(days=365).total_seconds()) * MAX_STEPS >= timedelta(days=365).total_seconds()
    assert fleet_step(3600) == 300  # never finer than 5 minutes
    queries = end_queries(540)
    assert set(queries) == {"failed", "restarted", "evicted", "gone", "alive"}
    assert all("[540s]" in q or "[1080s]" in q for k, q in queries.items() if k != "alive")
    members, placements = roster_queries(["experiment", "training.kubeflow.org/job-name"], month)
    assert 'label_training_kubeflow_org_job_name!=""' in members and "[2592000s]" in placements


def test_the_history_covers_the_runs_of_steps_kube_state_metrics_answered() -> None:
    """Each run of consecutive ``alive`` points, from its first step's start to its last point, inside the window:
    a point missing (no sample in the lookback before it) is a gap, an hour's outage too."""
    window = Window(T0, T0 + timedelta(hours=4))
    alive = {"alive": [{"metric": {}, "values": at(10, 20, 30, 50, 60, 120, 130)}]}
    spans = covered(alive, STEP, window)
    minutes = [((w.start - T0) / timedelta(minutes=1), (w.end - T0) / timedelta(minutes=1)) for w in spans]
    assert minutes == [(0, 30), (40, 60), (110, 130)]
    assert covered({"alive": []}, STEP, window) == ()
