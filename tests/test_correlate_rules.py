"""One test per cause rule: the evidence that makes it (positive) and a near miss that must not."""

from __future__ import annotations

from datetime import timedelta

from tests.correlate_builders import START, at, ev, exited, pod, ran, run, timeline_of, verdict
from whathappened.correlate import CAUSES
from whathappened.kinds import Kind
from whathappened.model import ContainerInfo, Verdict

P, N = "job-worker-0", "node-a"


def single(*events, info=None, nodes=()) -> Verdict:
    base, starts = ran(P, N)
    result = run([info or base], [*starts, *events], nodes)
    return verdict(result, P)


def assert_from_table(v: Verdict) -> None:
    row = CAUSES[v.cause]
    assert (v.category, v.retryable) == (row.category, row.retryable)


# --- never started ---


def test_image_pull_failure_is_config_error():
    info = pod(P, N, phase="Pending", started=None)
    v = verdict(run([info], [ev(Kind.IMAGE_PULL_FAILED, at(5), P, N, image="repo/x:bad", reason="ErrImagePull")]), P)
    assert v.cause == "config-error" and v.root is True
    assert_from_table(v)


def test_crash_loop_back_off_alone_is_not_config_error():
    info = pod(P, N, phase="Pending", started=None)
    v = verdict(run([info], [ev(Kind.BACK_OFF, at(5), P, N)]), P)
    assert v.cause != "config-error"


def test_failed_scheduling_is_unschedulable():
    info = pod(P, None, phase="Pending", started=None)
    msg = "0/8 nodes are available: 8 Insufficient nvidia.com/gpu."
    v = verdict(run([info], [ev(Kind.FAILED_SCHEDULING, at(3), P, summary=msg, message=msg)]), P)
    assert v.cause == "unschedulable" and "Insufficient nvidia.com/gpu" in v.summary
    assert "free or add capacity" in v.next_step


def test_failed_scheduling_then_running_is_not_unschedulable():
    base, starts = ran(P, N)
    events = [
        ev(Kind.FAILED_SCHEDULING, at(1), P),
        *starts,
        ev(Kind.POD_SUCCEEDED, at(50), P, N),
        exited(P, N, at(50), 0),
    ]
    v = verdict(run([base], events), P)
    assert v.cause == "completed"


def test_pending_without_node_for_long_is_unschedulable_with_less_confidence():
    info = pod(P, None, phase="Pending", started=None)
    v = verdict(run([info], [ev(Kind.POD_PHASE, at(3), P, phase="Pending")]), P)
    assert v.cause == "unschedulable" and v.confidence < 0.9


def test_pod_created_at_the_very_end_is_not_a_verdict():
    info = pod(P, None, phase="Pending", started=None)
    info = type(info)(**{**{f: getattr(info, f) for f in info.__slots__}, "created": at(119)})
    result = run([info], [])
    assert result.verdicts == ()


# --- scheduling and kubelet ---


def test_scheduler_preemption():
    v = single(
        ev(Kind.PREEMPTED, at(30), P, N, by="urgent-pod"),
        ev(Kind.KILLING, at(30, 1), P, N),
        exited(P, N, at(30, 20), 143),
    )
    assert v.cause == "scheduler-preemption" and v.retryable
    assert_from_table(v)


def test_preemption_of_another_pod_on_the_node_is_not_ours():
    v = single(ev(Kind.PREEMPTED, at(30), "other-pod", N), exited(P, N, at(31), 1))
    assert v.cause != "scheduler-preemption"


def test_kubelet_eviction_under_pressure():
    v = single(
        ev(Kind.NODE_PRESSURE, at(40), node=N, resource="memory"),
        ev(Kind.EVICTED, at(41), P, N, resource="memory", summary="The node was low on resource: memory."),
        exited(P, N, at(41, 5), 137, "ContainerStatusUnknown"),
    )
    assert v.cause == "node-pressure-eviction" and v.root is True
    assert len(v.evidence) >= 3  # the pressure supports the eviction


def test_node_pressure_without_eviction_does_not_explain_a_crash():
    v = single(
        ev(Kind.NODE_PRESSURE, at(40), node=N, resource="memory"),
        ev(Kind.APP_EXCEPTION, at(41), P, N, source="logs", exception="ValueError", message="bad shape"),
        exited(P, N, at(41, 5), 1),
    )
    assert v.cause == "application-error"


# --- cloud notices ---


def test_spot_interruption_then_node_gone():
    v = single(
        ev(Kind.SPOT_INTERRUPTION, at(50), node=N, provider="aws", event_type="spot-interruption"),
        ev(Kind.NODE_DELETED, at(52), node=N),
        ev(Kind.POD_PHASE, at(52, 10), P, N, phase="Failed"),
    )
    assert v.cause == "spot-preemption" and "AWS" in v.summary


def test_azure_preempt_notice_is_spot():
    v = single(
        ev(Kind.MAINTENANCE_NOTICE, at(50), node=N, provider="azure", event_type="Preempt"),
        ev(Kind.KILLING, at(50, 20), P, N),
        exited(P, N, at(50, 40), 143),
    )
    assert v.cause == "spot-preemption"


def test_spot_notice_on_another_node_is_not_ours():
    v = single(ev(Kind.SPOT_INTERRUPTION, at(50), node="node-b", provider="aws"), exited(P, N, at(51), 137))
    assert v.cause != "spot-preemption"


def maintenance_chain(notice_minute: float = 61):
    return [
        ev(
            Kind.MAINTENANCE_NOTICE, at(notice_minute), node=N, provider="azure", event_type="Reboot", not_before=at(76)
        ),
        ev(Kind.NODE_CORDONED, at(62, 30), node=N),
        ev(Kind.EVICTION_API, at(63), P, N, reason="EvictionByEvictionAPI"),
        ev(Kind.KILLING, at(63), P, N),
        exited(P, N, at(63, 28), 143),
    ]


def test_host_maintenance_chain():
    v = single(*maintenance_chain())
    assert v.cause == "host-maintenance" and v.confidence >= 0.9
    assert "Azure" in v.summary and "Reboot" in v.summary and N in v.summary


def test_maintenance_notice_after_the_death_explains_nothing():
    v = single(*maintenance_chain(notice_minute=90))
    assert v.cause == "deleted"  # drained with no notice before it: someone drained the node


def test_crash_on_a_node_with_maintenance_pending_keeps_its_own_cause():
    v = single(
        ev(Kind.MAINTENANCE_NOTICE, at(61), node=N, provider="azure", event_type="Reboot"),
        ev(Kind.APP_EXCEPTION, at(62), P, N, source="logs", exception="KeyError", message="'x'"),
        exited(P, N, at(62, 3), 1),
    )
    assert v.cause == "application-error"


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


# --- application ---


def test_oom_killed_with_kernel_oom():
    v = single(
        ev(Kind.KERNEL_OOM, at(67), node=N, process="python"),
        exited(P, N, at(67), 137, "OOMKilled"),
    )
    assert v.cause == "oom-killed" and not v.retryable and len(v.evidence) == 2


def test_exit_137_alone_is_not_oom():
    v = single(exited(P, N, at(67), 137))
    assert v.cause != "oom-killed"


def test_cuda_oom():
    v = single(
        ev(Kind.CUDA_OOM, at(44), P, N, source="logs", summary="CUDA out of memory (tried to allocate 20 GiB)"),
        exited(P, N, at(44, 6), 1),
    )
    assert v.cause == "cuda-oom" and "batch size" in v.next_step


def test_cuda_oom_of_another_pod_is_not_ours():
    v = single(ev(Kind.CUDA_OOM, at(44), "job-worker-9", "node-b", source="logs"), exited(P, N, at(44, 6), 1))
    assert v.cause != "cuda-oom"


def test_liveness_probe_kill():
    v = single(
        ev(Kind.PROBE_FAILED, at(30), P, N, probe="liveness"),
        ev(Kind.KILLING, at(30, 30), P, N, message="Container app failed liveness probe, will be restarted"),
        exited(P, N, at(31), 137),
    )
    assert v.cause == "liveness-probe"


def test_readiness_probe_failures_do_not_explain_a_crash():
    v = single(
        ev(Kind.PROBE_FAILED, at(30), P, N, probe="readiness"),
        ev(Kind.APP_EXCEPTION, at(31), P, N, source="logs", exception="RuntimeError", message="boom"),
        exited(P, N, at(31, 5), 1),
    )
    assert v.cause == "application-error"


def test_job_deadline_stops_its_pods():
    base, starts = ran(P, N, owner="train-job")
    events = [
        *starts,
        ev(
            Kind.DEADLINE_EXCEEDED,
            at(90),
            summary="DeadlineExceeded: Job was active longer than specified deadline",
            object="Job/train-job",
        ),
        ev(Kind.KILLING, at(90, 1), P, N),
        exited(P, N, at(90, 20), 143),
    ]
    v = verdict(run([base], events), P)
    assert v.cause == "deadline-exceeded" and "activeDeadlineSeconds" in v.next_step


def test_deadline_of_another_job_does_not_stop_ours():
    base, starts = ran(P, N, owner="train-job")
    events = [
        *starts,
        ev(Kind.DEADLINE_EXCEEDED, at(90), summary="DeadlineExceeded", object="Job/other-job"),
        ev(Kind.KILLING, at(90, 1), P, N),
        exited(P, N, at(90, 20), 143),
    ]
    assert verdict(run([base], events), P).cause == "deleted"


def test_traceback_is_application_error_with_file_and_line():
    v = single(
        ev(
            Kind.APP_EXCEPTION,
            at(21),
            P,
            N,
            source="logs",
            exception="KeyError",
            message="'input_ids'",
            file="/workspace/data.py",
            line=88,
        ),
        exited(P, N, at(21, 3), 1),
    )
    assert v.cause == "application-error"
    assert v.next_step == "not retryable: fix line 88 of data.py (KeyError: 'input_ids'), then resubmit"
    assert "line 88 of data.py" in v.summary


def test_distributed_backend_exception_is_not_an_application_error():
    v = single(
        ev(
            Kind.APP_EXCEPTION,
            at(21),
            P,
            N,
            source="logs",
            exception="torch.distributed.DistBackendError",
            message="NCCL error in: NCCLUtils.hpp:317",
        ),
        exited(P, N, at(21, 3), 1),
    )
    assert v.cause != "application-error"


def test_container_that_cannot_run_is_config_error():
    v = single(exited(P, N, at(3), 128, "StartError"))
    assert v.cause == "config-error"


# --- reactions and no-fault outcomes ---


def test_nccl_timeout_alone():
    v = single(ev(Kind.NCCL_TIMEOUT, at(95), P, N, source="logs", timeout_ms=1800000), exited(P, N, at(95, 5), 134))
    assert v.cause == "nccl-timeout" and v.category == "unknown"


def test_launcher_teardown_is_peer_failure():
    v = single(
        ev(Kind.LAUNCHER_TEARDOWN, at(23, 4), P, N, source="logs", signature="torchelastic-closing-workers"),
        exited(P, N, at(23, 9), 143),
    )
    assert v.cause == "peer-failure"


def test_launcher_teardown_after_its_own_sigterm_is_not_peer_failure():
    v = single(
        ev(Kind.KILLING, at(23), P, N),
        ev(Kind.SIGTERM_RECEIVED, at(23, 1), P, N, source="logs"),
        ev(Kind.LAUNCHER_TEARDOWN, at(23, 2), P, N, source="logs", signature="torchelastic-closing-workers"),
        exited(P, N, at(23, 9), 143),
    )
    assert v.cause == "deleted"


def test_child_failed_with_its_own_exit_code_is_not_a_teardown():
    v = single(
        ev(Kind.LAUNCHER_TEARDOWN, at(23, 4), P, N, source="logs", signature="torchelastic-child-failed", exit_code=1),
        exited(P, N, at(23, 9), 1),
    )
    assert v.cause != "peer-failure"


def test_killing_with_no_fault_is_deleted():
    v = single(ev(Kind.KILLING, at(88), P, N), exited(P, N, at(88, 10), 143))
    assert v.cause == "deleted" and v.category == "user" and v.root is True


def test_success_is_completed():
    base, starts = ran(P, N)
    result = run([base], [*starts, ev(Kind.POD_SUCCEEDED, at(80), P, N), exited(P, N, at(80), 0, "Completed")])
    v = verdict(result, P)
    assert v.cause == "completed" and v.root is False  # not where a failure began
    assert result.root_cause is None and result.lost_work is None


def test_nonzero_exit_with_no_evidence_is_unknown():
    v = single(exited(P, N, at(80), 1))
    assert v.cause == "unknown" and v.confidence <= 0.5


def test_pod_status_alone_still_says_oom():
    info = pod(
        P,
        N,
        containers=(
            ContainerInfo(
                "app", state="terminated", reason="OOMKilled", exit_code=137, finished=START + timedelta(minutes=30)
            ),
        ),
    )
    v = verdict(run([info], []), P)
    assert v.cause == "oom-killed" and v.evidence == ()


def test_running_pod_gets_no_verdict():
    base, starts = ran(P, N)
    base = pod(P, N, phase="Running")
    assert run([base], starts).verdicts == ()


def test_crash_then_controller_cleanup_on_a_node_with_maintenance_pending_keeps_its_cause():
    v = single(
        ev(Kind.MAINTENANCE_NOTICE, at(55), node=N, provider="azure", event_type="Reboot"),
        ev(Kind.APP_EXCEPTION, at(62), P, N, source="logs", exception="KeyError", message="'x'"),
        exited(P, N, at(62, 3), 1),
        ev(Kind.KILLING, at(62, 8), P, N),  # JobSet deletes the failed pod
    )
    assert v.cause == "application-error"


def test_crash_just_before_a_spot_notice_keeps_its_cause():
    v = single(
        ev(Kind.CUDA_OOM, at(49), P, N, source="logs"),
        ev(Kind.SPOT_INTERRUPTION, at(50), node=N, provider="aws"),
        exited(P, N, at(50, 5), 1),
    )
    assert v.cause == "cuda-oom"


def test_pod_left_unknown_on_a_dead_node_is_node_failure():
    info = pod(P, N, phase="Unknown")
    _base, starts = ran(P, N)
    events = [*starts, ev(Kind.NODE_NOT_READY, at(60), node=N), ev(Kind.POD_PHASE, at(61), P, N, phase="Unknown")]
    v = verdict(run([info], events), P)
    assert v.cause == "node-failure"


def test_pod_that_rode_out_a_node_blip_gets_no_verdict():
    _base, starts = ran(P, N)
    running = pod(P, N, phase="Running")
    events = [
        *starts,
        ev(Kind.NODE_NOT_READY, at(60), node=N),
        ev(Kind.NODE_NOT_READY, at(60, 30), P, N),  # the pod-level "Node is not ready"
        ev(Kind.NODE_READY, at(61), node=N),
    ]
    assert run([running], events).verdicts == ()
