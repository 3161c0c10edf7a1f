"""PromQL that makes the server find the edges, and the answers turned back into (sparse) series.

Pure: no I/O. Every query is limited to the scope's nodes, GPUs and pods. Whole-window questions are instant
queries at the window's end over ``[window]`` (changes(), max_over_time(), a subquery for last-seen times);
edges are range queries at a step no longer than a scrape interval that return points only where something
changed (``x != x offset step``) or a condition began (``c unless c offset step``), so a quiet GPU costs
nothing however long the window. Every result carries the series' metric name in ``__metric`` (functions and
aggregations drop ``__name__``), which is how answers from one query over many metrics are told apart.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from whathappened.collectors._prom_model import Series
from whathappened.collectors._prom_series import sanitize_label
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
MAX_POINTS = 10_000  # Prometheus refuses range queries over 11,000 points per series


def pick_step(window_seconds: float) -> int:
    """15 s (no longer than common scrape intervals, so edges keep their sample times) or longer for long windows."""
    return max(MIN_STEP_S, math.ceil(window_seconds / MAX_POINTS / MIN_STEP_S) * MIN_STEP_S)


def regex_union(values: Iterable[str]) -> str:
    """An anchored-by-PromQL alternation, with the common prefix factored out to keep the query short."""
    names = sorted(set(values))
    if not names:
        return "$^"  # matches nothing
    prefix = _common_prefix(names)
    rest = [re.escape(n[len(prefix) :]) for n in names]
    if len(rest) == 1:
        return re.escape(prefix) + rest[0]
    return f"{re.escape(prefix)}(?:{'|'.join(rest)})"


def _common_prefix(names: Sequence[str]) -> str:
    first, last = names[0], names[-1]
    size = 0
    while size < min(len(first), len(last)) and first[size] == last[size]:
        size += 1
    return first[:size]


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _named(expr: str, metric: str | None = None) -> str:
    """Copy the metric name into ``__metric`` (or set a given one) so it survives functions and matching."""
    if metric is None:
        return f'label_replace({expr}, "{METRIC}", "$1", "__name__", "(.+)")'
    return f'label_replace({expr}, "{METRIC}", "{metric}", "__name__", ".*")'


@dataclass(frozen=True)
class Selectors:
    """Label matchers for the scope: dcgm series by node label, pod series by namespace+pod, node series by node."""

    nodes: tuple[str, ...]
    pods: tuple[tuple[str, str], ...]
    node_labels: tuple[str, ...] = DCGM_NODE_LABELS

    def gpu(self, metric_regex: str, extra: str = "", offset: str = "") -> str:
        """One selector per node-label spelling, joined with ``or`` (PromQL has no OR inside a selector)."""
        more = f",{extra}" if extra else ""
        parts = [
            f'{{__name__=~"{metric_regex}",{label}=~{_quote(regex_union(self.nodes))}{more}}}{offset}'
            for label in self.node_labels
        ]
        return parts[0] if len(parts) == 1 else "(" + " or ".join(parts) + ")"

    def pod(self, metric_regex: str, extra: str = "", offset: str = "") -> str:
        namespaces = regex_union(ns for ns, _ in self.pods)
        names = regex_union(name for _, name in self.pods)
        more = f",{extra}" if extra else ""
        return f'{{__name__=~"{metric_regex}",namespace=~{_quote(namespaces)},pod=~{_quote(names)}{more}}}{offset}'

    def node(self, metric_regex: str, extra: str = "", offset: str = "") -> str:
        more = f",{extra}" if extra else ""
        return f'{{__name__=~"{metric_regex}",node=~{_quote(regex_union(self.nodes))}{more}}}{offset}'

    def where(self, where: Where, metric_regex: str, extra: str = "", offset: str = "") -> str:
        if where is Where.GPU:
            return self.gpu(metric_regex, extra, offset)
        if where is Where.POD:
            return self.pod(metric_regex, extra, offset)
        return self.node(metric_regex, extra, offset)


def _names(signals: Iterable[Signal]) -> str:
    return "|".join(re.escape(s.metric) for s in signals)


# --- discovery ---------------------------------------------------------------------------------------------------


def pod_labels_query(experiment: str, namespace: str | None, label_keys: Sequence[str], window: str) -> str:
    ns = f",namespace={_quote(namespace)}" if namespace else ""
    parts = [
        f"last_over_time(kube_pod_labels{{{sanitize_label(k)}={_quote(experiment)}{ns}}}[{window}])" for k in label_keys
    ]
    return " or ".join(parts)


def pod_info_query(
    pods: Sequence[tuple[str, str]], experiment: str, namespace: str | None, window: str, step: int, last: bool
) -> str:
    """First (or last) time kube_pod_info showed each pod: found by label, or owned by a controller of that name."""
    ns = f",namespace={_quote(namespace)}" if namespace else ""
    selectors = [f"kube_pod_info{{created_by_name={_quote(experiment)}{ns}}}"]
    if pods:
        pick = Selectors((), tuple(pods))
        selectors.insert(0, pick.pod("kube_pod_info"))
    function = "max_over_time" if last else "min_over_time"
    return " or ".join(f"{function}(timestamp({s})[{window}:{step}s])" for s in selectors)


def candidates_query(namespace: str | None, label_keys: Sequence[str], window: str) -> str:
    ns = f"{{namespace={_quote(namespace)}}}" if namespace else ""
    return (
        f"count by ({','.join(sanitize_label(k) for k in label_keys)}) (last_over_time(kube_pod_labels{ns}[{window}]))"
    )


# --- collection --------------------------------------------------------------------------------------------------


def presence_query(sel: Selectors, window: str, step: int) -> str:
    """Per dcgm series: the time of its last sample in the window (exact for any step under the lookback)."""
    parts = [
        f"max_over_time(timestamp({PRESENCE_METRIC}{{{label}=~{_quote(regex_union(sel.nodes))}}})[{window}:{step}s])"
        for label in sel.node_labels
    ]
    return " or ".join(parts)


def last_value_query(sel: Selectors, window: str) -> str:
    parts = [
        f"last_over_time({PRESENCE_METRIC}{{{label}=~{_quote(regex_union(sel.nodes))}}}[{window}])"
        for label in sel.node_labels
    ]
    return " or ".join(parts)


def gpu_prefilter_query(sel: Selectors, window: str, models: Iterable[str]) -> str:
    """Which GPU series could hold an edge at all: changed counters/gauges, peaks over thresholds, busy-then-idle."""
    parts = [
        _named(f"changes({sel.gpu(re.escape(s.metric))}[{window}]) > 0", s.metric)
        for s in SIGNALS
        if s.where is Where.GPU and s.mode is Mode.CHANGE
    ]
    for signal in (s for s in SIGNALS if s.where is Where.GPU and s.mode is Mode.RISE):
        parts.append(
            _named(f"max_over_time({sel.gpu(re.escape(signal.metric))}[{window}]) > {signal.threshold}", signal.metric)
        )
    util = sel.gpu("DCGM_FI_DEV_GPU_UTIL")
    busy_then_idle = (
        f"(min_over_time({util}[{window}]) <= {UTIL_LOW}) and (max_over_time({util}[{window}]) >= {UTIL_HIGH})"
    )
    parts.append(_named(busy_then_idle, UTIL_COLLAPSE))
    for model in sorted(set(models)):
        threshold = fb_threshold_mib(model)
        if threshold is not None:
            fb = sel.gpu("DCGM_FI_DEV_FB_USED", f"modelName={_quote(model)}")
            parts.append(_named(f"max_over_time({fb}[{window}]) >= {threshold}", FB_NEAR_FULL))
    return " or ".join(parts)


@dataclass(frozen=True)
class Flagged:
    """GPU series (by UUID, else node+gpu) the prefilter found worth an edge query, per metric."""

    by_metric: Mapping[str, tuple[str, ...]]

    def uuids(self, metric: str) -> tuple[str, ...]:
        return self.by_metric.get(metric, ())


def flagged_from(results: Sequence[Mapping[str, Any]]) -> Flagged:
    found: dict[str, set[str]] = {}
    for item in results:
        labels = item.get("metric", {})
        uuid = labels.get("UUID") or labels.get("uuid")
        if uuid:
            found.setdefault(labels.get(METRIC, ""), set()).add(uuid)
    return Flagged(MappingProxyType({k: tuple(sorted(v)) for k, v in found.items()}))


def _gpu_part(sel: Selectors, metric: str, uuids: Sequence[str], offset: str, extra: str = "") -> str:
    uuid = f"UUID=~{_quote(regex_union(uuids))}"
    return sel.gpu(re.escape(metric), f"{uuid},{extra}" if extra else uuid, offset)


def _change_side(sel: Selectors, flagged: Flagged, offset: str) -> str:
    parts = []
    for signal in (s for s in SIGNALS if s.mode is Mode.CHANGE):
        if signal.where is Where.GPU:
            uuids = flagged.uuids(signal.metric)
            if not uuids:
                continue
            selector = _gpu_part(sel, signal.metric, uuids, offset)
            if signal.metric == PRESENCE_METRIC:  # err_code/err_msg change with the value: one series per GPU
                parts.append(_named(f"max without (err_code, err_msg) ({selector})", signal.metric))
                continue
            parts.append(_named(selector))
        elif sel.pods or signal.where is Where.NODE:
            parts.append(_named(sel.where(signal.where, re.escape(signal.metric), signal.match, offset)))
    return "(" + " or ".join(parts) + ")" if parts else ""


def change_queries(sel: Selectors, flagged: Flagged, step: int) -> tuple[str, str] | None:
    """Range queries for CHANGE edges: the new values, and the values just before, at the same points."""
    now, before = _change_side(sel, flagged, ""), _change_side(sel, flagged, f" offset {step}s")
    if not now:
        return None
    return f"{now} != {before}", f"{before} != {now}"


def _rise_side(sel: Selectors, flagged: Flagged, step: int, shift: int) -> str:
    offset = f" offset {shift}s" if shift else ""
    parts = []
    for signal in (s for s in SIGNALS if s.mode is Mode.RISE):
        if signal.where is Where.GPU:
            uuids = flagged.uuids(signal.metric)
            if uuids:
                parts.append(_named(f"{_gpu_part(sel, signal.metric, uuids, offset)} > {signal.threshold}"))
        elif sel.pods or signal.where is Where.NODE:
            selector = sel.where(signal.where, re.escape(signal.metric), signal.match, offset)
            parts.append(_named(f"{selector} > {signal.threshold}"))
    parts.extend(_derived_parts(sel, flagged, shift))
    return "(" + " or ".join(parts) + ")" if parts else ""


def _derived_parts(sel: Selectors, flagged: Flagged, shift: int) -> list[str]:
    parts = []
    uuids = flagged.uuids(UTIL_COLLAPSE)
    if uuids:
        recent = _gpu_part(sel, "DCGM_FI_DEV_GPU_UTIL", uuids, "")
        recent_window = f"[{UTIL_RECENT_S:g}s]" + (f" offset {shift}s" if shift else "")
        before_window = f"[{UTIL_BEFORE_S:g}s] offset {UTIL_BEFORE_OFFSET_S + shift:g}s"
        condition = (
            f"(avg_over_time({recent}{recent_window}) <= {UTIL_LOW}) "
            f"and (avg_over_time({recent}{before_window}) >= {UTIL_HIGH})"
        )
        parts.append(_named(f"({condition}) * 0 + 1", UTIL_COLLAPSE))
    uuids = flagged.uuids(FB_NEAR_FULL)
    if uuids:
        offset = f" offset {shift}s" if shift else ""
        for model, threshold in _fb_models(flagged):
            used = _gpu_part(sel, "DCGM_FI_DEV_FB_USED", uuids, offset, f"modelName={_quote(model)}")
            parts.append(_named(f"{used} >= {threshold}", FB_NEAR_FULL))
    return parts


def _fb_models(flagged: Flagged) -> list[tuple[str, float]]:
    models = flagged.by_metric.get("models", ())
    return [(m, t) for m in models if (t := fb_threshold_mib(m)) is not None]


def rise_query(sel: Selectors, flagged: Flagged, step: int) -> str | None:
    now, before = _rise_side(sel, flagged, step, 0), _rise_side(sel, flagged, step, step)
    return f"{now} unless {before}" if now else None


# --- answers -> series -------------------------------------------------------------------------------------------


class SeriesBuilder:
    """Collects query answers into one sparse Series per (metric, labels), samples keyed by time."""

    def __init__(self) -> None:
        self._samples: dict[tuple[str, tuple[tuple[str, str], ...]], dict[float, float]] = {}

    def add(self, metric: str, labels: Mapping[str, str], at: float, value: float) -> None:
        clean = tuple(sorted((k, v) for k, v in labels.items() if k not in ("__name__", METRIC)))
        self._samples.setdefault((metric, clean), {})[at] = value

    def add_result(self, results: Sequence[Mapping[str, Any]], metric: str | None = None) -> None:
        """Instant (``value``) or range (``values``) results as they are."""
        for item in results:
            labels = item.get("metric", {})
            name = metric or labels.get(METRIC) or labels.get("__name__")
            if not name:
                continue
            for at, value in _points(item):
                self.add(name, labels, at, value)

    def add_edges(
        self, results: Sequence[Mapping[str, Any]], step: int, before: Sequence[Mapping[str, Any]] | None
    ) -> None:
        """Edge points, each with the sample just before it: the old value (CHANGE) or one failing the condition."""
        old: dict[tuple[str, tuple[tuple[str, str], ...], float], float] = {}
        for item in before or ():
            labels = item.get("metric", {})
            for at, value in _points(item):
                old[(labels.get(METRIC, ""), tuple(sorted(labels.items())), at)] = value
        for item in results:
            labels = item.get("metric", {})
            name = labels.get(METRIC, "")
            signal = _signal(name)
            if signal is None:
                continue
            for at, value in _points(item):
                if before is None:
                    previous: float | None = min(signal.threshold, 0.0)
                else:
                    previous = old.get((name, tuple(sorted(labels.items())), at))
                if previous is not None:
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


def _points(item: Mapping[str, Any]) -> list[tuple[float, float]]:
    raw = item.get("values") or ([item["value"]] if "value" in item else [])
    points = []
    for pair in raw:
        try:
            value = float(pair[1])
        except (TypeError, ValueError, IndexError):
            continue
        if math.isfinite(value):  # NaN (e.g. 0/0) and stale markers are no reading
            points.append((float(pair[0]), value))
    return points


__all__ = ["LOOKBACK_S", "SeriesBuilder", "pick_step"]
