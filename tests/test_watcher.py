"""The watch's core on hand-made pod changes: which changes are deaths, one incident per experiment while it
settles (a storm of 500 ranks is one), the root reported once, memory bounded. The clock is passed in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from whathappened.scope import DEFAULT_LABEL_KEYS
from whathappened.watcher import MAX_PODS_NAMED, Watcher

T0 = datetime(2026, 11, 25, 6, 0, tzinfo=UTC)
KEY = "jobset.sigs.k8s.io/jobset-name"
SETTLE = timedelta(seconds=90)


def pod(name: str, phase: str = "Running", experiment: str | None = "llama", **status: Any) -> dict[str, Any]:
    labels = {KEY: experiment} if experiment else {}
    return {"metadata": {"namespace": "ml", "name": name, "labels": labels}, "status": {"phase": phase, **status}}


def container(exit_code: int | None = None, restarts: int = 0, last_exit: int | None = None) -> dict[str, Any]:
    state = (
        {"terminated": {"exitCode": exit_code, "finishedAt": "2026-11-25T06:00:30Z"}}
        if exit_code is not None
        else {"running": {}}
    )
    last = (
        {"terminated": {"exitCode": last_exit, "finishedAt": "2026-11-25T06:00:20Z"}} if last_exit is not None else {}
    )
    return {"name": "trainer", "state": state, "lastState": last, "restartCount": restarts}


def watcher() -> Watcher:
    return Watcher(DEFAULT_LABEL_KEYS, SETTLE)


def test_the_ways_a_run_ends_are_deaths_and_the_rest_are_not() -> None:
    w = watcher()
    assert w.seen("ADDED", pod("a", "Failed"), T0) is None  # listed already dead: not news
    w.seen("ADDED", pod("b"), T0)
    assert w.seen("MODIFIED", pod("b", "Failed"), T0).how == "failed"
    w.seen("ADDED", pod("c", containerStatuses=[container()]), T0)
    died = w.seen("MODIFIED", pod("c", containerStatuses=[container(restarts=1, last_exit=137)]), T0)
    assert died is not None and died.how == "restarted" and died.at == T0 + timedelta(seconds=20)
    w.seen("ADDED", pod("d", containerStatuses=[container()]), T0)
    assert w.seen("MODIFIED", pod("d", containerStatuses=[container(restarts=1, last_exit=0)]), T0) is None
    w.seen("ADDED", pod("e"), T0)
    evicted = pod("e", conditions=[{"type": "DisruptionTarget", "status": "True"}])
    assert w.seen("MODIFIED", evicted, T0).how == "disrupted"
    w.seen("ADDED", pod("f", experiment=None), T0)
    assert w.seen("MODIFIED", pod("f", "Failed", experiment=None), T0) is None  # not an experiment's pod
    w.seen("ADDED", pod("g"), T0)
    assert w.seen("DELETED", pod("g"), T0) is None  # deleted while running: a stop, not a death
    assert w.deaths == 3


def test_a_storm_of_deaths_is_one_incident_explained_once_its_settle_is_over() -> None:
    w = watcher()
    for i in range(500):
        w.seen("ADDED", pod(f"r-{i}"), T0)
    for i in range(500):
        w.seen("MODIFIED", pod(f"r-{i}", "Failed"), T0 + timedelta(seconds=i % 60))
    assert w.due(T0 + SETTLE - timedelta(seconds=1)) == []
    assert w.next_due() == T0 + SETTLE
    [incident] = w.due(T0 + SETTLE)
    assert (incident.experiment, incident.deaths, len(incident.pods)) == ("llama", 500, MAX_PODS_NAMED)
    assert (incident.first, incident.last) == (T0, T0 + timedelta(seconds=59))
    assert w.due(T0 + SETTLE * 10) == [] and w.next_due() is None


def test_experiments_settle_apart_and_a_repeated_root_is_reported_once() -> None:
    w = watcher()
    w.seen("ADDED", pod("a-0"), T0)
    w.seen("ADDED", pod("b-0", experiment="other"), T0)
    w.seen("MODIFIED", pod("a-0", "Failed"), T0)
    w.seen("MODIFIED", pod("b-0", "Failed", experiment="other"), T0 + timedelta(seconds=30))
    [first] = w.due(T0 + SETTLE)
    assert first.experiment == "llama" and w.explained(first, ("a-0", "gpu-fallen-off-bus"))
    [second] = w.due(T0 + SETTLE + timedelta(seconds=30))
    assert second.experiment == "other" and w.explained(second, ("b-0", "cuda-oom"))
    # the collateral ranks die later of the same fault: explained again, the same root, not news
    w.seen("ADDED", pod("a-1"), T0)
    w.seen("MODIFIED", pod("a-1", "Failed"), T0 + timedelta(minutes=10))
    [later] = w.due(T0 + timedelta(minutes=10) + SETTLE)
    assert not w.explained(later, ("a-0", "gpu-fallen-off-bus")) and w.repeats == 1
    assert w.explained(later, ("a-1", "nccl-timeout"))  # a new root is news


def test_the_verdict_goes_to_the_root_pods_job_else_the_first_deaths() -> None:
    """Ranks of one experiment under two Jobs (a resubmission beside the old one): the root pod's job is named."""
    w = watcher()

    def owned(name: str, job: str, phase: str = "Running") -> dict[str, Any]:
        found = pod(name, phase)
        reference = {"apiVersion": "batch/v1", "kind": "Job", "name": job, "uid": f"u-{job}", "controller": True}
        found["metadata"] |= {"ownerReferences": [reference], "uid": f"u-{name}"}
        return found

    for name, job in (("a", "old"), ("b", "new"), ("c", "new")):
        w.seen("ADDED", owned(name, job), T0)
    for name, job in (("a", "old"), ("b", "new"), ("c", "new")):
        w.seen("MODIFIED", owned(name, job, "Failed"), T0)
    w.seen("ADDED", pod("bare"), T0)
    w.seen("MODIFIED", {**pod("bare", "Failed"), "metadata": {**pod("bare")["metadata"], "uid": "u-bare"}}, T0)
    [incident] = w.due(T0 + SETTLE)
    assert incident.owner("b").name == "new" and incident.owner("a").name == "old"  # type: ignore[union-attr]
    assert incident.owner(None).name == "old"  # type: ignore[union-attr]  # no root: the first death's job
    assert incident.owner("bare").kind == "Pod"  # type: ignore[union-attr]  # a bare pod is its own subject
