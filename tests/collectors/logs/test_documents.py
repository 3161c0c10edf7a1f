"""A log document of several lines says what each of its pieces says (its lines, a Python traceback as one), as
the same lines one document each would; and the whole text's meaning where no piece says it."""

from __future__ import annotations

import pytest
from whathappened.collectors.logs.blocks import pieces
from whathappened.collectors.logs.parse import DOCUMENT_LINES, match_document, one_json_value

from whathappened.kinds import Kind

WATCHDOG = (
    "[rank3]:[E1120 06:51:21.000000000 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout:"
    " WorkNCCL(SeqNum=881, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600010 milliseconds"
    " before timing out."
)
TEARDOWN = "W1120 06:51:30.000000 4021 torch/distributed/elastic/multiprocessing/api.py:900] Sending process 4086 closing signal SIGTERM"
TRACEBACK = [
    "[rank0]: Traceback (most recent call last):",
    '[rank0]:   File "/workspace/train.py", line 310, in do_train',
    "[rank0]:     batch = next(loader)",
    "[rank0]: FileNotFoundError: [Errno 2] No such file or directory: '/data/shard-0041.tar'",
]


def kinds(text: str) -> list[Kind | None]:
    return [hit.signature.kind for _, hit, _ in match_document(text)]


def test_a_ranks_lines_in_one_document_each_say_their_own_in_order() -> None:
    found = match_document("\n".join([*TRACEBACK, TEARDOWN, TEARDOWN, TEARDOWN]))
    assert [(index, hit.signature.kind) for index, hit, _ in found] == [
        (3, Kind.APP_EXCEPTION),  # the traceback whole, at its exception line, with its frame
        (4, Kind.LAUNCHER_TEARDOWN),  # the SIGTERM to each worker once
    ]
    assert (found[0][1].attrs["file"], found[0][1].attrs["line"]) == ("/workspace/train.py", 310)


def test_a_document_opening_with_a_bracket_is_read_piece_by_piece() -> None:
    # torchrun's "[rank3]:" and glog's "[E1120" open most multi-line documents: not JSON
    assert kinds("\n".join([WATCHDOG, TEARDOWN])) == [Kind.NCCL_TIMEOUT, Kind.LAUNCHER_TEARDOWN]
    assert not one_json_value("\n".join([WATCHDOG, "[rank3]: done]"]))


def test_a_wrapped_line_is_read_whole_and_a_json_notice_only_whole() -> None:
    wrapped = "[Rank 14] Watchdog caught collective operation timeout: \nWorkNCCL(SeqNum=2070, OpType=REDUCE, Timeout(ms)=600000) ran for 600034 milliseconds before timing out."
    assert kinds(wrapped) == [Kind.NCCL_TIMEOUT]
    notice = '[\n  {\n    "Code" : "system-reboot",\n    "Description" : "[Canceled] scheduled reboot",\n    "State" : "canceled"\n  }\n]'
    assert one_json_value(notice)
    assert len(match_document(notice)) <= 1  # one thing said, whatever the table makes of it


def test_a_failure_record_keeps_what_its_later_lines_name() -> None:
    """torchrun's ChildFailedError header is a piece of its own, but the record's rank is on its later lines: the
    piece keeps the whole record's attributes."""
    record = "\n".join(
        [
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
            "============================================================",
            "train.py FAILED",
            "Root Cause (first observed failure):",
            "[0]:",
            "  time      : 2026-11-20_06:41:16",
            "  host      : llama-70b-pretrain-r9-worker-0",
            "  rank      : 11 (local_rank: 3)",
            "  exitcode  : 1 (pid: 4003)",
        ]
    )
    whole = match_document(record)
    assert any(hit.attrs.get("failed_rank") == 11 for _, hit, _ in whole)


def test_a_traceback_broken_into_or_cut_off_is_left_as_lines() -> None:
    lines = [TRACEBACK[0], TRACEBACK[1], "[rank1]: step 400", TRACEBACK[3]]
    assert [index for index, _ in pieces(lines)] == [0, 1, 2, 3]
    launcher = [
        "Traceback (most recent call last):",
        '  File "a.py", line 1, in <module>',
        "failed (exitcode: 1) local_rank: 0",
    ]
    assert [text for _, text in pieces(launcher)] == launcher
    assert [text for _, text in pieces(TRACEBACK[:3])] == TRACEBACK[:3]


def test_a_long_document_is_read_at_its_ends() -> None:
    middle = [f"step {i} loss 2.0" for i in range(3 * DOCUMENT_LINES)]
    found = match_document("\n".join([WATCHDOG, *middle, TEARDOWN]))
    assert [index for index, _, _ in found] == [0, 3 * DOCUMENT_LINES + 1]
    buried = ["step 1"] * (DOCUMENT_LINES + 5) + [WATCHDOG] + ["step 2"] * (DOCUMENT_LINES + 5)
    assert kinds("\n".join(buried)) == [Kind.NCCL_TIMEOUT]  # the whole text's match still says it


def test_an_exception_python_ignored_is_no_failure_wherever_its_traceback_is() -> None:
    """Python reports and ignores an exception raised in an exit handler or a finalizer: it tells no failure, and
    the whole text's traceback, which begins inside that piece, is not read again."""
    atexit = [
        "Additional GRPC error information from remote target unknown_target_for_coordination_leader:",
        "Error in atexit._run_exitfuncs:",
        "Traceback (most recent call last):",
        '  File "jax/_src/distributed.py", line 168, in shutdown',
        "    global_state.shutdown()",
        "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Deadline Exceeded",
    ]
    assert kinds("\n".join(atexit)) == [Kind.LOG_LINE]
    finalizer = ["[rank0]: Exception ignored in: <function Loader.__del__ at 0x7f3b>", *TRACEBACK[0:3]]
    oom = "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    assert kinds("\n".join([*finalizer, "[rank0]: OSError: [Errno 9] Bad file descriptor", oom])) == [
        Kind.LOG_LINE,
        Kind.CUDA_OOM,  # what the program then died of is read as ever
    ]


@pytest.mark.parametrize(
    "lead",
    [
        "Exception ignored in: <function Loader.__del__ at 0x7f3b>",
        "Exception ignored on calling ctypes callback function: <function cb at 0x7f3b>",  # 3.11+
        "Exception ignored while calling deallocator <function Loader.__del__ at 0x7f3b>:",  # 3.13+
    ],
)
def test_every_form_of_an_ignored_exception_is_read_with_its_traceback(lead: str) -> None:
    assert kinds("\n".join([lead, *(line.removeprefix("[rank0]: ") for line in TRACEBACK)])) == [Kind.LOG_LINE]


def test_two_xids_of_one_gpu_in_one_document_are_both_read() -> None:
    # the driver's Xid 38 (nothing to do) then its Xid 109 (reset the GPU): the second is no repeat of the first
    text = (
        "NVRM: Xid (PCI:0000:07:00): 38, pid=326, name=modprobe, channel 0x00000003 0000c597 00000000 00000000\n"
        "NVRM: Xid (PCI:0000:07:00): 109, pid=326, name=modprobe, channel 0x00000007, errorString CTX SWITCH TIMEOUT"
    )
    assert [hit.attrs["xid"] for _, hit, _ in match_document(text)] == [38, 109]
    assert [hit.attrs["xid"] for _, hit, _ in match_document(text.split("\n")[0] + "\n" + text.split("\n")[0])] == [38]


def test_an_exception_python_chained_to_a_later_one_is_not_the_programs_last() -> None:
    """Python's words between two chained exceptions: the later one ended the program, and a log that stops at
    the words has not said what did; what the earlier one names by its own signature (an out-of-memory) still
    counts."""
    chained = [
        *TRACEBACK,
        "[rank0]: ",
        "[rank0]: During handling of the above exception, another exception occurred:",
        "[rank0]: ",
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/workspace/train.py", line 312, in do_train',
        "[rank0]:     raise RuntimeError('no data')",
        "[rank0]: RuntimeError: no data",
    ]
    assert kinds("\n".join(chained)) == [Kind.LOG_LINE, Kind.APP_EXCEPTION]
    assert [index for index, _ in pieces(chained)] == [5, 6, 10]
    assert kinds("\n".join(chained[:6])) == [Kind.LOG_LINE]  # the log stops at the words
    cut = ["raise ChunkFullError", "colossalai.gemini.chunk.chunk.ChunkFullError", ""]
    assert kinds("\n".join([*cut, "The above exception was the direct cause of the following exception:"])) == [
        Kind.LOG_LINE
    ]
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    assert kinds(f"{oom}\n\nDuring handling of the above exception, another exception occurred:") == [Kind.CUDA_OOM]


THREAD_CHAIN = [
    "Exception in thread Thread-1:",
    "Traceback (most recent call last):",
    '  File "/workspace/feeder.py", line 3, in run',
    "    item = queue.get(timeout=1)",
    "_queue.Empty",
    "",
    "During handling of the above exception, another exception occurred:",
    "",
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3.11/threading.py", line 1045, in _bootstrap_inner',
    "    self.run()",
    "RuntimeError: feeder starved",
]


def test_a_threads_chained_exceptions_are_all_the_threads() -> None:
    """threading prints its header once, before the first traceback of the thread's chain: the last exception of
    the chain is the thread's too, not the program's; a traceback after the chain is the program's again."""
    program = ["step 100 loss 2.31", *TRACEBACK]
    hits = match_document("\n".join([*THREAD_CHAIN, *program]))
    # (the thread's second piece is a repeat of its first, counted once)
    assert [(index, hit.signature.name) for index, hit, _ in hits] == [
        (6, "python-thread-exception"),
        (16, "python-traceback"),
    ]
    assert [piece.split("\n")[0] for _, piece in pieces(THREAD_CHAIN)] == [THREAD_CHAIN[0], "", THREAD_CHAIN[0]]


def test_a_threads_error_of_the_gpu_its_memory_or_nccl_is_read_by_its_own_signature() -> None:
    """An illegal address is sticky (the process's context is dead, not the thread's alone), and a thread's OOM or
    NCCL error is what stopped the program's work: not a thread's ending the program went on from."""
    header = ["Exception in thread MemMon:", TRACEBACK[0].removeprefix("[rank0]: ")]
    frame = '  File "/usr/lib/python3.11/threading.py", line 1045, in _bootstrap_inner'
    cases = {
        "RuntimeError: CUDA error: misaligned address": Kind.CUDA_ERROR,
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB": Kind.CUDA_OOM,
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184"
        " bytes.": Kind.CUDA_OOM,
        "KeyError: 'health'": Kind.LOG_LINE,
    }
    for last, kind in cases.items():
        assert kinds("\n".join([*header, frame, last])) == [kind], last


def test_an_exception_named_as_the_direct_cause_is_read_with_the_one_it_caused() -> None:
    """'raise ... from e': the later exception may only relay its cause (DataLoader's "exited unexpectedly" over a
    worker killed from outside), so the cause's line is read with it; Python's other chaining ("During handling")
    names no cause."""
    killed = "RuntimeError: DataLoader worker (pid 1082) is killed by signal: Killed. "
    relay = [
        "Traceback (most recent call last):",
        '  File "/workspace/train.py", line 201, in <module>',
        "    for batch in loader:",
        "RuntimeError: DataLoader worker (pid(s) 1082) exited unexpectedly",
    ]
    direct = "The above exception was the direct cause of the following exception:"
    during = "During handling of the above exception, another exception occurred:"
    (_, last, _) = match_document("\n".join([killed, "", direct, "", *relay]))[-1]
    assert last.attrs["caused_by"] == killed.strip() and last.attrs["exception"] == "RuntimeError"
    (_, last, _) = match_document("\n".join([killed, "", during, "", *relay]))[-1]
    assert "caused_by" not in last.attrs
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    assert kinds("\n".join([oom, "", direct, "", *relay])) == [Kind.CUDA_OOM]  # the relay read as the OOM it relays


def test_another_ranks_traceback_between_an_exception_and_its_chaining_words_is_its_own() -> None:
    """Ranks print at once: rank 1's traceback may come between rank 0's exception and rank 0's "During handling"
    words. The words chain rank 0's own exception (its tag), and rank 1's is read on its own, not joined to them."""
    lines = [
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/w/train.py", line 3, in step',
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "[rank1]: Traceback (most recent call last):",
        '[rank1]:   File "/w/train.py", line 9, in step',
        "[rank1]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error",
        "[rank0]: ",
        "[rank0]: During handling of the above exception, another exception occurred:",
        "[rank0]: ",
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/w/train.py", line 5, in main',
        "[rank0]: RuntimeError: step failed",
    ]
    found = list(pieces(lines))
    assert [index for index, _ in found] == [5, 7, 8, 11]
    assert "NCCL error" in found[0][1] and "During handling" not in found[0][1]
    assert "CUDA out of memory" in found[1][1] and "NCCL error" not in found[1][1]
    assert [hit.signature.kind for _, hit, _ in match_document("\n".join(lines))] == [
        Kind.NCCL_ERROR,
        Kind.CUDA_OOM,
        Kind.APP_EXCEPTION,
    ]


def test_a_threads_header_is_carried_to_its_own_chained_traceback_only() -> None:
    """The main program's traceback right after a thread's chain (blank lines between, as Python prints them) is
    the program's: threading's header goes with the traceback after the chaining words, not the next one."""
    main = [
        "",
        "Traceback (most recent call last):",
        '  File "/workspace/train.py", line 412, in <module>',
        "ValueError: expected sequence of length 4096 at dim 1 (got 4095)",
    ]
    hits = match_document("\n".join([*THREAD_CHAIN, *main]))
    assert [hit.signature.kind for _, hit, _ in hits] == [Kind.LOG_LINE, Kind.APP_EXCEPTION]


def test_a_thread_whose_exception_only_names_cuda_is_still_a_threads() -> None:
    """The GPU's, memory's and NCCL's words on the exception's own lines, not a frame's code or a key's name."""
    thread = [
        "Exception in thread monitor:",
        "Traceback (most recent call last):",
        '  File "/workspace/monitor.py", line 12, in run',
        '    gpus = os.environ["CUDA_VISIBLE_DEVICES"]',
        "KeyError: 'CUDA_VISIBLE_DEVICES'",
    ]
    assert kinds("\n".join(thread)) == [Kind.LOG_LINE]


def test_a_direct_cause_under_torchruns_rank_prefix_is_carried_too() -> None:
    """torchrun's "[rank0]: " on every line, its blank lines too: they are blanks still."""
    lines = [
        "[rank0]: RuntimeError: DataLoader worker (pid 1082) is killed by signal: Killed. ",
        "[rank0]: ",
        "[rank0]: The above exception was the direct cause of the following exception:",
        "[rank0]: ",
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/workspace/train.py", line 201, in <module>',
        "[rank0]: RuntimeError: DataLoader worker (pid(s) 1082) exited unexpectedly",
    ]
    (_, last, _) = match_document("\n".join(lines))[-1]
    assert last.attrs["caused_by"] == "RuntimeError: DataLoader worker (pid 1082) is killed by signal: Killed."


def test_a_full_width_bracket_before_an_exception_is_a_timestamps_only() -> None:
    """A log viewer's "【2023-07-09 22:14:41】" before an exception line is a prefix; a level in the same brackets says
    the line is a log's, which goes on."""
    assert kinds("【2023-07-09 22:14:41】RuntimeError: element 0 of tensors does not require grad") == [
        Kind.APP_EXCEPTION
    ]
    assert kinds("【WARNING】ConnectionError: Read timed out. Retrying in 1s [Retry 1/5].") == []
