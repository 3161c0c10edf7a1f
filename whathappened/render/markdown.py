"""Markdown for pasting into a ticket or a chat: root cause first, then verdicts, timeline and sources."""

from __future__ import annotations

from whathappened.model import Outcome, Report
from whathappened.render.answer import answer, attempt_history, outcome_line
from whathappened.render.common import chain_steps, origin, role, shown_events, title_of, where
from whathappened.timeutils import isoformat, relative


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(report: Report) -> str:
    lines = [f"# whathappened: {report.experiment}", ""]
    lines.append(
        f"Window {isoformat(report.window.start)} to {isoformat(report.window.end)}"
        f"{f', namespace {report.namespace}' if report.namespace else ''}; "
        f"{len(report.pods)} pods on {len({p.node for p in report.pods if p.node})} nodes."
    )
    lines.append("")
    root = report.root_cause
    said = answer(report)
    lines += [f"**{outcome_line(report).capitalize()}**", ""]
    history = attempt_history(report)
    if history:
        lines += ["## Attempts", "", *(f"- {_cell(line)}" for line in history), ""]
    if root is None or report.outcome is Outcome.NO_EVIDENCE:
        lines += [f"## Root cause: {said.title}", "", f"**{_cell(said.sentence)}**", ""]
        lines += [f"- {line.label.capitalize()}: {_cell(line.text)}" for line in said.lines if line.label != "next"]
        lines += [f"- Then: {_cell(step)}" for step in said.next_steps]
        lines.append("")
    else:
        lines += [f"## Root cause: {title_of(root.cause)}", "", f"**{_cell(root.summary)}**", ""]
        lines.append(
            f"- Pod `{root.pod}` on node `{root.node or 'unknown'}`"
            f"{f', GPU {root.gpu}' if root.gpu is not None else ''}"
        )
        lines.append(f"- Retryable: {'yes' if root.retryable else 'no'}; confidence {root.confidence:.0%}")
        lines += [
            f"- {line.label.capitalize()}: {_cell(line.text)}"
            for line in said.lines
            if line.label in ("where", "lost work", "checkpoint", "trained", "memory", "traceback")
        ]
        if report.chain:
            lines += ["", "Chain:", ""]
            for step, (_, event) in enumerate(chain_steps(report), start=1):
                lines.append(f"{step}. {isoformat(event.at)} {where(event)}: {_cell(event.summary)}")
        lines.append("")
    if report.next_step:
        lines += [f"**Next step:** {report.next_step}", ""]
    if report.verdicts:
        lines += [
            "## Verdicts",
            "",
            "| pod | node | cause | role | confidence | summary |",
            "|---|---|---|---|---|---|",
        ]
        for v in report.verdicts:
            lines.append(
                f"| {v.pod} | {v.node or ''} | {v.cause} | {_cell(role(v))} | {v.confidence:.0%} | {_cell(v.summary)} |"
            )
        lines.append("")
    lines += ["## Timeline", "", "| time | rel | where | source | kind | message |", "|---|---|---|---|---|---|"]
    start = origin(report)
    for _, event in shown_events(report):
        lines.append(
            f"| {isoformat(event.at)} | {relative(event.at, start)} | {_cell(where(event))} | "
            f"{event.source} | {event.kind} | {_cell(event.summary[:300])} |"
        )
    lines += ["", "## Sources", ""]
    for source in report.sources:
        lines.append(
            f"- **{source.name}**: {source.status.value}{f' ({_cell(source.detail)})' if source.detail else ''}"
        )
    return "\n".join(lines) + "\n"
