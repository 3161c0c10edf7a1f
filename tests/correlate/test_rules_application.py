"""The cause rules for the application, reactions to other ranks and the outcomes that are no fault: the evidence that makes each and a near miss that must not."""

from __future__ import annotations

from datetime import timedelta

from tests.correlate.builders import START, at, ev, exited, pod, ran, run, verdict
from tests.correlate.test_rules import N, P, single
from whathappened.kinds import Kind
from whathappened.model import ContainerInfo

# --- application ---


def test_a_tracebacks_header_shipped_alone_names_no_exception():
    """One document per line: "Traceback (most recent call last):" on its own says nothing; the final line (an NCCL
    error here) does."""
    v = single(
        ev(Kind.APP_EXCEPTION, at(50), P, N, source="logs", signature="python-traceback"),
        ev(
            Kind.NCCL_ERROR, at(50, 1), P, N, source="logs", detail="remote process exited or there was a network error"
        ),
        exited(P, N, at(50, 5), 1),
    )
    assert v.cause == "nccl-error"


def test_a_cuda_unknown_error_alone_is_no_application_error():
    v = single(
        ev(Kind.CUDA_ERROR, at(50), P, N, source="logs", error="unknown error"),
        exited(P, N, at(50, 5), 1),
    )
    assert v.cause == "unknown"


def test_cuda_deinitialized_at_exit_is_no_cause():
    # TensorFlow polling an event while the process exits: the driver is shutting down with it
    v = single(
        ev(Kind.CUDA_ERROR, at(50), P, N, source="logs", error="deinitialized", cuda_code="CUDA_ERROR_DEINITIALIZED"),
        exited(P, N, at(50, 5), 134),
    )
    assert v.cause != "application-error"


def test_a_torchrun_failure_record_without_its_header_is_the_ranks_own_crash():
    v = single(
        ev(Kind.LAUNCHER_TEARDOWN, at(50), P, N, source="logs", signature="torchelastic-failure-record", exit_code=-11),
        exited(P, N, at(50, 5), 1),
    )
    assert v.cause == "application-error"


def test_oom_killed_with_kernel_oom():
    v = single(
        ev(Kind.KERNEL_OOM, at(67), node=N, process="python"),
        exited(P, N, at(67), 137, "OOMKilled"),
    )
    assert v.cause == "oom-killed" and not v.retryable and len(v.evidence) == 2


def test_exit_137_alone_is_not_oom():
    v = single(exited(P, N, at(67), 137))
    assert v.cause != "oom-killed"


def test_the_pods_set_up_in_its_log_at_the_end_is_a_config_error_and_hours_before_it_explains_nothing():
    shm = "the pod's shared memory (/dev/shm) ran out: workers are out of shared memory"
    v = single(
        ev(Kind.CONFIG_ERROR, at(66), P, N, source="logs", summary=shm, signature="shm-exhausted"),
        exited(P, N, at(67), 1),
    )
    assert v.cause == "config-error" and "how its pod is set up" in v.summary
    early = single(
        ev(Kind.CONFIG_ERROR, at(5), P, N, source="logs", summary=shm, signature="shm-exhausted"),
        exited(P, N, at(67), 1),
    )
    assert early.cause != "config-error"


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


def test_a_startup_probe_kill_is_the_kubelets_like_a_liveness_kill_and_its_failures_alone_are_not():
    """The contract has no code for a startup probe: the kubelet's kill for it reads as liveness-probe (said as the
    startup probe's); the probe's Unhealthy rows with no kill decide nothing."""
    failed = ev(Kind.PROBE_FAILED, at(30), P, N, probe="startup", message='Startup probe failed: command "x" timed out')
    killed = ev(Kind.KILLING, at(30, 30), P, N, message="Container app failed startup probe, will be restarted")
    v = single(failed, killed, exited(P, N, at(31), 137))
    assert v.cause == "liveness-probe" and "startup probe" in v.summary
    assert single(failed, exited(P, N, at(31), 137)).cause != "liveness-probe"


def test_a_probe_kill_before_the_containers_last_start_ended_an_earlier_run():
    """The startup probe killed the first run; the restart came up and then crashed: the kill is the earlier run's,
    not this end's."""
    killed = ev(Kind.KILLING, at(10), P, N, message="Container app failed startup probe, will be restarted")
    restarted = ev(Kind.CONTAINER_STARTED, at(10, 30), P, N)
    crash = ev(Kind.APP_EXCEPTION, at(20), P, N, source="logs", exception="ValueError", message="bad batch")
    assert single(killed, restarted, crash, exited(P, N, at(20, 5), 1)).cause == "application-error"
    liveness = ev(Kind.KILLING, at(10), P, N, message="Container app failed liveness probe, will be restarted")
    assert single(liveness, restarted, crash, exited(P, N, at(20, 5), 1)).cause == "application-error"


def test_a_probe_kill_the_kubelet_restarted_after_is_still_that_ends_cause():
    """The kubelet brings the container back seconds after a probe killed it: that restart is the next run's, not a
    start before this end."""
    for probe in ("liveness", "startup"):
        failed = ev(Kind.PROBE_FAILED, at(28, 50), P, N, probe=probe, message=f"{probe.title()} probe failed: timeout")
        killed = ev(Kind.KILLING, at(29), P, N, message=f"Container app failed {probe} probe, will be restarted")
        restarted = ev(Kind.CONTAINER_STARTED, at(29, 45), P, N)
        assert single(failed, killed, exited(P, N, at(29, 30), 137), restarted).cause == "liveness-probe"


def test_a_startup_or_readiness_probe_pointed_at_a_liveness_endpoint_is_no_liveness_failure():
    for probe in ("Startup", "Readiness"):
        message = f'{probe} probe failed: Get "http://10.244.0.34:8080/actuator/health/liveness": connection refused'
        failed = ev(Kind.PROBE_FAILED, at(30), P, N, probe=probe.lower(), message=message)
        assert single(failed, exited(P, N, at(31), 1)).cause != "liveness-probe"


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


def test_a_pull_that_failed_between_the_end_and_a_restart_that_came_up_was_retried():
    """The container crashed; the kubelet's pull failed once, then the container started again: that pull is no cause
    of the crash (a probe's restart after the end is the next run's, a pull's is its retry that worked)."""
    crash = ev(Kind.APP_EXCEPTION, at(29, 50), P, N, source="logs", exception="ValueError", message="bad batch")
    pull = ev(Kind.IMAGE_PULL_FAILED, at(30, 10), P, N, image="repo/x:1", reason="ErrImagePull")
    restarted = ev(Kind.CONTAINER_STARTED, at(31), P, N)
    assert single(crash, exited(P, N, at(30), 1), pull, restarted).cause == "application-error"
