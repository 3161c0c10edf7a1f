"""correlate(): from the merged timeline to one verdict per pod that ended, the root cause and its chain.

The correlator is a pipeline that data flows through one way, each stage a module taking the previous stage's
frozen output (an import-linter contract keeps the imports in this order):

    incidents   which deaths belong together: the attempts and their spans           Incident
    fates       how each pod of an incident ended                                     Fate
    findings    each death explained on its own by the rule table (rules.py)          (Fate, Finding)
    blame       root versus collateral                                                Judged
    verdicts    cause, words, next step                                               Verdict
    outcome     the root's chain, the next step, the lost work, a hang                Correlation

This module only runs the stages in that order, once per attempt, and puts the attempts together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from whathappened.correlate.blame import judge
from whathappened.correlate.fates import fates
from whathappened.correlate.findings import findings
from whathappened.correlate.incidents import Incident, incidents
from whathappened.correlate.index import TimelineIndex
from whathappened.correlate.outcome import Correlation, outcome
from whathappened.correlate.rule import Rule
from whathappened.correlate.verdicts import verdicts
from whathappened.model import Attempt, TimelineEvent, Verdict
from whathappened.scope import Scope

__all__ = ["Correlation", "correlate", "correlate_attempts"]


def correlate(scope: Scope, timeline: Sequence[TimelineEvent], rules: tuple[Rule, ...] | None = None) -> Correlation:
    """One incident through the stages."""
    index = TimelineIndex.of(timeline)
    found = fates(scope, index)
    judged = judge(findings(scope, index, found, rules), timeline)
    return outcome(scope, timeline, found, judged, verdicts(judged, index, scope.nodes))


def correlate_attempts(
    scope: Scope, timeline: Sequence[TimelineEvent], rules: tuple[Rule, ...] | None = None
) -> tuple[Correlation, tuple[Attempt, ...]]:
    """Each attempt of a restarted or resubmitted experiment correlated on its own (its collateral blames its own
    root); the experiment's answer is the latest attempt's, every attempt's verdicts kept."""
    split = incidents(scope, timeline)
    each = [_shifted(correlate(i.scope, i.timeline, rules), i.offset) for i in split]
    if split[-1].in_place:
        return _restarted_in_place(scope, timeline, rules, split, each)
    attempts = tuple(
        Attempt(n, i.scope.pods, c.root_cause)
        for n, (i, c) in enumerate(zip(split, each, strict=True), 1)
        if i.scope.pods
    )
    return replace(each[-1], verdicts=tuple(v for c in each for v in c.verdicts)), attempts


def _restarted_in_place(
    scope: Scope,
    timeline: Sequence[TimelineEvent],
    rules: tuple[Rule, ...] | None,
    split: Sequence[Incident],
    each: list[Correlation],
) -> tuple[Correlation, tuple[Attempt, ...]]:
    """The answer is the latest attempt's; a pod that did not die again keeps the verdict of its last death."""
    if each[-1].root_cause is None:
        # the latest span holds no death the sources recorded (only a restart counter moved, say): the answer the
        # whole timeline gives stands for it
        whole = correlate(scope, timeline, rules)
        if whole.root_cause is not None:
            each[-1] = whole
    attempts = tuple(
        Attempt(n, i.scope.pods, c.root_cause, began=i.began, finished=i.finished or _last_death(c))
        for n, (i, c) in enumerate(zip(split, each, strict=True), start=1)
    )
    latest = each[-1]
    answer = latest
    if latest.root_cause is None and not latest.verdicts:
        # the pods were created again under their names and run, nothing failed since: as for containers
        # restarted in place, the experiment's answer is its last failure's (the history shows the latest running)
        answer = next((c for c in reversed(each[:-1]) if c.root_cause is not None), latest)
    judged = {v.pod for v in latest.verdicts}
    earlier = {v.pod: v for c in each[:-1] for v in c.verdicts if v.pod not in judged}
    return replace(answer, verdicts=(*earlier.values(), *latest.verdicts)), attempts


def _last_death(c: Correlation) -> datetime | None:
    """When the latest attempt ended: its last death, when it failed (its pods may restart and back off)."""
    return max((v.ended for v in c.verdicts if v.ended is not None), default=None) if c.root_cause else None


def _shifted(c: Correlation, offset: int) -> Correlation:
    """A span's correlation with its timeline indexes made the whole timeline's."""
    if not offset:
        return c

    def moved(v: Verdict) -> Verdict:
        return replace(v, evidence=tuple(i + offset for i in v.evidence))

    kept = tuple(moved(v) for v in c.verdicts)
    root = next((v for v in kept if c.root_cause is not None and v.pod == c.root_cause.pod), None)
    return replace(c, verdicts=kept, root_cause=root, chain=tuple(i + offset for i in c.chain))
