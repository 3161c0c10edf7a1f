"""The swim-lane model behind the HTML timeline picture: which lanes, which events on each, and marker kinds.

A lane per node, and under it a lane per pod that ran there; events about a pod go on the pod's lane, events
about a node only on the node's lane, and events about neither on a cluster lane. Big experiments keep the
lanes that carry evidence: a picture of a thousand quiet lanes helps nobody, and the evidence table below it
still lists every event.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from whathappened.kinds import Kind
from whathappened.model import PodInfo, Report, TimelineEvent, Verdict
from whathappened.render.common import origin
from whathappened.timeutils import parse_timestamp

MAX_LANES = 48


@dataclass(frozen=True)
class Category:
    key: str
    label: str
    shape: str  # diamond | triangle-down | square | star | circle | triangle-up | cross | dot | hexagon
    color: str


CATEGORIES: dict[str, Category] = {
    c.key: c
    for c in (
        Category("maintenance", "Maintenance / spot notice", "diamond", "#2563eb"),
        Category("node", "Node state (cordon, drain, NotReady)", "triangle-down", "#0e7490"),
        Category("eviction", "Eviction, preemption, deletion", "square", "#ea580c"),
        Category("gpu", "GPU fault (Xid, ECC, NVLink)", "star", "#dc2626"),
        Category("gpu-signal", "GPU signal (utilization, memory, power)", "circle", "#f87171"),
        Category("oom", "Out of memory", "circle", "#9333ea"),
        Category("nccl", "NCCL / network", "triangle-up", "#b45309"),
        Category("app", "Application error or signal", "hexagon", "#be185d"),
        Category("scheduling", "Scheduling", "square", "#64748b"),
        Category("exit", "Container or pod ended", "cross", "#111827"),
        Category("success", "Completed", "circle", "#16a34a"),
        Category("checkpoint", "Checkpoint saved", "dot", "#059669"),
        Category("info", "Other", "dot", "#9ca3af"),
    )
}

_KIND_CATEGORY: dict[str, str] = {
    **dict.fromkeys((Kind.MAINTENANCE_NOTICE, Kind.SPOT_INTERRUPTION, Kind.REBALANCE_RECOMMENDATION), "maintenance"),
    **dict.fromkeys(
        (
            Kind.NODE_NOT_READY,
            Kind.NODE_CORDONED,
            Kind.NODE_REBOOTED,
            Kind.NODE_PRESSURE,
            Kind.NODE_CONDITION,
            Kind.NODE_TAINTED,
            Kind.NODE_DELETED,
            Kind.NODE_SHUTDOWN,
            Kind.DRAIN,
        ),
        "node",
    ),
    **dict.fromkeys(
        (
            Kind.EVICTED,
            Kind.EVICTION_API,
            Kind.DISRUPTION_TARGET,
            Kind.TAINT_EVICTION,
            Kind.PREEMPTED,
            Kind.POD_DELETED,
            Kind.KILLING,
        ),
        "eviction",
    ),
    **dict.fromkeys(
        (
            Kind.GPU_XID,
            Kind.GPU_ECC_DBE,
            Kind.GPU_ECC_SBE,
            Kind.GPU_RETIRED_PAGES,
            Kind.GPU_ROW_REMAP_FAILURE,
            Kind.NVLINK_ERROR,
            Kind.GPU_THERMAL,
            Kind.GPU_MISSING,
        ),
        "gpu",
    ),
    **dict.fromkeys((Kind.GPU_UTIL_DROP, Kind.GPU_MEMORY_FULL, Kind.GPU_POWER_VIOLATION), "gpu-signal"),
    **dict.fromkeys((Kind.OOM_KILLED, Kind.KERNEL_OOM, Kind.CUDA_OOM), "oom"),
    **dict.fromkeys((Kind.NCCL_TIMEOUT, Kind.NCCL_ERROR, Kind.NETWORK_ERROR), "nccl"),
    **dict.fromkeys(
        (
            Kind.APP_EXCEPTION,
            Kind.CUDA_ERROR,
            Kind.SIGTERM_RECEIVED,
            Kind.LAUNCHER_TEARDOWN,
            Kind.PROBE_FAILED,
            Kind.BACK_OFF,
            Kind.CONFIG_ERROR,
            Kind.IMAGE_PULL_FAILED,
            Kind.CONTAINER_RESTARTED,
        ),
        "app",
    ),
    **dict.fromkeys((Kind.FAILED_SCHEDULING,), "scheduling"),
    **dict.fromkeys((Kind.CONTAINER_TERMINATED, Kind.POD_FAILED, Kind.DEADLINE_EXCEEDED), "exit"),
    **dict.fromkeys((Kind.POD_SUCCEEDED, Kind.JOB_COMPLETED, Kind.NODE_READY, Kind.NODE_UNCORDONED), "success"),
    Kind.CHECKPOINT_SAVED: "checkpoint",
}


def category_of(event: TimelineEvent) -> Category:
    key = _KIND_CATEGORY.get(event.kind, "info")
    if key == "exit" and event.attrs.get("exit_code") == 0:
        key = "success"
    return CATEGORIES[key]


def tag_of(event: TimelineEvent) -> str:
    """A few characters drawn beside a marker, for the events a reader looks for first."""
    attrs = event.attrs
    if event.kind == Kind.GPU_XID and attrs.get("xid") is not None:
        return f"Xid {attrs['xid']}"
    if event.kind == Kind.CONTAINER_TERMINATED and attrs.get("exit_code") is not None:
        return f"exit {attrs['exit_code']}"
    return _TAGS.get(event.kind, "")


_TAGS: dict[str, str] = {
    Kind.GPU_ECC_DBE: "ECC DBE",
    Kind.GPU_MISSING: "GPU gone",
    Kind.NVLINK_ERROR: "NVLink",
    Kind.GPU_THERMAL: "thermal",
    Kind.OOM_KILLED: "OOMKilled",
    Kind.KERNEL_OOM: "kernel OOM",
    Kind.CUDA_OOM: "CUDA OOM",
    Kind.NCCL_TIMEOUT: "NCCL timeout",
    Kind.NCCL_ERROR: "NCCL error",
    Kind.MAINTENANCE_NOTICE: "maintenance",
    Kind.SPOT_INTERRUPTION: "spot reclaim",
    Kind.NODE_CORDONED: "cordon",
    Kind.DRAIN: "drain",
    Kind.NODE_NOT_READY: "NotReady",
    Kind.EVICTED: "evicted",
    Kind.EVICTION_API: "evicted",
    Kind.PREEMPTED: "preempted",
    Kind.FAILED_SCHEDULING: "unschedulable",
    Kind.POD_DELETED: "deleted",
    Kind.CUDA_ERROR: "CUDA error",
}


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
    for node in sorted(nodes):
        lanes.append(Lane(f"node:{node}", "node", node, node=node, events=tuple(placed.get(f"node:{node}", ()))))
        lanes += [_pod_lane(name, node, pods, verdicts, placed, utilization) for name in sorted(by_node.get(node, ()))]
    if by_node.get(None):
        lanes.append(Lane("unscheduled", "group", "not on any node"))
        lanes += [_pod_lane(name, None, pods, verdicts, placed, utilization) for name in sorted(by_node[None])]
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
    """Keep every lane when they fit; else the lanes with evidence, chain steps or verdicts first."""
    if len(lanes) <= MAX_LANES:
        return lanes, 0
    chain = set(report.chain)

    def weight(lane: Lane) -> tuple[int, int]:
        in_chain = any(i in chain for i, _ in lane.events)
        worst = max((e.severity.rank for _, e in lane.events), default=-1)
        root = lane.verdict is not None and lane.verdict.root is True
        return (0 if in_chain or root else 1, -worst)

    keep = {lane.key for lane in sorted(lanes, key=weight)[:MAX_LANES]}
    chosen = [lane for lane in lanes if lane.key in keep]
    return chosen, len(lanes) - len(chosen)


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
