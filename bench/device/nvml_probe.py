"""The exporter's NVML path on a real GPU: what each NVML call answers, what ``GpuHealth`` makes of it, and whether
a real Xid reaches ``watch_xid`` while a child process faults the GPU.

Run on a machine with an NVIDIA GPU (``bench/device/check.sh`` does). Prints one JSON document on stdout.
The fault cases it starts are those of ``faults.py`` beside it: an illegal address written by a kernel (the driver
logs Xid 31, an MMU fault) and a device-side assert (Xid 43 on most drivers).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pynvml
from prometheus_client import CollectorRegistry, generate_latest
from whathappened.exporters.gpu import GpuHealth

HERE = Path(__file__).resolve().parent


def _call(function: Any, *args: Any) -> Any:
    """One raw NVML call: its value, or the NVML error it raised, named."""
    try:
        value = function(*args)
    except pynvml.NVMLError as exc:
        return {"error": type(exc).__name__, "text": str(exc)}
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, int | float | str | tuple | list):
        return value
    return repr(value)


def raw_readings() -> dict[str, Any]:
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    readings = {
        "nvml_version": _call(pynvml.nvmlSystemGetNVMLVersion),
        "driver_version": _call(pynvml.nvmlSystemGetDriverVersion),
        "cuda_driver_version": _call(pynvml.nvmlSystemGetCudaDriverVersion),
        "count": _call(pynvml.nvmlDeviceGetCount),
        "name": _call(pynvml.nvmlDeviceGetName, handle),
        "uuid": _call(pynvml.nvmlDeviceGetUUID, handle),
        "pci_bus_id": _call(lambda h: pynvml.nvmlDeviceGetPciInfo(h).busId, handle),
        "ecc_mode": _call(pynvml.nvmlDeviceGetEccMode, handle),
        "ecc_volatile_corrected": _call(
            pynvml.nvmlDeviceGetTotalEccErrors,
            handle,
            pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED,
            pynvml.NVML_VOLATILE_ECC,
        ),
        "ecc_volatile_uncorrected": _call(
            pynvml.nvmlDeviceGetTotalEccErrors,
            handle,
            pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
            pynvml.NVML_VOLATILE_ECC,
        ),
        "ecc_aggregate_uncorrected": _call(
            pynvml.nvmlDeviceGetTotalEccErrors,
            handle,
            pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
            pynvml.NVML_AGGREGATE_ECC,
        ),
        "remapped_rows": _call(pynvml.nvmlDeviceGetRemappedRows, handle),
        "clocks_event_reasons": _call(pynvml.nvmlDeviceGetCurrentClocksEventReasons, handle)
        if hasattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons")
        else "absent",
        "clocks_throttle_reasons": _call(pynvml.nvmlDeviceGetCurrentClocksThrottleReasons, handle),
        "supported_event_types": _call(pynvml.nvmlDeviceGetSupportedEventTypes, handle),
        "xid_event_bit": pynvml.nvmlEventTypeXidCriticalError,
        "retired_pages_pending": _call(pynvml.nvmlDeviceGetRetiredPagesPendingStatus, handle),
        "temperature_c": _call(pynvml.nvmlDeviceGetTemperature, handle, pynvml.NVML_TEMPERATURE_GPU),
        "has_event_set_wait_v2": hasattr(pynvml, "nvmlEventSetWait_v2"),
        "pynvml_file": pynvml.__file__,
    }
    pynvml.nvmlShutdown()
    return readings


def _fault(case: str) -> dict[str, Any]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(HERE / "faults.py"), case], capture_output=True, text=True, timeout=120, check=False
    )
    return {
        "case": case,
        "rc": done.returncode,
        "seconds": round(time.monotonic() - started, 1),
        "stderr_tail": done.stderr[-3000:],
    }


def exporter_path() -> dict[str, Any]:
    health = GpuHealth("probe-node")
    started = health.start()
    result: dict[str, Any] = {"started": started, "reason": health.reason}
    if not started:
        return result
    result["samples"] = [repr(s) for s in health.sample()]
    stop = threading.Event()
    watcher = threading.Thread(target=health.watch_xid, args=(stop, 500), name="gpu-xid", daemon=True)
    watcher.start()
    result["faults"] = []
    for case in ("illegal-address", "device-assert"):
        before = sum(health.xid_counts().values())
        result["faults"].append(_fault(case))
        # The driver posts the Xid while it tears the faulting context down; give the event a few waits to arrive.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and sum(health.xid_counts().values()) == before:
            time.sleep(0.5)
        result["faults"][-1]["xid_counts_after"] = {"/".join(k): v for k, v in health.xid_counts().items()}
    stop.set()
    watcher.join(5)
    result["watcher_stopped"] = not watcher.is_alive()
    result["samples_after"] = [repr(s) for s in health.sample()]
    registry = CollectorRegistry()
    registry.register(health)
    result["exposition"] = generate_latest(registry).decode()
    health.close()
    return result


def main() -> None:
    print(json.dumps({"raw": raw_readings(), "exporter": exporter_path()}, indent=1, default=str))


if __name__ == "__main__":
    main()
