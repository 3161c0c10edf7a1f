"""GPU health: the NVML path with a stand-in NVML module (same functions and errors as pynvml), and the real
pynvml on this GPU-less host, which must turn GPU health off and say so once."""

from __future__ import annotations

import logging
import queue
import threading
from types import SimpleNamespace
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from whathappened.exporters import catalog
from whathappened.exporters.gpu import GpuHealth


class FakeNvml:
    """Two GPUs: GPU 0 supports everything, GPU 1 (pre-Ampere) has no row remapping. Xid events come from a queue."""

    NVML_VOLATILE_ECC = 0
    NVML_MEMORY_ERROR_TYPE_CORRECTED = 0
    NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
    nvmlEventTypeXidCriticalError = 8

    class NVMLError(Exception):
        pass

    class NVMLError_Timeout(NVMLError):
        pass

    class NVMLError_NotSupported(NVMLError):
        pass

    def __init__(self) -> None:
        self.events: queue.Queue[Any] = queue.Queue()
        self.shutdown = False
        self.refuse_events = False

    def nvmlInit(self) -> None: ...
    def nvmlShutdown(self) -> None:
        self.shutdown = True

    def nvmlDeviceGetCount(self) -> int:
        return 2

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        return i

    def nvmlDeviceGetUUID(self, h: int) -> str:
        return f"GPU-0000000{h}-aaaa-bbbb-cccc-dddddddddddd"

    def nvmlDeviceGetTotalEccErrors(self, h: int, kind: int, counter: int) -> int:
        return [[12, 0], [3, 2]][h][kind]

    def nvmlDeviceGetRemappedRows(self, h: int) -> tuple[int, int, int, int]:
        if h == 1:
            raise self.NVMLError_NotSupported("Not Supported")
        return (1, 2, 1, 0)

    def nvmlDeviceGetCurrentClocksEventReasons(self, h: int) -> int:
        return 0x20 | 0x4 if h == 0 else 0x1

    def nvmlEventSetCreate(self) -> str:
        return "set"

    def nvmlDeviceRegisterEvents(self, h: int, kinds: int, events: str) -> None:
        # As the real call: None when it works. GPU 1 (pre-Ampere here) refuses, as some boards and vGPUs do.
        if h == 1 and self.refuse_events:
            raise self.NVMLError_NotSupported("Not Supported")

    def nvmlEventSetFree(self, events: str) -> None: ...

    def nvmlEventSetWait_v2(self, events: str, timeout_ms: int) -> Any:
        try:
            return self.events.get(timeout=timeout_ms / 1000)
        except queue.Empty:
            raise self.NVMLError_Timeout("Timeout") from None


def _watch(
    health: GpuHealth, nvml: FakeNvml, events: list[Any], want: dict[tuple[str, str, str], int]
) -> dict[tuple[str, str, str], int]:
    """The Xid watcher run over these NVML events until it has counted ``want`` (or 2 s went by), then stopped."""
    stop = threading.Event()
    watcher = threading.Thread(target=health.watch_xid, args=(stop, 50))
    watcher.start()
    for event in events:
        nvml.events.put(event)
    for _ in range(200):
        if health.xid_counts() == want:
            break
        stop.wait(0.01)  # poll for the watcher thread's effect
    stop.set()
    watcher.join(timeout=5)
    assert not watcher.is_alive()
    return health.xid_counts()


def _exposition(health: GpuHealth) -> str:
    registry = CollectorRegistry()
    registry.register(health)
    return generate_latest(registry).decode()


def test_counts_remaps_and_throttle_reasons() -> None:
    nvml = FakeNvml()
    health = GpuHealth("gpu-node-1", nvml)
    assert health.start() and health.reason == "2 GPU(s) via NVML"
    health.sample()
    text = _exposition(health)
    uuid0 = "GPU-00000000-aaaa-bbbb-cccc-dddddddddddd"
    assert 'whathappened_gpu_health_enabled{node="gpu-node-1"} 1.0' in text
    assert (
        f'whathappened_gpu_ecc_errors_total{{gpu="0",node="gpu-node-1",type="corrected",uuid="{uuid0}"}} 12.0' in text
    )
    assert (
        f'whathappened_gpu_remapped_rows{{gpu="0",node="gpu-node-1",type="uncorrectable",uuid="{uuid0}"}} 2.0' in text
    )
    assert 'gpu="1",node="gpu-node-1",type="correctable"' not in text  # not supported on GPU 1: no series
    assert (
        f'whathappened_gpu_throttle_active{{gpu="0",node="gpu-node-1",reason="sw_thermal_slowdown",uuid="{uuid0}"}} 1.0'
        in text
    )
    assert (
        f'whathappened_gpu_throttle_active{{gpu="0",node="gpu-node-1",reason="hw_slowdown",uuid="{uuid0}"}} 0.0' in text
    )
    health.close()
    assert nvml.shutdown


def test_xid_events_counted_by_code(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="whathappened.exporter.gpu")
    nvml = FakeNvml()
    health = GpuHealth("gpu-node-1", nvml)
    health.start()
    uuid1 = "GPU-00000001-aaaa-bbbb-cccc-dddddddddddd"
    want = {("1", uuid1, "79"): 2, ("1", uuid1, "48"): 1}
    events = [SimpleNamespace(device=1, eventType=8, eventData=xid) for xid in (79, 79, 48)]
    assert _watch(health, nvml, events, want) == want
    assert not [r for r in caplog.records if "does not report Xid events" in r.getMessage()]
    assert f'whathappened_gpu_xid_errors_total{{gpu="1",node="gpu-node-1",uuid="{uuid1}",xid="79"}} 2.0' in _exposition(
        health
    )


def test_xid_registration_refused_is_said_for_that_gpu_only(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="whathappened.exporter.gpu")
    nvml = FakeNvml()
    nvml.refuse_events = True
    health = GpuHealth("gpu-node-1", nvml)
    health.start()
    uuid0 = "GPU-00000000-aaaa-bbbb-cccc-dddddddddddd"
    counts = _watch(health, nvml, [SimpleNamespace(device=0, eventType=8, eventData=31)], {("0", uuid0, "31"): 1})
    refused = [r.getMessage() for r in caplog.records if "does not report Xid events" in r.getMessage()]
    assert refused == [
        "GPU GPU-00000001-aaaa-bbbb-cccc-dddddddddddd does not report Xid events through NVML (Not Supported)"
    ]
    assert counts == {("0", uuid0, "31"): 1}


def test_an_xid_from_a_gpu_that_no_longer_answers_is_counted_and_the_watch_goes_on() -> None:
    nvml = FakeNvml()
    health = GpuHealth("gpu-node-1", nvml)
    health.start()
    lost = nvml.nvmlDeviceGetUUID

    def get_uuid(h: int) -> str:
        if h == 7:  # the handle of a GPU gone from the bus
            raise nvml.NVMLError("GPU is lost")
        return lost(h)

    nvml.nvmlDeviceGetUUID = get_uuid  # type: ignore[method-assign]
    events = [
        SimpleNamespace(device=7, eventType=8, eventData=79),
        SimpleNamespace(device=0, eventType=8, eventData=48),
    ]
    uuid0 = "GPU-00000000-aaaa-bbbb-cccc-dddddddddddd"
    want = {("", "", "79"): 1, ("0", uuid0, "48"): 1}
    assert _watch(health, nvml, events, want) == want


def test_real_pynvml_off_is_said_once_or_on_is_exported(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="whathappened.exporter.gpu")
    health = GpuHealth("node-x")  # the real pynvml: off on a host without the NVIDIA driver (as here), on with one
    enabled = health.start()
    health.sample()
    text = _exposition(health)
    offs = [r.getMessage() for r in caplog.records if "GPU health off" in r.getMessage()]
    if enabled:
        assert 'whathappened_gpu_health_enabled{node="node-x"} 1.0' in text and not offs
        assert catalog.GPU_THROTTLE.name in text
    else:
        assert 'whathappened_gpu_health_enabled{node="node-x"} 0.0' in text
        assert catalog.GPU_ECC_ERRORS.name not in text
        assert len(offs) == 1 and "NVML" in offs[0]
    health.close()
