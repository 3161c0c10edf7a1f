"""Rules for the failure families real systems report in their own ways, each with the near miss it must not
take: Xids the application causes, Xid chains and NVLink severities, the kernel OOM killer tied to its pod, a
rank of the pod's own failing, a SIGTERM with no word of who sent it, a Job's limit with the pods left in place,
and what a maintenance notice alone says."""

from __future__ import annotations

import dataclasses

from tests.correlate.builders import at, ev, exited, ran, run, verdict
from whathappened.kinds import Kind

N = "node-a"
UID = "1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901"


def one_pod(*events, uid: str | None = None, deleted: bool = False, owner: str | None = None):
    base, starts = ran("w-0", N, owner=owner)
    base = dataclasses.replace(base, uid=uid, deleted=at(61) if deleted else None)
    return verdict(run([base], [*starts, *events]), "w-0")


def xid(code: int, text: str, **attrs):
    return ev(Kind.GPU_XID, at(60), node=N, source="logs", xid=code, text=text, **attrs)


def test_xids_the_application_causes_are_application_errors_never_hardware() -> None:
    for code in (13, 31, 43):
        v = one_pod(xid(code, "Graphics SM Warp Exception"), exited("w-0", N, at(60, 5), 1))
        assert v.cause == "application-error", code
    assert one_pod(xid(79, "GPU has fallen off the bus."), exited("w-0", N, at(60, 5), 1)).cause == (
        "gpu-fallen-off-bus"
    )


def test_a_sympathetic_xid_45_is_read_as_the_xid_that_caused_it() -> None:
    v = one_pod(xid(45, "Ch 00000008 caused by previous Xid 95", caused_by_xid=95), exited("w-0", N, at(60, 5), 1))
    assert v.cause == "gpu-memory-error"
    bare = one_pod(xid(45, "Ch 00000008"), exited("w-0", N, at(60, 5), 1))
    assert bare.cause != "gpu-memory-error"


def test_blackwell_nvlink_xids_say_their_own_severity() -> None:
    fatal = one_pod(xid(149, "NETIR_LINK_EVT Fatal XC0 i0 Link 00"), exited("w-0", N, at(60, 5), 1))
    assert fatal.cause == "nvlink-error"
    corrected = one_pod(xid(145, "RLW_RXPIPE Nonfatal XC0 i0 Link 13"), exited("w-0", N, at(60, 5), 1))
    assert corrected.cause != "nvlink-error"


def test_the_kernel_oom_killer_is_tied_to_its_pod_by_the_cgroup_uid() -> None:
    def oom(uid: str | None):
        attrs = {"pod_uid": uid} if uid else {}
        return ev(Kind.KERNEL_OOM, at(60), node=N, source="logs", process="python", pid=4242, **attrs)

    assert one_pod(oom(UID), exited("w-0", N, at(60, 2), 137), uid=UID).cause == "oom-killed"
    assert one_pod(oom(None), exited("w-0", N, at(60, 2), 137), uid=UID).cause == "oom-killed"
    other = one_pod(oom("00000000-0000-0000-0000-000000000001"), exited("w-0", N, at(60, 2), 137), uid=UID)
    assert other.cause != "oom-killed"


def test_a_kernel_oom_after_the_pod_was_told_to_stop_is_not_its_cause() -> None:
    v = one_pod(
        ev(Kind.KILLING, at(60), "w-0", N),
        ev(Kind.KERNEL_OOM, at(60, 10), node=N, source="logs", process="python"),
        exited("w-0", N, at(60, 30), 137),
    )
    assert v.cause == "deleted"


def test_the_pods_own_rank_failing_is_its_own_failure_not_a_peers() -> None:
    own = ev(Kind.LAUNCHER_TEARDOWN, at(60), "w-0", N, "logs", signature="torchelastic-worker-failed", exit_code=1)
    assert one_pod(own, exited("w-0", N, at(60, 5), 1)).cause == "application-error"
    killed = ev(Kind.LAUNCHER_TEARDOWN, at(60), "w-0", N, "logs", signature="torchelastic-worker-failed", exit_code=-9)
    assert one_pod(killed, exited("w-0", N, at(60, 5), 1)).cause != "application-error"


def test_a_sigterm_alone_names_no_one_a_deletion_does() -> None:
    sigterm = ev(Kind.SIGTERM_RECEIVED, at(60), "w-0", N, "logs", signal="SIGTERM")
    assert one_pod(sigterm, exited("w-0", N, at(60, 5), 143)).cause == "unknown"
    assert one_pod(sigterm, exited("w-0", N, at(60, 5), 143), deleted=True).cause == "deleted"


def test_a_jobs_limit_with_the_pods_left_in_place() -> None:
    limit = ev(Kind.DEADLINE_EXCEEDED, at(60, 20), source="kubernetes", summary="BackoffLimitExceeded: job-x",
               reason="BackoffLimitExceeded", message="Job has reach the specified backoff limit")  # fmt: skip
    left = one_pod(limit, exited("w-0", N, at(60), 1), owner="job-x")
    assert left.cause == "deadline-exceeded" and "was stopped" not in left.summary  # it ended by itself
    traceback = ev(Kind.APP_EXCEPTION, at(59, 58), "w-0", N, "logs", exception="KeyError", message="'x'")
    assert one_pod(traceback, limit, exited("w-0", N, at(60), 1), owner="job-x").cause == "application-error"


def test_a_maintenance_notice_alone_is_the_likeliest_reading_but_never_over_a_fault() -> None:
    notice = ev(Kind.MAINTENANCE_NOTICE, at(55), node=N, provider="azure", event_type="Reboot")
    alone = one_pod(notice, exited("w-0", N, at(60), 1))
    assert alone.cause == "host-maintenance" and alone.confidence < 0.8
    with_fault = one_pod(notice, xid(79, "GPU has fallen off the bus."), exited("w-0", N, at(60, 5), 1))
    assert with_fault.cause == "gpu-fallen-off-bus"


def test_kueue_and_the_scheduler_saying_preempted_to_accommodate() -> None:
    kueue = ev(Kind.DISRUPTION_TARGET, at(60), "w-0", N,
               message="Preempted to accommodate a workload (UID: 9a1f) due to prioritization in the ClusterQueue")  # fmt: skip
    assert one_pod(kueue, exited("w-0", N, at(60, 30), 143)).cause == "scheduler-preemption"


def test_kueues_lifted_preemption_behind_previously_is_no_preemption_now() -> None:
    """Kueue keeps a condition's old message behind "Previously: " once it is False (the workload has its quota
    again): that preemption is past and explains no later end; the same words without it still do."""
    past = "Previously: Previously: Preempted to accommodate a workload (UID: foo, JobUID: UNKNOWN) due to Fair Sharing"
    lifted = ev(Kind.POD_FAILED, at(60), "w-0", N, reason="QuotaReserved", message=past)
    assert one_pod(lifted, exited("w-0", N, at(60, 30), 137)).cause != "scheduler-preemption"
    current = ev(Kind.POD_FAILED, at(60), "w-0", N, reason="Preempted", message=past.replace("Previously: ", ""))
    assert one_pod(current, exited("w-0", N, at(60, 30), 137)).cause == "scheduler-preemption"
