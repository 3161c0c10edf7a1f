"""The HTML report's answer when no root was decided, and the facts it adds to a decided one: the same lines
as every form (render.answer), as a definition list."""

from __future__ import annotations

from whathappened.render.answer import Answer, answer
from whathappened.render.html_svg import attr

# the decided answer's own list already names pod, node, GPU, retryable and lost work
EXTRA_LABELS = ("where", "checkpoint", "trained", "memory", "traceback")


def listed(said: Answer, labels: tuple[str, ...] | None = None) -> str:
    rows = [line for line in said.lines if labels is None or line.label in labels]
    rows_html = "".join(f"<dt>{attr(line.label.capitalize())}</dt><dd>{attr(line.text)}</dd>" for line in rows)
    steps = "".join(f"<li>{attr(step)}</li>" for step in said.next_steps)
    return (f'<dl class="facts">{rows_html}</dl>' if rows_html else "") + (
        f'<ol class="then">{steps}</ol>' if steps else ""
    )


def undecided_section(report_answer: Answer, outcome: str = "") -> str:
    """Any answer without a decided root: undecided, no failure, or no evidence (never drawn as good news)."""
    said = f'<p class="outcome">{attr(outcome)}</p>' if outcome else ""
    return (
        f'<section class="root tone-{attr(report_answer.tone)}" id="root-cause" data-tone="{attr(report_answer.tone)}">'
        f"{said}<h2>Root cause: "
        f'{attr(report_answer.title)}</h2><p class="summary">{attr(report_answer.sentence)}</p>'
        f"{listed(report_answer)}</section>"
    )


__all__ = ["EXTRA_LABELS", "answer", "listed", "undecided_section"]
