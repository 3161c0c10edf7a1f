"""The self-contained HTML incident report: root cause and chain, a swim-lane picture, verdicts, evidence.

One file with its CSS and script inline and nothing fetched: it opens from a ticket attachment, offline, years
later. Every string that came from a cluster (pod names, log lines, raw payloads) is escaped, and a Content
Security Policy that admits only this page's own style and script (by hash) keeps a hostile log line inert
even if some future change forgot to escape it.

Stable hooks for tests and scripts: ``svg[data-view=all|focus]`` (the whole picture and the close-up around the
failure), ``[data-lane="node:NAME"|"pod:NAME"|"unscheduled"|"cluster"]``, markers ``a.marker[data-kind][data-index]``,
``[data-util=POD]`` strips, ``.chain[data-chain=N] .step[data-step]``, ``#root-cause[data-cause]``,
``tr.verdict[data-pod][data-cause]``, evidence rows ``tr#ev-INDEX[data-kind]``, ``tr[data-source]``, and
``html[data-ready="1"]`` once the page's script has run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from importlib import resources
from typing import Any

from whathappened.model import Outcome, Report, SourceReport, SourceStatus, TimelineEvent, Verdict
from whathappened.render.answer import attempt_history, outcome_line
from whathappened.render.common import origin, role, shown_events, title_of, when, where
from whathappened.render.html_answer import EXTRA_LABELS, answer, undecided_section
from whathappened.render.html_answer import listed as answer_list
from whathappened.render.html_kinds import CATEGORIES, category_of
from whathappened.render.html_lanes import Lanes, build_lanes, focus_lanes, focus_range
from whathappened.render.html_svg import attr, digest, marker_icon, render_svg, role_class
from whathappened.timeutils import isoformat, relative

MAX_RAW_CHARS = 6000
MAX_MESSAGE_CHARS = 400
MAX_VERDICT_ROWS = 40


def render_html(report: Report) -> str:
    rows = shown_events(report)
    lanes = build_lanes(report, rows)
    shown = {index for index, _ in rows}
    css, script = _asset("report.css") + _category_css(), _asset("report.js")
    body = "".join(
        (
            _header(report),
            _attempts(report),
            _root(report, shown),
            _picture(report, lanes),
            _verdicts(report.verdicts, report.timeline, shown),
            _evidence(report, rows),
            _sources(report.sources),
        )
    )
    policy = (
        f"default-src 'none'; style-src '{digest(css)}'; script-src '{digest(script)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    page = (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{attr(policy)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="generator" content="whathappened">'
        f"<title>{attr(_title(report))}</title>"
        f"<style>{css}</style></head>"
        f'<body><main class="page">{body}</main>'
        '<div id="tip" class="tip" role="tooltip" hidden></div>'
        f"<script>{script}</script></body></html>\n"
    )
    # Log text can carry lone surrogates (bytes decoded with surrogateescape) that no UTF-8 file can hold.
    return page.encode("utf-8", "replace").decode("utf-8")


def _attempts(report: Report) -> str:
    history = attempt_history(report, limit=None)
    if not history:
        return ""
    items = "".join(f"<li>{attr(line)}</li>" for line in history)
    return f'<section class="attempts"><h2>Attempts</h2><ol>{items}</ol></section>'


def _asset(name: str) -> str:
    return resources.files("whathappened.render").joinpath("assets", name).read_text(encoding="utf-8")


def _category_css() -> str:
    """Badge colours from the one category table the picture uses, so the two never disagree."""
    return "".join(
        f".kind.cat-{c.key},.chip.cat-{c.key}{{border-color:{c.color};color:{c.color}}}" for c in CATEGORIES.values()
    )


def _title(report: Report) -> str:
    root = report.root_cause
    return f"{report.experiment}: {title_of(root.cause) if root else 'no root cause'} · whathappened"


def _header(report: Report) -> str:
    nodes = {p.node for p in report.pods if p.node}
    failed = [s for s in report.sources if s.failed]
    facts = [
        f"namespace <b>{attr(report.namespace)}</b>" if report.namespace else "all namespaces",
        f"{attr(isoformat(report.window.start))} → {attr(isoformat(report.window.end))}",
        f"{len(report.pods)} pods on {len(nodes)} nodes",
        f"{len(report.timeline)} events",
    ]
    if failed:
        names = ", ".join(f"{s.name} ({s.status.value})" for s in failed)
        facts.append(f'<span class="bad">incomplete: {attr(names)}</span>')
    answered = [s.name for s in report.sources if s.status is SourceStatus.OK]
    if answered:
        facts.append(f"from {attr(', '.join(answered))}")
    return (
        '<header class="head"><p class="brand">whathappened</p>'
        f'<h1 data-experiment="{attr(report.experiment)}">{attr(report.experiment)}</h1>'
        f'<p class="facts">{" · ".join(facts)}</p></header>'
    )


def _root(report: Report, shown: set[int]) -> str:
    root = report.root_cause
    if root is None or report.outcome is Outcome.NO_EVIDENCE:
        return undecided_section(answer(report), outcome_line(report))
    facts = [
        ("Pod", root.pod),
        ("Node", root.node or "unknown"),
        ("GPU", root.gpu),
        ("Category", root.category),
        ("Retryable", "yes" if root.retryable else "no"),
        ("Confidence", f"{root.confidence:.0%}"),
    ]
    if report.lost_work is not None:
        lost = report.lost_work
        facts.append(
            ("Lost work", f"about {lost.gpu_hours:.1f} GPU-hours since the last {lost.basis} ({isoformat(lost.since)})")
        )
    listed = "".join(f"<dt>{attr(k)}</dt><dd>{attr(v)}</dd>" for k, v in facts if v is not None)
    next_step = report.next_step or root.next_step
    return (
        f'<section class="root tone-{attr(root.category)}" id="root-cause" data-cause="{attr(root.cause)}">'
        f'<p class="outcome">{attr(outcome_line(report))}</p>'
        f'<h2>Root cause: {attr(title_of(root.cause))} <code class="code">{attr(root.cause)}</code></h2>'
        f'<p class="summary">{attr(root.summary)}</p><dl class="facts">{listed}</dl>'
        + answer_list(answer(report), EXTRA_LABELS)
        + (f'<p class="next"><b>Next step:</b> {attr(next_step)}</p>' if next_step else "")
        + _chain(report, shown)
        + "</section>"
    )


def _chain(report: Report, shown: set[int]) -> str:
    if not report.chain:
        return ""
    failure = origin(report)
    items = []
    for index in report.chain:
        if not 0 <= index < len(report.timeline):
            continue
        event = report.timeline[index]
        items.append(
            f'<li data-index="{index}"><span class="when" title="{attr(isoformat(event.at))}">'
            f'{attr(when(event.at, report.window))}</span> <span class="rel">{attr(relative(event.at, failure))}</span> '
            f'{_kind_badge(event)} <span class="where">{attr(where(event))}</span> '
            f"{_link(index, shown, _clip(event.summary, 240))}</li>"
        )
    return f'<h3>How it happened</h3><ol class="chain-list">{"".join(items)}</ol>'


def _picture(report: Report, lanes: Lanes) -> str:
    if not lanes.lanes:
        return '<section id="timeline"><h2>Timeline</h2><p class="muted">No pods or nodes to draw.</p></section>'
    legend = "".join(f'<li data-cat="{attr(c.key)}">{marker_icon(c)} {attr(c.label)}</li>' for c in lanes.categories)
    hidden = (
        f'<p class="muted">{lanes.hidden} quieter lanes are not drawn; the evidence table lists all events.</p>'
        if lanes.hidden
        else ""
    )
    chain_note = " Numbered badges follow the root cause's chain." if report.chain else ""
    focus = focus_range(report, lanes)
    close_up = (
        f"<h3>Around the failure: {attr(isoformat(focus[0])[11:19])} to {attr(isoformat(focus[1])[11:19])}</h3>"
        f'<div class="picture">{render_svg(report, focus_lanes(lanes, *focus), focus[0], focus[1], "focus")}</div>'
        if focus
        else ""
    )
    return (
        '<section id="timeline"><h2>Timeline</h2>'
        f'<p class="muted">A lane per node and, under it, per pod. Hover a marker for details; click it for the '
        f"evidence.{chain_note}</p>"
        f'<div class="picture">{render_svg(report, lanes, lanes.start, lanes.end)}</div>'
        f'<ul class="legend">{legend}</ul>{hidden}{close_up}</section>'
    )


def _verdicts(verdicts: Sequence[Verdict], timeline: Sequence[TimelineEvent], shown: set[int]) -> str:
    if not verdicts:
        return '<section id="verdicts"><h2>Verdicts</h2><p class="muted">No pod ended in the window.</p></section>'
    # The root and the undecided first; a thousand collateral ranks fold away behind the first few.
    ordered = sorted(verdicts, key=lambda v: {True: 0, None: 1, False: 2}[v.root])
    head = "".join(f"<th>{h}</th>" for h in ("pod", "cause", "role", "conf.", "summary", "evidence"))

    def table(rows: Sequence[Verdict]) -> str:
        body = "".join(_verdict_row(v, timeline, shown) for v in rows)
        return f'<div class="scroll"><table class="verdicts"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'

    more = ordered[MAX_VERDICT_ROWS:]
    folded = (
        f'<details class="more"><summary>{len(more)} more verdicts</summary>{table(more)}</details>' if more else ""
    )
    return f'<section id="verdicts"><h2>Verdicts</h2>{table(ordered[:MAX_VERDICT_ROWS])}{folded}</section>'


def _verdict_row(v: Verdict, timeline: Sequence[TimelineEvent], shown: set[int]) -> str:
    evidence = " ".join(_chip(i, timeline, shown) for i in v.evidence if 0 <= i < len(timeline))
    place = " · ".join(p for p in (v.node, f"GPU {v.gpu}" if v.gpu is not None else None) if p)
    if v.root is False:
        who = "collateral" + (f'<span class="small">of {attr(v.caused_by)}</span>' if v.caused_by else "")
    else:
        who = attr(role(v))
    return (
        f'<tr class="verdict role-{role_class(v)}" data-pod="{attr(v.pod)}" data-cause="{attr(v.cause)}">'
        f'<td class="pod"><b>{attr(v.pod)}</b><span class="small">{attr(place)}</span></td>'
        f'<td><b>{attr(title_of(v.cause))}</b> <code class="code">{attr(v.cause)}</code>'
        f'<span class="small">{attr(v.category)} · {"retryable" if v.retryable else "not retryable"}</span></td>'
        f'<td class="role">{who}</td><td class="num">{v.confidence:.0%}</td>'
        f'<td class="summary">{attr(v.summary)}</td><td class="chips">{evidence}</td></tr>'
    )


def _chip(index: int, timeline: Sequence[TimelineEvent], shown: set[int]) -> str:
    event = timeline[index]
    text = f"{isoformat(event.at)[11:19]} {event.kind}"
    category = category_of(event).key
    if index in shown:
        return f'<a class="chip cat-{category}" href="#ev-{index}">{attr(text)}</a>'
    return f'<span class="chip cat-{category}">{attr(text)}</span>'


def _evidence(report: Report, rows: Sequence[tuple[int, TimelineEvent]]) -> str:
    failure = origin(report)
    steps = {index: step for step, index in enumerate(report.chain, start=1)}
    cited = {i for v in report.verdicts for i in v.evidence} | set(report.chain)
    body = "".join(_evidence_row(index, event, failure, steps.get(index), index in cited) for index, event in rows)
    left_out = len(report.timeline) - len(rows)
    note = (
        f'<p class="muted">{left_out} context events (log lines and the like) are not listed.</p>' if left_out else ""
    )
    return (
        '<section id="evidence"><h2>Evidence</h2>'
        '<p class="controls"><label><input type="checkbox" id="only-cited"> only events a verdict cites</label></p>'
        '<div class="scroll"><table class="evidence"><thead><tr><th>#</th><th>time (UTC)</th><th>rel.</th>'
        "<th>where</th><th>source</th><th>kind</th><th>message</th></tr></thead>"
        f"<tbody>{body}</tbody></table></div>{note}</section>"
    )


def _evidence_row(index: int, event: TimelineEvent, failure: datetime, step: int | None, cited: bool) -> str:
    classes = f"ev sev-{event.severity.value}" + (" in-chain" if step else "") + (" cited" if cited else "")
    badge = f'<span class="stepno">{step}</span>' if step else ""
    return (
        f'<tr id="ev-{index}" class="{classes}" data-index="{index}" data-kind="{attr(event.kind)}">'
        f'<td class="num">{badge}{index}</td>'
        f'<td class="when" title="{attr(isoformat(event.at))}">{attr(isoformat(event.at)[11:19])}</td>'
        f'<td class="rel">{attr(relative(event.at, failure))}</td><td class="where">{_where_cell(event)}</td>'
        f"<td>{attr(event.source)}</td><td>{_kind_badge(event)}</td>"
        f'<td class="msg">{attr(_clip(event.summary, MAX_MESSAGE_CHARS))}{_details(event)}</td></tr>'
    )


def _where_cell(event: TimelineEvent) -> str:
    subject = event.subject
    lines = [p for p in (subject.node, subject.pod) if p]
    if subject.gpu is not None:
        lines.append(f"GPU {subject.gpu}")
    return "<br>".join(attr(line) for line in lines) or "cluster"


def _details(event: TimelineEvent) -> str:
    """The event's attributes and raw payload, folded: long, and only some readers want them."""
    parts = []
    if len(event.summary) > MAX_MESSAGE_CHARS:
        parts.append(f"<pre>{attr(event.summary)}</pre>")
    attrs = {k: v for k, v in event.attrs.items() if k != "samples"}
    if attrs:
        parts.append(f'<pre class="attrs">{attr(_clip(_dump(attrs), MAX_RAW_CHARS))}</pre>')
    if event.raw is not None:
        parts.append(f'<pre class="raw">{attr(_clip(_dump(event.raw), MAX_RAW_CHARS))}</pre>')
    if not parts:
        return ""
    return f"<details><summary>raw payload</summary>{''.join(parts)}</details>"


def _dump(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _sources(sources: Sequence[SourceReport]) -> str:
    rows = "".join(
        f'<tr data-source="{attr(s.name)}" class="status-{attr(_status_class(s.status))}"><td>{attr(s.name)}</td>'
        f'<td><span class="status">{attr(s.status.value)}</span></td><td>{attr(s.detail)}</td>'
        f'<td class="num">{s.requests}</td><td class="num">{s.elapsed_s:.2f} s</td></tr>'
        for s in sources
    )
    return (
        '<section id="sources"><h2>Sources</h2><table class="sources"><thead><tr><th>source</th><th>status</th>'
        f"<th>detail</th><th>requests</th><th>time</th></tr></thead><tbody>{rows}</tbody></table>"
        '<p class="muted foot">Made by whathappened. Times are UTC; relative times count from the failure.</p>'
        "</section>"
    )


def _status_class(status: SourceStatus) -> str:
    if status is SourceStatus.OK:
        return "ok"
    return "off" if status is SourceStatus.NOT_CONFIGURED else "bad"


def _kind_badge(event: TimelineEvent) -> str:
    category = category_of(event)
    return f'<span class="kind cat-{category.key}" title="{attr(category.label)}">{attr(event.kind)}</span>'


def _link(index: int, shown: set[int], text: str) -> str:
    if index in shown:
        return f'<a href="#ev-{index}">{attr(text)}</a>'
    return attr(text)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
