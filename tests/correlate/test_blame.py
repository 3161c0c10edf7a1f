"""Root versus collateral, the chain, lost work, and every contract cause code reachable by some rule."""

from __future__ import annotations

from tests.correlate.builders import START, at, ev, exited, pod, ran, run, timeline_of, verdict
from whathappened.correlate import CAUSES
from whathappened.kinds import Kind


def job(n: int, gpus: int = 8):
    pods, events = [], []
    for i in range(n):
        info, starts = ran(f"w-{i}", f"n{i}", gpus=gpus)
        pods.append(info)
        events += starts
    return pods, events


def test_maintenance_root_and_nccl_collateral():
    pods, events = job(4)
    events += [
        ev(Kind.MAINTENANCE_NOTICE, at(61), node="n2", provider="azure", event_type="Reboot"),
        ev(Kind.NODE_CORDONED, at(62, 30), node="n2"),
        ev(Kind.EVICTION_API, at(63), "w-2", "n2"),
        ev(Kind.KILLING, at(63), "w-2", "n2"),
        exited("w-2", "n2", at(63, 28), 143),
    ]
    for i in (0, 1, 3):
        events += [
            ev(Kind.NCCL_ERROR, at(63, 31), f"w-{i}", f"n{i}", source="logs", remote=True, peer_rank=16),
            exited(f"w-{i}", f"n{i}", at(63, 48), 1),
        ]
    result = run(pods, events)
    assert result.root_cause is not None and result.root_cause.pod == "w-2"
    assert result.root_cause.cause == "host-maintenance"
    for i in (0, 1, 3):
        v = verdict(result, f"w-{i}")
        assert (v.cause, v.root, v.caused_by) == ("nccl-error", False, "w-2")
        assert "caused by w-2" in v.summary
    timeline = timeline_of(events)
    times = [timeline[i].at for i in result.chain]
    assert times == sorted(times) and len(result.chain) >= 6
    assert result.next_step.startswith("resubmitting is safe")


def test_remote_process_exited_points_at_the_rank_that_exited_first():
    pods, events = job(3)
    events += [exited("w-1", "n1", at(40), 137)]  # no log, no reason: it just died
    for i in (0, 2):
        events += [
            ev(
                Kind.NCCL_ERROR,
                at(40, 25),
                f"w-{i}",
                f"n{i}",
                source="logs",
                remote=True,
                detail="remote process exited or there was a network error",
            ),
            exited(f"w-{i}", f"n{i}", at(40, 40), 1),
        ]
    result = run(pods, events)
    assert verdict(result, "w-1").root is True
    assert result.root_cause is not None and result.root_cause.pod == "w-1"
    assert {verdict(result, p).caused_by for p in ("w-0", "w-2")} == {"w-1"}


def test_nccl_timeouts_everywhere_decide_nothing():
    pods, events = job(4)
    for i in range(4):
        events += [
            ev(Kind.NCCL_TIMEOUT, at(95, 2 * i), f"w-{i}", f"n{i}", source="logs", timeout_ms=1800000),
            exited(f"w-{i}", f"n{i}", at(95, 10 + i), 134),
        ]
    result = run(pods, events)
    assert result.root_cause is None and result.chain == ()
    # the job froze when the collective began, the watchdog's 30 minutes before the first report
    assert result.hang is not None and result.hang.froze_at == at(65)
    assert result.lost_work is not None and result.lost_work.until == at(65)
    assert all(v.root is None and v.caused_by is None and v.cause == "nccl-timeout" for v in result.verdicts)
    assert "NCCL timeout" in result.next_step


def test_user_deletion_first_pod_root_others_not_caused_by_it():
    pods, events = job(2)
    events += [ev(Kind.KILLING, at(88), "w-0", "n0"), ev(Kind.KILLING, at(88, 1), "w-1", "n1")]
    events += [exited("w-0", "n0", at(88, 20), 143), exited("w-1", "n1", at(88, 21), 143)]
    result = run(pods, events)
    assert (verdict(result, "w-0").root, verdict(result, "w-0").cause) == (True, "deleted")
    second = verdict(result, "w-1")
    assert (second.cause, second.root, second.caused_by) == ("deleted", False, None)
    assert result.root_cause is not None and result.root_cause.cause == "deleted"


def test_controller_deleting_the_rest_of_a_failed_job_is_collateral():
    pods, events = job(2)
    events += [
        ev(Kind.CUDA_OOM, at(44), "w-0", "n0", source="logs"),
        exited("w-0", "n0", at(44, 6), 1),
        ev(Kind.KILLING, at(44, 20), "w-1", "n1"),  # JobSet failure policy tears the job down
        exited("w-1", "n1", at(44, 50), 143),
    ]
    result = run(pods, events)
    v = verdict(result, "w-1")
    assert (v.cause, v.root, v.caused_by) == ("peer-failure", False, "w-0")


def test_application_error_in_the_fallout_of_hardware_is_collateral():
    pods, events = job(2)
    events += [
        ev(Kind.GPU_XID, at(30), node="n0", gpu="3", xid=79),
        exited("w-0", "n0", at(30, 10), 1),
        ev(Kind.APP_EXCEPTION, at(33), "w-1", "n1", source="logs", exception="ConnectionResetError"),
        exited("w-1", "n1", at(33, 5), 1),
    ]
    result = run(pods, events)
    v = verdict(result, "w-1")
    assert (v.cause, v.root, v.caused_by) == ("peer-failure", False, "w-0")


def test_two_independent_hardware_failures_are_both_roots_the_earliest_answers():
    pods, events = job(2)
    events += [
        ev(Kind.GPU_XID, at(30), node="n0", gpu="3", xid=79),
        exited("w-0", "n0", at(30, 10), 1),
        ev(Kind.GPU_XID, at(50), node="n1", gpu="1", xid=48),
        exited("w-1", "n1", at(50, 10), 1),
    ]
    result = run(pods, events)
    assert verdict(result, "w-0").root is True and verdict(result, "w-1").root is True
    assert result.root_cause is not None and result.root_cause.pod == "w-0"


def test_unschedulable_pods_are_each_roots():
    pods = [pod(f"w-{i}", None, phase="Pending", started=None) for i in range(3)]
    events = [ev(Kind.FAILED_SCHEDULING, at(10), f"w-{i}", message="0/4 nodes are available") for i in range(3)]
    result = run(pods, events)
    assert [v.root for v in result.verdicts] == [True, True, True]
    assert result.lost_work is None


def test_a_pod_that_died_before_the_root_is_not_its_collateral():
    pods, events = job(2)
    events += [
        ev(Kind.NCCL_TIMEOUT, at(20), "w-1", "n1", source="logs"),
        exited("w-1", "n1", at(20, 5), 134),
        ev(Kind.GPU_XID, at(60), node="n0", gpu="0", xid=79),
        exited("w-0", "n0", at(60, 5), 1),
    ]
    v = verdict(run(pods, events), "w-1")
    assert v.root is None and v.caused_by is None


def test_lost_work_from_the_last_checkpoint():
    pods, events = job(2, gpus=8)
    events += [
        ev(Kind.CHECKPOINT_SAVED, at(20), "w-0", "n0", source="logs", step=1000),
        ev(Kind.CHECKPOINT_SAVED, at(50), "w-0", "n0", source="logs", step=2000),
        ev(Kind.GPU_XID, at(80), node="n1", gpu="2", xid=79),
        exited("w-1", "n1", at(80, 10), 1),
        ev(Kind.NCCL_TIMEOUT, at(110), "w-0", "n0", source="logs"),
        exited("w-0", "n0", at(110, 5), 134),
    ]
    lost = run(pods, events).lost_work
    assert lost is not None and lost.basis == "checkpoint"
    assert lost.since == at(50) and lost.until == at(80)
    # 16 GPUs roll back 30 minutes, and w-0's 8 sat hung until its watchdog fired and it exited 30m05s later
    hung = round(8 * (30 + 5 / 60) / 60, 2)
    assert lost.collateral_gpu_hours == hung and lost.gpu_hours == round(16 * 0.5 + hung, 2)
    assert lost.checkpoint_step == 2000


def test_lost_work_from_the_job_start_without_checkpoints():
    pods, events = job(1, gpus=4)
    events += [ev(Kind.CUDA_OOM, at(62), "w-0", "n0", source="logs"), exited("w-0", "n0", at(62, 25), 1)]
    lost = run(pods, events).lost_work
    assert lost is not None and lost.basis == "job start"
    assert (lost.since, lost.until) == (START, at(62))
    assert lost.gpu_hours == 4.0


def _reach(code: str) -> str:
    """Build the smallest incident that should end in ``code`` and return what the correlator said."""
    name, node = "w-0", "n0"
    info, starts = ran(name, node)
    die = exited(name, node, at(60, 30), 1)
    kill = ev(Kind.KILLING, at(60), name, node)
    cases = {
        "host-maintenance": [ev(Kind.MAINTENANCE_NOTICE, at(50), node=node), kill, die],
        "spot-preemption": [ev(Kind.SPOT_INTERRUPTION, at(59), node=node), kill, die],
        "node-failure": [ev(Kind.NODE_NOT_READY, at(55), node=node), ev(Kind.TAINT_EVICTION, at(60), name, node), die],
        "node-pressure-eviction": [ev(Kind.EVICTED, at(60), name, node), die],
        "gpu-fallen-off-bus": [ev(Kind.GPU_XID, at(60), node=node, xid=79), die],
        "gpu-memory-error": [ev(Kind.GPU_ECC_DBE, at(60), node=node, gpu="1"), die],
        "gpu-hardware-error": [ev(Kind.GPU_XID, at(60), node=node, xid=62), die],
        "nvlink-error": [ev(Kind.NVLINK_ERROR, at(60), node=node, gpu="1"), die],
        "gpu-thermal": [ev(Kind.GPU_THERMAL, at(58), node=node, gpu="1"), die],
        "network-error": [ev(Kind.NETWORK_ERROR, at(58), node=node), die],
        "nccl-timeout": [ev(Kind.NCCL_TIMEOUT, at(60), name, node), die],
        "nccl-error": [ev(Kind.NCCL_ERROR, at(60), name, node), die],
        "peer-failure": [ev(Kind.LAUNCHER_TEARDOWN, at(60), name, node), die],
        "scheduler-preemption": [ev(Kind.PREEMPTED, at(60), name, node), die],
        "oom-killed": [exited(name, node, at(60, 30), 137, "OOMKilled")],
        "cuda-oom": [ev(Kind.CUDA_OOM, at(60), name, node), die],
        "application-error": [ev(Kind.APP_EXCEPTION, at(60), name, node, exception="ValueError"), die],
        "config-error": [exited(name, node, at(60, 30), 128, "ContainerCannotRun")],
        "liveness-probe": [ev(Kind.PROBE_FAILED, at(59), name, node, probe="liveness"), die],
        "deadline-exceeded": [ev(Kind.DEADLINE_EXCEEDED, at(60), name, node), die],
        "deleted": [kill, exited(name, node, at(60, 30), 143)],
        "completed": [exited(name, node, at(60, 30), 0, "Completed")],
        "unknown": [die],
    }
    if code == "unschedulable":
        waiting = pod(name, None, phase="Pending", started=None)
        return verdict(run([waiting], [ev(Kind.FAILED_SCHEDULING, at(5), name)]), name).cause
    return verdict(run([info], [*starts, *cases[code]]), name).cause


def test_every_contract_cause_code_is_reachable():
    reached = {code: _reach(code) for code in CAUSES}
    assert reached == {code: code for code in CAUSES}


def test_verdict_category_and_retryable_come_from_the_cause_table():
    pods, events = job(2)
    events += [ev(Kind.GPU_XID, at(30), node="n0", xid=79), exited("w-0", "n0", at(30, 5), 1)]
    events += [ev(Kind.NCCL_TIMEOUT, at(60), "w-1", "n1"), exited("w-1", "n1", at(60, 5), 134)]
    for v in run(pods, events).verdicts:
        assert (v.category, v.retryable) == (CAUSES[v.cause].category, CAUSES[v.cause].retryable)


def test_a_rank_that_died_silently_long_before_the_others_timed_out_is_the_root():
    pods, events = job(3)
    events += [exited("w-2", "n2", at(20), 137)]  # gone with no word; the collective hangs
    for i in (0, 1):
        events += [
            ev(Kind.NCCL_TIMEOUT, at(50), f"w-{i}", f"n{i}", source="logs", timeout_ms=1800000),
            exited(f"w-{i}", f"n{i}", at(50, 5), 134),
        ]
    result = run(pods, events)
    assert result.root_cause is not None and result.root_cause.pod == "w-2"
    assert {verdict(result, p).caused_by for p in ("w-0", "w-1")} == {"w-2"}


def test_a_rank_that_ended_with_the_timeouts_decides_nothing():
    pods, events = job(3)
    events += [exited("w-2", "n2", at(50, 20), 137)]
    for i in (0, 1):
        events += [
            ev(Kind.NCCL_TIMEOUT, at(50), f"w-{i}", f"n{i}", source="logs"),
            exited(f"w-{i}", f"n{i}", at(50, 5), 134),
        ]
    result = run(pods, events)
    assert result.root_cause is None and all(v.root is None for v in result.verdicts)


def test_nothing_found_is_nothing_failed():
    result = run([], [])
    assert (result.verdicts, result.root_cause, result.chain, result.lost_work) == ((), None, (), None)
    assert result.next_step == "nothing failed in this window"


def test_attributes_in_unexpected_shapes_do_not_break_the_rules():
    pods, events = job(1)
    events += [
        ev(Kind.GPU_XID, at(30), node="n0", xid="79"),  # a string, as a log parser may leave it
        ev(Kind.MAINTENANCE_NOTICE, at(10), node="n0", not_before="07:16"),  # not a datetime
        exited("w-0", "n0", at(30, 5), 1),
    ]
    assert verdict(run(pods, events), "w-0").cause == "gpu-fallen-off-bus"
