"""The compact terminal report: the answer alone on the first screen, then how it happened, one line per pod, the
timeline by node and the sources. ``--verbose`` gives the long tables instead (terminal.py).

Text is wrapped here, at word boundaries only, with a hanging indent under its label: a pod or node name is
never split, however narrow the terminal (a name wider than the line overflows whole), and anything cut short
ends with an ellipsis.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from whathappened import textclip
from whathappened.model import Report, Severity, TimelineEvent, Verdict
from whathappened.render.answer import Answer, answer, attempt_history, outcome_line
from whathappened.render.common import by_node, folded_chain, origin, role, shown_events, when
from whathappened.timeutils import isoformat, relative

LABEL_WIDTH = 14  # two spaces, "checkpoint" and two spaces: the answer's labels line up
MAX_MESSAGE = 200  # a timeline message longer than this is clipped: the row stays a row
MAX_COLLATERAL = 4  # more collateral deaths than this fold into one counted line
MAX_SHOWN_CHAIN = 8
SAME_HAPPENING = timedelta(minutes=2)  # two sources' reports of one happening (kube-state-metrics scrapes late)
SEVERITY_STYLE = {
    Severity.INFO: "dim",
    Severity.WARNING: "yellow",
    Severity.ERROR: "red",
    Severity.CRITICAL: "bold red",
}
TONE_STYLE = {"failure": "bold red", "undecided": "bold yellow", "none": "bold green", "no-evidence": "bold red"}


@dataclass(frozen=True, slots=True)
class Styled:
    text: str
    style: str = ""


@dataclass
class Page:
    """Lines of text, each with one style, wrapped to ``width``."""

    width: int
    lines: list[Styled] = field(default_factory=list)

    def add(self, text: str, style: str = "", indent: str = "", first: str = "") -> None:
        for line in wrap(text, self.width, first or indent, indent):
            self.lines.append(Styled(line, style))

    def labelled(self, label: str, text: str, style: str = "") -> None:
        head = f"  {label:<{LABEL_WIDTH - 2}}"
        self.add(text, style, indent=" " * LABEL_WIDTH, first=head)

    def blank(self) -> None:
        self.lines.append(Styled(""))


def wrap(text: str, width: int, first: str = "", indent: str = "") -> list[str]:
    wrapper = textwrap.TextWrapper(
        width=max(width, len(first) + 10),
        initial_indent=first,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return wrapper.wrap(" ".join(text.splitlines())) or [first.rstrip()]


clip = textclip.clip  # renderers import it from here with the page layout


def compact_lines(report: Report, width: int) -> list[Styled]:
    page = Page(width)
    _header(page, report)
    page.blank()
    said = answer(report)
    page.add(outcome_line(report), TONE_STYLE.get(said.tone, "bold"))
    for line in attempt_history(report):  # a restarted experiment's attempts first, the latest one's answer next
        page.labelled("history", line)
    answer_block(page, said)
    if report.chain:
        page.blank()
        _chain(page, report)
    if report.verdicts:
        page.blank()
        _verdicts(page, report.verdicts)
    page.blank()
    _timeline(page, report)
    page.blank()
    _sources(page, report)
    return page.lines


def _header(page: Page, report: Report) -> None:
    nodes = {p.node for p in report.pods if p.node}
    said = f"whathappened {report.experiment}"
    if report.namespace:
        said += f" · namespace {report.namespace}"
    page.add(said, "bold")
    page.add(
        f"window {isoformat(report.window.start)} → {isoformat(report.window.end)} · "
        f"{len(report.pods)} pods on {len(nodes)} nodes",
        "dim",
    )


def answer_block(page: Page, said: Answer) -> None:
    """The answer: a title line, its sentence, labelled facts. Anything meant to sit above it (a one-line
    statement of what kind of answer this is) is added to the page before this is called."""
    tone = TONE_STYLE.get(said.tone, "bold")
    page.add(("ROOT CAUSE  " if said.tone == "failure" else "ANSWER  ") + said.title, tone)
    page.add(said.sentence, "bold")
    for line in said.lines:
        page.labelled(line.label, line.text, "bold green" if line.label == "next" else "")
    for step in said.next_steps:
        page.labelled("then", step)


def _chain(page: Page, report: Report) -> None:
    page.add("How it happened", "bold")
    steps, left_out = folded_chain(report)
    shown = steps[:MAX_SHOWN_CHAIN]
    left_out += len(steps) - len(shown)
    for _, event in shown:
        head = f"  {when(event.at, report.window)}  "
        page.add(f"{_place(event)}: {clip(event.summary, MAX_MESSAGE)}", "", " " * len(head), head)
    if left_out:
        page.add(f"… {left_out} more steps (--verbose or --output html shows them all)", "dim", "  ", "  ")


def _place(event: TimelineEvent) -> str:
    subject = event.subject
    gpu = _gpu_prefix(event).rstrip(": ")
    return " ".join(p for p in (subject.pod or subject.node or "cluster", gpu) if p)


def _gpu_prefix(event: TimelineEvent) -> str:
    """'GPU 3: ' unless the message names that GPU itself (no "GPU GPU 3")."""
    gpu = event.subject.gpu
    if gpu is None or f"GPU {gpu}" in event.summary:
        return ""
    return f"GPU {gpu}: "


def _verdicts(page: Page, verdicts: Sequence[Verdict]) -> None:
    page.add("Verdicts", "bold")
    ordered = sorted(verdicts, key=lambda v: ({True: 0, None: 1, False: 2}[v.root], v.pod))
    collateral = [v for v in ordered if v.root is False]
    listed = ordered if len(collateral) <= MAX_COLLATERAL else [v for v in ordered if v.root is not False]
    name_width = min(max((len(v.pod) for v in listed), default=0), page.width // 2)
    for v in listed:
        rank = v.facts.get("rank")
        tail = " · ".join([v.cause, role(v), f"{v.confidence:.0%}"] + ([f"rank {rank}"] if rank is not None else []))
        head = f"  {v.pod:<{name_width}}  "
        page.add(tail, "bold" if v.root else "", " " * len(head), head)
    if len(listed) < len(ordered):
        counts: dict[str, int] = {}
        for v in collateral:
            counts[v.cause] = counts.get(v.cause, 0) + 1
        causes = ", ".join(f"{n} {c}" for c, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
        page.add(
            f"+ {len(collateral)} collateral pods ({causes}), caused by {_common_cause(collateral)}; "
            "--verbose lists them",
            "dim",
            "    ",
            "  ",
        )


def _common_cause(verdicts: Iterable[Verdict]) -> str:
    names = sorted({v.caused_by for v in verdicts if v.caused_by})
    return ", ".join(names[:2]) + (" and others" if len(names) > 2 else "") if names else "the root"


def merged_rows(report: Report) -> list[tuple[int, TimelineEvent, tuple[str, ...]]]:
    """Shown events with one happening reported by several sources (a container's end from the API, then from
    kube-state-metrics a scrape later) folded into its first report, naming every source."""
    rows: list[tuple[int, TimelineEvent, list[str]]] = []
    last: dict[tuple[object, ...], int] = {}
    for index, event in shown_events(report):
        s = event.subject
        key = (str(event.kind), s.namespace, s.pod, s.container, s.node, s.gpu)
        at = last.get(key)
        if at is not None:
            _, first, sources = rows[at]
            if event.source not in sources and event.at - first.at <= SAME_HAPPENING:
                sources.append(event.source)
                continue
        last[key] = len(rows)
        rows.append((index, event, [event.source]))
    return [(i, e, tuple(sources)) for i, e, sources in rows]


def _timeline(page: Page, report: Report) -> None:
    start = origin(report)
    page.add("Timeline by node (times relative to the failure; ● marks the root cause's chain)", "bold")
    chain = set(report.chain)
    merged = merged_rows(report)
    sources_of = {index: sources for index, _, sources in merged}
    for node, rows in by_node((index, event) for index, event, _ in merged):
        pods = sorted({e.subject.pod for _, e in rows if e.subject.pod})
        title = node if node != "(no node)" else "cluster-wide"
        page.add(title + (f" · {pods[0]}" if len(pods) == 1 else ""), "bold cyan", "  ", "")
        for index, event in rows:
            mark = "●" if index in chain else " "
            head = f" {mark}{relative(event.at, start):>9} {when(event.at, report.window)}  "
            who = f"{event.subject.pod}: " if len(pods) > 1 and event.subject.pod else ""
            gpu = _gpu_prefix(event)
            text = f"{who}{gpu}{clip(event.summary, MAX_MESSAGE)} [{'+'.join(sources_of[index])}]"
            page.add(text, SEVERITY_STYLE[event.severity], " " * len(head), head)


def _sources(page: Page, report: Report) -> None:
    parts = []
    for source in report.sources:
        parts.append(f"{source.name} {source.status.value}" + (f" ({source.detail})" if source.detail else ""))
    page.add("sources: " + "; ".join(parts), "dim", "  ")
