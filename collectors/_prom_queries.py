"""PromQL that makes the server find the edges, and the answers turned back into (sparse) series.

Pure: no I/O. Every query is limited to the scope's nodes, GPUs and pods, and kept under 15 KB (VictoriaMetrics
refuses queries over 16 KiB by default): long ``or`` lists are split into several queries.

The work is done in three cheap rounds, so a quiet GPU costs nothing however long the window:
1. whole-window instant queries at the window's end (``changes()``, ``max_over_time()``, ``last_over_time()``)
   flag the few GPUs, pods and nodes that could hold an edge at all;
2. range queries at a step no longer than a scrape interval, over the flagged series only, return points only
   where a value changed (``x != x offset step``) or a condition began (``c unless c offset step``);
3. last-seen times of GPUs that stopped reporting come from ``timestamp()`` at a 5-minute step (exact: any
   step under the lookback sees a series' last sample).
Every edge answer carries the series' metric name in ``__metric`` (functions and comparisons would lose
``__name__``), which tells answers from one query over many metrics apart.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from whathappened.collectors._prom_model import Series
from whathappened.collectors._prom_series import LAST_SEEN, sanitize_label
from whathappened.collectors._prom_signals import (
    DERIVED,
    FB_NEAR_FULL,
    LOOKBACK_S,
    PRESENCE_METRIC,
    SIGNALS,
    UTIL_BEFORE_OFFSET_S,
    UTIL_BEFORE_S,
    UTIL_COLLAPSE,
    UTIL_HIGH,
    UTIL_LOW,
    UTIL_RECENT_S,
    Mode,
    Signal,
    Where,
    fb_threshold_mib,
)

METRIC = "__metric"
DCGM_NODE_LABELS = ("Hostname", "hostname", "node")
MIN_STEP_S = 15
PRESENCE_STEP_S = 300  # the lookback: any step up to it sees every series' last sample
MAX_POINTS = 10_000  # Prometheus refuses range queries over 11,000 points per series
MAX_QUERY_CHARS = 15_000  # VictoriaMetrics refuses queries over 16 KiB by default

__all__ = ["LOOKBACK_S", "SeriesBuilder", "pick_step"]


def pick_step(window_seconds: float) -> int:
    """15 s (no longer than common scrape intervals, so edges keep their sample times) or longer for long windows."""
    return max(MIN_STEP_S, math.ceil(window_seconds / MAX_POINTS / MIN_STEP_S) * MIN_STEP_S)


def regex_union(values: Iterable[str]) -> str:
    """An alternation (PromQL anchors it), with the common prefix factored out to keep the query short."""
    names = sorted(set(values))
    if not names:
        return "$^"  # matches nothing
    prefix = _common_prefix(names)
    rest = [_escape(n[len(prefix) :]) for n in names]
    if len(rest) == 1:
        return _escape(prefix) + rest[0]
    return f"{_escape(prefix)}(?:{'|'.join(rest)})"


def _escape(text: str) -> str:
    """RE2-safe escaping that leaves '-' alone (it needs none outside a class, and shorter is better here)."""
    return re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", text)


def _common_prefix(names: Sequence[str]) -> str:
    first, last = names[0], names[-1]
    size = 0
    while size < min(len(first), len(last)) and first[size] == last[size]:
        size += 1
    return first[:size]


def quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def named(expr: str, metric: str | None = None) -> str:
    """Copy the metric name into ``__metric`` (or set a given one) so it survives functions and matching."""
    if metric is None:
        return f'label_replace({expr}, "{METRIC}", "$1", "__name__", "(.+)")'
    return f'label_replace({expr}, "{METRIC}", "{metric}", "__name__", ".*")'


def chunked_or(parts: Sequence[str], limit: int = MAX_QUERY_CHARS, pieces: int = 1) -> list[str]:
    """``a or b or c`` as at least ``pieces`` queries (so the server can work on them at once), each under
    ``limit`` characters."""
    groups: list[list[str]] = [[] for _ in range(max(1, min(pieces, len(parts))))]
    for index, part in enumerate(parts):
        groups[index % len(groups)].append(part)
    queries: list[str] = []
    for group in groups:
        current: list[str] = []
        for part in group:
            if current and len(" or ".join([*current, part])) > limit:
                queries.append(" or ".join(current))
                current = []
            current.append(part)
        if current:
            queries.append(" or ".join(current))
    return queries


@dataclass(frozen=True)
class Selectors:
    """Label matchers: dcgm series by node label (or flagged UUIDs), pod series by namespace+pod, node series by node."""

    nodes: tuple[str, ...]
    pods: tuple[tuple[str, str], ...]
    node_label: str = "Hostname"
    uuids: tuple[str, ...] = ()

    def gpu(self, names: str, extra: str = "", by_uuid: bool = False) -> str:
        where = (
            f"UUID=~{quote(regex_union(self.uuids))}"
            if by_uuid
            else f"{self.node_label}=~{quote(regex_union(self.nodes))}"
        )
        return "{" + ",".join(p for p in (f'__name__=~"{names}"', where, extra) if p) + "}"

    def pod(self, names: str, extra: str = "") -> str:
        namespaces = quote(regex_union(ns for ns, _ in self.pods))
        pods = quote(regex_union(name for _, name in self.pods))
        return (
            "{"
            + ",".join(p for p in (f'__name__=~"{names}"', f"namespace=~{namespaces}", f"pod=~{pods}", extra) if p)
            + "}"
        )

    def node(self, names: str, extra: str = "") -> str:
        return (
            "{"
            + ",".join(p for p in (f'__name__=~"{names}"', f"node=~{quote(regex_union(self.nodes))}", extra) if p)
            + "}"
        )

    def where(self, where: Where, names: str, extra: str = "") -> str:
        if where is Where.GPU:
            return self.gpu(names, extra, by_uuid=True)
        return self.pod(names, extra) if where is Where.POD else self.node(names, extra)


def _names(signals: Iterable[Signal]) -> str:
    return "|".join(_escape(s.metric) for s in signals)


# --- discovery ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PodMatch:
    """The experiment's pods as PromQL: by label value (any of the keys) or by the owner's name. The keys'
    order is applied afterwards (``discover_from_series``), so these queries return every candidate's labels."""

    experiment: str
    namespace: str | None
    label_keys: tuple[str, ...]
    window: str

    def selector(self, metric: str, extra: str = "") -> str:
        ns = f"namespace={quote(self.namespace)}" if self.namespace else ""
        return "{" + ",".join(p for p in (f'__name__="{metric}"', ns, extra) if p) + "}"

    def match(self) -> str:
        value = quote(self.experiment)
        parts = [
            f"last_over_time({self.selector('kube_pod_labels', f'{sanitize_label(k)}={value}')}[{self.window}])"
            for k in self.label_keys
        ]
        parts.append(f"last_over_time({self.selector('kube_pod_info', f'created_by_name={value}')}[{self.window}])")
        return "(" + " or ".join(parts) + ")"

    def of(self, expr: str) -> str:
        return f"({expr}) and on (namespace, pod) {self.match()}"

    def labels(self) -> str:
        return self.of(f"last_over_time({self.selector('kube_pod_labels')}[{self.window}])")

    def info(self) -> str:
        return self.of(f"last_over_time({self.selector('kube_pod_info')}[{self.window}])")

    def alive(self) -> str:
        """At the window's end: the last kube_pod_info sample of each pod still there (exact: a plain selector)."""
        return self.of(f"timestamp({self.selector('kube_pod_info')})")

    def active(self, wider: str) -> str:
        return self.of(_active(self.selector, wider, self.window))


def pods_active_query(pods: Sequence[tuple[str, str]], wider: str, window: str) -> str:
    """Pods whose phase or restart count changed, or that appeared, in the window: only these get edge queries."""
    return _active(Selectors((), tuple(pods)).pod, wider, window)


# Every phase change moves one of these (Pending alone is covered by the pod appearing): 3 of 5 series to read.
RUN_PHASES = 'phase=~"Running|Succeeded|Failed"'


def _active(selector: Callable[..., str], wider: str, window: str) -> str:
    """``wider`` reaches one lookback before the window (a change at its first sample); ``window`` back from the
    end is the window's start, where a pod that was already there has a sample."""
    info = selector("kube_pod_info")
    return (
        f"group by (namespace, pod) (changes({selector('kube_pod_status_phase', RUN_PHASES)}[{wider}]) > 0)"
        f" or group by (namespace, pod) (changes({selector('kube_pod_container_status_restarts_total')}[{wider}]) > 0)"
        f" or group by (namespace, pod) (last_over_time({info}[{window}]) unless last_over_time({info}[{LOOKBACK_S:g}s] offset {window}))"
    )


def last_seen_query(selector: str, by: str) -> str:
    """Range query at PRESENCE_STEP_S: the max of the returned values per series is its last sample time."""
    return f"max by ({by}) (timestamp({selector}))"


def phase_rise_query(pods: Sequence[tuple[str, str]], step: int) -> str:
    sel = Selectors((), tuple(pods)).pod("kube_pod_status_phase")
    return named(f"{sel} > 0.5 unless {sel} offset {step}s > 0.5")


def candidates_query(namespace: str | None, label_keys: Sequence[str], window: str) -> str:
    ns = f"{{namespace={quote(namespace)}}}" if namespace else ""
    by = ",".join(sanitize_label(k) for k in label_keys)
    return f"count by ({by}) (last_over_time(kube_pod_labels{ns}[{window}]))"


# --- collection: round 1, flags ------------------------------------------------------------------------------------


def families_match(sel: Selectors) -> list[str]:
    """``match[]`` selectors for the label-values API: which watched metrics exist for these nodes and pods."""
    nodes = quote(regex_union(sel.nodes))
    out = [f'{{__name__=~"DCGM_.+",{label}=~{nodes}}}' for label in DCGM_NODE_LABELS]
    out.append(f'{{__name__=~"kube_node_.+|whathappened_node_.+",node=~{nodes}}}')
    if sel.pods:
        out.append(Selectors((), sel.pods).pod("kube_pod_.+"))
    return out


def gpus_vanished_query(sel: Selectors, window: str) -> str:
    """GPUs seen in the window but no longer at its end (fallen off the bus, or the whole node gone)."""
    xid = sel.gpu(_escape(PRESENCE_METRIC))
    by = f"{sel.node_label}, gpu, UUID"
    return f"group by ({by}) (last_over_time({xid}[{window}])) unless group by ({by}) ({xid})"


def nodes_last_seen_query(nodes: Sequence[str]) -> str:
    """At the window's end: each node's latest dcgm sample (what a vanished GPU is compared with), and its
    GPU model; one part per node-label spelling, which also tells which spelling this exporter uses."""
    return " or ".join(
        f"max by ({label}, modelName) (timestamp({Selectors(tuple(nodes), (), label).gpu(_escape(PRESENCE_METRIC))}))"
        for label in DCGM_NODE_LABELS
    )


def flag_parts(sel: Selectors, present: Iterable[str], window: str, models: Iterable[str]) -> list[str]:
    """Instant-query parts naming the GPUs (UUID), pods and nodes that could hold an edge at all."""
    have = set(present)
    parts: list[str] = []
    for signal in SIGNALS:
        if signal.metric not in have or signal.where is Where.POD:
            continue
        if signal.where is Where.GPU:
            selector, by = sel.gpu(_escape(signal.metric)), "UUID"
        else:
            selector, by = sel.node(_escape(signal.metric), signal.match), "node"
        if signal.mode is Mode.RISE and signal.where is Where.GPU:
            parts.append(f"group by ({by}) (max_over_time({selector}[{window}]) > {signal.threshold:g})")
            continue
        parts.append(f"group by ({by}) (changes({selector}[{window}]) > 0)")
        if signal.mode is Mode.RISE:
            parts.append(
                f"group by ({by}) (last_over_time({selector}[{window}]) unless last_over_time({selector}[{LOOKBACK_S:g}s] offset {window}))"
            )
    if "DCGM_FI_DEV_GPU_UTIL" in have:
        util = sel.gpu("DCGM_FI_DEV_GPU_UTIL")
        # a collapse needs an idle sample; busy-ness is left to the edge query (a second pass costs as much)
        parts.append(f"group by (UUID) (min_over_time({util}[{window}]) <= {UTIL_LOW:g})")
    if "DCGM_FI_DEV_FB_USED" in have:
        for model in sorted(set(models)):
            threshold = fb_threshold_mib(model)
            if threshold is not None:
                fb = sel.gpu("DCGM_FI_DEV_FB_USED", f"modelName={quote(model)}")
                parts.append(f"group by (UUID) (max_over_time({fb}[{window}]) >= {threshold:g})")
    return parts


@dataclass(frozen=True)
class Flags:
    uuids: tuple[str, ...] = ()
    nodes: tuple[str, ...] = ()

    @classmethod
    def of(cls, results: Iterable[Mapping[str, Any]]) -> Flags:
        uuids, nodes = set(), set()
        for item in results:
            labels = item.get("metric", {})
            if labels.get("UUID"):
                uuids.add(labels["UUID"])
            if labels.get("node"):
                nodes.add(labels["node"])
        return cls(tuple(sorted(uuids)), tuple(sorted(nodes)))


# --- collection: round 2, edges ------------------------------------------------------------------------------------


def _families(where: Where, mode: Mode, present: Iterable[str]) -> list[Signal]:
    have = set(present)
    return [s for s in SIGNALS if s.where is where and s.mode is mode and s.metric in have]


def _usable(sel: Selectors, where: Where) -> bool:
    return bool(sel.uuids if where is Where.GPU else sel.pods if where is Where.POD else sel.nodes)


def _side(sel: Selectors, signals: Sequence[Signal], where: Where, mode: Mode, offset: str) -> str:
    """One compact multi-metric selector per threshold, names kept in __metric; joined with ``or``."""
    groups: dict[float, list[Signal]] = {}
    for signal in signals:
        groups.setdefault(signal.threshold if mode is Mode.RISE else 0.0, []).append(signal)
    parts = []
    for threshold, members in sorted(groups.items()):
        extra = 'status=~"true|"' if any(s.match for s in members) else ""
        selector = named(sel.where(where, _names(members), extra) + offset)
        if where is Where.GPU and mode is Mode.CHANGE:
            # dcgm-exporter's err_code/err_msg change with the Xid: one series per GPU and pod
            selector = f"max without (err_code, err_msg) ({selector})"
        parts.append(f"({selector} > {threshold:g})" if mode is Mode.RISE else selector)
    return "(" + " or ".join(parts) + ")"


def change_queries(sel: Selectors, present: Sequence[str], step: int) -> list[tuple[str, str]]:
    """Range queries for CHANGE edges: (the new values, the values just before) at the same points."""
    pairs = []
    for where in Where:
        signals = _families(where, Mode.CHANGE, present)
        if signals and _usable(sel, where):
            now = _side(sel, signals, where, Mode.CHANGE, "")
            before = _side(sel, signals, where, Mode.CHANGE, f" offset {step}s")
            pairs.append((f"({now} != {before})", f"({before} != {now})"))
    news = chunked_or([n for n, _ in pairs], MAX_QUERY_CHARS // 2)
    olds = chunked_or([o for _, o in pairs], MAX_QUERY_CHARS // 2)
    return list(zip(news, olds, strict=True)) if len(news) == len(olds) else [(n, o) for n, o in pairs]


def rise_queries(sel: Selectors, present: Sequence[str], step: int, models: Sequence[str]) -> list[str]:
    """Range queries for RISE edges (``now unless before``), split by group where they would be too long."""
    parts = []
    for where in Where:
        signals = _families(where, Mode.RISE, present)
        if signals and _usable(sel, where):
            now = _side(sel, signals, where, Mode.RISE, "")
            before = _side(sel, signals, where, Mode.RISE, f" offset {step}s")
            parts.append(f"({now} unless {before})")
    for now, before in zip(_derived(sel, present, 0, models), _derived(sel, present, step, models), strict=True):
        parts.append(f"({now} unless {before})")
    return chunked_or(parts)


def _derived(sel: Selectors, present: Sequence[str], shift: int, models: Sequence[str]) -> list[str]:
    if not sel.uuids:
        return []
    parts = []
    offset = f" offset {shift}s" if shift else ""
    if "DCGM_FI_DEV_GPU_UTIL" in present:
        util = sel.gpu("DCGM_FI_DEV_GPU_UTIL", by_uuid=True)
        before = f"[{UTIL_BEFORE_S:g}s] offset {UTIL_BEFORE_OFFSET_S + shift:g}s"
        condition = (
            f"(avg_over_time({util}[{UTIL_RECENT_S:g}s]{offset}) <= {UTIL_LOW:g}) "
            f"and (avg_over_time({util}{before}) >= {UTIL_HIGH:g})"
        )
        parts.append(named(f"(({condition}) * 0 + 1)", UTIL_COLLAPSE))
    if "DCGM_FI_DEV_FB_USED" in present:
        used_parts = []
        for model in models:
            threshold = fb_threshold_mib(model)
            if threshold is not None:
                used = sel.gpu("DCGM_FI_DEV_FB_USED", f"modelName={quote(model)}", by_uuid=True)
                used_parts.append(f"({used}{offset} >= {threshold:g})")
        if used_parts:
            parts.append(named("(" + " or ".join(used_parts) + ")", FB_NEAR_FULL))
    return parts


# --- answers -> series -------------------------------------------------------------------------------------------


def clean(labels: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in labels.items() if k not in ("__name__", METRIC, "__keep")))


class SeriesBuilder:
    """Collects query answers into one sparse Series per (metric, labels), samples keyed by time."""

    def __init__(self) -> None:
        self._samples: dict[tuple[str, tuple[tuple[str, str], ...]], dict[float, float]] = {}

    def add(self, metric: str, labels: Mapping[str, str], at: float, value: float) -> None:
        self._samples.setdefault((metric, clean(labels)), {})[at] = value

    def add_last_seen(self, results: Sequence[Mapping[str, Any]]) -> None:
        """Last-seen answers (a value per point, or one instant value) as one LAST_SEEN sample per series."""
        for item in results:
            times = [v for _, v in points(item)]
            if times:
                self.add(LAST_SEEN, item.get("metric", {}), max(times), max(times))

    def add_edges(
        self, results: Sequence[Mapping[str, Any]], step: int, before: Sequence[Mapping[str, Any]] | None
    ) -> None:
        """Edge points, each with the sample just before it: the old value (CHANGE) or one failing the condition."""
        old: dict[tuple[str, tuple[tuple[str, str], ...], float], float] = {}
        for item in before or ():
            labels = item.get("metric", {})
            for at, value in points(item):
                old[(labels.get(METRIC, ""), clean(labels), at)] = value
        for item in results:
            labels = item.get("metric", {})
            name = labels.get(METRIC, "")
            signal = _signal(name)
            if signal is None:
                continue
            for at, value in points(item):
                previous = min(signal.threshold, 0.0) if before is None else old.get((name, clean(labels), at))
                if previous is None:
                    continue  # VictoriaMetrics answers `a != b` where b has no value at all: not a change
                self.add(name, labels, at - step, previous)
                self.add(name, labels, at, value)

    def series(self) -> list[Series]:
        return [
            Series(name, MappingProxyType(dict(labels)), tuple(sorted(samples.items())))
            for (name, labels), samples in self._samples.items()
        ]


def _signal(name: str) -> Signal | None:
    for signal in SIGNALS:
        if signal.metric == name:
            return signal
    return DERIVED.get(name)


def points(item: Mapping[str, Any]) -> list[tuple[float, float]]:
    raw = item.get("values") or ([item["value"]] if "value" in item else [])
    found = []
    for pair in raw:
        try:
            value = float(pair[1])
        except (TypeError, ValueError, IndexError):
            continue
        if math.isfinite(value):  # NaN (e.g. 0/0) and stale markers are no reading
            found.append((float(pair[0]), value))
    return found
