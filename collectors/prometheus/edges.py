"""Round 2 of collection: where exactly the flagged series changed, found coarse to fine. Pure: no I/O.

Round 1 (``queries.flag_parts``) named, per signal, the few GPUs, nodes and pods whose series changed at
all in the window (``Targets``). Asking for their edges at a 15 s step over the whole window costs one
evaluation per series and step, which is cheap for a handful of series and ruinous for thousands (every rank
of a 512-pod job dying at once: every pod's phase, reason and restart series changed). So:

- few series (``fine_cost`` under ``DIRECT_LIMIT``): the edge queries run over the whole window at once;
- many: a *locate* query at a coarse step (a multiple of the fine step near 5 minutes) reads every flagged
  sample once or twice and returns only the coarse points after which an edge can lie; these points are grouped
  into at most ``MAX_CLUSTERS`` spans, and the edge queries run over those spans only, for the series located
  there.

The locate conditions are supersets of the edge conditions (see ``_locate_part``): a located span holds every
edge the whole-window query would return, with one exception written down there (a series that comes back after
a gap longer than the lookback, with the value it had before the gap). Edge queries put the metric name in
``__metric`` and answer a CHANGE edge's old value in the same answer under ``__old``; label_replace runs on the
sparse results only, never on every series at every step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from whathappened.collectors.prometheus.promql import (
    CANONICAL,
    METRIC,
    OLD,
    SHORT_MATCHER,
    Spelling,
    chunked_or,
    named,
    names_matcher,
    quote,
    regex_union,
)
from whathappened.collectors.prometheus.signals import (
    BY_METRIC,
    FB_NEAR_FULL,
    LOOKBACK_S,
    UTIL_BEFORE_OFFSET_S,
    UTIL_BEFORE_S,
    UTIL_COLLAPSE,
    UTIL_HIGH,
    UTIL_LOW,
    UTIL_RECENT_S,
    Mode,
    Where,
    fb_threshold_mib,
)

COARSE_TARGET_S = 300
MAX_CLUSTERS = 3
DIRECT_LIMIT = 120_000  # series x steps an edge query may evaluate over the whole window
_PER_POD_SERIES = 4  # a pod signal has a series per phase, reason or container: a rough count for fine_cost

PodKey = tuple[str, str]
_Parts = Callable[[str, Where, frozenset[Any], "Targets", Spelling, Sequence[str], int], list[str]]


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True)
class Targets:
    """Per signal (a SIGNALS metric or a derived name), the series that could hold an edge: GPUs by UUID (with
    the node each is on, for a shorter matcher), nodes by name, pods by (namespace, pod)."""

    gpus: Mapping[str, frozenset[str]] = field(default_factory=_empty)
    nodes: Mapping[str, frozenset[str]] = field(default_factory=_empty)
    pods: Mapping[str, frozenset[PodKey]] = field(default_factory=_empty)
    gpu_nodes: Mapping[str, str] = field(default_factory=_empty)

    def __bool__(self) -> bool:
        return any(self.gpus.values()) or any(self.nodes.values()) or any(self.pods.values())

    @property
    def uuids(self) -> frozenset[str]:
        return frozenset(u for keys in self.gpus.values() for u in keys)

    def series_count(self) -> int:
        count = sum(len(k) for k in self.gpus.values()) + sum(len(k) for k in self.nodes.values())
        return count + _PER_POD_SERIES * sum(len(k) for k in self.pods.values())

    def without(self, metric: str, keys: Iterable[Any]) -> Targets:
        """The same targets less these keys of one signal (already answered elsewhere)."""
        drop = frozenset(keys)

        def less(table: Mapping[str, frozenset[Any]]) -> Mapping[str, frozenset[Any]]:
            kept = {m: (k - drop if m == metric else k) for m, k in table.items()}
            return MappingProxyType({m: k for m, k in kept.items() if k})

        return Targets(less(self.gpus), less(self.nodes), less(self.pods), self.gpu_nodes)

    def only(self, hits: Mapping[str, set[Any]]) -> Targets:
        """The same targets limited to the keys located (``hits``: signal -> keys)."""

        def keep(table: Mapping[str, frozenset[Any]]) -> Mapping[str, frozenset[Any]]:
            kept = {m: frozenset(k & hits.get(m, set())) for m, k in table.items()}
            return MappingProxyType({m: k for m, k in kept.items() if k})

        return Targets(keep(self.gpus), keep(self.nodes), keep(self.pods), self.gpu_nodes)


def coarse_step(step: int) -> int:
    """A multiple of the fine step near 5 minutes: every coarse point is a fine point too."""
    return step * max(1, round(COARSE_TARGET_S / step))


def fine_cost(targets: Targets, points: int) -> int:
    return targets.series_count() * points


# --- matchers ------------------------------------------------------------------------------------------------


def _gpu_matcher(uuids: Iterable[str], targets: Targets, spelling: Spelling) -> str:
    """UUID=~ for a few GPUs; for many, their nodes (a superset: the conditions sort the rest out)."""
    uuids = sorted(set(uuids))
    by_uuid = f"{spelling.uuid}=~{quote(regex_union(uuids))}"
    nodes = {targets.gpu_nodes.get(u, "") for u in uuids}
    if len(by_uuid) <= SHORT_MATCHER or "" in nodes:
        return by_uuid
    by_node = f"{spelling.node_label}=~{quote(regex_union(spelling.hosts_of(nodes)))}"
    return by_node if len(by_node) < len(by_uuid) else by_uuid


def pod_matcher(pods: Iterable[PodKey], spelling: Spelling = CANONICAL) -> str:
    """namespace and pod alternations; for many pods, the names' common prefix (a superset: series of other
    pods are dropped by the scope filter after the answer)."""
    namespace, pod = spelling.workload
    pods = sorted(set(pods))
    namespaces = f"{namespace}=~{quote(regex_union(ns for ns, _ in pods))}"
    return f"{namespaces},{names_matcher(pod, (name for _, name in pods), wide=True)}"


def _selector(metric: str, where: Where, keys: Iterable[Any], targets: Targets, spelling: Spelling, extra: str) -> str:
    if where is Where.GPU:
        metric, matcher = spelling.name(metric), _gpu_matcher(keys, targets, spelling)
    elif where is Where.POD:
        matcher = pod_matcher(keys, spelling)
    else:
        matcher = f"node=~{quote(regex_union(keys))}"
    return "{" + ",".join(p for p in (f'__name__="{metric}"', matcher, extra) if p) + "}"


def _group(where: Where, spelling: Spelling) -> str:
    """The labels that name one key of this kind, in the server's spelling."""
    return {Where.GPU: spelling.uuid, Where.NODE: "node", Where.POD: spelling.pod_by}[where]


def _families(targets: Targets) -> list[tuple[str, Where, frozenset[Any]]]:
    out: list[tuple[str, Where, frozenset[Any]]] = []
    for where, table in ((Where.GPU, targets.gpus), (Where.NODE, targets.nodes), (Where.POD, targets.pods)):
        out += [(metric, where, keys) for metric, keys in sorted(table.items()) if keys]
    return out


# --- locate: the coarse points after which an edge can lie ---------------------------------------------------


def locate_queries(
    targets: Targets, spelling: Spelling, models: Sequence[str], step: int, pieces: int = 1
) -> list[str]:
    """Range-query text (at the coarse step) answering the coarse points after which an edge can lie."""
    return _queries(_locate_parts, targets, spelling, models, step, pieces)


def _queries(
    parts_of: _Parts, targets: Targets, spelling: Spelling, models: Sequence[str], step: int, pieces: int
) -> list[str]:
    parts = [
        part
        for metric, where, keys in _families(targets)
        for part in parts_of(metric, where, keys, targets, spelling, models, step)
    ]
    return chunked_or(parts, pieces=pieces)


def _fb_selectors(
    where: Where, keys: frozenset[Any], targets: Targets, spelling: Spelling, models: Sequence[str]
) -> list[tuple[str, float]]:
    """The framebuffer series per GPU model, with the model's near-full threshold (models of unknown size have none)."""
    out = []
    for model in sorted(set(models)):
        threshold = fb_threshold_mib(model)
        if threshold is not None:
            extra = f"modelName={quote(model)}"
            out.append((_selector("DCGM_FI_DEV_FB_USED", where, keys, targets, spelling, extra), threshold))
    return out


def _locate_parts(
    metric: str,
    where: Where,
    keys: frozenset[Any],
    targets: Targets,
    spelling: Spelling,
    models: Sequence[str],
    step: int,
) -> list[str]:
    """Coarse point ``g`` is answered when an edge can lie in ``(g - coarse, g]``.

    CHANGE, and RISE of series that move only when something happens (kube-state-metrics flags, timestamps,
    exit codes, the exporter's notices): two consecutive samples in ``(g - coarse - lookback - step, g]`` differ
    (any edge's predecessor lies in that range), or the series is there at ``g`` and was not a coarse step
    before (it appeared: dcgm-exporter's Xid series start anew with each err_code). RISE of noisy gauges
    (temperatures): a sample in the span is over the threshold, unless every sample back to the earliest possible
    predecessor is over it *and* the series was there a coarse step ago.
    Not covered: a series that was there a coarse step ago, then stopped for longer than the lookback and came
    back within the span with the value it had (the whole-window query calls that an edge; we call it a gap).
    """
    coarse = coarse_step(step)
    reach = f"{coarse + LOOKBACK_S + step:g}s"
    by = _group(where, spelling)
    if metric == UTIL_COLLAPSE:
        sel = _selector("DCGM_FI_DEV_GPU_UTIL", where, keys, targets, spelling, "")
        recent = f"[{coarse + UTIL_RECENT_S + 1:g}s]"
        before = f"[{coarse + UTIL_BEFORE_S + 1:g}s] offset {UTIL_BEFORE_OFFSET_S:g}s"
        located = f"min_over_time({sel}{recent}) <= {UTIL_LOW:g} and max_over_time({sel}{before}) >= {UTIL_HIGH:g}"
        return [named(f"group by ({by}) ({located})", metric)]
    if metric == FB_NEAR_FULL:
        return [
            named(f"group by ({by}) ({_rise_located(sel, threshold, coarse, reach, '>=')})", metric)
            for sel, threshold in _fb_selectors(where, keys, targets, spelling, models)
        ]
    signal = BY_METRIC[metric]
    sel = _selector(metric, where, keys, targets, spelling, signal.match)
    if signal.mode is Mode.RISE and where is Where.GPU:
        located = _rise_located(sel, signal.threshold, coarse, reach, ">")  # noisy gauges: only what crosses
    else:
        # Counters, flags and timestamps move only when something happens: a change between two samples in
        # reach of the span, or a series that was not there a coarse step ago. Functions over ranges are cheap;
        # a comparison of two whole vectors at every step is not (Prometheus matches every series at each).
        changed = f"group by ({by}) (changes({sel}[{reach}]) > 0)"
        return [named(f"{changed} or group by ({by}) ({sel} unless {sel} offset {coarse}s)", metric)]
    return [named(f"group by ({by}) ({located})", metric)]


def _rise_located(sel: str, threshold: float, coarse: int, reach: str, op: str) -> str:
    over = f"{op} {threshold:g}"
    return f"max_over_time({sel}[{coarse}s]) {over} unless (min_over_time({sel}[{reach}]) {over} and {sel} offset {coarse}s)"


def located(answers: Iterable[Mapping[str, Any]]) -> dict[float, dict[str, set[Any]]]:
    """Coarse point -> signal -> the keys (UUID, node or pod) located there."""
    out: dict[float, dict[str, set[Any]]] = {}
    for item in answers:
        labels = item.get("metric", {})
        metric = labels.get(METRIC, "")
        key: Any = labels.get("UUID") or labels.get("node") or (labels.get("namespace", ""), labels.get("pod", ""))
        for pair in item.get("values") or ():
            out.setdefault(float(pair[0]), {}).setdefault(metric, set()).add(key)
    return out


def spans(points: Iterable[float], coarse: int, limit: int = MAX_CLUSTERS) -> list[tuple[float, float]]:
    """The located coarse points as at most ``limit`` spans (first, last point): neighbours join first, then
    the spans with the shortest gaps between them."""
    runs: list[list[float]] = []
    for at in sorted(set(points)):
        if runs and at - runs[-1][1] <= coarse:
            runs[-1][1] = at
        else:
            runs.append([at, at])
    while len(runs) > limit:
        gaps = [runs[i + 1][0] - runs[i][1] for i in range(len(runs) - 1)]
        i = gaps.index(min(gaps))
        runs[i : i + 2] = [[runs[i][0], runs[i + 1][1]]]
    return [(a, b) for a, b in runs]


def hits_within(found: Mapping[float, Mapping[str, set[Any]]], first: float, last: float) -> dict[str, set[Any]]:
    out: dict[str, set[Any]] = {}
    for at, table in found.items():
        if first <= at <= last:
            for metric, keys in table.items():
                out.setdefault(metric, set()).update(keys)
    return out


# --- edges: the exact points -------------------------------------------------------------------------------


def edge_queries(targets: Targets, spelling: Spelling, models: Sequence[str], step: int, pieces: int = 1) -> list[str]:
    """Range-query text returning every CHANGE and RISE edge of the targets (at the query's step)."""
    return _queries(_edge_parts, targets, spelling, models, step, pieces)


def _edge_parts(
    metric: str,
    where: Where,
    keys: frozenset[Any],
    targets: Targets,
    spelling: Spelling,
    models: Sequence[str],
    step: int,
) -> list[str]:
    offset = f" offset {step}s"
    if metric == UTIL_COLLAPSE:
        sel = _selector("DCGM_FI_DEV_GPU_UTIL", where, keys, targets, spelling, "")

        def collapsed(shift: str) -> str:
            before = f"[{UTIL_BEFORE_S:g}s] offset {UTIL_BEFORE_OFFSET_S + (step if shift else 0):g}s"
            return (
                f"(avg_over_time({sel}[{UTIL_RECENT_S:g}s]{shift}) <= {UTIL_LOW:g}) "
                f"and (avg_over_time({sel}{before}) >= {UTIL_HIGH:g})"
            )

        return [named(f"(({collapsed('')}) * 0 + 1) unless ({collapsed(offset)})", metric)]
    if metric == FB_NEAR_FULL:
        return [
            named(f"({sel} >= {threshold:g}) unless ({sel}{offset} >= {threshold:g})", metric)
            for sel, threshold in _fb_selectors(where, keys, targets, spelling, models)
        ]
    signal = BY_METRIC[metric]
    sel = _selector(metric, where, keys, targets, spelling, signal.match)
    if signal.mode is Mode.RISE:
        return [named(f"({sel} > {signal.threshold:g}) unless ({sel}{offset} > {signal.threshold:g})", metric)]
    now, before = sel, sel + offset
    if where is not Where.GPU:
        return [_changed(now, before, metric)]
    # dcgm-exporter's err_code/err_msg change with the Xid: one series per GPU and pod
    now, before = f"max without (err_code, err_msg) ({now})", f"max without (err_code, err_msg) ({before})"
    return [_changed(now, before, metric), _changed_across(now, before, metric, spelling.uuid)]


def _changed(now: str, before: str, metric: str) -> str:
    """A series whose value changed since the step before, and (tagged OLD) its value then."""
    new = named(f"{now} != {before}", metric)
    old = f'label_replace({named(f"{before} != {now}", metric)}, "{OLD}", "1", "__name__", ".*")'
    return f"{new} or {old}"


def _changed_across(now: str, before: str, metric: str, uuid: str) -> str:
    """A GPU's value that changed as it moved to a new series: the exporter attributes each GPU to the pod holding
    it, so when a pod dies (an Xid, an ECC error) the next sample may be the first of the GPU's pod-less series.
    The new series, and (tagged OLD, on its labels) the GPU's value the step before in whichever series held it."""
    appeared = f"({now} unless {before}) and on ({uuid}) (max by ({uuid}) ({now}) != max by ({uuid}) ({before}))"
    new = named(appeared, metric)
    old = f"max by ({uuid}) ({before}) * on ({uuid}) group_right () ({new} * 0 + 1)"
    return f'{new} or label_replace({old}, "{OLD}", "1", "__name__", ".*")'
