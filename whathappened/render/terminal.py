"""The terminal report (rich): header, root-cause panel, verdicts, the timeline by node, and source health."""

from __future__ import annotations

import shutil
from typing import TextIO

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from whathappened.model import Outcome, Report, Severity, SourceStatus, Verdict
from whathappened.render.answer import answer, outcome_line
from whathappened.render.common import (
    by_node,
    folded_chain,
    origin,
    role,
    shown_events,
    title_of,
    verdict_rows,
    when,
    where,
)
from whathappened.render.terminal_compact import clip, compact_lines
from whathappened.timeutils import isoformat, relative

SEVERITY_STYLE = {
    Severity.INFO: "dim",
    Severity.WARNING: "yellow",
    Severity.ERROR: "red",
    Severity.CRITICAL: "bold red",
}
STATUS_STYLE = {
    SourceStatus.OK: "green",
    SourceStatus.NOT_CONFIGURED: "dim",
}


def render_terminal(
    report: Report, out: TextIO | None = None, width: int | None = None, color: bool = True, verbose: bool = False
) -> None:
    """The compact report, or with ``verbose`` the long tables. Width: as given, else the terminal's or COLUMNS
    (also when the output is piped), else 100."""
    width = width or terminal_width()
    if not verbose:
        console = Console(file=out, width=width, no_color=not color, highlight=False, soft_wrap=True)
        for line in compact_lines(report, width):
            console.print(Text(line.text, style=line.style if color else ""))
        return
    console = Console(file=out, width=width, no_color=not color, highlight=False, soft_wrap=False)
    console.print(_header(report))
    console.print(_root_panel(report))
    if report.verdicts:
        console.print(_verdicts(report.verdicts))
    console.print(_timeline(report))
    console.print(_sources(report))


def terminal_width() -> int:
    return shutil.get_terminal_size((100, 25)).columns


def _header(report: Report) -> Text:
    nodes = sorted({p.node for p in report.pods if p.node})
    text = Text()
    text.append("whathappened ", style="bold")
    text.append(report.experiment, style="bold cyan")
    if report.namespace:
        text.append(f"  namespace {report.namespace}")
    text.append(f"\nwindow {isoformat(report.window.start)} → {isoformat(report.window.end)}", style="dim")
    text.append(f"\n{len(report.pods)} pods on {len(nodes)} nodes: ")
    text.append(", ".join(p.name for p in report.pods[:8]) + (" …" if len(report.pods) > 8 else ""), style="dim")
    return text


def _root_panel(report: Report) -> Panel:
    root = report.root_cause
    if root is None or report.outcome is Outcome.NO_EVIDENCE:
        said = answer(report)
        body = Text(outcome_line(report) + "\n" + said.sentence)
        for line in said.lines:
            body.append(f"\n{line.label}: {line.text}")
        colour = {"none": "green", "undecided": "yellow"}.get(said.tone, "red")
        return Panel(body, title=f"Root cause: {said.title}", border_style=colour)
    lines: list[Text | Table] = [Text(root.summary, style="bold")]
    facts = Text()
    facts.append(f"pod {root.pod}  node {root.node or 'unknown'}")
    if root.gpu is not None:
        facts.append(f"  GPU {root.gpu}")
    facts.append(f"\nretryable: {'yes' if root.retryable else 'no'}   confidence {root.confidence:.0%}")
    if report.lost_work is not None:
        facts.append(
            f"\nlost work: ~{report.lost_work.gpu_hours:.1f} GPU-hours since the last {report.lost_work.basis}"
        )
    lines.append(facts)
    if report.chain:
        chain = Table.grid(padding=(0, 1))
        steps, left_out = folded_chain(report)
        for step, (_, event) in enumerate(steps, start=1):
            chain.add_row(
                f"{step}.",
                when(event.at, report.window),
                Text(where(event), style="cyan"),
                Text(clip(event.summary, 160), style=SEVERITY_STYLE[event.severity]),
            )
        if left_out:
            chain.add_row("", "", "", Text(f"... {left_out} more steps (--output html shows them all)", style="dim"))
        lines.append(chain)
    if report.next_step:
        lines.append(Text(f"Next: {report.next_step}", style="bold green"))
    style = "red" if root.category in ("infrastructure", "application", "scheduling") else "yellow"
    return Panel(Group(*lines), title=f"Root cause: {title_of(root.cause)}", border_style=style)


def _verdicts(verdicts: tuple[Verdict, ...]) -> Table:
    rows, more = verdict_rows(verdicts)
    table = Table(title="Verdicts", title_justify="left", expand=False, caption=more or None, caption_justify="left")
    for column in ("pod", "node", "cause", "role", "conf.", "summary"):
        table.add_column(column, overflow="fold")
    for v in rows:
        table.add_row(
            v.pod,
            v.node or "",
            Text(v.cause, style="bold" if v.root else ""),
            role(v),
            f"{v.confidence:.0%}",
            v.summary,
        )
    return table


def _timeline(report: Report) -> Table:
    start = origin(report)
    chain = set(report.chain)
    table = Table(title="Timeline (by node; times relative to the failure)", title_justify="left", expand=False)
    for column in ("rel", "time", "where", "source", "kind", "message"):
        table.add_column(column, overflow="fold")
    for node, rows in by_node(shown_events(report)):
        table.add_section()
        table.add_row("", "", Text(node, style="bold cyan"), "", "", "")
        for index, event in rows:
            style = SEVERITY_STYLE[event.severity] + (" reverse" if index in chain else "")
            table.add_row(
                relative(event.at, start),
                when(event.at, report.window),
                where(event),
                event.source,
                event.kind,
                Text(clip(event.summary, 240), style=style),
            )
    return table


def _sources(report: Report) -> Text:
    text = Text("sources: ")
    for n, source in enumerate(report.sources):
        if n:
            text.append("  ")
        text.append(f"{source.name} {source.status.value}", style=STATUS_STYLE.get(source.status, "bold red"))
        if source.detail:
            text.append(f" ({source.detail})", style="dim")
    return text
