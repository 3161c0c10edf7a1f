"""The swim-lane timeline picture as inline SVG: lanes, pod lifetimes, GPU utilization strips, event markers.

Generated here rather than by a charting library: no dependency, a few kilobytes, and every element carries a
stable hook (``data-lane``, ``data-kind``, ``data-index``) that the browser tests and the page's script use.
Every piece of text is escaped; hover details travel in ``data-tip`` attributes that the script shows with
``textContent``, never as markup.
"""

from __future__ import annotations

import base64
import hashlib
import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from html import escape

from whathappened.model import Report, TimelineEvent, Verdict
from whathappened.render.common import origin, role, title_of, where
from whathappened.render.html_kinds import Category, category_of, tag_of
from whathappened.render.html_lanes import Lane, Lanes
from whathappened.timeutils import isoformat, relative

WIDTH = 1200
TOP = 36
RIGHT_PAD = 24
NODE_H = 26
POD_H = 34
STRIP_H = 14
CHAR_W = 6.4  # average advance of the 11px sans-serif labels, to size the label column
TICK_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


def attr(value: object) -> str:
    return escape(str(value), quote=True)


def digest(text: str) -> str:
    """A Content-Security-Policy source for this inline style or script."""
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


class Scale:
    def __init__(self, start: datetime, end: datetime, x0: float, x1: float) -> None:
        self.start, self.end, self.x0, self.x1 = start, end, x0, x1
        self.seconds = max((end - start).total_seconds(), 1.0)

    def x(self, at: datetime) -> float:
        offset = (at - self.start).total_seconds() / self.seconds
        return round(self.x0 + max(0.0, min(1.0, offset)) * (self.x1 - self.x0), 1)


def shape(name: str, x: float, y: float, r: float = 6.0) -> str:
    """An SVG path for a marker shape centred on (x, y)."""
    if name == "diamond":
        return f"M{x} {y - r}L{x + r} {y}L{x} {y + r}L{x - r} {y}Z"
    if name == "triangle-down":
        return f"M{x - r} {y - r * 0.8}L{x + r} {y - r * 0.8}L{x} {y + r}Z"
    if name == "triangle-up":
        return f"M{x - r} {y + r * 0.8}L{x + r} {y + r * 0.8}L{x} {y - r}Z"
    if name == "square":
        s = r * 0.85
        return f"M{x - s} {y - s}H{x + s}V{y + s}H{x - s}Z"
    if name == "cross":
        s = r * 0.8
        return f"M{x - s} {y - s}L{x + s} {y + s}M{x + s} {y - s}L{x - s} {y + s}"
    if name in ("star", "hexagon"):
        return _polygon(name, x, y, r)
    radius = r * (0.55 if name == "dot" else 0.9)
    return f"M{x - radius} {y}a{radius} {radius} 0 1 0 {2 * radius} 0a{radius} {radius} 0 1 0 {-2 * radius} 0Z"


def _polygon(name: str, x: float, y: float, r: float) -> str:
    if name == "star":
        points = [(r * 1.25 if i % 2 == 0 else r * 0.55, math.pi * i / 5 - math.pi / 2) for i in range(10)]
    else:
        points = [(r, math.pi * i / 3) for i in range(6)]
    coords = [f"{x + d * math.cos(a):.1f} {y + d * math.sin(a):.1f}" for d, a in points]
    return "M" + "L".join(coords) + "Z"


def marker_icon(category: Category) -> str:
    """A small standalone SVG of a category's marker, for the legend."""
    stroke = ' stroke-width="2.2" stroke="{0}" fill="none"' if category.shape == "cross" else ' fill="{0}"'
    return (
        f'<svg class="icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true">'
        f'<path d="{shape(category.shape, 8, 8)}"{stroke.format(attr(category.color))}/></svg>'
    )


def render_svg(report: Report, lanes: Lanes, start: datetime, end: datetime, view: str = "all") -> str:
    """One picture of the lanes between ``start`` and ``end``; events outside that range are not drawn."""
    label_w = _label_width(lanes.lanes)
    scale = Scale(start, end, label_w + 12, WIDTH - RIGHT_PAD)
    heights = [_lane_height(lane) for lane in lanes.lanes]
    total = TOP + sum(heights) + 10
    failure = origin(report)
    parts = [
        f'<svg class="lanes" data-view="{attr(view)}" viewBox="0 0 {WIDTH} {total}" width="{WIDTH}" '
        f'height="{total}" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'aria-label="Timeline: a lane per node and per pod">',
        _axis(scale, total),
    ]
    positions: dict[int, tuple[float, float]] = {}
    y = float(TOP)
    for lane, height in zip(lanes.lanes, heights, strict=True):
        parts.append(_lane(lane, y, height, label_w, scale, failure, positions))
        y += height
    for attempt in report.attempts[1:] if len(report.attempts) > 1 else ():
        if attempt.start is not None and start <= attempt.start <= end:
            parts.append(_attempt_line(scale.x(attempt.start), total, attempt.number))
    if report.root_cause is not None and start <= failure <= end:
        parts.append(_failure_line(scale.x(failure), total))
    parts.append(_chain(report.chain, positions))
    parts.append("</svg>")
    return "".join(parts)


def _label_width(lanes: Sequence[Lane]) -> int:
    # Node names are bold and carry a two-character prefix; pod names are indented.
    longest = max((len(lane.name) * (1.12 if lane.kind == "node" else 1.0) + 3 for lane in lanes), default=10.0)
    return int(min(320, max(170, longest * CHAR_W + 20)))


def _lane_height(lane: Lane) -> int:
    if lane.kind != "pod":
        return NODE_H
    return POD_H + (STRIP_H if lane.utilization else 0)


def _axis(scale: Scale, total: float) -> str:
    step = _tick_step(scale.seconds)
    first = math.ceil(scale.start.timestamp() / step) * step
    ticks = []
    at = datetime.fromtimestamp(first, scale.start.tzinfo)
    while at <= scale.end:
        x = scale.x(at)
        label = at.strftime("%H:%M:%S" if step < 60 else "%H:%M")
        if scale.seconds > 86400 * 1.5:
            label = at.strftime("%m-%d %H:%M")
        ticks.append(
            f'<line class="grid" x1="{x}" y1="{TOP - 6}" x2="{x}" y2="{total - 6}"/>'
            f'<text class="tick" x="{x}" y="{TOP - 12}" text-anchor="middle">{attr(label)}</text>'
        )
        at += timedelta(seconds=step)
    return f'<g class="axis"><text class="tick unit" x="6" y="{TOP - 12}">UTC</text>{"".join(ticks)}</g>'


def _tick_step(seconds: float) -> int:
    for step in TICK_STEPS:
        if seconds / step <= 10:
            return step
    return TICK_STEPS[-1] * math.ceil(seconds / (TICK_STEPS[-1] * 10))


def _lane(
    lane: Lane,
    y: float,
    height: int,
    label_w: int,
    scale: Scale,
    failure: datetime,
    positions: dict[int, tuple[float, float]],
) -> str:
    mid = y + (NODE_H / 2 if lane.kind != "pod" else 15)
    verdict = lane.verdict
    classes = f"lane lane-{lane.kind}" + (f" role-{role_class(verdict)}" if verdict else "")
    parts = [
        f'<g class="{classes}" data-lane="{attr(lane.key)}">',
        f'<rect class="band" x="0" y="{y}" width="{WIDTH}" height="{height}"/>',
        _label(lane, y, label_w),
    ]
    if lane.kind == "pod":
        parts.append(_lifetime(lane, mid, scale))
    parts.append(f'<line class="rule" x1="{scale.x0}" y1="{mid}" x2="{scale.x1}" y2="{mid}"/>')
    if lane.utilization:
        parts.append(_strip(lane, y + POD_H, scale))
    parts.append(_markers(lane, mid, scale, failure, positions))
    parts.append("</g>")
    return "".join(parts)


def role_class(verdict: Verdict) -> str:
    if verdict.cause == "completed":
        return "completed"
    if verdict.root is True:
        return "root"
    return "collateral" if verdict.root is False else "undecided"


def _label(lane: Lane, y: float, label_w: int) -> str:
    room = int((label_w - 16) / CHAR_W)
    name = lane.name if len(lane.name) <= room else "…" + lane.name[-(room - 1) :]
    if lane.kind != "pod":
        tip = {"node": f"node {lane.name}", "group": "pods never placed on a node"}.get(lane.kind, "no pod or node")
        return (
            f'<text class="lane-label" x="8" y="{y + NODE_H / 2 + 4}" data-tip="{attr(tip)}">'
            f"{attr('▣ ' + name if lane.kind == 'node' else name)}</text>"
        )
    verdict = lane.verdict
    tip = f"pod {lane.name}" + (f"\nnode {lane.node}" if lane.node else "")
    text = f'<text class="lane-label pod" x="20" y="{y + 14}" data-tip="{attr(tip)}">{attr(name)}</text>'
    if verdict is not None:
        detail = f"{role(verdict) if verdict.root is not False else 'collateral'} · {title_of(verdict.cause)}"
        cut = int((label_w - 24) / (CHAR_W * 0.9))
        detail = detail if len(detail) <= cut else detail[: cut - 1] + "…"
        full = f"{title_of(verdict.cause)} ({verdict.cause}), {role(verdict)}\n{verdict.summary}"
        text += f'<text class="verdict-tag" x="20" y="{y + 27}" data-tip="{attr(full)}">{attr(detail)}</text>'
    return text


def _lifetime(lane: Lane, mid: float, scale: Scale) -> str:
    pod = lane.pod
    times = [e.at for _, e in lane.events]
    began = (pod.started or pod.created) if pod else None
    ended = (pod.ended or pod.deleted) if pod else None
    if lane.verdict is not None and lane.verdict.ended is not None:
        ended = ended or lane.verdict.ended
    began = began or (min(times) if times else None)
    ended = ended or (max(times) if times else None)
    if began is None or ended is None or ended < began:
        return ""
    x0, x1 = scale.x(began), scale.x(ended)
    pending = lane.node is None  # never placed on a node: it waited, it did not run
    tip = f"pod {lane.name}\n{'pending' if pending else 'ran'} {isoformat(began)} → {isoformat(ended)}"
    return (
        f'<rect class="life{" pending" if pending else ""}" x="{x0}" y="{mid - 5}" width="{max(x1 - x0, 2):.1f}" '
        f'height="10" rx="3" '
        f'data-tip="{attr(tip)}"/>'
    )


def _strip(lane: Lane, y: float, scale: Scale) -> str:
    """GPU utilization as a small area chart under the pod's lane, 0 to 100 %."""
    top, bottom = y + 1, y + STRIP_H - 2
    points = [(scale.x(at), bottom - (bottom - top) * value / 100.0) for at, value in lane.utilization]
    # A sample holds until the next one: steps, not slopes, so a collapse shows where it was seen.
    steps = [p for (x, py), (nx, _) in zip(points, [*points[1:], points[-1]], strict=True) for p in ((x, py), (nx, py))]
    line = " ".join(f"{x:.1f},{py:.1f}" for x, py in steps)
    area = f"{points[0][0]:.1f},{bottom} {line} {points[-1][0]:.1f},{bottom}"
    low, high = min(v for _, v in lane.utilization), max(v for _, v in lane.utilization)
    tip = (
        f"GPU utilization of {lane.name}: {low:.0f}% to {high:.0f}% over {len(points)} samples\n"
        f"{isoformat(lane.utilization[0][0])} → {isoformat(lane.utilization[-1][0])}"
    )
    return (
        f'<g class="util" data-util="{attr(lane.name)}" data-tip="{attr(tip)}">'
        f'<rect class="util-bg" x="{scale.x0}" y="{top}" width="{scale.x1 - scale.x0}" height="{bottom - top}"/>'
        f'<polygon class="util-area" points="{area}"/><polyline class="util-line" points="{line}"/>'
        f'<text class="util-label" x="20" y="{bottom}">GPU util</text></g>'
    )


def _markers(lane: Lane, mid: float, scale: Scale, failure: datetime, positions: dict[int, tuple[float, float]]) -> str:
    parts: list[str] = []
    taken: list[tuple[float, float]] = []  # x extents of the tags already drawn on this lane
    # Quiet markers first, so that the severe ones are drawn on top where they overlap.
    for index, event in sorted(lane.events, key=lambda row: (row[1].severity.rank, row[1].at)):
        if not scale.start <= event.at <= scale.end:
            continue
        x = scale.x(event.at)
        positions[index] = (x, mid)
        category = category_of(event)
        label = _tag(tag_of(event) if category.key != "info" else "", x, mid, scale, taken)
        paint = (
            f'class="x" stroke="{category.color}" fill="none"'
            if category.shape == "cross"
            else f'fill="{category.color}"'
        )
        parts.append(
            f'<a class="marker cat-{category.key} sev-{event.severity.value}" href="#ev-{index}" '
            f'data-kind="{attr(event.kind)}" data-index="{index}" data-tip="{attr(tip(event, failure))}">'
            f'<path d="{shape(category.shape, x, mid)}" {paint}/>{label}</a>'
        )
    return "".join(parts)


def _tag(text: str, x: float, mid: float, scale: Scale, taken: list[tuple[float, float]]) -> str:
    """A short label right of the marker (left of it near the right edge), unless it would overlap another."""
    if not text:
        return ""
    width = len(text) * CHAR_W
    left, anchor = (x + 8, "start") if x + 8 + width <= scale.x1 + RIGHT_PAD - 4 else (x - 8 - width, "end")
    if any(left < b and a < left + width for a, b in taken):
        return ""
    taken.append((left - 4, left + width + 4))
    at = x + 8 if anchor == "start" else x - 8
    return f'<text class="tag" x="{at}" y="{mid - 7}" text-anchor="{anchor}">{attr(text)}</text>'


def tip(event: TimelineEvent, failure: datetime) -> str:
    """The hover text of a marker: when, what, where, from which source, and the message."""
    summary = event.summary if len(event.summary) <= 400 else event.summary[:399] + "…"
    facts = ", ".join(f"{k}={v}" for k, v in list(event.attrs.items())[:6] if k != "samples" and _short(v))
    return (
        f"{isoformat(event.at)} ({relative(event.at, failure)})\n"
        f"{event.kind} · {event.severity.value} · from {event.source}\n"
        f"{where(event)}\n{summary}" + (f"\n{facts}" if facts else "")
    )


def _short(value: object) -> bool:
    return isinstance(value, str | int | float | bool) and len(str(value)) <= 80


def _attempt_line(x: float, total: float, number: int) -> str:
    """Where a restarted or resubmitted experiment's next attempt began."""
    return (
        f'<g class="attempt" data-attempt="{number}"><line x1="{x}" y1="{TOP - 4}" x2="{x}" y2="{total - 6}"/>'
        f'<text x="{x + 4}" y="{TOP - 1}">attempt {number}</text></g>'
    )


def _failure_line(x: float, total: float) -> str:
    return (
        f'<g class="failure"><line x1="{x}" y1="{TOP - 4}" x2="{x}" y2="{total - 6}"/>'
        f'<text x="{x + 4}" y="{TOP - 1}">failure</text></g>'
    )


def _chain(chain: Sequence[int], positions: dict[int, tuple[float, float]]) -> str:
    """The root cause's chain: a dashed path through its markers and numbered badges below them.

    Steps seconds apart share a spot on the picture, so steps that would overlap share one badge ("2–8").
    """
    points = [(step, positions[i]) for step, i in enumerate(chain, start=1) if i in positions]
    if not points:
        return ""
    path = " ".join(f"{x},{y}" for _, (x, y) in points)
    groups: list[tuple[float, float, list[int]]] = []
    for step, (x, y) in points:
        # Join the badge already on this lane when the two would overlap.
        near = next((g for g in groups if g[1] == y and abs(g[0] - x) < _badge_width(g[2]) + 10), None)
        if near is None:
            groups.append((x, y, [step]))
        else:
            near[2].append(step)
    badges = "".join(_badge(x, y, steps) for x, y, steps in groups)
    return f'<g class="chain" data-chain="{len(points)}"><polyline points="{path}"/>{badges}</g>'


def _steps_text(steps: list[int]) -> str:
    """1,3,4,5,6 -> "1,3–6": runs of consecutive steps as ranges."""
    runs: list[list[int]] = []
    for step in sorted(set(steps)):
        if runs and step == runs[-1][-1] + 1:
            runs[-1].append(step)
        else:
            runs.append([step])
    return ",".join(str(r[0]) if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)


def _badge_width(steps: list[int]) -> float:
    return max(14.0, len(_steps_text(steps)) * 6.2 + 6)


def _badge(x: float, y: float, steps: list[int]) -> str:
    text, width = _steps_text(steps), _badge_width(steps)
    left, top = x - 2 - width, y + 4
    return (
        f'<g class="step" data-step="{attr(" ".join(map(str, steps)))}">'
        f'<rect x="{left:.1f}" y="{top}" width="{width:.1f}" height="14" rx="7"/>'
        f'<text x="{left + width / 2:.1f}" y="{top + 10.5}" text-anchor="middle">{attr(text)}</text></g>'
    )
