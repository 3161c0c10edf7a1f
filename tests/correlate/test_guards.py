"""The guards against misattribution: drains are not OOMs, SIGTERM is not a crash, old Xids are not this pod's,
and up to two minutes of clock skew between sources does not flip cause and effect."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from tests.correlate.builders import at, ev, exited, pod, ran, run, verdict
from whathappened.kinds import Kind
from whathappened.model import ContainerInfo

N = "node-a"


def one_pod(*events):
    base, starts = ran("w-0", N)
    return verdict(run([base], [*starts, *events]), "w-0")


def test_exit_137_during_a_drain_is_not_oom():
    v = one_pod(
        ev(Kind.NODE_CORDONED, at(60), node=N),
        ev(Kind.EVICTION_API, at(61), "w-0", N, reason="EvictionByEvictionAPI"),
        ev(Kind.KILLING, at(61), "w-0", N),
        ev(Kind.KERNEL_OOM, at(61, 40), node=N, process="pause"),  # something else on the node
        exited("w-0", N, at(61, 31), 137),
    )
    assert v.cause == "deleted" and v.cause != "oom-killed"


def test_exit_137_during_a_maintenance_drain_is_host_maintenance():
    v = one_pod(
        ev(Kind.MAINTENANCE_NOTICE, at(58), node=N, provider="gcp", event_type="TERMINATE_ON_HOST_MAINTENANCE"),
        ev(Kind.DRAIN, at(60), node=N),
        ev(Kind.EVICTION_API, at(61), "w-0", N),
        exited("w-0", N, at(61, 31), 137),
    )
    assert v.cause == "host-maintenance" and "Google Cloud" in v.summary


def test_sigterm_on_deletion_is_not_a_crash_even_with_a_shutdown_traceback():
    v = one_pod(
        ev(Kind.KILLING, at(88), "w-0", N),
        ev(Kind.SIGTERM_RECEIVED, at(88, 1), "w-0", N, source="logs"),
        ev(
            Kind.APP_EXCEPTION,
            at(88, 3),
            "w-0",
            N,
            source="logs",
            exception="RuntimeError",
            message="DataLoader worker (pid 77) is killed by signal: Terminated.",
        ),
        ev(Kind.NCCL_ERROR, at(88, 4), "w-0", N, source="logs", remote=True),
        exited("w-0", N, at(88, 9), 143),
    )
    assert v.cause == "deleted" and v.category == "user"


def test_sigterm_from_scale_down_drain_is_not_a_crash():
    v = one_pod(
        ev(Kind.DRAIN, at(70), node=N, reason="ScaleDown"),
        ev(Kind.DISRUPTION_TARGET, at(70, 5), "w-0", N, reason="EvictionByEvictionAPI"),
        exited("w-0", N, at(70, 30), 143),
    )
    assert v.cause == "deleted"


def test_crash_before_a_deletion_keeps_its_cause():
    v = one_pod(
        ev(Kind.APP_EXCEPTION, at(50), "w-0", N, source="logs", exception="ValueError", message="nan loss"),
        exited("w-0", N, at(50, 2), 1),
        ev(Kind.KILLING, at(50, 6), "w-0", N),  # the controller cleans up after the crash
    )
    assert v.cause == "application-error"


def test_xid_value_that_predates_the_pod_is_not_its_fault():
    v = one_pod(
        ev(Kind.GPU_XID, at(0), node=N, gpu="5", source="prometheus", xid=79),  # already set when scraped first
        ev(Kind.GPU_XID, at(50), node=N, gpu="5", source="prometheus", xid=79),  # the same value, reported again
        exited("w-0", N, at(55), 1),
    )
    assert v.cause not in ("gpu-fallen-off-bus", "gpu-hardware-error")


def test_a_new_xid_after_an_old_one_is_still_the_cause():
    v = one_pod(
        ev(Kind.GPU_XID, at(0), node=N, gpu="5", source="prometheus", xid=79),
        ev(Kind.GPU_XID, at(50), node=N, gpu="5", source="prometheus", xid=48),
        exited("w-0", N, at(50, 20), 1),
    )
    assert v.cause == "gpu-memory-error"


def test_cuda_error_logged_before_the_xid_by_skew_still_blames_the_gpu():
    v = one_pod(
        ev(Kind.CUDA_ERROR, at(56, -85), "w-0", N, source="logs", error="unspecified launch failure"),
        ev(Kind.GPU_XID, at(56), node=N, gpu="2", source="prometheus", xid=79),
        exited("w-0", N, at(56, 12), 1),
    )
    assert v.cause == "gpu-fallen-off-bus"


def _gpu_failure_with_peers(log_shift: timedelta):
    """Rank 2's GPU fails; ranks 0 and 1 log NCCL errors on a log clock shifted by ``log_shift``."""
    pods, events = [], []
    for name, node in (("w-0", "n0"), ("w-1", "n1"), ("w-2", "n2")):
        info, starts = ran(name, node)
        pods.append(info)
        events += starts
    events += [
        ev(Kind.GPU_XID, at(56), node="n2", gpu="5", source="prometheus", xid=79),
        ev(Kind.CUDA_ERROR, at(56, 4) + log_shift, "w-2", "n2", source="logs", error="unspecified launch failure"),
        exited("w-2", "n2", at(56, 12), 1),
    ]
    for name, node in (("w-0", "n0"), ("w-1", "n1")):
        events += [
            ev(Kind.NCCL_ERROR, at(56, 20) + log_shift, name, node, source="logs", remote=True),
            exited(name, node, at(56, 40), 1),
        ]
    return run(pods, events)


def test_skew_up_to_two_minutes_does_not_flip_root_and_collateral():
    for shift in (timedelta(seconds=-110), timedelta(0), timedelta(seconds=110)):
        result = _gpu_failure_with_peers(shift)
        assert result.root_cause is not None and result.root_cause.pod == "w-2", shift
        for peer in ("w-0", "w-1"):
            v = verdict(result, peer)
            assert (v.root, v.caused_by) == (False, "w-2"), shift


def test_skew_cannot_make_an_application_error_outrank_hardware_within_two_minutes():
    pods, events = [], []
    for name, node in (("w-0", "n0"), ("w-1", "n1")):
        info, starts = ran(name, node)
        pods.append(info)
        events += starts
    events += [
        # w-0's log clock runs 90 s ahead of Prometheus: its "error" seems to come first
        ev(Kind.APP_EXCEPTION, at(30, -60), "w-0", "n0", source="logs", exception="RuntimeError", message="peer reset"),
        exited("w-0", "n0", at(30, 40), 1),
        ev(Kind.GPU_XID, at(30), node="n1", gpu="1", source="prometheus", xid=48),
        exited("w-1", "n1", at(30, 10), 1),
    ]
    result = run(pods, events)
    assert result.root_cause is not None and result.root_cause.pod == "w-1"
    assert verdict(result, "w-0").caused_by == "w-1"


def test_a_node_wide_xid_belongs_to_the_pod_on_that_gpu_not_its_neighbours():
    pods, events = [], []
    for name, gpu in (("w-0", "0"), ("w-1", "3")):
        info, starts = ran(name, N, gpus=1)
        pods.append(info)
        events += [*starts, ev(Kind.GPU_UTIL_DROP, at(10), name, N, gpu=gpu, source="prometheus")]
    events += [
        ev(Kind.GPU_XID, at(50), "w-1", N, gpu="3", source="prometheus", xid=79),  # dcgm-exporter: pod label
        ev(Kind.GPU_XID, at(50, 1), node=N, source="logs", xid=79, pci="0000:9b:00"),  # kernel log: node only
        exited("w-1", N, at(50, 10), 1),
        ev(Kind.NCCL_ERROR, at(50, 30), "w-0", N, source="logs", remote=True),
        exited("w-0", N, at(50, 40), 1),
    ]
    result = run(pods, events)
    assert verdict(result, "w-1").cause == "gpu-fallen-off-bus"
    neighbour = verdict(result, "w-0")
    assert (neighbour.cause, neighbour.root, neighbour.caused_by) == ("nccl-error", False, "w-1")


def _vanished_case(api_answered: bool):
    from dataclasses import replace

    from tests.correlate.builders import pod

    listed = replace(
        pod("w-actor", "node-b", phase="Running"), sources=frozenset({"kubernetes" if api_answered else "logs"})
    )
    gone = replace(pod("w-learner", None, phase=None, started=None), sources=frozenset({"logs"}))
    logs = [ev(Kind.LOG_LINE, at(m), "w-learner", "node-c", source="logs", message="step") for m in (10, 20, 41)]
    return run([listed, gone], logs)


def test_a_pod_the_api_no_longer_lists_and_only_logs_saw_ended_when_last_seen():
    result = _vanished_case(api_answered=True)
    v = verdict(result, "w-learner")
    assert v.ended == at(41) and v.cause == "unknown"
    assert [x.pod for x in result.verdicts] == ["w-learner"]  # the Running pod the API lists has no verdict


def test_without_an_api_answer_a_logs_only_pod_is_not_declared_dead():
    assert _vanished_case(api_answered=False).verdicts == ()


def test_a_kernel_xid_belongs_to_the_pod_whose_gpu_went_missing_with_that_uuid():
    """The GPU fell off the bus: dcgm-exporter never reported the Xid, only that the GPU (UUID) stopped reporting
    while its pod held it; the kernel's Xid line names the node and the UUID. The neighbour on the same node is
    collateral, not a second victim."""
    pods, events = [], []
    for name in ("w-0", "w-1"):
        info, starts = ran(name, N, gpus=1)
        pods.append(info)
        events += starts
    uuid = "GPU-5b1bd158-5ca4-06cf-5505-5248ebab7f11"
    events += [
        ev(Kind.GPU_XID, at(50), node=N, source="logs", xid=79, pci="0000:9b:00", uuid=uuid),  # node only
        ev(Kind.GPU_MISSING, at(50, 30), "w-1", N, gpu="3", source="prometheus", uuid=uuid),
        exited("w-1", N, at(50, 10), 1),
        ev(Kind.NCCL_ERROR, at(50, 30), "w-0", N, source="logs", remote=True),
        exited("w-0", N, at(50, 40), 1),
    ]
    result = run(pods, events)
    assert verdict(result, "w-1").cause == "gpu-fallen-off-bus"
    neighbour = verdict(result, "w-0")
    assert (neighbour.cause, neighbour.root, neighbour.caused_by) == ("nccl-error", False, "w-1")


def test_a_log_line_saying_the_run_ended_does_not_end_a_pod_the_api_still_runs():
    """Lightning's tuner prints "`Trainer.fit` stopped: `max_steps=100` reached." before the real fit; a driver
    relays an OOM kill of a task on another node. Neither is this pod's end while the API lists it Running."""
    base, starts = ran("w-0", N)
    running = replace(base, phase="Running")
    lines = [
        ev(Kind.JOB_COMPLETED, at(5), "w-0", N, source="logs", signature="training-finished"),
        ev(Kind.OOM_KILLED, at(30), "w-0", N, source="logs", signature="ray-memory-monitor-kill"),
    ]
    assert run([running], [*starts, *lines]).verdicts == ()


def test_the_run_finished_line_still_explains_a_pod_that_ended():
    v = one_pod(
        ev(Kind.JOB_COMPLETED, at(59, 50), "w-0", N, source="logs", signature="training-finished"),
        exited("w-0", N, at(60), 1),
    )
    assert v.cause == "completed"


SHORT_OF_GPUS = "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."


def _unscheduled(*said: tuple[float, Kind, str]) -> str:
    """The cause of a pod the scheduler never placed, from its FailedScheduling Events (minute, kind, message)."""
    waiting = pod("w-0", node=None, phase="Pending", started=None)
    events = [ev(kind, at(minute), "w-0", reason="FailedScheduling", message=message) for minute, kind, message in said]
    return verdict(run([waiting], events), "w-0").cause


def test_a_claim_still_binding_then_an_hour_short_of_gpus_is_unschedulable_not_a_missing_volume():
    unbound = "0/4 nodes are available: 4 pod has unbound immediate PersistentVolumeClaims."
    cause = _unscheduled(
        (1, Kind.CONFIG_ERROR, unbound),
        (3, Kind.FAILED_SCHEDULING, SHORT_OF_GPUS),
        (63, Kind.FAILED_SCHEDULING, SHORT_OF_GPUS),
    )
    assert cause == "unschedulable"


def test_a_claim_that_does_not_exist_as_the_last_word_is_a_missing_volume():
    missing = 'persistentvolumeclaim "ckpt" not found'
    assert _unscheduled((1, Kind.FAILED_SCHEDULING, SHORT_OF_GPUS), (63, Kind.CONFIG_ERROR, missing)) == "config-error"


def test_exit_139_is_the_programs_crash_only_when_it_is_the_only_failure():
    def ended(*codes: int) -> str:
        containers = tuple(
            ContainerInfo(name=f"c{n}", exit_code=code, state="terminated") for n, code in enumerate(codes)
        )
        base = pod("w-0", containers=containers)
        return verdict(run([base], [ev(Kind.POD_PHASE, at(60), "w-0", N, phase="Failed")]), "w-0").cause

    assert ended(139) == "application-error"
    assert ended(139, 0) == "application-error"
    assert ended(137, 139) != "application-error"  # a sidecar's segfault does not explain the main container
    assert ended(132) == "application-error"  # SIGILL: an instruction the CPU lacks
    assert ended(136) == "application-error"  # SIGFPE
    assert ended(134) != "application-error"  # SIGABRT: also the NCCL watchdog's abort
    assert ended(135) != "application-error"  # SIGBUS: also /dev/shm running out
