"""The facts a verdict carries, each read from text as the libraries print it: ranks, traceback frames, CUDA OOM
memory figures, PCI addresses and GPU identity, checkpoints, training time, and through the correlator."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from whathappened.collectors.logs.parse import match_line

from tests.correlate.builders import NS, START, at, ev, exited, ran, run, verdict
from whathappened.correlate.facts_run import describe_gpu, global_rank, last_checkpoint
from whathappened.correlate.facts_text import frames_in, global_rank_in, oom_figures, pci_key, pci_text, world_size_in
from whathappened.kinds import Kind, severity_of
from whathappened.model import PodInfo, Subject, TimelineEvent

GiB, MiB = 2**30, 2**20


def logged(text: str, when: Any, pod: str | None = None, node: str | None = None) -> TimelineEvent:
    """A log line as the log collector turns it into an event: its signature's kind and attributes, the line."""
    found = match_line(text)
    assert found is not None and found.signature.kind is not None, text
    kind = Kind(found.signature.kind)
    return TimelineEvent(
        at=when,
        source="logs",
        kind=str(kind),
        severity=severity_of(kind),
        summary=text[:120],
        subject=Subject(namespace=NS if pod else None, pod=pod, node=node),
        attrs=dict(found.attrs),
        raw={"line": text},
    )


def line(text: str, when: Any, pod: str, node: str) -> TimelineEvent:
    """An ordinary line kept as context (the last lines of a container that ended)."""
    return TimelineEvent(
        when,
        "logs",
        str(Kind.LOG_LINE),
        severity_of(Kind.LOG_LINE),
        text,
        Subject(NS, pod, None, node),
        {},
        {"line": text},
    )


# --- ranks --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rank"),
    [
        ("[rank11]:[E1120 06:41:16.001 ProcessGroupNCCL.cpp:1595] [PG 0 Rank 11] Process group watchdog thread", 11),
        ("[Rank 24] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE)", 24),
        ("[2024-05-02 10:00:00] RANK=5 LOCAL_RANK=1 WORLD_SIZE=16 MASTER_ADDR=job-master-0", 5),
        ("  rank      : 11 (local_rank: 3)", 11),
        ("LOCAL_RANK=3 GROUP_RANK=1", None),  # a local or node rank alone is no global rank
    ],
)
def test_global_rank_from_log_text(text: str, rank: int | None) -> None:
    assert global_rank_in(text) == rank


def test_world_size_from_the_process_group_line() -> None:
    assert world_size_in("[rank0]: Initializing process group: backend=nccl world_size=32") == 32
    assert world_size_in("WORLD_SIZE=16") == 16 and world_size_in("step=12000 loss=2.2") is None


def _pod(labels: dict[str, str], gpus: int = 8) -> PodInfo:
    return PodInfo(name="p", namespace=NS, node="n", labels=labels, gpus_requested=gpus)


@pytest.mark.parametrize(
    ("labels", "local", "rank"),
    [
        # a PyTorchJob: the master is node 0, worker i is node i+1 (the training operator's RANK)
        ({"training.kubeflow.org/replica-type": "worker", "training.kubeflow.org/replica-index": "0"}, 3, 11),
        ({"training.kubeflow.org/replica-type": "master", "training.kubeflow.org/replica-index": "0"}, 2, 2),
        # a JobSet's indexed Job
        ({"batch.kubernetes.io/job-completion-index": "3"}, 5, 29),
        ({"batch.kubernetes.io/job-completion-index": "3"}, None, None),  # 8 ranks on the node: which one?
        ({}, 3, None),
    ],
)
def test_global_rank_from_labels_and_the_local_rank(
    labels: dict[str, str], local: int | None, rank: int | None
) -> None:
    said = [] if local is None else [line(f"torchrun: local rank {local} failed with exit code 1", at(5), "p", "n")]
    assert global_rank(_pod(labels), said) == rank


def test_torchrun_failure_summary_names_the_failed_rank_over_earlier_lines() -> None:
    block = (
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
        "============================================================\n"
        "train.py FAILED\n"
        "------------------------------------------------------------\n"
        "Root Cause (first observed failure):\n"
        "[0]:\n"
        "  time      : 2026-11-20_06:41:21\n"
        "  host      : llama-70b-pretrain-r9-worker-0\n"
        "  rank      : 11 (local_rank: 3)\n"
        "  exitcode  : 1 (pid: 4003)\n"
    )
    own = [line("[rank8]: Initializing process group: backend=nccl world_size=24", at(5), "p", "n")]
    own.append(logged(block, at(40), "p", "n"))
    assert global_rank(_pod({}), own) == 11


# --- traceback frames ---------------------------------------------------------------------------------------

TRACEBACK = """[rank3]: Traceback (most recent call last):
[rank3]:   File "/workspace/train.py", line 412, in <module>
[rank3]:     main()
[rank3]:   File "/workspace/train.py", line 398, in main
[rank3]:     trainer.fit(model)
[rank3]:   File "/usr/lib/python3.10/site-packages/trainer.py", line 120, in fit
[rank3]:     loss = self.step(batch)
[rank3]:   File "/workspace/model/step.py", line 57, in step
[rank3]:     logits = self.model(batch["input_ids"])
[rank3]:   File "/workspace/model/layers.py", line 88, in forward
[rank3]:     h = self.norm(x) @ self.proj
[rank3]:   File "/workspace/model/layers.py", line 31, in norm
[rank3]:     return x / x.pow(2).mean(-1, keepdim=True).sqrt()
[rank3]: KeyError: 'input_ids'"""


def test_the_last_five_frames_with_their_code() -> None:
    frames = frames_in(TRACEBACK)
    assert [str(f) for f in frames] == [
        "/workspace/train.py:398: trainer.fit(model)",
        "/usr/lib/python3.10/site-packages/trainer.py:120: loss = self.step(batch)",
        '/workspace/model/step.py:57: logits = self.model(batch["input_ids"])',
        "/workspace/model/layers.py:88: h = self.norm(x) @ self.proj",
        "/workspace/model/layers.py:31: return x / x.pow(2).mean(-1, keepdim=True).sqrt()",
    ]
    assert frames[-1].function == "norm"


def test_frames_without_source_lines_and_no_traceback() -> None:
    text = 'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\nValueError: bad'
    assert [str(f) for f in frames_in(text)] == ["<string>:1"]
    assert frames_in("RuntimeError: CUDA error: unspecified launch failure") == ()


# --- CUDA OOM -----------------------------------------------------------------------------------------------

OOM_FRAGMENTED = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 764.00 MiB. GPU 0 has a total capacity of "
    "47.37 GiB of which 442.88 MiB is free. Process 3652628 has 46.93 GiB memory in use. Of the allocated memory "
    "42.40 GiB is allocated by PyTorch, and 3.24 GiB is reserved by PyTorch but unallocated. If reserved but "
    "unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."
)
OOM_FULL = (
    "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 19.68 GiB. GPU 2 has a total capacity "
    "of 79.15 GiB of which 11.88 GiB is free. Including non-PyTorch memory, this process has 67.26 GiB memory in "
    "use. Of the allocated memory 66.44 GiB is allocated by PyTorch, and 43.59 MiB is reserved by PyTorch but "
    "unallocated."
)
OOM_1X = (
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity; 9.45 GiB "
    "already allocated; 17.12 MiB free; 9.70 GiB reserved in total by PyTorch) If reserved memory is >> allocated "
    "memory try setting max_split_size_mb to avoid fragmentation."
)
OOM_21 = (  # torch 2.1 misspelt "capacity" and wrote "0 bytes"
    "OutOfMemoryError: CUDA out of memory. Tried to allocate 5.96 GiB. GPU 0 has a total capacty of 23.69 GiB of "
    "which 0 bytes is free. Of the allocated memory 17.88 GiB is allocated by PyTorch, and 0 bytes is reserved by "
    "PyTorch but unallocated."
)


def test_oom_fragmented_points_at_expandable_segments() -> None:
    oom = oom_figures(OOM_FRAGMENTED)
    assert oom is not None and oom.tried == 764 * MiB and oom.total == int(47.37 * GiB)
    assert oom.free == int(442.88 * MiB) and oom.allocated == int(42.40 * GiB)
    assert oom.reserved_unallocated == int(3.24 * GiB) and oom.fragmented is True
    assert "expandable_segments:True" in oom.advice()


def test_oom_with_tensors_filling_the_gpu_points_at_a_smaller_batch() -> None:
    oom = oom_figures(OOM_FULL)
    assert oom is not None and oom.fragmented is False and oom.tried == int(19.68 * GiB)
    assert "batch size" in oom.advice() and "expandable" not in oom.advice()


def test_oom_figures_of_pytorch_1x_and_21() -> None:
    old = oom_figures(OOM_1X)
    assert old is not None and old.total == int(10.76 * GiB) and old.free == int(17.12 * MiB)
    # 1.x gives the total reserved: the unused part is reserved minus allocated (250 MiB), more than the 20 asked
    assert old.reserved_unallocated == int(9.70 * GiB) - int(9.45 * GiB) and old.fragmented is True
    mid = oom_figures(OOM_21)
    assert mid is not None and mid.total == int(23.69 * GiB) and mid.free == 0 and mid.reserved_unallocated == 0
    assert mid.fragmented is False
    assert oom_figures("step=10 loss=2.0") is None


# --- GPU identity -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["0004:00:00", "PCI:0004:00:00", "00000004:00:00.0", "0004:00:00.0"])
def test_pci_spellings_are_one_address(spelling: str) -> None:
    assert pci_key(spelling) == (4, 0, 0) and pci_text((4, 0, 0)) == "0004:00:00"


def test_pci_of_nvidia_smi_and_nonsense() -> None:
    assert (
        pci_key("00000000:9B:00.0") == pci_key("0000:9b:00") and pci_key("GPU-1234") is None and pci_key(None) is None
    )


def test_gpu_index_pci_and_uuid_joined_across_kernel_and_dcgm() -> None:
    uuid = "GPU-061509d3-8016-d417-8e71-3372ff4d67fd"
    base, starts = ran("w-1", "n1")
    peer, peer_starts = ran("w-0", "n0")
    events = [*starts, *peer_starts]
    # the kernel names the GPU by its PCI address; the NVRM probe line (collected beside it) gave its UUID
    xid = logged(
        "NVRM: Xid (PCI:0004:00:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
        at(40),
        None,
        "n1",
    )
    events.append(replace(xid, attrs={**xid.attrs, "uuid": uuid}))
    # dcgm-exporter names it by index and UUID
    events.append(ev(Kind.GPU_MISSING, at(39, 50), "w-1", "n1", gpu="3", source="prometheus", uuid=uuid))
    events += [exited("w-1", "n1", at(40, 20), 1)]
    said = verdict(run([base, peer], events), "w-1").facts
    assert said["gpu_identity"] == {"index": "3", "uuid": uuid, "pci": "0004:00:00"}
    assert describe_gpu(said["gpu_identity"]) == f"GPU 3 (PCI 0004:00:00, {uuid})"


# --- checkpoints and training time --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "step"),
    [
        ("  successfully saved checkpoint from iteration    2000 to /checkpoints/llama-70b [ t 1/8, p 1/4 ]", 2000),
        (
            "[2024-03-01 10:00:00,000] [INFO] [engine.py:3488:_save_zero_checkpoint] [Torch] Checkpoint "
            "global_step1000 is ready now!",
            1000,
        ),
        ("[INFO|trainer.py:3305] 2024-05-02 10:01:02,123 >> Saving model checkpoint to /output/checkpoint-500", 500),
        (
            "Epoch 3, global step 1000: 'val_loss' reached 0.51234 (best 0.51234), saving model to "
            "'/ckpt/epoch=3-step=1000.ckpt' as top 1",
            1000,
        ),
    ],
)
def test_last_checkpoint_of_common_trainers(text: str, step: int) -> None:
    older = logged(
        "  successfully saved checkpoint from iteration    10 to /checkpoints/x [ t 1/8, p 1/4 ]", at(10), "p", "n"
    )
    saved = logged(text, at(30), "p", "n")
    after = logged(text, at(50), "p", "n")  # after the failure: not the one to restart from
    found = last_checkpoint([older, saved, after], at(40))
    assert found is not None and found["step"] == step and found["at"] == at(30)
    assert last_checkpoint([after], at(40)) is None


def test_verdict_facts_of_an_application_error() -> None:
    base, starts = ran("w-0", "n0")
    events = [
        *starts,
        logged(
            "[INFO|trainer.py:3305] 2024-05-02 10:01:02,123 >> Saving model checkpoint to /output/checkpoint-500",
            at(30),
            "w-0",
            "n0",
        ),
        logged(TRACEBACK, at(47), "w-0", "n0"),
        exited("w-0", "n0", at(47, 5), 1),
    ]
    result = run([base], events)
    said = verdict(result, "w-0").facts
    assert said["rank"] == 3  # the traceback's [rank3] prefix
    assert said["frames"][-1] == "/workspace/model/layers.py:31: return x / x.pow(2).mean(-1, keepdim=True).sqrt()"
    assert len(said["frames"]) == 5
    assert said["checkpoint"]["step"] == 500 and said["checkpoint"]["at"] == at(30)
    assert said["trained_s"] == (at(47) - START).total_seconds()  # from the pod's start to the error
    assert result.lost_work is not None and result.lost_work.checkpoint_step == 500


def test_verdict_facts_of_a_cuda_oom() -> None:
    base, starts = ran("w-0", "n0")
    events = [*starts, logged(OOM_FRAGMENTED, at(20), "w-0", "n0"), exited("w-0", "n0", at(20, 5), 1)]
    said = verdict(run([base], events), "w-0").facts
    assert said["oom"]["fragmented"] is True and "expandable_segments" in said["oom"]["advice"]
    assert "asked 764.00 MiB" in said["oom"]["text"] and "reserved unused 3.24 GiB" in said["oom"]["text"]


def test_a_long_scheduler_message_is_cut_between_words_with_an_ellipsis() -> None:
    from tests.correlate.builders import pod as pending_pod

    message = (
        "0/64 nodes are available: 8 node(s) had untolerated taint {nvidia.com/gpu: NoSchedule}, 56 Insufficient "
        "nvidia.com/gpu. preemption: 0/64 nodes are available: 56 No preemption victims found for incoming pod, "
        "8 Preemption is not helpful for scheduling."
    )
    waiting = pending_pod("w-0", None, phase="Pending", started=None)
    events = [
        ev(Kind.FAILED_SCHEDULING, at(m), "w-0", None, reason="FailedScheduling", message=message) for m in (5, 60)
    ]
    summary = verdict(run([waiting], events), "w-0").summary
    assert "…" in summary, summary
    kept = summary.split("…")[0].split()[-1]  # a whole word of the message (a plain cut left "0/64 no…")
    assert kept in message.split(), summary
