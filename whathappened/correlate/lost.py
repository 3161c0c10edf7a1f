"""Lost work: the GPU-hours between the last checkpoint the logs show (or the job's start) and the failure.

Every rank of a synchronous job rolls back to the same checkpoint, so the loss counts the GPUs of every pod of
the experiment that was running when it failed. The ranks that outlived the failure made no progress either: they
waited in a collective until the watchdog ended them, so their GPU-hours from the failure to their end count too.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from whathappened.correlate.fates import Fate
from whathappened.kinds import Kind
from whathappened.model import LostWork, TimelineEvent
from whathappened.scope import Scope


def lost_work(
    scope: Scope, timeline: Sequence[TimelineEvent], fates: Sequence[Fate], failure: datetime, root: str | None = None
) -> LostWork | None:
    """``root``: the pod the failure began in; its own last seconds are the failure, not time spent hung."""
    ran = [f for f in fates if f.started is not None and f.started <= failure]
    running = {f.name for f in ran}
    ended = {f.name for f in fates}
    # pods still running at the end of the window lost the same work as those that died
    running |= {p.name for p in scope.pods if p.name not in ended and _started_before(p.started, failure)}
    gpus = sum(p.gpus_requested for p in scope.pods if p.name in running)
    if gpus <= 0:
        return None
    checkpoints = [
        e for e in timeline if e.kind == Kind.CHECKPOINT_SAVED and e.subject.pod in running and e.at <= failure
    ]
    step = None
    if checkpoints:
        last = max(checkpoints, key=lambda e: e.at)
        since, basis, step = last.at, "checkpoint", last.attrs.get("step")
    else:
        starts = [f.started for f in ran if f.started is not None]
        if not starts:
            return None
        since, basis = min(starts), "job start"
    hours = (failure - since).total_seconds() / 3600 * gpus
    gpus_of = {p.name: p.gpus_requested for p in scope.pods}
    hung = sum(
        (f.ended - failure).total_seconds() / 3600 * gpus_of.get(f.name, 0)
        for f in ran
        if f.ended > failure and f.name != root
    )
    return LostWork(
        gpu_hours=round(hours + hung, 2),
        since=since,
        until=failure,
        basis=basis,
        collateral_gpu_hours=round(hung, 2),
        checkpoint_step=step if isinstance(step, int) and not isinstance(step, bool) else None,
    )


def _started_before(started: datetime | None, failure: datetime) -> bool:
    return started is not None and started <= failure
