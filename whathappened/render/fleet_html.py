"""``whathappened fleet --output html``: one self-contained page (no script, no request; a Content-Security-Policy
that allows only its own style): the headline, a bar chart of incidents by cause with their GPU-hours lost, the
weekly incidents stacked by cause, then the tables (causes, lemon nodes and GPUs, experiments)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from whathappened.fleet.result import FleetResult
from whathappened.render.fleet import COLUMNS, TITLES, cell, headline, rows_of
from whathappened.render.html_svg import attr, digest

# One colour per cause, in the order the causes rank (colour-blind-safe palette, then greys)
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000", "#999999",
           "#666666", "#bbbbbb", "#444444")  # fmt: skip
CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#111;background:#fff}
main{max-width:1180px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 6px}h2{font-size:17px;margin:28px 0 8px}
p.headline{font-size:16px;margin:0 0 12px}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #ddd}
th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.replace td{background:#fde8e8}
svg text{font:12px system-ui,sans-serif;fill:#111}
.legend span{display:inline-block;margin:0 14px 4px 0}
"""
BAR_H, LABEL_W, CHART_W = 22, 210, 1100


def render_fleet_html(result: FleetResult) -> str:
    causes = [row["cause"] for row in result.rollup.by_cause]
    colour = {cause: PALETTE[min(i, len(PALETTE) - 1)] for i, cause in enumerate(causes)}
    body = "".join(
        (
            "<h1>whathappened fleet</h1>",
            f'<p class="headline" data-outcome="{attr(result.outcome)}">{attr(headline(result))}</p>',
            _cause_bars(result.rollup.by_cause, colour),
            _weekly(result.rollup.weekly, causes, colour),
            *(_table(result, table) for table in ("cause", "node", "gpu", "experiment")),
        )
    )
    policy = f"default-src 'none'; style-src '{digest(CSS)}'; img-src data:; base-uri 'none'; form-action 'none'"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{attr(policy)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="generator" content="whathappened">'
        "<title>whathappened fleet</title>"
        f"<style>{CSS}</style></head><body><main>{body}</main></body></html>\n"
    )


def _cause_bars(rows: Sequence[dict[str, Any]], colour: dict[str, str]) -> str:
    if not rows:
        return ""
    most = max(row["incidents"] for row in rows)
    width = CHART_W - LABEL_W - 260
    bars = []
    for i, row in enumerate(rows):
        y = i * (BAR_H + 6)
        w = max(2.0, width * row["incidents"] / most)
        label = f"{row['incidents']} ({row['share']:.0%}), {row['pod_deaths']} pods, {row['gpu_hours_lost']:g} GPU-h"
        bars.append(
            f'<g class="bar" data-cause="{attr(row["cause"])}" data-incidents="{row["incidents"]}">'
            f'<text x="{LABEL_W - 8}" y="{y + 15}" text-anchor="end">{attr(row["cause"])}</text>'
            f'<rect x="{LABEL_W}" y="{y}" width="{w:.1f}" height="{BAR_H}" fill="{colour[row["cause"]]}"/>'
            f'<text x="{LABEL_W + w + 6:.1f}" y="{y + 15}">{attr(label)}</text></g>'
        )
    height = len(rows) * (BAR_H + 6)
    return (
        f"<h2>Incidents by cause</h2>"
        f'<svg id="causes" width="{CHART_W}" height="{height}" viewBox="0 0 {CHART_W} {height}" role="img" '
        f'aria-label="incidents by cause">{"".join(bars)}</svg>'
    )


def _weekly(rows: Sequence[dict[str, Any]], causes: Sequence[str], colour: dict[str, str]) -> str:
    if not rows:
        return ""
    weeks = sorted({row["week"] for row in rows})
    counts = {(row["week"], row["cause"]): row["incidents"] for row in rows}
    totals = {week: sum(counts.get((week, c), 0) for c in causes) for week in weeks}
    most, height, left = max(totals.values()), 220, 40
    column = (CHART_W - left) / len(weeks)
    parts = []
    for i, week in enumerate(weeks):
        x, top = left + i * column + 6, float(height)
        for cause in causes:
            n = counts.get((week, cause), 0)
            if not n:
                continue
            h = (height - 10) * n / most
            top -= h
            parts.append(
                f'<rect class="seg" data-week="{week}" data-cause="{attr(cause)}" data-incidents="{n}" x="{x:.1f}" '
                f'y="{top:.1f}" width="{column - 12:.1f}" height="{h:.1f}" fill="{colour[cause]}"/>'
            )
        parts.append(f'<text x="{x:.1f}" y="{height + 16}">week of {week} ({totals[week]})</text>')
    legend = "".join(
        f'<span><svg width="11" height="11"><rect width="11" height="11" fill="{colour[c]}"/></svg> {attr(c)}</span>'
        for c in causes
    )  # swatches as SVG: the policy allows no style attribute
    return (
        "<h2>Incidents per week, by cause</h2>"
        f'<div class="legend">{legend}</div>'
        f'<svg id="weekly" width="{CHART_W}" height="{height + 24}" viewBox="0 0 {CHART_W} {height + 24}" role="img" '
        f'aria-label="incidents per week by cause">{"".join(parts)}</svg>'
    )


def _table(result: FleetResult, table: str) -> str:
    rows = rows_of(result, table)
    columns = COLUMNS[table]
    if not rows:
        return f"<h2>{TITLES[table]}</h2><p>None.</p>"
    head = "".join(f"<th>{attr(title)}</th>" for _, title in columns)
    body = "".join(
        f'<tr class="{attr(row.get("verdict") or "")}">'
        + "".join(
            f'<td class="n">{attr(cell(key, row.get(key)))}</td>'
            if isinstance(row.get(key), int | float) and not isinstance(row.get(key), bool)
            else f"<td>{attr(cell(key, row.get(key)))}</td>"
            for key, _ in columns
        )
        + "</tr>"
        for row in rows
    )
    return f'<h2>{TITLES[table]}</h2><table id="by-{table}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
