"""A rank's tail where a wrapper or a warning stands beside the real cause: Hydra reports whatever the program
raised (an NCCL error, a stop, the program's own error), and PyTorch warns "process group has NOT been destroyed"
as any rank's process exits, one that exited because a peer failed too. Each pod is alone in its incident, its log
the only evidence (the real-lines harness); the texts follow the producers' format strings."""

from __future__ import annotations

from pathlib import Path

import pytest
from whathappened.collectors.snapshot.folder import snapshot_collectors

from tests.real_lines import RealLine, write
from tests.support import load_scenario
from whathappened.explain import explain
from whathappened.model import Window
from whathappened.scope import Query

HYDRA = "Error executing job with overrides: ['trainer.devices=8', 'model=llama']"
HYDRA_HINT = "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."
NOT_DESTROYED = (
    "[rank0]:[W219 09:17:03.293812312 ProcessGroupNCCL.cpp:1168] Warning: WARNING: process group has NOT been destroyed"
    " before we destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group"
    " to ensure that any pending NCCL operations have finished in this process."
)
SIGTERMS = [
    f"W0219 09:17:03.837000 140066961602368 torch/distributed/elastic/multiprocessing/api.py:858] Sending process {pid}"
    " closing signal SIGTERM"
    for pid in (2448006, 2448007, 2448009)
]
PEER_GONE = (
    "[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317,"
    " remote process exited or there was a network error, NCCL version 2.21.5"
)


def cause(tmp_path: Path, *lines: str, split: bool = True) -> str:
    """The verdict on a pod whose log ends with ``lines``: one document each, or one document (a multiline rule's)."""
    line = RealLine("tail", "\n".join(lines), "container-log", None, "unknown", False, "https://example.invalid")
    folder = tmp_path / f"incident-{len(list(tmp_path.iterdir()))}"  # one per call
    scenario = load_scenario(write(line, folder, split=split))
    collectors, missing = snapshot_collectors(scenario.path)
    query = Query(scenario.experiment, scenario.namespace, Window(scenario.start, scenario.end))
    [verdict] = explain(collectors, query, not_configured=missing).verdicts
    return verdict.cause


@pytest.mark.parametrize(
    ("below", "expected"),
    [
        ([PEER_GONE], "nccl-error"),  # the exception Hydra wrapped decides
        (["[rank0]: KeyError: 'image'"], "application-error"),
        (["TypeError(\"instantiate_model() got an unexpected keyword argument 'model_type'\")"], "application-error"),
    ],
)
def test_hydras_report_is_read_after_the_exception_it_wraps(tmp_path: Path, below: list[str], expected: str) -> None:
    assert cause(tmp_path, HYDRA, *below, HYDRA_HINT) == expected


def test_a_rank_that_exited_by_itself_is_no_peers_victim(tmp_path: Path) -> None:
    assert cause(tmp_path, NOT_DESTROYED, *SIGTERMS) == "unknown"  # its own exit; what ended it is not said
    assert cause(tmp_path, *SIGTERMS) == "peer-failure"  # the teardown alone


def test_a_rank_that_exited_because_a_peer_failed_still_reads_as_the_reaction(tmp_path: Path) -> None:
    assert cause(tmp_path, PEER_GONE, NOT_DESTROYED, *SIGTERMS) == "nccl-error"
    store_gone = "[rank0]: torch.distributed.DistNetworkError: Connection reset by peer"
    assert cause(tmp_path, store_gone, NOT_DESTROYED, *SIGTERMS) in ("peer-failure", "nccl-error")


def test_a_teardown_beside_its_own_ranks_abort_names_no_peer(tmp_path: Path) -> None:
    """torchrun tearing its ranks down because one of its own aborted (SIGABRT: a C++ exception, glibc's checks, or
    the NCCL watchdog, whose own lines decide when they are there): no peer is named, so no peer's failure."""
    aborted = (
        "E0219 09:17:03.990000 140066961602368 torch/distributed/elastic/multiprocessing/api.py:874] failed"
        " (exitcode: -6) local_rank: 3 (pid: 2448008) of binary: /usr/bin/python3"
    )
    timed_out = (
        "[rank3]:[E219 09:16:59.113 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation timeout:"
        " WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600011 milliseconds"
        " before timing out."
    )
    assert cause(tmp_path, *SIGTERMS, aborted) == "unknown"
    assert cause(tmp_path, timed_out, *SIGTERMS, aborted) == "nccl-timeout"
    assert cause(tmp_path, *SIGTERMS) == "peer-failure"


BANNER = [
    "===================================================================================",
    "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
    "=   PID 4774 RUNNING AT node-3",
]


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (["=   EXIT CODE: 139"], "application-error"),  # SIGSEGV with a core dumped (the raw wait status, 128 | 11)
        (["=   EXIT CODE: 11"], "application-error"),  # SIGSEGV without one
        (["=   EXIT CODE: 9"], "peer-failure"),  # killed: the launcher's teardown of the others
        # MPICH 4 and Intel MPI name the signal
        (
            ["=   RANK 1 PID 27494 RUNNING AT node1", "=   KILLED BY SIGNAL: 11 (Segmentation fault)"],
            "application-error",
        ),
    ],
)
def test_hydras_banner_reads_a_crash_by_its_wait_status_or_signal(
    tmp_path: Path, status: list[str], expected: str
) -> None:
    """Hydra prints the banner only for a rank that did not exit by itself: its EXIT CODE is the raw wait status."""
    assert cause(tmp_path, *BANNER, *status, "=   CLEANING UP REMAINING PROCESSES") == expected


def test_hydras_exit_string_alone_names_no_ranks_crash(tmp_path: Path) -> None:
    """mpiexec ORs every rank's status into its exit string: SIGKILL | SIGINT prints "signal 11" too."""
    line = "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Segmentation fault (signal 11)"
    assert cause(tmp_path, line) == "unknown"


def test_mpich4s_banner_read_whole_keeps_its_signal(tmp_path: Path) -> None:
    """MPICH 4's and Intel MPI's banner names the rank and its signal: read as one document, as a shipper's multiline
    rule keeps it, the signal is the banner's."""
    banner = [
        "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
        "=   RANK 1 PID 27494 RUNNING AT node1",
        "=   KILLED BY SIGNAL: 11 (Segmentation fault)",
    ]
    assert cause(tmp_path, *banner, split=False) == "application-error"


def test_mpich4s_banner_per_rank_finds_the_crash_among_the_killed(tmp_path: Path) -> None:
    """MPICH 4 prints one banner per rank: the peers it killed in its clean-up (SIGKILL) and the rank that crashed,
    in whatever order; each banner is read."""
    banners = [
        "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
        "=   RANK 0 PID 27493 RUNNING AT node1",
        "=   KILLED BY SIGNAL: 9 (Killed)",
        "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
        "=   RANK 1 PID 27494 RUNNING AT node1",
        "=   KILLED BY SIGNAL: 11 (Segmentation fault)",
    ]
    assert cause(tmp_path, *banners, split=False) == "application-error"


def test_pyarrows_cancelled_operation_is_a_signals_not_the_programs(tmp_path: Path) -> None:
    """pyarrow raises ArrowCancelled when a SIGINT or SIGTERM reaches a long operation, as KeyboardInterrupt is."""
    assert cause(tmp_path, "pyarrow.lib.ArrowCancelled: Operation cancelled. Detail: received signal 2") == "unknown"
    assert cause(tmp_path, "pyarrow.lib.ArrowInvalid: JSON parse error: Column changed from number to string") == (
        "application-error"
    )
