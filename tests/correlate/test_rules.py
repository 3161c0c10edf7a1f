"""One test per cause rule: the evidence that makes it (positive) and a near miss that must not."""

from __future__ import annotations

from tests.correlate.builders import at, ev, exited, pod, ran, run, verdict
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


_REFUSED = "Pod was rejected: Allocate failed due to no healthy devices present; cannot allocate unhealthy devices nvidia.com/gpu, which is unexpected"


def test_a_pod_the_kubelet_refused_at_admission_never_ran_and_is_unschedulable():
    info = pod(P, N, phase="Failed", started=None)
    msg = "Node didn't have enough resource: nvidia.com/gpu, requested: 8, used: 0, capacity: 0"
    v = verdict(run([info], [ev(Kind.POD_FAILED, at(5), P, N, reason="OutOfnvidia.com/gpu", message=msg)]), P)
    assert v.cause == "unschedulable" and "never ran" in v.summary
    gone = ev(Kind.POD_FAILED, at(5), P, N, reason="UnexpectedAdmissionError", message=_REFUSED)
    assert verdict(run([info], [gone]), P).cause == "gpu-hardware-error"


def test_a_running_pod_failed_on_its_kubelets_restart_in_admissions_words_is_not_refused_at_admission():
    base, starts = ran(P, N)
    events = [
        *starts,
        ev(Kind.NODE_REBOOTED, at(58), None, N),
        ev(Kind.POD_FAILED, at(60), P, N, reason="UnexpectedAdmissionError", message=_REFUSED),
        exited(P, N, at(60), 137),
    ]
    v = verdict(run([base], events), P)
    assert v.cause not in ("unschedulable", "gpu-hardware-error")


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


def test_rebalance_recommendation_then_a_drain_is_spot():
    # aws-node-termination-handler draining on EC2's rebalance recommendation (enableRebalanceDraining)
    v = single(
        ev(Kind.REBALANCE_RECOMMENDATION, at(50), node=N, provider="aws", not_before=at(50, 30)),
        ev(Kind.DRAIN, at(50, 40), node=N, reason="CordonAndDrain"),
        exited(P, N, at(51), 143),
    )
    assert v.cause == "spot-preemption"


def test_rebalance_recommendation_alone_is_no_interruption():
    # its "will be cordoned at" time passed, but nothing drained the node: a cordon kills no pod
    v = single(
        ev(Kind.REBALANCE_RECOMMENDATION, at(50), node=N, provider="aws", not_before=at(50, 30)),
        exited(P, N, at(51), 1),
    )
    assert v.cause != "spot-preemption"


def test_a_drain_of_the_pods_node_with_no_notice_is_a_controllers_stop():
    # Karpenter's drift replacement, a scale-down, an instance refresh: the node drained, the pod stopped
    v = single(ev(Kind.DRAIN, at(50), node=N, reason="DisruptionTerminating"), exited(P, N, at(50, 40), 143))
    assert v.cause == "deleted"


def test_a_drain_after_the_pod_failed_on_its_own_is_not_the_stop():
    v = single(
        ev(Kind.APP_EXCEPTION, at(49), P, N, source="logs", exception="KeyError", message="'input_ids'"),
        exited(P, N, at(49, 5), 1),
        ev(Kind.DRAIN, at(50), node=N, reason="DisruptionTerminating"),
    )
    assert v.cause == "application-error"


def test_a_node_terminated_after_it_was_drained_went_down_because_of_the_drain():
    """Karpenter drains, the pod is evicted and exits, then EC2 reports the instance terminating: the drain is the
    story, not a node failure."""
    v = single(
        ev(Kind.DRAIN, at(50), node=N, reason="DisruptionTerminating"),
        ev(Kind.EVICTION_API, at(50, 5), P, N, reason="Evicted"),
        exited(P, N, at(50, 40), 143),
        ev(Kind.NODE_SHUTDOWN, at(51), node=N, reason="InstanceTerminating"),
    )
    assert v.cause == "deleted"


def test_a_graceful_node_shutdown_after_the_pods_sigterm_is_still_the_node():
    v = single(
        ev(Kind.SIGTERM_RECEIVED, at(50), P, N, source="logs", signal="SIGTERM"),
        ev(Kind.NODE_SHUTDOWN, at(50, 2), node=N, reason="Shutdown"),
        exited(P, N, at(50, 20), 143),
    )
    assert v.cause == "node-failure"


def test_a_sandbox_that_failed_before_the_pod_ran_is_no_cause_of_its_death_an_hour_later():
    info = pod(P, N, containers=(ContainerInfo("main", started=at(0, 20)),))
    events = [
        ev(Kind.POD_SCHEDULED, at(0), P, N),
        ev(Kind.CONFIG_ERROR, at(0, 5), P, N, reason="FailedCreatePodSandBox", message='no runtime for "nvidia"'),
        ev(Kind.CONTAINER_STARTED, at(0, 20), P, N),
        ev(Kind.APP_EXCEPTION, at(68), P, N, source="logs", exception="ValueError", message="bad shape"),
        exited(P, N, at(68, 5), 1),
    ]
    assert verdict(run([info], events), P).cause == "application-error"


def test_a_mount_that_failed_before_the_kubelets_last_start_event_is_no_cause():
    """The container's status may keep an earlier start than the kubelet's "Started" Event after a mount that
    failed once: the Event says the volume was mounted in the end."""
    info = pod(P, N, containers=(ContainerInfo("main", started=at(0, 20)),))

    def cause(started_again: bool) -> str:
        events = [
            ev(Kind.POD_SCHEDULED, at(0), P, N),
            ev(Kind.CONTAINER_STARTED, at(0, 20), P, N),
            ev(Kind.CONFIG_ERROR, at(39, 20), P, N, reason="FailedMount", message="MountVolume.SetUp failed"),
            *([ev(Kind.CONTAINER_STARTED, at(40), P, N, reason="Started")] if started_again else []),
            exited(P, N, at(40, 5), 1),
        ]
        return verdict(run([info], events), P).cause

    assert cause(started_again=False) == "config-error"
    assert cause(started_again=True) == "unknown"


def test_a_sandbox_the_kubelet_cannot_make_again_after_a_reboot_is_not_the_cause():
    """The node rebooted under a running pod; making its sandbox again then fails on the CNI (a leaked address
    pool): the reboot ended the pod."""
    info = pod(P, N, containers=(ContainerInfo("main", started=at(0, 20)),))
    pool = "failed to allocate for range 0: no IP addresses available in range set: 10.42.0.1-10.42.0.254"
    events = [
        ev(Kind.POD_SCHEDULED, at(0), P, N),
        ev(Kind.CONTAINER_STARTED, at(0, 20), P, N),
        ev(Kind.NODE_REBOOTED, at(60), node=N),
        exited(P, N, at(60, 5), 137),
        ev(Kind.CONFIG_ERROR, at(60, 45), P, N, reason="FailedCreatePodSandBox", message=pool),
    ]
    assert verdict(run([info], events), P).cause == "node-failure"


def test_an_init_containers_start_does_not_settle_the_main_containers_config_error():
    info = pod(
        P,
        N,
        containers=(ContainerInfo("fetch", started=at(0, 5), init=True), ContainerInfo("main", state="waiting")),
    )
    events = [
        ev(Kind.CONFIG_ERROR, at(0, 1), P, N, reason="CreateContainerConfigError", message='secret "hf" not found'),
        ev(Kind.CONTAINER_STARTED, at(0, 5), P, N, container="fetch", init=True),
        ev(Kind.POD_PHASE, at(30), P, N, phase="Failed"),
    ]
    assert verdict(run([info], events), P).cause == "config-error"


def test_a_rank_that_crashes_as_it_tears_down_after_an_nccl_error_died_of_the_nccl_error():
    crash = dict(source="logs", exception="double free or corruption (out)", crash=True, signature="segfault")
    nccl = ev(Kind.NCCL_ERROR, at(60), P, N, source="logs", remote=True)
    v = single(nccl, ev(Kind.APP_EXCEPTION, at(60, 2), P, N, **crash), exited(P, N, at(60, 5), 134))
    assert v.cause == "nccl-error"
    alone = single(ev(Kind.APP_EXCEPTION, at(60, 2), P, N, **crash), exited(P, N, at(60, 5), 134))
    assert alone.cause == "application-error"


def test_a_rank_that_crashed_first_is_where_it_began_whatever_its_sibling_ranks_printed_after():
    """One rank of an 8-rank pod segfaults; the pod's other ranks then lose it (NCCL errors, torchrun's SIGTERMs)."""
    crash = dict(source="logs", exception="Segmentation fault", crash=True, signature="segfault")
    segfault = ev(Kind.APP_EXCEPTION, at(50), P, N, **crash)
    nccl = ev(Kind.NCCL_ERROR, at(50, 3), P, N, source="logs", remote=True)
    assert single(segfault, nccl, exited(P, N, at(50, 20), 1)).cause == "application-error"
    timeout = ev(Kind.NCCL_TIMEOUT, at(60), P, N, source="logs")
    assert single(segfault, timeout, exited(P, N, at(60, 5), 1)).cause == "application-error"


def test_a_crash_after_an_older_attempts_nccl_error_or_after_a_cuda_error():
    crash = dict(source="logs", exception="Segmentation fault", crash=True, signature="segfault")
    # torchrun restarted its workers after an NCCL error eight minutes before: the crash is this attempt's own
    earlier = ev(Kind.NCCL_ERROR, at(42), P, N, source="logs", remote=True)
    assert single(earlier, ev(Kind.APP_EXCEPTION, at(50), P, N, **crash), exited(P, N, at(50, 5), 139)).cause == (
        "application-error"
    )
    # a double free as the process goes down after a CUDA error that names nothing: the CUDA error decides
    cuda = ev(Kind.CUDA_ERROR, at(50), P, N, source="logs", error="unknown error")
    free = dict(crash, exception="free(): double free detected in tcache 2")
    v = single(cuda, ev(Kind.APP_EXCEPTION, at(50, 1), P, N, **free), exited(P, N, at(50, 5), 134))
    assert v.cause != "application-error"


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


def test_a_crash_logged_after_the_teardown_it_caused_is_still_the_ranks_own():
    """torchrun's SIGTERMs to the other workers, its record of the crashed rank (exitcode -11), and the crash line
    the shipper put after them: the teardown answered the crash."""
    crash = dict(source="logs", exception="Segmentation fault", crash=True, signature="segfault")
    events = [
        ev(Kind.LAUNCHER_TEARDOWN, at(50, 1), P, N, source="logs", signature="torchelastic-closing-workers"),
        ev(
            Kind.LAUNCHER_TEARDOWN,
            at(50, 3),
            P,
            N,
            source="logs",
            signature="torchelastic-worker-failed",
            exit_code=-11,
        ),
        ev(Kind.APP_EXCEPTION, at(50, 4), P, N, **crash),
        exited(P, N, at(50, 10), 1),
    ]
    v = single(*events)
    assert v.cause == "application-error" and "Segmentation fault" in v.summary  # the crash, not only its record
