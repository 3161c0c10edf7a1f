"""correlate(): from the merged timeline to one verdict per pod that ended, the root cause and its chain."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from whathappened.attempts import attempts_of, restart_waves
from whathappened.correlate import templates
from whathappened.correlate.blame import Judged, judge, root_of
from whathappened.correlate.causes import NO_FAULT, cause
from whathappened.correlate.evidence import Case, in_time_order
from whathappened.correlate.facts import clock, facts, gpu_of
from whathappened.correlate.facts_run import run_facts
from whathappened.correlate.fate import TERMINAL, evicted_by_api, fates
from whathappened.correlate.hang import analyze
from whathappened.correlate.index import TimelineIndex
from whathappened.correlate.lost import lost_work
from whathappened.correlate.rules import RULES, Rule, explain
from whathappened.kinds import Kind
from whathappened.model import Attempt, Hang, LostWork, NodeInfo, PodInfo, TimelineEvent, Verdict
from whathappened.scope import Scope

REMEDIATION_WINDOW = timedelta(hours=1)


@dataclass(frozen=True)
class Correlation:
    verdicts: tuple[Verdict, ...]  # one per pod that ended, was evicted or never started
    root_cause: Verdict | None  # the root verdict, None when nothing failed
    chain: tuple[int, ...]  # timeline indexes of the root cause's chain in time order
    next_step: str
    lost_work: LostWork | None
    hang: Hang | None = None  # when the ranks died waiting in a collective and no root was decided


def correlate(scope: Scope, timeline: Sequence[TimelineEvent], rules: tuple[Rule, ...] = RULES) -> Correlation:
    index = TimelineIndex.of(timeline)
    found = fates(scope, index)
    ended = {f.name for f in found}
    elsewhere = frozenset(p.node for p in scope.pods if p.node and p.name not in ended) - {f.node for f in found}
    explained = [(fate, explain(Case(fate, index, elsewhere), rules)) for fate in found]
    judged = judge(explained, timeline)
    nodes = {n.name: n for n in scope.nodes}
    verdicts = {j.fate.name: _verdict(j, index, nodes) for j in judged}
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


def correlate_attempts(
    scope: Scope, timeline: Sequence[TimelineEvent], rules: tuple[Rule, ...] = RULES
) -> tuple[Correlation, tuple[Attempt, ...]]:
    """Each attempt of a restarted or resubmitted experiment correlated on its own (its collateral blames its own
    root); the experiment's answer is the latest attempt's, every attempt's verdicts kept."""
    groups = attempts_of(scope.pods)
    if len(groups) <= 1:
        waves = restart_waves(scope.pods, timeline)
        if waves:
            return _restarted_in_place(scope, timeline, rules, waves)
        correlation = correlate(scope, timeline, rules)
        return correlation, tuple(Attempt(1, g, correlation.root_cause) for g in groups)
    each = [correlate(replace(scope, pods=group), timeline, rules) for group in groups]
    attempts = tuple(Attempt(n, g, c.root_cause) for n, (g, c) in enumerate(zip(groups, each, strict=True), start=1))
    return replace(each[-1], verdicts=tuple(v for c in each for v in c.verdicts)), attempts


def _a_fault(j: Judged) -> bool:
    """A death that cost work: not a completion or deletion, not a pod that never ran."""
    return j.finding.cause not in NO_FAULT and cause(j.finding.cause).category != "scheduling"


def remediation(j: Judged, index: TimelineIndex) -> tuple[tuple[int, ...], str] | None:
    """A remediator's quarantine of the node where a hardware fault began (NVSentinel cordoning it for the fault
    it saw), within the hour after the onset, and the drain that evicted the pod after it: their timeline indexes
    and the sentence that names them."""
    if j.fate.node is None or cause(j.finding.cause).category != "infrastructure":
        return None
    timeline = index.timeline
    for i in index.on_node(j.fate.node):
        event = timeline[i]
        by = event.attrs.get("remediator")
        if (
            by
            and event.kind == Kind.NODE_CORDONED
            and j.finding.onset <= event.at <= j.finding.onset + REMEDIATION_WINDOW
        ):
            why = event.attrs.get("remediation_reason")
            said = f" {by} quarantined {j.fate.node}" + (f" ({why})" if why else "") + f" at {clock(event.at)}"
            drained = next(
                (k for k in j.fate.events if evicted_by_api(timeline[k]) and timeline[k].at >= event.at), None
            )
            if drained is None:
                return (i,), said + "."
            return (i, drained), said + " and drained it."
    return None


def _verdict(j: Judged, index: TimelineIndex, nodes: Mapping[str, NodeInfo]) -> Verdict:
    timeline = index.timeline
    said = facts(j.fate, j.finding, timeline, nodes)
    said["blame"] = j.blame
    row = cause(j.finding.cause)
    remedy = remediation(j, index) if j.root else None
    return Verdict(
        pod=j.fate.name,
        namespace=j.fate.pod.namespace,
        node=j.fate.node,
        cause=row.code,
        category=row.category,
        retryable=row.retryable,
        root=j.root,
        caused_by=j.caused_by,
        confidence=j.finding.confidence,
        summary=templates.fill(j.finding.summary, said) + (remedy[1] if remedy else ""),
        evidence=tuple(sorted({*j.finding.evidence, *remedy[0]})) if remedy else j.finding.evidence,
        next_step=templates.next_step(row.code, said),
        gpu=gpu_of(j.fate, j.finding, timeline),
        ended=j.fate.ended,
        facts=run_facts(j.fate, j.finding, timeline),
    )


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


def _undecided(judged: Sequence[Judged], verdicts: dict[str, Verdict]) -> str:
    """No root: the next step of the commonest cause among the deaths (an NCCL timeout everywhere, say)."""
    codes = [j.finding.cause for j in judged]
    commonest = max(set(codes), key=lambda c: (codes.count(c), c))
    example = next(v for v in verdicts.values() if v.cause == commonest)
    return example.next_step


def _restarted_in_place(
    scope: Scope, timeline: Sequence[TimelineEvent], rules: tuple[Rule, ...], waves: Sequence[datetime]
) -> tuple[Correlation, tuple[Attempt, ...]]:
    """Containers restarted in place: each attempt is the span up to a wave of restarts, explained on the events of
    that span alone with each pod as it stood at the span's end (dead if one of its containers ended in it); the
    latest attempt is the pods as they are. The answer is the latest attempt's; a pod that did not die again keeps
    the verdict of its last death."""
    times = [e.at for e in timeline]  # in time order (merge_timeline)
    bounds = [None, *waves, None]
    spans = []
    for k in range(len(waves) + 1):
        lo, hi = bounds[k], bounds[k + 1]
        # a death stamped at the restart that followed it (a counter scraped then) is the earlier attempt's
        first = bisect_right(times, lo) if lo is not None else 0
        last = bisect_right(times, hi) if hi is not None else len(times)
        span = timeline[first:last]
        # the latest attempt is the pods as they are, begun when their containers last started
        dead = _died_in(span)
        pods = tuple(replace(p, started=None) if hi is None else _as_it_stood(p, dead) for p in scope.pods)
        spans.append((lo, hi, _shifted(correlate(replace(scope, pods=pods), span, rules), first)))
    if spans[-1][2].root_cause is None:
        # the latest span holds no death the sources recorded (only a restart counter moved, say): the answer the
        # whole timeline gives stands for it
        whole = correlate(scope, timeline, rules)
        if whole.root_cause is not None:
            spans[-1] = (spans[-1][0], None, whole)
    attempts = tuple(
        Attempt(n, scope.pods, c.root_cause, began=lo, finished=hi or _last_death(c))
        for n, (lo, hi, c) in enumerate(spans, start=1)
    )
    latest = spans[-1][2]
    judged = {v.pod for v in latest.verdicts}
    earlier = {v.pod: v for _, _, c in spans[:-1] for v in c.verdicts if v.pod not in judged}
    return replace(latest, verdicts=(*earlier.values(), *latest.verdicts)), attempts


def _died_in(span: Sequence[TimelineEvent]) -> frozenset[tuple[str | None, str]]:
    """(namespace or None, pod) of every pod a container of which ended in the span, gathered in one pass."""
    return frozenset((e.subject.namespace, e.subject.pod) for e in span if e.kind in TERMINAL and e.subject.pod)


def _as_it_stood(pod: PodInfo, dead: frozenset[tuple[str | None, str]]) -> PodInfo:
    """The pod at the end of an earlier attempt: failed when one of its containers ended in the span, else
    running; what the API says of it now belongs to the latest attempt."""
    died = (pod.namespace, pod.name) in dead or (None, pod.name) in dead  # as fate.is_about matches a subject
    return replace(pod, phase="Failed" if died else "Running", started=None, ended=None, deleted=None, containers=())


def _last_death(c: Correlation) -> datetime | None:
    """When the latest attempt ended: its last death, when it failed (its pods may restart and back off)."""
    return max((v.ended for v in c.verdicts if v.ended is not None), default=None) if c.root_cause else None


def _shifted(c: Correlation, offset: int) -> Correlation:
    """A span's correlation with its timeline indexes made the whole timeline's."""
    if not offset:
        return c

    def moved(v: Verdict) -> Verdict:
        return replace(v, evidence=tuple(i + offset for i in v.evidence))

    verdicts = tuple(moved(v) for v in c.verdicts)
    root = next((v for v in verdicts if c.root_cause is not None and v.pod == c.root_cause.pod), None)
    return replace(c, verdicts=verdicts, root_cause=root, chain=tuple(i + offset for i in c.chain))
