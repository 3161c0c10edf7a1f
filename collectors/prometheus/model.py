"""The one value type of the Prometheus side: a series with its samples, as a file or a query gave them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from whathappened.collectors.prometheus.promql import CANONICAL, METRIC, Spelling, placed
from whathappened.collectors.prometheus.vocab import canonical_metric

_NO_LABELS: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Series:
    """``samples`` are ``(unix_seconds, value)`` in time order; labels exclude ``__name__``."""

    name: str
    labels: Mapping[str, str] = field(default_factory=lambda: _NO_LABELS, hash=False)
    samples: tuple[tuple[float, float], ...] = ()

    def label(self, *names: str) -> str | None:
        """The first of these labels that is set and not empty."""
        for name in names:
            value = self.labels.get(name)
            if value:
                return value
        return None


# A scrape that does not honour the exporter's labels (a ServiceMonitor without honorLabels: the standalone
# kube-state-metrics chart's and dcgm-exporter's default) renames the workload's labels exported_<name> and puts
# the exporter's own namespace, pod and container in their place; dcgm-exporter's --use-old-namespace spells the
# GPU's UUID ``uuid``, its per-NVLink series ``gpu_uuid``. Read back, the workload's and the GPU's win.
_RENAMED = {
    "exported_namespace": "namespace",
    "exported_pod": "pod",
    "exported_container": "container",
    "uuid": "UUID",
    "gpu_uuid": "UUID",
}


def canonical_labels(labels: Mapping[str, str]) -> Mapping[str, str]:
    """Labels in the one spelling the analysis reads (the same mapping when nothing is spelt otherwise)."""
    moved = [k for k in labels if k in _RENAMED]
    names = [k for k in ("__name__", METRIC) if k in labels and canonical_metric(labels[k]) != labels[k]]
    if not moved and not names:
        return labels
    out = dict(labels)
    if ("exported_pod" in out or "exported_namespace" in out) and "exported_container" not in out:
        out.pop("container", None)  # not renamed, so not the series' own: the exporter's container
    for key in moved:
        value = out.pop(key)
        if value and not (key.endswith("uuid") and out.get("UUID")):
            out[_RENAMED[key]] = value
    for key in names:
        out[key] = canonical_metric(out[key])
    return MappingProxyType(out)


def canonical_series(series: Series) -> Series:
    """A series as the analysis reads it, whatever exporter release and scrape wrote it."""
    name, labels = canonical_metric(series.name), canonical_labels(series.labels)
    if name == series.name and labels is series.labels:
        return series
    return Series(name, labels, series.samples)


def canonical_answer(answer: list[dict[str, Any]], spelling: Spelling = CANONICAL) -> list[dict[str, Any]]:
    """Query answers with their labels in the canonical spelling (``model.canonical_labels``), each node
    under its own name."""
    return [
        {**item, "metric": placed(canonical_labels(item["metric"]), spelling.nodes_by_host)}
        if "metric" in item
        else item
        for item in answer
    ]
