"""Query answers turned back into series: edge points (with the sample just before each) and last-seen times
become sparse Series that the snapshot analysis reads like raw history."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from whathappened.collectors.prometheus.model import Series
from whathappened.collectors.prometheus.promql import METRIC, OLD
from whathappened.collectors.prometheus.series import LAST_SEEN
from whathappened.collectors.prometheus.signals import DERIVED, SIGNALS, Mode, Signal


def clean(labels: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in labels.items() if k not in ("__name__", METRIC, OLD)))


class SeriesBuilder:
    """Collects query answers into one sparse Series per (metric, labels), samples keyed by time."""

    def __init__(self) -> None:
        self._samples: dict[tuple[str, tuple[tuple[str, str], ...]], dict[float, float]] = {}

    def add(self, metric: str, labels: Mapping[str, str], at: float, value: float) -> None:
        self._put(metric, clean(labels), ((at, value),))

    def _put(self, metric: str, cleaned: tuple[tuple[str, str], ...], found: Sequence[tuple[float, float]]) -> None:
        self._samples.setdefault((metric, cleaned), {}).update(found)

    def add_last_seen(self, results: Sequence[Mapping[str, Any]]) -> None:
        """Last-seen answers (a value per point, or one instant value) as one LAST_SEEN sample per series."""
        for item in results:
            times = [v for _, v in points(item)]
            if times:
                self.add(LAST_SEEN, item.get("metric", {}), max(times), max(times))

    def add_edges(self, results: Sequence[Mapping[str, Any]], step: int) -> None:
        """Edge points, each with the sample just before it: a CHANGE edge's old value comes in the same answer
        (tagged ``__old``), a RISE edge's is one failing its condition."""
        old: dict[tuple[str, tuple[tuple[str, str], ...], float], float] = {}
        for item in results:
            labels = item.get("metric", {})
            if labels.get(OLD):
                cleaned = clean(labels)
                for at, value in points(item):
                    old[(labels.get(METRIC, ""), cleaned, at)] = value
        for item in results:
            labels = item.get("metric", {})
            name = labels.get(METRIC, "")
            signal = _signal(name)
            if signal is None or labels.get(OLD):
                continue
            cleaned = clean(labels)  # once a series: its points are many
            found: list[tuple[float, float]] = []
            for at, value in points(item):
                previous = min(signal.threshold, 0.0) if signal.mode is Mode.RISE else old.get((name, cleaned, at))
                if previous is None:
                    continue  # VictoriaMetrics answers `a != b` where b has no value at all: not a change
                found += ((at - step, previous), (at, value))
            if found:
                self._put(name, cleaned, found)

    def add_samples(self, results: Sequence[Mapping[str, Any]], metric: str) -> None:
        """Raw samples (an instant query of a range selector) of ``metric``, as they are."""
        for item in results:
            found = points(item)
            if found:
                self._put(metric, clean(item.get("metric", {})), found)

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
