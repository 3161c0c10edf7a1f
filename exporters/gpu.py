"""GPU health from NVML (nvidia-ml-py, imported as ``pynvml``): Xid events, ECC and row-remap counts, throttling.

Xid errors arrive through the NVML event API (``nvmlEventSetWait``), which sees every Xid, not only the last one
the way ``DCGM_FI_DEV_XID_ERRORS`` does. Counts and throttle reasons are sampled on the poll interval into a
frozen snapshot, so a scrape reads memory and never waits on the driver. Where there is no NVML library or no GPU
the collector is off, says so once in the log, and exports ``whathappened_gpu_health_enabled 0``.
The NVML module is passed in (tests give a stand-in with the same functions); it defaults to ``pynvml``.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from prometheus_client.core import Metric
from prometheus_client.registry import Collector
from whathappened.exporters import catalog
from whathappened.exporters.metrics import family

log = logging.getLogger("whathappened.exporter.gpu")

# NVML clocks event (throttle) reason bits, named as nvml.h names them (nvmlClocksEventReason*).
THROTTLE_REASONS: dict[int, str] = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
REMAP_TYPES = ("correctable", "uncorrectable", "pending", "failure")


@dataclass(frozen=True, slots=True)
class GpuSample:
    index: str
    uuid: str
    ecc: dict[str, int] = field(default_factory=dict)  # corrected | uncorrected -> volatile count
    remapped: dict[str, int] = field(default_factory=dict)  # REMAP_TYPES -> value
    throttle_mask: int | None = None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def load_nvml() -> Any | None:
    try:
        return importlib.import_module("pynvml")
    except ImportError:
        return None


class GpuHealth(Collector):
    """NVML-backed GPU health; ``start()`` decides on/off once, ``sample()`` and ``watch_xid()`` feed it."""

    def __init__(self, node: str, nvml: Any | None = None) -> None:
        self._node = node
        self._nvml: Any = nvml
        self._handles: list[tuple[str, str, Any]] = []  # (index, uuid, handle)
        self._samples: tuple[GpuSample, ...] = ()
        self._xids: Counter[tuple[str, str, str]] = Counter()
        self._lock = threading.Lock()
        self.enabled = False
        self.reason = "not started"

    def start(self) -> bool:
        nvml = self._nvml or load_nvml()
        if nvml is None:
            return self._off("the nvidia-ml-py package (pynvml) is not installed")
        self._nvml = nvml
        try:
            nvml.nvmlInit()
            count = int(nvml.nvmlDeviceGetCount())
            for i in range(count):
                handle = nvml.nvmlDeviceGetHandleByIndex(i)
                self._handles.append((str(i), _text(nvml.nvmlDeviceGetUUID(handle)), handle))
        except nvml.NVMLError as exc:
            return self._off(f"NVML is not usable here ({exc})")
        if not self._handles:
            return self._off("NVML found no GPU")
        self.enabled, self.reason = True, f"{len(self._handles)} GPU(s) via NVML"
        log.info("GPU health on: %s", self.reason)
        return True

    def _off(self, reason: str) -> bool:
        self.enabled, self.reason = False, reason
        log.info("GPU health off: %s", reason)
        return False

    def sample(self) -> tuple[GpuSample, ...]:
        if not self.enabled:
            return ()
        samples = tuple(self._sample_device(index, uuid, handle) for index, uuid, handle in self._handles)
        with self._lock:
            self._samples = samples
        return samples

    def _sample_device(self, index: str, uuid: str, handle: Any) -> GpuSample:
        nvml = self._nvml
        ecc: dict[str, int] = {}
        for name, kind in (
            ("corrected", "NVML_MEMORY_ERROR_TYPE_CORRECTED"),
            ("uncorrected", "NVML_MEMORY_ERROR_TYPE_UNCORRECTED"),
        ):
            value = self._read(nvml.nvmlDeviceGetTotalEccErrors, handle, getattr(nvml, kind), nvml.NVML_VOLATILE_ECC)
            if value is not None:
                ecc[name] = int(value)
        rows = self._read(nvml.nvmlDeviceGetRemappedRows, handle)
        remapped = dict(zip(REMAP_TYPES, (int(v) for v in rows), strict=True)) if rows is not None else {}
        reasons = (
            getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
            or nvml.nvmlDeviceGetCurrentClocksThrottleReasons
        )
        mask = self._read(reasons, handle)
        return GpuSample(index, uuid, ecc, remapped, None if mask is None else int(mask))

    def _read(self, function: Any, *args: Any) -> Any:
        """One NVML query; None where this GPU does not support it (ECC off, no row remapping before Ampere)."""
        try:
            return function(*args)
        except self._nvml.NVMLError:
            return None

    def watch_xid(self, stop: threading.Event, timeout_ms: int = 1000) -> None:
        """Count Xid events until ``stop``; runs in its own thread (nvmlEventSetWait blocks up to timeout_ms)."""
        if not self.enabled:
            return
        nvml = self._nvml
        events = self._read(nvml.nvmlEventSetCreate)
        if events is None:
            log.info("GPU Xid events off: NVML could not create an event set")
            return
        by_uuid = {uuid: index for index, uuid, _ in self._handles}
        try:
            for _, uuid, handle in self._handles:
                # Not through _read: registering returns None when it works, and that must not read as a failure
                # (seen on an H100: the exporter said "does not report Xid events", then counted Xid 31).
                try:
                    nvml.nvmlDeviceRegisterEvents(handle, nvml.nvmlEventTypeXidCriticalError, events)
                except nvml.NVMLError as exc:
                    log.info("GPU %s does not report Xid events through NVML (%s)", uuid, exc)
            while not stop.is_set():
                self._wait_one(events, by_uuid, timeout_ms, stop)
        finally:
            nvml.nvmlEventSetFree(events)

    def _wait_one(self, events: Any, by_uuid: dict[str, str], timeout_ms: int, stop: threading.Event) -> None:
        nvml = self._nvml
        try:
            data = nvml.nvmlEventSetWait_v2(events, timeout_ms)
        except nvml.NVMLError_Timeout:
            return
        except nvml.NVMLError as exc:
            log.warning("NVML event wait failed: %s", exc)
            stop.wait(timeout_ms / 1000)  # a broken event set would otherwise spin
            return
        if int(data.eventType) != int(nvml.nvmlEventTypeXidCriticalError):
            return
        # A GPU that fell off the bus (Xid 79) may no longer answer for its UUID: count the Xid anyway, on no UUID,
        # rather than let the error end this thread and every later Xid with it.
        uuid = self._read(lambda device: _text(nvml.nvmlDeviceGetUUID(device)), data.device) or ""
        with self._lock:
            self._xids[(by_uuid.get(uuid, ""), uuid, str(int(data.eventData)))] += 1
        log.warning("GPU %s Xid %s", uuid, int(data.eventData))

    def xid_counts(self) -> dict[tuple[str, str, str], int]:
        with self._lock:
            return dict(self._xids)

    def collect(self) -> Iterable[Metric]:
        enabled = family(catalog.GPU_HEALTH_ENABLED)
        enabled.add_metric([self._node], 1.0 if self.enabled else 0.0)
        yield enabled
        if not self.enabled:
            return
        with self._lock:
            samples, xids = self._samples, dict(self._xids)
        yield from self._families(samples, xids)

    def _families(self, samples: tuple[GpuSample, ...], xids: dict[tuple[str, str, str], int]) -> Iterable[Metric]:
        xid = family(catalog.GPU_XID_ERRORS)
        for (index, uuid, code), count in sorted(xids.items()):
            xid.add_metric([self._node, index, uuid, code], float(count))
        ecc, remap, throttle = (
            family(catalog.GPU_ECC_ERRORS),
            family(catalog.GPU_REMAPPED_ROWS),
            family(catalog.GPU_THROTTLE),
        )
        for s in samples:
            gpu = [self._node, s.index, s.uuid]
            for kind, value in s.ecc.items():
                ecc.add_metric([*gpu, kind], float(value))
            for kind, value in s.remapped.items():
                remap.add_metric([*gpu, kind], float(value))
            if s.throttle_mask is not None:
                for bit, reason in THROTTLE_REASONS.items():
                    throttle.add_metric([*gpu, reason], 1.0 if s.throttle_mask & bit else 0.0)
        yield from (xid, ecc, remap, throttle)

    def close(self) -> None:
        if self.enabled:
            self._read(self._nvml.nvmlShutdown)
