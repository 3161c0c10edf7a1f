"""The shape of a cause rule, and how one is applied to a death: what evidence, on which subject, within what time
(the table of rules is rules.py; a rule that needs more than this names a check in checks.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from whathappened.correlate.evidence import NODE, POD, SKEW, Case, Finding, Predicate, found
from whathappened.correlate.fates import ENDED

ANY = "any"
MINUTES_5 = timedelta(minutes=5)
MINUTES_10 = timedelta(minutes=10)
MINUTES_15 = timedelta(minutes=15)
MINUTES_30 = timedelta(minutes=30)
WHOLE_WINDOW = timedelta(days=7)


@dataclass(frozen=True)
class Support:
    """Evidence that corroborates a finding (raises its confidence and joins its evidence) but cannot make one."""

    kinds: frozenset[str]
    on: str = NODE
    before: timedelta = MINUTES_30
    after: timedelta = SKEW
    where: Predicate | None = None


@dataclass(frozen=True)
class Rule:
    name: str
    cause: str
    confidence: float
    summary: str  # a template (templates.py) filled with the facts of the finding
    kinds: frozenset[str] = frozenset()
    on: str = POD
    before: timedelta = MINUTES_10
    after: timedelta = SKEW
    where: Predicate | None = None
    fate: str = ENDED
    since_start: bool = False  # evidence older than the pod is not about this pod's run
    skip_stale: bool = False  # a GPU fault value seen before the pod started is not its fault
    before_stop: bool = False  # what a pod logs after it was told to stop is a consequence, not a cause
    # a node that goes down after it was drained or the pod evicted (Karpenter terminating what it drained) went
    # down because of that stop, not the other way round
    before_drain: bool = False
    support: tuple[Support, ...] = ()
    check: Callable[[Case, Rule], Finding | None] | None = None


def apply(rule: Rule, case: Case) -> Finding | None:
    if rule.fate != ANY and case.fate.outcome != rule.fate:
        return None
    if rule.check is not None:
        return rule.check(case, rule)
    hits = case.find(rule.kinds, rule.on, rule.before, rule.after, rule.where, rule.since_start)
    if rule.skip_stale:
        hits = tuple(i for i in hits if not case.stale(i))
    stop = case.first_stop() if rule.before_stop else None
    if stop is not None:
        hits = tuple(i for i in hits if case.event(i).at < stop)
    drained = case.first_deliberate_stop() if rule.before_drain else None
    if drained is not None:
        hits = tuple(i for i in hits if case.event(i).at < drained)
    if not hits:
        return None
    return found(case, rule, hits, supporting(case, rule))


def supporting(case: Case, rule: Rule) -> tuple[int, ...]:
    """The events that corroborate a finding of ``rule`` (its ``support``)."""
    return tuple(i for s in rule.support for i in case.find(s.kinds, s.on, s.before, s.after, s.where))
