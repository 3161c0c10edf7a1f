"""Which series we watch and what counts as an edge in them: one table read by both sides.

The live collector asks the server for edges only (PromQL, see queries); the snapshot side finds the same
edges in raw samples. Both then hand the edges to the same event builders, so a snapshot and a live run over the
same history agree. The rules are written the way PromQL evaluates them:

- CHANGE: the value differs from the previous sample, where "previous" is the latest sample within the lookback
  (5 minutes, Prometheus' default). A series' first value is a baseline, never an event: a gauge that already
  held Xid 79 when the window (or the pod) began did not happen then.
- RISE: a condition (value > threshold) holds and did not hold at the previous sample, or there was none within
  the lookback; edges at or before the window start are dropped, since what was already true then did not
  happen in the window.
- COUNT: a counter that exists only from its first increment (the project's exporter's Xid count per code, made
  when NVML first reports that Xid): its first sample inside the window is that increment, and each change after
  it, however long a scrape gap before it, is another (a smaller value is the exporter restarted and counting
  again, so still a new one).

Two signals are derived from noisy gauges rather than read directly (named like recording rules, so that a
snapshot written from a live run keeps them): utilization collapsing while the pod lived, and the framebuffer
near full for its model.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from whathappened.collectors.prometheus.model import Series

LOOKBACK_S = 300.0
# DCGM's "blank" sentinel (field not supported) and anything else absurd is not a reading.
_BLANK = 9.0e18

GPU_TEMP_MAX_C = 85.0  # above this H100/A100 class parts start to slow down (DCGM slowdown temps are 87-92 C)
MEMORY_TEMP_MAX_C = 95.0  # HBM's rated maximum
FB_FULL_RATIO = 0.97
UTIL_HIGH = 50.0  # mean utilization over the 10 minutes before ...
UTIL_LOW = 10.0  # ... and the mean over the last 5 minutes
# Windows avoid whole multiples of common scrape intervals so that neither server's range-boundary rule
# (Prometheus 2 closes the range on the left, VictoriaMetrics and Prometheus 3 leave it open) matters.
UTIL_RECENT_S = 299.0
UTIL_BEFORE_S = 599.0
UTIL_BEFORE_OFFSET_S = 300.0

EXPORTER_XIDS = "whathappened_gpu_xid_errors_total"
UTIL_COLLAPSE = "whathappened:gpu_util_collapse"
FB_NEAR_FULL = "whathappened:gpu_fb_near_full"


class Mode(StrEnum):
    CHANGE = "change"
    RISE = "rise"
    COUNT = "count"


class Where(StrEnum):
    GPU = "gpu"  # dcgm-exporter, selected by node label (Hostname / hostname / node)
    POD = "pod"  # kube-state-metrics pod series, selected by namespace and pod
    NODE = "node"  # kube-state-metrics node series and the exporter's, selected by node


@dataclass(frozen=True, slots=True)
class Signal:
    metric: str
    mode: Mode
    where: Where
    threshold: float = 0.5  # RISE: the condition is value > threshold (timestamps and flags alike)
    match: str = ""  # extra PromQL matchers, e.g. 'status="true"'


def _gpu(metric: str, mode: Mode = Mode.CHANGE, threshold: float = 0.5) -> Signal:
    return Signal(metric, mode, Where.GPU, threshold)


SIGNALS: tuple[Signal, ...] = (
    _gpu("DCGM_FI_DEV_XID_ERRORS"),
    _gpu("DCGM_EXP_XID_ERRORS_COUNT"),
    _gpu("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"),
    _gpu("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL"),
    _gpu("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL"),
    _gpu("DCGM_FI_DEV_ECC_SBE_AGG_TOTAL"),
    _gpu("DCGM_FI_DEV_RETIRED_DBE"),
    _gpu("DCGM_FI_DEV_RETIRED_SBE"),
    _gpu("DCGM_FI_DEV_RETIRED_PENDING"),
    _gpu("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"),
    _gpu("DCGM_FI_DEV_ROW_REMAP_FAILURE", Mode.RISE),
    _gpu("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL"),
    _gpu("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL"),
    _gpu("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"),
    _gpu("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"),
    _gpu("DCGM_FI_DEV_THERMAL_VIOLATION"),
    _gpu("DCGM_FI_DEV_POWER_VIOLATION"),
    _gpu("DCGM_FI_DEV_GPU_TEMP", Mode.RISE, GPU_TEMP_MAX_C),
    _gpu("DCGM_FI_DEV_MEMORY_TEMP", Mode.RISE, MEMORY_TEMP_MAX_C),
    Signal("kube_pod_status_phase", Mode.RISE, Where.POD),
    Signal("kube_pod_status_reason", Mode.RISE, Where.POD),
    Signal("kube_pod_status_disruption_reason", Mode.RISE, Where.POD),
    Signal("kube_pod_status_unschedulable", Mode.RISE, Where.POD),
    Signal("kube_pod_deletion_timestamp", Mode.RISE, Where.POD),
    Signal("kube_pod_container_status_terminated_reason", Mode.RISE, Where.POD),
    Signal("kube_pod_container_status_last_terminated_reason", Mode.RISE, Where.POD),
    Signal("kube_pod_container_status_last_terminated_exitcode", Mode.RISE, Where.POD, -0.5),
    Signal("kube_pod_container_status_last_terminated_timestamp", Mode.RISE, Where.POD),
    Signal("kube_pod_container_status_waiting_reason", Mode.RISE, Where.POD),
    Signal("kube_pod_container_status_restarts_total", Mode.CHANGE, Where.POD),
    Signal("kube_node_spec_unschedulable", Mode.CHANGE, Where.NODE),
    Signal("kube_node_status_condition", Mode.CHANGE, Where.NODE, match='status="true"'),
    Signal("kube_node_spec_taint", Mode.RISE, Where.NODE),
    # The project's exporter (NVML's event API sees every Xid; dcgm-exporter's gauge holds only the last one)
    _gpu(EXPORTER_XIDS, Mode.COUNT),
    Signal("whathappened_node_maintenance_scheduled", Mode.RISE, Where.NODE),
    Signal("whathappened_node_maintenance_not_before_timestamp_seconds", Mode.RISE, Where.NODE),
)
BY_METRIC: Mapping[str, Signal] = MappingProxyType({s.metric: s for s in SIGNALS})
# Derived signals are RISE edges of a computed condition; the server computes them in PromQL.
DERIVED: Mapping[str, Signal] = MappingProxyType(
    {
        UTIL_COLLAPSE: Signal(UTIL_COLLAPSE, Mode.RISE, Where.GPU),
        FB_NEAR_FULL: Signal(FB_NEAR_FULL, Mode.RISE, Where.GPU),
    }
)
# Where a GPU's presence is read (last sample time): a CHANGE signal, so that sparse live series stay exact.
PRESENCE_METRIC = "DCGM_FI_DEV_XID_ERRORS"


@dataclass(frozen=True, slots=True)
class Edge:
    series: Series
    at: float
    value: float
    previous: float | None  # None: a RISE with no sample before it within the lookback


def usable(value: float) -> bool:
    return math.isfinite(value) and abs(value) < _BLANK


def signal_of(series: Series) -> Signal | None:
    signal = BY_METRIC.get(series.name) or DERIVED.get(series.name)
    if signal is not None and signal.match:
        key, _, value = signal.match.partition("=")
        if series.labels.get(key) != value.strip('"'):
            return None
    return signal


def edges(series: Series, window_start: float) -> Iterator[Edge]:
    """The CHANGE, RISE or COUNT edges of one series (raw samples, or the sparse ones a live query returned)."""
    signal = signal_of(series)
    if signal is None:
        return
    previous: tuple[float, float] | None = None
    for at, value in series.samples:
        if not usable(value):
            continue
        last = previous
        before = previous if previous is not None and at - previous[0] <= LOOKBACK_S else None
        previous = (at, value)
        if signal.mode is Mode.COUNT:
            if (last is None and at > window_start) or (last is not None and value != last[1]):
                yield Edge(series, at, value, None if last is None else last[1])
        elif signal.mode is Mode.CHANGE:
            if before is not None and value != before[1]:
                yield Edge(series, at, value, before[1])
        elif value > signal.threshold and (before is None or before[1] <= signal.threshold) and at > window_start:
            yield Edge(series, at, value, None if before is None else before[1])


# --- derived signals ------------------------------------------------------------------------------------------


def derive(series: Iterable[Series]) -> list[Series]:
    """The derived condition series (only their edge samples matter) computed from raw dcgm series."""
    out: list[Series] = []
    for one in series:
        if one.name == "DCGM_FI_DEV_GPU_UTIL":
            derived = _util_collapse(one)
        elif one.name == "DCGM_FI_DEV_FB_USED":
            derived = _fb_near_full(one)
        else:
            continue
        if derived is not None:
            out.append(derived)
    return out


def _util_collapse(series: Series) -> Series | None:
    """Per sample: the last 5 minutes' mean is low while the 10 minutes before that were busy."""
    times = [t for t, v in series.samples if usable(v)]
    values = [v for _, v in series.samples if usable(v)]
    if len(times) < 3:
        return None
    sums = [0.0]
    for value in values:
        sums.append(sums[-1] + value)
    samples: list[tuple[float, float]] = []
    for at in times:
        recent = _mean(times, sums, at - UTIL_RECENT_S, at)
        before_end = at - UTIL_BEFORE_OFFSET_S
        before = _mean(times, sums, before_end - UTIL_BEFORE_S, before_end)
        holds = recent is not None and before is not None and recent <= UTIL_LOW and before >= UTIL_HIGH
        samples.append((at, 1.0 if holds else 0.0))
    if not any(v for _, v in samples):
        return None
    return Series(UTIL_COLLAPSE, series.labels, tuple(samples))


def _mean(times: list[float], sums: list[float], after: float, until: float) -> float | None:
    """Mean of the samples in (after, until]."""
    lo = bisect.bisect_right(times, after)
    hi = bisect.bisect_right(times, until)
    return None if hi <= lo else (sums[hi] - sums[lo]) / (hi - lo)


_MODEL_GB = re.compile(r"(?<!\d)(\d{1,5})\s*GB", re.IGNORECASE)  # starts at a number's first digit: linear


def fb_total_mib(model: str) -> float | None:
    """Framebuffer size from dcgm-exporter's modelName ("NVIDIA H100 80GB HBM3" -> 81920 MiB)."""
    match = _MODEL_GB.search(model)
    return float(match.group(1)) * 1024.0 if match else None


def fb_threshold_mib(model: str) -> float | None:
    total = fb_total_mib(model)
    return None if total is None else total * FB_FULL_RATIO


def _fb_near_full(series: Series) -> Series | None:
    threshold = fb_threshold_mib(series.labels.get("modelName", ""))
    if threshold is None:
        return None
    samples = tuple((t, v if v >= threshold else 0.0) for t, v in series.samples if usable(v))
    if not any(v for _, v in samples):
        return None
    return Series(FB_NEAR_FULL, series.labels, samples)
