"""The cause rules for the GPU and the node: the evidence that makes each (positive) and a near miss that must not."""

from __future__ import annotations

from tests.correlate.builders import at, ev, exited, ran, run, timeline_of, verdict
from tests.correlate.test_rules import N, P, single
from whathappened.kinds import Kind

# --- GPU ---


def test_xid_79_fallen_off_bus():
    v = single(
        ev(Kind.GPU_XID, at(56), P, N, gpu="5", source="prometheus", xid=79),
        ev(Kind.CUDA_ERROR, at(56, 4), P, N, source="logs", error="unspecified launch failure"),
        exited(P, N, at(56, 12), 1),
    )
    assert v.cause == "gpu-fallen-off-bus" and v.gpu == "5"
    assert v.next_step == "cordon node-a and open a hardware ticket for GPU 5; resubmitting is safe"
    assert "GPU 5" in v.summary and "node-a" in v.summary


def test_a_remediators_quarantine_of_the_faulty_node_is_named_in_the_verdict_and_the_chain():
    """GPU 5 hit Xid 79, the rank died, NVSentinel quarantined the node for it: the verdict says who and why, and
    the quarantine is a step of the chain."""
    xid = ev(Kind.GPU_XID, at(56), P, N, gpu="5", source="prometheus", xid=79)
    cordon = ev(
        Kind.NODE_CORDONED, at(56, 40), node=N, remediator="NVSentinel", remediation_reason="GpuXidError ErrorCode:79"
    )
    pods, events = ran(P, N)
    everything = [*events, xid, exited(P, N, at(56, 12), 1), cordon]
    result = run([pods], everything)
    v = verdict(result, P)
    assert v.cause == "gpu-fallen-off-bus"
    assert v.summary.endswith("NVSentinel quarantined node-a (GpuXidError ErrorCode:79) at 06:56:40 UTC.")
    timeline = timeline_of(everything)
    assert [timeline[i].kind for i in result.chain if timeline[i].kind == Kind.NODE_CORDONED] == [Kind.NODE_CORDONED]
    assert set(v.evidence) <= set(result.chain)
    # a cordon an hour and more after the fault adds nothing
    late = ev(Kind.NODE_CORDONED, at(120), node=N, remediator="NVSentinel")
    plain = verdict(run([pods], [*events, xid, exited(P, N, at(56, 12), 1), late]), P)
    assert "quarantined" not in plain.summary


def test_a_remediators_drain_after_the_quarantine_is_named_and_the_pod_was_evicted_not_crashed():
    """Xid 64 that the rank survives; NVSentinel quarantines the node and its node-drainer evicts the rank through
    the Eviction API: the verdict is the GPU's, the pod "was evicted", the remediator "drained" the node, and the
    eviction is a step of the chain after the quarantine."""
    xid = ev(Kind.GPU_XID, at(56), node=N, gpu="3", source="logs", xid=64)
    cordon = ev(
        Kind.NODE_CORDONED, at(56, 9), node=N, remediator="NVSentinel", remediation_reason="GpuXidError ErrorCode:64"
    )
    evicted = ev(
        Kind.DISRUPTION_TARGET, at(56, 41), P, N, reason="EvictionByEvictionAPI", message="Eviction API: evicting"
    )
    pods, events = ran(P, N)
    everything = [*events, xid, cordon, evicted, exited(P, N, at(56, 48), 143)]
    result = run([pods], everything)
    v = verdict(result, P)
    assert v.cause == "gpu-memory-error" and f"{P} was evicted at" in v.summary and "crashed" not in v.summary
    assert v.summary.endswith(
        "NVSentinel quarantined node-a (GpuXidError ErrorCode:64) at 06:56:09 UTC and drained it."
    )
    timeline = timeline_of(everything)
    steps = [timeline[i].kind for i in result.chain]
    assert steps.index(Kind.NODE_CORDONED) < steps.index(Kind.DISRUPTION_TARGET)
    # an eviction before the quarantine is not the remediator's drain
    early = ev(Kind.DISRUPTION_TARGET, at(56, 5), P, N, reason="EvictionByEvictionAPI")
    before = verdict(run([pods], [*events, xid, early, cordon, exited(P, N, at(56, 12), 143)]), P)
    assert before.summary.endswith("at 06:56:09 UTC.")


def test_xid_79_on_another_node_is_not_ours():
    v = single(ev(Kind.GPU_XID, at(56), node="node-b", gpu="5", xid=79), exited(P, N, at(56, 12), 1))
    assert v.cause != "gpu-fallen-off-bus"


def test_gpu_missing_is_fallen_off_bus():
    v = single(ev(Kind.GPU_MISSING, at(56), node=N, gpu="2", source="prometheus"), exited(P, N, at(57), 1))
    assert v.cause == "gpu-fallen-off-bus"


def test_double_bit_ecc_is_gpu_memory_error():
    v = single(
        ev(Kind.GPU_ECC_DBE, at(70), P, N, gpu="3", source="prometheus", increase=2),
        ev(Kind.CUDA_ERROR, at(70, 2), P, N, source="logs", error="uncorrectable ECC error encountered"),
        exited(P, N, at(70, 8), 1),
    )
    assert v.cause == "gpu-memory-error" and v.gpu == "3"


def test_xid_63_row_remap_event_alone_is_not_a_memory_error():
    v = single(ev(Kind.GPU_XID, at(70), node=N, xid=63), exited(P, N, at(70, 8), 1))
    assert v.cause not in ("gpu-memory-error", "gpu-hardware-error")


def test_cuda_reported_ecc_without_xid_is_gpu_memory_error():
    v = single(
        ev(Kind.CUDA_ERROR, at(70, 2), P, N, source="logs", summary="CUDA error: uncorrectable ECC error encountered"),
        exited(P, N, at(70, 8), 1),
    )
    assert v.cause == "gpu-memory-error" and v.confidence < 0.9


def test_cuda_refusing_the_pods_gpu_is_a_gpu_needing_a_reset():
    v = single(
        ev(Kind.CUDA_ERROR, at(70, 2), P, N, source="logs", error="CUDA-capable device(s) is/are busy or unavailable"),
        exited(P, N, at(70, 8), 1),
    )
    assert v.cause == "gpu-hardware-error" and "needs a reset" in v.summary


def test_rm_saying_reset_required_without_an_xid_is_a_hardware_fault():
    v = single(
        ev(Kind.GPU_XID, at(70), node=N, source="logs", gpu_fault="hardware", line="NV_ERR_RESET_REQUIRED"),
        exited(P, N, at(70, 30), 1),
    )
    assert v.cause == "gpu-hardware-error"


def test_nvlink_xid_74():
    v = single(ev(Kind.GPU_XID, at(70), node=N, gpu="1", xid=74), exited(P, N, at(70, 30), 1))
    assert v.cause == "nvlink-error"


def test_nvlink_errors_on_a_gpu_the_pod_does_not_hold_are_not_ours():
    base, starts = ran(P, N)
    events = [
        *starts,
        ev(Kind.GPU_UTIL_DROP, at(10), P, N, gpu="0", source="prometheus"),  # tells the pod held GPU 0
        ev(Kind.NVLINK_ERROR, at(70), node=N, gpu="7", source="prometheus", increase=40),
        exited(P, N, at(70, 30), 1),
    ]
    assert verdict(run([base], events), P).cause != "nvlink-error"


def test_gsp_xid_119_is_gpu_hardware_error():
    v = single(ev(Kind.GPU_XID, at(70), node=N, xid=119), exited(P, N, at(70, 30), 1))
    assert v.cause == "gpu-hardware-error"


def test_xid_13_is_the_applications_own_fault_not_hardware():
    v = single(ev(Kind.GPU_XID, at(70), node=N, xid=13), exited(P, N, at(70, 30), 1))
    assert v.cause != "gpu-hardware-error"


def test_thermal_slowdown_that_ends_the_work():
    v = single(
        ev(Kind.GPU_THERMAL, at(70), P, N, gpu="4", source="prometheus", temperature=94), exited(P, N, at(72), 1)
    )
    assert v.cause == "gpu-thermal" and "GPU 4" in v.summary


def test_thermal_an_hour_before_the_death_is_not_the_cause():
    v = single(ev(Kind.GPU_THERMAL, at(10), P, N, gpu="4", source="prometheus"), exited(P, N, at(72), 1))
    assert v.cause != "gpu-thermal"


# --- node ---


def test_not_ready_then_taint_eviction_is_node_failure():
    v = single(
        ev(Kind.NODE_NOT_READY, at(60), node=N),
        ev(Kind.TAINT_EVICTION, at(65), P, N, taint="node.kubernetes.io/unreachable"),
        ev(Kind.POD_DELETED, at(65, 1), P, N),
    )
    assert v.cause == "node-failure" and v.root is True
    assert "cordon node-a" in v.next_step


def test_not_ready_long_before_a_crash_is_not_node_failure():
    v = single(
        ev(Kind.NODE_NOT_READY, at(5), node=N),
        ev(Kind.NODE_READY, at(6), node=N),
        ev(Kind.APP_EXCEPTION, at(70), P, N, source="logs", exception="ValueError"),
        exited(P, N, at(70, 3), 1),
    )
    assert v.cause == "application-error"


def test_nic_error_on_the_node_then_nccl_error_is_network_error():
    v = single(
        ev(Kind.NETWORK_ERROR, at(70), node=N, source="logs", device="mlx5_0"),
        ev(Kind.NCCL_ERROR, at(70, 20), P, N, source="logs", detail="unhandled system error"),
        exited(P, N, at(70, 40), 1),
    )
    assert v.cause == "network-error"


def test_nic_error_on_another_node_leaves_the_nccl_error():
    v = single(
        ev(Kind.NETWORK_ERROR, at(70), node="node-b", source="logs", device="mlx5_0"),
        ev(Kind.NCCL_ERROR, at(70, 20), P, N, source="logs", detail="unhandled system error"),
        exited(P, N, at(70, 40), 1),
    )
    assert v.cause == "nccl-error"
