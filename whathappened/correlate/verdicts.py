"""Stage 4 of the correlator: each judged death said in words: its cause's row (category, retryable), the sentence
filled from the facts of the case, the next step, the GPU, and for a root a remediator's quarantine and drain
of its node."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta

from whathappened.correlate import templates
from whathappened.correlate.blame import Judged
from whathappened.correlate.causes import cause
from whathappened.correlate.facts import clock, facts, gpu_of
from whathappened.correlate.facts_run import run_facts
from whathappened.correlate.fates import evicted_by_api
from whathappened.correlate.index import TimelineIndex
from whathappened.kinds import Kind
from whathappened.model import NodeInfo, Verdict

REMEDIATION_WINDOW = timedelta(hours=1)


def verdicts(judged: Sequence[Judged], index: TimelineIndex, nodes: Sequence[NodeInfo]) -> dict[str, Verdict]:
    """One verdict per judged death, by pod name, in the order judged."""
    by_name = {n.name: n for n in nodes}
    return {j.fate.name: _verdict(j, index, by_name) for j in judged}


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
        facts=run_facts(j.fate, j.finding, timeline, index.checkpoints),
    )
