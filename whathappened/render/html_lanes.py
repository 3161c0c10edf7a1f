"""The swim-lane model behind the HTML timeline picture: which lanes, which events on each, and marker kinds.

A lane per node, and under it a lane per pod that ran there; events about a pod go on the pod's lane, events
about a node only on the node's lane, and events about neither on a cluster lane. Big experiments keep the
lanes that carry evidence: a picture of a thousand quiet lanes helps nobody, and the evidence table below it
still lists every event.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from whathappened.kinds import Kind
from whathappened.model import PodInfo, Report, TimelineEvent, Verdict
from whathappened.render.common import origin
from whathappened.render.html_kinds import CATEGORIES, Category, category_of
from whathappened.timeutils import parse_timestamp

MAX_LANES = 48


@dataclass(frozen=True)
class Lane:
    key: str  # the DOM hook: "node:NAME", "pod:NAME", "unscheduled" or "cluster"
    kind: str  # "node" | "pod" | "group" (the header over pods on no node) | "cluster"
    name: str
    node: str | None = None
    pod: PodInfo | None = None
    verdict: Verdict | None = None
    events: tuple[tuple[int, TimelineEvent], ...] = ()
    utilization: tuple[tuple[datetime, float], ...] = ()


@dataclass(frozen=True)
class Lanes:
    lanes: tuple[Lane, ...]
    start: datetime
    end: datetime
    hidden: int = 0  # lanes left out of the picture (quiet ones past MAX_LANES)
    categories: tuple[Category, ...] = field(default=())


def build_lanes(report: Report, rows: Sequence[tuple[int, TimelineEvent]]) -> Lanes:
    pods = {p.name: p for p in report.pods}
    verdicts = {v.pod: v for v in report.verdicts}
    placed: dict[str, list[tuple[int, TimelineEvent]]] = {}
    pod_node: dict[str, str | None] = {name: p.node for name, p in pods.items()}
    for index, event in rows:
        subject = event.subject
        if subject.pod:
            pod_node.setdefault(subject.pod, subject.node)
            if pod_node[subject.pod] is None and subject.node:
                pod_node[subject.pod] = subject.node
            key = f"pod:{subject.pod}"
        elif subject.node:
            key = f"node:{subject.node}"
        else:
            key = "cluster"
        placed.setdefault(key, []).append((index, event))
    for name, verdict in verdicts.items():
        pod_node.setdefault(name, verdict.node)
    utilization = utilization_by_pod(report.timeline)
    wanted = _wanted_pods(pods, verdicts, placed, report.chain, report.timeline)
    lanes = _ordered(report, wanted, pod_node, pods, verdicts, placed, utilization)
    chosen, hidden = _cap(lanes, report)
    start, end = _span(report, chosen)
    shown_categories = {category_of(e).key for lane in chosen for _, e in lane.events}
    categories = tuple(c for c in CATEGORIES.values() if c.key in shown_categories)
    return Lanes(tuple(chosen), start, end, hidden, categories)


def _wanted_pods(
    pods: Mapping[str, PodInfo],
    verdicts: Mapping[str, Verdict],
    placed: Mapping[str, list[tuple[int, TimelineEvent]]],
    chain: Sequence[int],
    timeline: Sequence[TimelineEvent],
) -> set[str]:
    wanted = set(pods) | set(verdicts) | {k[4:] for k in placed if k.startswith("pod:")}
    wanted |= {timeline[i].subject.pod or "" for i in chain if 0 <= i < len(timeline)} - {""}
    return wanted


def _ordered(
    report: Report,
    wanted: Iterable[str],
    pod_node: Mapping[str, str | None],
    pods: Mapping[str, PodInfo],
    verdicts: Mapping[str, Verdict],
    placed: Mapping[str, list[tuple[int, TimelineEvent]]],
    utilization: Mapping[str, tuple[tuple[datetime, float], ...]],
) -> list[Lane]:
    by_node: dict[str | None, list[str]] = {}
    for name in wanted:
        by_node.setdefault(pod_node.get(name), []).append(name)
    nodes = (
        {n for n in by_node if n} | {n.name for n in report.nodes} | {k[5:] for k in placed if k.startswith("node:")}
    )
    lanes: list[Lane] = []
    for node in sorted(nodes, key=natural):
        lanes.append(Lane(f"node:{node}", "node", node, node=node, events=tuple(placed.get(f"node:{node}", ()))))
        lanes += [
            _pod_lane(name, node, pods, verdicts, placed, utilization)
            for name in sorted(by_node.get(node, ()), key=natural)
        ]
    if by_node.get(None):
        lanes.append(Lane("unscheduled", "group", "not on any node"))
        lanes += [
            _pod_lane(name, None, pods, verdicts, placed, utilization) for name in sorted(by_node[None], key=natural)
        ]
    if placed.get("cluster"):
        lanes.append(Lane("cluster", "cluster", "cluster", events=tuple(placed["cluster"])))
    return lanes


def _pod_lane(
    name: str,
    node: str | None,
    pods: Mapping[str, PodInfo],
    verdicts: Mapping[str, Verdict],
    placed: Mapping[str, list[tuple[int, TimelineEvent]]],
    utilization: Mapping[str, tuple[tuple[datetime, float], ...]],
) -> Lane:
    return Lane(
        f"pod:{name}",
        "pod",
        name,
        node=node,
        pod=pods.get(name),
        verdict=verdicts.get(name),
        events=tuple(placed.get(f"pod:{name}", ())),
        utilization=utilization.get(name, ()),
    )


def _cap(lanes: list[Lane], report: Report) -> tuple[list[Lane], int]:
    """Keep every lane when they fit; else the lanes with the chain, verdicts and the worst events first.

    A kept pod keeps its node's lane above it, so the picture still reads node by node.
    """
    if len(lanes) <= MAX_LANES:
        return lanes, 0
    chain = set(report.chain)

    def weight(lane: Lane) -> tuple[int, int, int]:
        in_chain = any(i in chain for i, _ in lane.events)
        worst = max((e.severity.rank for _, e in lane.events), default=-1)
        root = lane.verdict is not None and lane.verdict.root is True
        return (0 if in_chain or root else 1, -worst, 0 if lane.kind == "pod" else 1)

    keep: set[str] = set()
    for lane in sorted(lanes, key=weight):
        extra = {lane.key} | ({f"node:{lane.node}"} if lane.kind == "pod" and lane.node else set())
        if len(keep | extra) > MAX_LANES:
            break
        keep |= extra
    if any(lane.key in keep and lane.kind == "pod" and not lane.node for lane in lanes):
        keep.add("unscheduled")
    chosen = [lane for lane in lanes if lane.key in keep]
    return chosen, len(lanes) - len(chosen)


def natural(name: str) -> tuple[tuple[int, int | str], ...]:
    """worker-2 before worker-10: digit runs compare as numbers."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name) if part)


def _span(report: Report, lanes: Sequence[Lane]) -> tuple[datetime, datetime]:
    """From a little before the first drawn event to a little after the last; the window when there is none."""
    times = [e.at for lane in lanes for _, e in lane.events]
    times += [at for lane in lanes for at, _ in lane.utilization]
    if not times:
        return report.window.start, report.window.end
    first, last = min(times), max(times)
    seconds = (last - first).total_seconds()
    # A little room on both sides; a burst of seconds still gets a two-minute picture around it.
    pad = timedelta(seconds=max(seconds * 0.04, (120.0 - seconds) / 2))
    return first - pad, last + pad


def focus_range(report: Report, lanes: Lanes) -> tuple[datetime, datetime] | None:
    """A close-up around the failure, when the root's own evidence is crowded into a sliver of the picture."""
    root = report.root_cause
    if root is None or not lanes.lanes:
        return None
    center = origin(report)
    near = timedelta(minutes=15)
    cited = [i for i in (*root.evidence, *report.chain) if 0 <= i < len(report.timeline)]
    times = [center, *(report.timeline[i].at for i in cited if abs(report.timeline[i].at - center) <= near)]
    first, last = min(times), max(times)
    span = max((last - first).total_seconds(), 60.0)
    pad = timedelta(seconds=span * 0.2)
    if (last - first).total_seconds() < 60.0:
        pad += timedelta(seconds=(60.0 - (last - first).total_seconds()) / 2)
    start, end = first - pad, last + pad
    if (end - start).total_seconds() >= 0.25 * (lanes.end - lanes.start).total_seconds():
        return None
    return start, end


def focus_lanes(lanes: Lanes, start: datetime, end: datetime) -> Lanes:
    """The lanes with something to show in [start, end], each pod lane with its node's lane above it."""

    def busy(lane: Lane) -> bool:
        return any(start <= e.at <= end for _, e in lane.events)

    kept = {lane.key for lane in lanes.lanes if busy(lane) or (lane.verdict is not None and lane.verdict.root)}
    kept |= {f"node:{lane.node}" for lane in lanes.lanes if lane.key in kept and lane.kind == "pod" and lane.node}
    if any(lane.key in kept and lane.kind == "pod" and not lane.node for lane in lanes.lanes):
        kept.add("unscheduled")
    chosen = tuple(lane for lane in lanes.lanes if lane.key in kept)
    return Lanes(chosen, start, end, 0, lanes.categories)


def utilization_by_pod(timeline: Iterable[TimelineEvent]) -> dict[str, tuple[tuple[datetime, float], ...]]:
    """GPU utilization samples per pod, from the timeline's GPU events.

    An event with ``attrs["samples"]`` (pairs of time and percent: datetime, RFC 3339 or Unix seconds) gives the
    strip its points; a ``gpu-util-drop`` with only ``before``/``after`` gives a two-level step at the drop.
    """
    samples: dict[str, dict[datetime, float]] = {}
    for event in timeline:
        pod = event.subject.pod
        if not pod or not str(event.kind).startswith("gpu-"):
            continue
        points = _samples(event.attrs.get("samples"))
        if not points and event.kind == Kind.GPU_UTIL_DROP:
            points = _step(event)
        for at, value in points:
            samples.setdefault(pod, {})[at] = value
    return {pod: tuple(sorted(points.items())) for pod, points in samples.items()}


def _samples(value: object) -> list[tuple[datetime, float]]:
    if not isinstance(value, list | tuple):
        return []
    points: list[tuple[datetime, float]] = []
    for item in value:
        if not isinstance(item, list | tuple) or len(item) != 2:
            continue
        at = parse_timestamp(item[0])
        number = _number(item[1])
        if at is not None and number is not None and math.isfinite(number):
            points.append((at, max(0.0, min(100.0, number))))
    return points


def _step(event: TimelineEvent) -> list[tuple[datetime, float]]:
    before, after = _number(event.attrs.get("before")), _number(event.attrs.get("after"))
    if before is None or after is None:
        return []
    since = parse_timestamp(event.attrs.get("since")) or event.at - timedelta(minutes=10)
    return [(since, before), (event.at - timedelta(seconds=1), before), (event.at, after)]


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None
