"""What every human-readable renderer shares: which events to show, where they happened, and labels."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from whathappened.correlate.causes import CAUSES
from whathappened.kinds import Kind
from whathappened.model import Report, TimelineEvent, Verdict, Window
from whathappened.timeutils import isoformat

# Context lines are evidence, not news: they show in the chain and the HTML report, not the main timeline.
# Utilization samples are drawn as the HTML report's strips, not listed.
QUIET_KINDS = frozenset({Kind.LOG_LINE, Kind.GPU_UTILIZATION})
MAX_TIMELINE_ROWS = 400
# A 512-rank job that died of one fault has 512 verdicts and a chain of 500 first signs: a terminal shows the
# first ones and counts the rest (the JSON and HTML reports keep every one).
MAX_VERDICT_ROWS = 40
MAX_CHAIN_STEPS = 15


def title_of(cause: str) -> str:
    row = CAUSES.get(cause)
    return row.title if row is not None else cause


def where(event: TimelineEvent) -> str:
    subject = event.subject
    parts = [p for p in (subject.node, subject.pod) if p]
    if subject.gpu is not None:
        parts.append(f"GPU {subject.gpu}")
    return " / ".join(parts) or "cluster"


def shown_events(report: Report) -> list[tuple[int, TimelineEvent]]:
    """Timeline rows worth a person's eye: everything but quiet kinds, unless a verdict cites them.

    Past MAX_TIMELINE_ROWS the root cause's own evidence is kept first, then the rest of its chain, then the
    events nearest the failure, in time order. (Keeping the latest rows showed a 512-rank job's last deaths and
    none of the fault that began them.)"""
    cited = {i for v in report.verdicts for i in v.evidence} | set(report.chain)
    rows = [(i, e) for i, e in enumerate(report.timeline) if e.kind not in QUIET_KINDS or i in cited]
    if len(rows) <= MAX_TIMELINE_ROWS:
        return rows
    failure = origin(report)
    root = set(report.root_cause.evidence) if report.root_cause is not None else set()
    chain = set(report.chain)

    def rank(row: tuple[int, TimelineEvent]) -> tuple[int, float, int]:
        index, event = row
        tier = 0 if index in root else 1 if index in chain else 2
        return (tier, abs((event.at - failure).total_seconds()), index)

    kept = {index for index, _ in sorted(rows, key=rank)[:MAX_TIMELINE_ROWS]}
    return [row for row in rows if row[0] in kept]


def origin(report: Report) -> datetime:
    """Relative times count from the root failure when there is one, else from when a hang froze the job, else
    from the window's start."""
    if report.root_cause is not None and report.root_cause.ended is not None:
        return report.root_cause.ended
    if report.hang is not None and report.hang.froze_at is not None:
        return report.hang.froze_at
    if report.chain:
        return report.timeline[report.chain[-1]].at
    return report.window.start


def role(verdict: Verdict) -> str:
    if verdict.root is True:
        return "root"
    if verdict.root is False:
        return f"collateral of {verdict.caused_by}" if verdict.caused_by else "not the root"
    return "undecided"


def verdict_rows(verdicts: Iterable[Verdict]) -> tuple[list[Verdict], str]:
    """The verdicts worth a row, root and undecided first, and one line counting the rest by cause and role."""
    ordered = sorted(verdicts, key=lambda v: {True: 0, None: 1, False: 2}[v.root])
    rest = ordered[MAX_VERDICT_ROWS:]
    if not rest:
        return ordered, ""
    counts: dict[str, int] = {}
    for v in rest:
        counts[f"{v.cause}, {role(v)}"] = counts.get(f"{v.cause}, {role(v)}", 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    listed = "; ".join(f"{n} {what}" for what, n in ranked[:3]) + ("; ..." if len(ranked) > 3 else "")
    return ordered[:MAX_VERDICT_ROWS], f"{len(rest)} more verdicts ({listed}): --output json or html lists every one"


def by_node(rows: Iterable[tuple[int, TimelineEvent]]) -> list[tuple[str, list[tuple[int, TimelineEvent]]]]:
    """Rows grouped by node (groups in order of their first event), events kept in time order within."""
    groups: dict[str, list[tuple[int, TimelineEvent]]] = {}
    for index, event in rows:
        groups.setdefault(event.subject.node or "(no node)", []).append((index, event))
    return list(groups.items())


def chain_steps(report: Report) -> list[tuple[int, TimelineEvent]]:
    """The root cause's chain for people: a happening two sources both reported (the container's end from the
    API and from kube-state-metrics) is shown once, at its first report. The JSON keeps every index."""
    shown: list[tuple[int, TimelineEvent]] = []
    seen: set[tuple[str, str | None, str | None]] = set()
    for index in report.chain:
        event = report.timeline[index]
        key = (str(event.kind), event.subject.pod, event.subject.node if event.subject.pod is None else None)
        if key in seen:
            continue
        seen.add(key)
        shown.append((index, event))
    return shown


def folded_chain(report: Report) -> tuple[list[tuple[int, TimelineEvent]], int]:
    """chain_steps() cut to its first MAX_CHAIN_STEPS, and how many steps were left out."""
    steps = chain_steps(report)
    return steps[:MAX_CHAIN_STEPS], max(0, len(steps) - MAX_CHAIN_STEPS)


def when(at: datetime, window: Window) -> str:
    """A row's time: the clock alone within a day's window, with the date when the window spans more than a day
    (a 06:41 in a three-day window could be any of three mornings)."""
    text = isoformat(at)
    return f"{text[:10]} {text[11:19]}" if window.end - window.start > timedelta(days=1) else text[11:19]
