"""Each pod's GPU utilization over the window (the HTML report's strip): one query per label spelling live, the
same sums offline.

The grid is about 120 points at whole multiples of the step (the window / 120, rounded to a multiple of 15 s),
after the window's start and up to its end. A point ``t`` holds, for each of the pod's dcgm-exporter
``DCGM_FI_DEV_GPU_UTIL`` series, the mean of its samples in ``(t - step, t]`` (clamped to 0-100 %), averaged
over the series; and how many series (GPUs) reported then. Live, the server computes both in one range query
(per pod-label spelling) and one aggregation: ``sum by (namespace, pod) (avg_over_time(...) + 1e6)`` is
``n * 1e6 + the sum``, which gives n and the mean at once (a second aggregation would make the server read every sample again: three times
the work on a 512-node, 6-hour benchmark). Offline, the same buckets are summed from raw samples. Both give the
same two derived series (named like recording rules, so a snapshot written from a live run keeps them), and one
analysis turns them into one event per pod.

The range is written as the step less one millisecond: Prometheus 2 closes ranges on the left, Prometheus 3 and
VictoriaMetrics leave them open, and samples usually fall on the grid (scrapes every 15 or 30 s). With one
millisecond less, each server reads ``(t - step, t]`` whole-millisecond wise (VictoriaMetrics and Prometheus 3
would only differ for a sample exactly one millisecond after a grid point). Values are rounded to 0.01 % after a
tiny nudge, so the servers' summation order cannot tip a value across a rounding boundary.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

from whathappened.collectors.prometheus import events as ev
from whathappened.collectors.prometheus.model import Series
from whathappened.collectors.prometheus.placement import dcgm_pod
from whathappened.collectors.prometheus.vocab import every_name

from whathappened.kinds import Kind
from whathappened.model import Subject, TimelineEvent, Window
from whathappened.timeutils import to_unix

UTIL_METRIC = "DCGM_FI_DEV_GPU_UTIL"
# the utilization gauge in every name dcgm-exporter gives it (current, 1.x-compatibility)
_UTIL_NAMES = every_name(UTIL_METRIC)
POD_UTIL = "whathappened:pod_gpu_util_avg"
POD_GPUS = "whathappened:pod_gpu_count"
PACK = 1e6  # over 100 * n for any n under 10,000 series a pod: n and the sum part never overlap
POINTS = 120
MIN_STEP_S = 15

PodKey = tuple[str, str]


def util_step(window_seconds: float) -> int:
    """About POINTS points over the window, at a whole multiple of 15 s (a common scrape interval)."""
    return max(MIN_STEP_S, round(window_seconds / POINTS / MIN_STEP_S) * MIN_STEP_S)


def grid(window: Window, step: int) -> tuple[int, int]:
    """The first and last grid point (Unix seconds, multiples of ``step``); first > last when there is none."""
    first = math.floor(to_unix(window.start) / step) * step + step
    last = math.floor(to_unix(window.end) / step) * step
    return first, last


# --- live: the query and its answer ----------------------------------------------------------------------------


def pod_util_queries(namespaces: str, pods: str, step: int) -> list[str]:
    """Per pod: n * PACK + the sum over its GPU series of each series' mean in the bucket (see the module).

    ``namespaces`` and ``pods`` are quoted regexes. dcgm-exporter names the pod ``pod``/``namespace`` (current)
    or ``pod_name``/``pod_namespace`` (older releases): one query per spelling, their answers summed per pod and
    point (an ``or`` between them would make the server match every series at every step).
    """
    window = f"[{step * 1000 - 1}ms]"
    util = f'__name__=~"{_UTIL_NAMES}"'
    current = f"avg_over_time({{{util},namespace=~{namespaces},pod=~{pods}}}{window})"
    older = f'avg_over_time({{{util},pod_namespace=~{namespaces},pod_name=~{pods},pod=""}}{window})'
    older = f'label_replace({older}, "pod", "$1", "pod_name", "(.+)")'
    older = f'label_replace({older}, "namespace", "$1", "pod_namespace", "(.+)")'
    renamed = f"avg_over_time({{{util},exported_namespace=~{namespaces},exported_pod=~{pods}}}{window})"
    renamed = f'label_replace({renamed}, "pod", "$1", "exported_pod", "(.+)")'
    renamed = f'label_replace({renamed}, "namespace", "$1", "exported_namespace", "(.+)")'
    return [
        f"sum by (namespace, pod) (clamp_min(clamp_max({one}, 100), 0) + {PACK:g})" for one in (current, older, renamed)
    ]


def series_of_answer(results: Sequence[Mapping[str, object]]) -> list[Series]:
    """The range queries' answers unpacked into the derived series (finite values only); a pod in several
    answers (both label spellings) has its packed values summed per point."""
    packed: dict[tuple[str, str], dict[float, float]] = {}
    for item in results:
        labels = item.get("metric")
        values = item.get("values")
        if not isinstance(labels, Mapping) or not isinstance(values, list):
            continue
        key = (str(labels.get("namespace", "")), str(labels.get("pod", "")))
        points = packed.setdefault(key, {})
        for pair in values:
            try:
                at, value = float(pair[0]), float(pair[1])
            except (TypeError, ValueError, IndexError):
                continue
            if math.isfinite(value):
                points[at] = points.get(at, 0.0) + value
    out = []
    for (namespace, pod), points in packed.items():
        means, counts = [], []
        for at, value in sorted(points.items()):
            count = math.floor(value / PACK)
            if count >= 1:
                means.append((at, (value - count * PACK) / count))
                counts.append((at, float(count)))
        names = MappingProxyType({"namespace": namespace, "pod": pod})
        out += [Series(POD_UTIL, names, tuple(means)), _peak(Series(POD_GPUS, names, tuple(counts)))]
    return out


def _peak(series: Series) -> Series:
    """The GPU count is read as its peak: one sample (the first at the peak) keeps snapshots small."""
    if series.name != POD_GPUS or not series.samples:
        return series
    top = max(v for _, v in series.samples)
    return Series(series.name, series.labels, (next(p for p in series.samples if p[1] == top),))


# --- offline: the same buckets from raw samples ------------------------------------------------------------------


def pod_of(labels: Mapping[str, str]) -> PodKey | None:
    """The pod a dcgm series was attributed to, in any spelling the queries accept (see placement.dcgm_pod)."""
    return dcgm_pod(labels)


def derive_pod_util(series: Iterable[Series], pods: frozenset[PodKey], window: Window) -> list[Series]:
    """POD_UTIL and POD_GPUS series from raw DCGM_FI_DEV_GPU_UTIL samples, bucket for bucket as the query."""
    step = util_step(window.seconds)
    first, last = grid(window, step)
    merged: dict[tuple[tuple[str, str], ...], list[tuple[float, float]]] = {}
    for one in series:
        if one.name == UTIL_METRIC and pod_of(one.labels) in pods:
            merged.setdefault(tuple(sorted(one.labels.items())), []).extend(one.samples)
    means: dict[PodKey, dict[int, list[float]]] = {}
    for labels, samples in merged.items():
        key = pod_of(dict(labels))
        assert key is not None
        for point, value in _bucket_means(samples, step, first, last).items():
            means.setdefault(key, {}).setdefault(point, []).append(_clamp(value))
    out = []
    for key in sorted(means):
        names = MappingProxyType({"namespace": key[0], "pod": key[1]})
        # a NaN spoils the point's sum, and so its count too, as in PromQL
        points = sorted((float(p), v) for p, v in means[key].items() if all(math.isfinite(x) for x in v))
        out.append(Series(POD_UTIL, names, tuple((p, sum(v) / len(v)) for p, v in points)))
        out.append(_peak(Series(POD_GPUS, names, tuple((p, float(len(v))) for p, v in points))))
    return out


def _clamp(value: float) -> float:
    """PromQL's clamp_min(clamp_max(v, 100), 0): NaN stays NaN, infinities become the bounds."""
    return value if math.isnan(value) else max(0.0, min(100.0, value))


def _bucket_means(samples: Iterable[tuple[float, float]], step: int, first: int, last: int) -> dict[int, float]:
    """Per grid point ``t``: the mean of the samples in ``(t - step, t]`` (whole milliseconds, like the servers)."""
    sums: dict[int, list[float]] = {}
    step_ms = step * 1000
    for at, value in samples:
        ms = round(at * 1000)
        point = -(-ms // step_ms) * step  # the grid point closing this sample's bucket
        if first <= point <= last:
            sums.setdefault(point, []).append(value)
    return {p: sum(v) / len(v) for p, v in sums.items()}  # NaN stays NaN, as in PromQL


# --- both: one event per pod --------------------------------------------------------------------------------------


def pod_util_series(series: Sequence[Series], pods: frozenset[PodKey], window: Window) -> list[Series]:
    """The derived series a live run (or its snapshot) carries, else the same computed from raw samples."""
    derived = [s for s in series if s.name in (POD_UTIL, POD_GPUS)]
    if not derived:
        derived = derive_pod_util(series, pods, window)
    return [s for s in derived if (s.labels.get("namespace", ""), s.labels.get("pod", "")) in pods]


def utilization_events(series: Sequence[Series], ctx: ev.Context) -> list[TimelineEvent]:
    """One info event per pod at its first point: the samples for the strip, the GPU count and the mean."""
    pods = frozenset(ctx.pods)
    window = ctx.scope.window
    means: dict[PodKey, Series] = {}
    counts: dict[PodKey, float] = {}
    for one in pod_util_series(series, pods, window):
        key = (one.labels.get("namespace", ""), one.labels.get("pod", ""))
        if one.name == POD_UTIL:
            means[key] = one
        elif one.samples:
            counts[key] = max(counts.get(key, 0.0), max(v for _, v in one.samples))
    out = []
    step = util_step(window.seconds)
    for key, one in sorted(means.items()):
        samples = [[_whole(at), _round(value)] for at, value in one.samples]
        if not samples:
            continue
        mean = _round(sum(float(v) for _, v in samples) / len(samples))
        gpus = int(counts.get(key, 0))
        pod = ctx.pods.get(key)
        subject = Subject(namespace=key[0], pod=key[1], node=pod.node if pod else None)
        summary = f"GPU utilization of {key[1]}: mean {mean:.0f}% over {gpus} GPU{'s' if gpus != 1 else ''}"
        at = one.samples[0][0]
        out.append(
            ev.event(at, Kind.GPU_UTILIZATION, summary, subject, one, samples=samples, gpus=gpus, mean=mean, step=step)
        )
    return out


def _round(value: float) -> float:
    """0.01 % steps; the nudge keeps a summation-order difference from tipping a value across a boundary."""
    return round(value * 100 + 1e-4) / 100


def _whole(at: float) -> int | float:
    return int(at) if at == int(at) else at
