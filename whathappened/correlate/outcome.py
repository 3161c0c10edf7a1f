"""Stage 5 of the correlator: the answer for one incident: the root verdict, its chain (its evidence, then the
first sign of each death it caused), the next step, the work lost since the last checkpoint, and, when the ranks
died waiting in a collective and no root was decided, the hang."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from whathappened.correlate import templates
from whathappened.correlate.blame import Judged, root_of
from whathappened.correlate.causes import NO_FAULT, cause
from whathappened.correlate.evidence import in_time_order
from whathappened.correlate.fates import Fate
from whathappened.correlate.hang import analyze
from whathappened.correlate.lost import lost_work
from whathappened.model import Hang, LostWork, TimelineEvent, Verdict
from whathappened.scope import Scope


@dataclass(frozen=True)
class Correlation:
    verdicts: tuple[Verdict, ...]  # one per pod that ended, was evicted or never started
    root_cause: Verdict | None  # the root verdict, None when nothing failed
    chain: tuple[int, ...]  # timeline indexes of the root cause's chain in time order
    next_step: str
    lost_work: LostWork | None
    hang: Hang | None = None  # when the ranks died waiting in a collective and no root was decided


def outcome(
    scope: Scope,
    timeline: Sequence[TimelineEvent],
    found: Sequence[Fate],
    judged: Sequence[Judged],
    verdicts: Mapping[str, Verdict],
) -> Correlation:
    root = root_of(judged)
    if root is None:
        hang = analyze(timeline) if any(v.cause == "nccl-timeout" for v in verdicts.values()) else None
        # a hang's work stopped when the job froze, not when the watchdog said so
        faults = [j.finding.onset for j in judged if _a_fault(j)]
        onset = (hang.froze_at if hang is not None else None) or min(faults, default=None)
        return Correlation(
            tuple(verdicts.values()),
            None,
            (),
            templates.NOTHING_FAILED if not judged else _undecided(judged, verdicts),
            lost_work(scope, timeline, found, onset) if onset is not None else None,
            hang,
        )
    root_verdict = verdicts[root.fate.name]
    failed = _a_fault(root)
    return Correlation(
        verdicts=tuple(verdicts.values()),
        root_cause=root_verdict,
        chain=_chain(root, root_verdict.evidence, judged, timeline),
        next_step=root_verdict.next_step,
        lost_work=lost_work(scope, timeline, found, root.finding.onset, root.fate.name) if failed else None,
    )


def _a_fault(j: Judged) -> bool:
    """A death that cost work: not a completion or deletion, not a pod that never ran."""
    return j.finding.cause not in NO_FAULT and cause(j.finding.cause).category != "scheduling"


def _chain(
    root: Judged, evidence: Sequence[int], judged: Sequence[Judged], timeline: Sequence[TimelineEvent]
) -> tuple[int, ...]:
    """The root verdict's evidence (with a remediator's quarantine of its node), then the first sign of each death
    it caused: notice, drain, exit, peers failing."""
    steps = set(evidence)
    for j in judged:
        if j.caused_by == root.fate.name and j.finding.trigger is not None:
            steps.add(j.finding.trigger)
    return in_time_order(timeline, steps)


def _undecided(judged: Sequence[Judged], verdicts: Mapping[str, Verdict]) -> str:
    """No root: the next step of the commonest cause among the deaths (an NCCL timeout everywhere, say)."""
    codes = [j.finding.cause for j in judged]
    commonest = max(set(codes), key=lambda c: (codes.count(c), c))
    example = next(v for v in verdicts.values() if v.cause == commonest)
    return example.next_step
