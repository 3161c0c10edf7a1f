"""Experiments that ran more than once under the same name (issue 17): each attempt with its own pods."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

from synth import messages as msg
from synth.common import (
    lifecycle_events,
    nccl_error_collateral,
    rank_crash,
    restart,
    torchrun_teardown,
    training_chatter,
    without_gpus,
    xid,
)
from synth.frameworks import make_pods
from synth.ids import Ids
from synth.spec import Node, Pod, Recording
from synth.story import Setup, begin, day, expect

RESTART_LABEL = "jobset.sigs.k8s.io/restart-attempt"


def _gpu_lost(
    rec: Recording, node: Node, bad: Pod, others: list[Pod], at: datetime, gpu: int, crash_after: int, nccl_after: int
) -> None:
    """Xid 79 on the node's GPU: its rank dies of the lost GPU a few seconds later, the other ranks on NCCL errors."""
    xid(rec, node, gpu, at, 79, "GPU has fallen off the bus.", None)
    rank_crash(rec, bad, at + timedelta(seconds=crash_after), gpu, [msg.cuda_error("unspecified launch failure")])
    nccl_error_collateral(rec, others, at + timedelta(seconds=nccl_after), bad.rank0 + gpu)


def _created_again(
    rec: Recording,
    ids: Ids,
    s: Setup,
    nodes: list[Node],
    first: list[Pod],
    deleted: datetime,
    after: int,
    adjust: Callable[[Pod], None],
) -> list[Pod]:
    """Every pod of the attempt deleted at ``deleted`` and the next attempt's created ``after`` seconds later, by the
    framework's own names (a JobSet's new child Jobs; a Volcano job's RestartJob: the same names, new uids)."""
    for pod in first:
        pod.deletion_at, pod.gone_at = deleted, deleted + timedelta(seconds=5)
    second = make_pods(
        Ids(ids.seed + 1),
        s.framework,
        s.experiment,
        s.namespace,
        nodes,
        created=deleted + timedelta(seconds=after),
        label_key=s.label_key,
    )
    for pod in second:
        adjust(pod)
    rec.pods.extend(second)
    lifecycle_events(rec, second)
    return second


def jobset_restarted(ids: Ids) -> Recording:
    """A JobSet restarted after a GPU fault, then failed again on the same node: two attempts, the same node in
    both root causes."""
    s = Setup(
        "jobset-restarted",
        "Attempt 1: Xid 79 on GPU 5 of one node, its rank dies and the others fail on NCCL; the JobSet restarts "
        "every child Job. Attempt 2: a double-bit ECC error (Xid 48) on GPU 3 of the same node 50 minutes later.",
        "qwen-32b-sft-r3",
        "posttrain",
        "jobset.sigs.k8s.io/jobset-name",
        "jobset",
        "gke-a3",
        "a3-highgpu",
        "post-gke",
        day(11, 21, 8),
        3,
        hours=3.0,
    )
    rec, nodes, first = begin(ids, s)
    node = nodes[1]
    t1 = day(11, 21, 8, 41) + timedelta(seconds=21)
    training_chatter(rec, ids, first, t1, ckpt_path="/gcs/ckpt/qwen-32b-sft-r3")
    bad1 = first[1]
    others1 = [first[0], first[2]]
    _gpu_lost(rec, node, bad1, others1, t1, 5, crash_after=3, nccl_after=13)

    def next_attempt(pod: Pod) -> None:
        pod.labels = {**pod.labels, RESTART_LABEL: "1"}
        without_gpus(pod, {5} if pod.node is node else ())

    # JobSet's failure policy deletes every child Job and creates them anew with the next restart-attempt
    second = _created_again(rec, ids, s, nodes, first, t1 + timedelta(seconds=40), 6, next_attempt)
    t2 = t1 + timedelta(minutes=50, seconds=9)
    training_chatter(rec, ids, second, t2, ckpt_path="/gcs/ckpt/qwen-32b-sft-r3")
    xid(rec, node, 3, t2, 48, "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer "
        "at partition 1, subpartition 0.", 30211, first=False)  # fmt: skip
    bad2 = second[1]
    rank_crash(rec, bad2, t2 + timedelta(seconds=2), 3, [msg.cuda_error("uncorrectable ECC error encountered")])
    others2 = [second[0], second[2]]
    nccl_error_collateral(rec, others2, t2 + timedelta(seconds=14), bad2.rank0 + 3)
    rec.meta = replace(rec.meta, captured_at=rec.meta.end)
    return expect(
        rec,
        (bad1, "gpu-fallen-off-bus", True, None),
        *((p, "nccl-error", False, bad1) for p in others1),
        (bad2, "gpu-memory-error", True, None),
        *((p, "nccl-error", False, bad2) for p in others2),
    )


def volcano_restarted(ids: Ids) -> Recording:
    """A Volcano job whose policy restarts it when a pod fails (``PodFailed: RestartJob``): after a GPU fault the
    controller deletes every pod and creates them again under the same names (new uids, the next job version);
    the second run is still training when the window ends."""
    s = Setup(
        "volcano-restarted",
        "Attempt 1: Xid 79 on GPU 2 of one node, its rank dies and the others fail on NCCL; Volcano's RestartJob "
        "deletes every pod and creates them again under the same names. Attempt 2 trains on to the window's end.",
        "mixtral-8x22b-cpt",
        "research",
        "volcano.sh/job-name",
        "volcano",
        "eks-p5",
        "p5-ondemand",
        "cpt-eks",
        day(11, 24, 2),
        3,
        hours=2.0,
    )
    rec, nodes, first = begin(ids, s)
    node = nodes[2]
    t1 = day(11, 24, 2, 37) + timedelta(seconds=12)
    training_chatter(rec, ids, first, t1, ckpt_path="/fsx/ckpt/mixtral-8x22b-cpt")
    bad = first[2]
    others = [first[0], first[1]]
    _gpu_lost(rec, node, bad, others, t1, 2, crash_after=4, nccl_after=15)

    def next_version(pod: Pod) -> None:
        pod.labels = {**pod.labels, "volcano.sh/job-retry-count": "1"}

    second = _created_again(rec, ids, s, nodes, first, t1 + timedelta(seconds=45), 8, next_version)
    training_chatter(rec, ids, second, rec.meta.end - timedelta(minutes=2), ckpt_path="/fsx/ckpt/mixtral-8x22b-cpt")
    rec.meta = replace(rec.meta, captured_at=rec.meta.end)
    return expect(
        rec,
        (bad, "gpu-fallen-off-bus", True, None),
        *((p, "nccl-error", False, bad) for p in others),
    )


def job_retried(ids: Ids) -> Recording:
    """An indexed Job whose pods all failed after a GPU fault; the Job controller replaced each failed pod (its
    backoffLimit: same Job, same completion indexes, new pods), and the replacements failed on a CUDA OOM."""
    s = Setup(
        "job-retried",
        "Attempt 1: Xid 48 on GPU 2 of one node, its rank dies and the others fail on NCCL; the indexed Job "
        "replaces every failed pod. Attempt 2: rank 0 runs out of GPU memory and torchrun tears the others down.",
        "sam2-hiera-l-ft-v4",
        "vision",
        "experiment",
        "indexed-job",
        "eks-p5",
        "p5-48xl",
        "vision-eks",
        day(11, 22, 13),
        3,
        hours=2.5,
    )
    rec, nodes, first = begin(ids, s)
    t1 = day(11, 22, 13, 38) + timedelta(seconds=12)
    training_chatter(rec, ids, first, t1, ckpt_path="/fsx/ckpt/sam2-hiera-l-ft-v4")
    xid(rec, nodes[2], 2, t1, 48, "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer "
        "at partition 3, subpartition 1.", 40417)  # fmt: skip
    bad1 = first[2]
    rank_crash(rec, bad1, t1 + timedelta(seconds=2), 2, [msg.cuda_error("uncorrectable ECC error encountered")])
    others1 = first[:2]
    nccl_error_collateral(rec, others1, t1 + timedelta(seconds=15), bad1.rank0 + 2)
    # the Job controller creates a replacement for each failed pod: same Job and index, a new pod name
    replaced = max(p.finished for p in first if p.finished is not None) + timedelta(seconds=11)
    second = make_pods(
        Ids(ids.seed + 1), s.framework, s.experiment, s.namespace, nodes, created=replaced, label_key=s.label_key
    )
    for old, new in zip(first, second, strict=True):
        new.owner, new.labels = old.owner, dict(old.labels)
    rec.pods.extend(second)
    lifecycle_events(rec, second)
    t2 = replaced + timedelta(minutes=41, seconds=37)
    training_chatter(rec, ids, second, t2 - timedelta(minutes=1), ckpt_path="/fsx/ckpt/sam2-hiera-l-ft-v4")
    oom = msg.traceback(
        [("/workspace/sam2/training/trainer.py", 512, "run_step", "loss = self._step(batch, self.model, phase)")],
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.25 GiB. GPU 0 has a total capacity of 79.11 GiB "
        "of which 3.02 GiB is free.",
    )
    bad2 = second[0]
    rank_crash(rec, bad2, t2, 0, [oom])
    others2 = second[1:]
    torchrun_teardown(rec, others2, t2 + timedelta(seconds=9))
    rec.meta = replace(rec.meta, captured_at=rec.meta.end)
    return expect(
        rec,
        (bad1, "gpu-memory-error", True, None),
        *((p, "nccl-error", False, bad1) for p in others1),
        (bad2, "cuda-oom", True, None),
        *((p, "peer-failure", False, bad2) for p in others2),
    )


def _restarted_in_place(pods: list[Pod], backoff: timedelta) -> None:
    """Each pod's ended container becomes an earlier run: the kubelet starts it again after ``backoff``
    (restartPolicy OnFailure), the pod stays and counts a restart."""
    for pod in pods:
        assert pod.started is not None and pod.finished is not None and pod.exit_code is not None
        restart(pod, pod.started, pod.finished, pod.exit_code, pod.term_reason or "Error")
        pod.started = pod.finished + backoff
        pod.finished = pod.exit_code = pod.term_reason = pod.final_phase = None
        pod.ready = True


def restarted_in_place(ids: Ids) -> Recording:
    """A PyTorchJob with restartPolicy OnFailure: after a GPU fault its containers restart in place (the same
    pods), train again, and the second run dies of an application error."""
    s = Setup(
        "restarted-in-place",
        "Attempt 1: Xid 48 on GPU 4 of one node, its rank dies and the others fail on NCCL; every container is "
        "restarted in place. Attempt 2: rank 0 raises a KeyError in the data loader and torchrun tears the others "
        "down.",
        "llava-next-34b-sft",
        "multimodal",
        "training.kubeflow.org/job-name",
        "pytorchjob",
        "aks-h100",
        "h100pool",
        "mm-aks",
        day(11, 23, 9),
        3,
        hours=2.5,
    )
    rec, nodes, pods = begin(ids, s)
    for pod in pods:
        pod.restart_policy = "OnFailure"
    t1 = day(11, 23, 9, 31) + timedelta(seconds=44)
    training_chatter(rec, ids, pods, t1, ckpt_path="/mnt/azureblob/llava-next-34b-sft")
    xid(rec, nodes[1], 4, t1, 48, "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer "
        "at partition 2, subpartition 0.", 51207)  # fmt: skip
    bad1 = pods[1]
    rank_crash(rec, bad1, t1 + timedelta(seconds=2), 4, [msg.cuda_error("uncorrectable ECC error encountered")])
    others1 = [pods[0], pods[2]]
    nccl_error_collateral(rec, others1, t1 + timedelta(seconds=16), bad1.rank0 + 4)
    _restarted_in_place(pods, timedelta(seconds=10))
    t2 = day(11, 23, 10, 27) + timedelta(seconds=3)
    error = msg.traceback(
        [
            ("/workspace/llava/train/dataset.py", 218, "__getitem__", "image_file = self.list_data_dict[i]['image']"),
        ],
        "KeyError: 'image'",
    )
    training_chatter(rec, ids, pods, t2 - timedelta(minutes=1), ckpt_path="/mnt/azureblob/llava-next-34b-sft")
    bad2 = pods[0]
    rank_crash(rec, bad2, t2, 0, [error])
    others2 = [pods[1], pods[2]]
    torchrun_teardown(rec, others2, t2 + timedelta(seconds=9))
    rec.meta = replace(rec.meta, captured_at=rec.meta.end)
    return expect(
        rec,
        (bad2, "application-error", True, None),
        *((p, "peer-failure", False, bad2) for p in others2),
    )


def resubmitted_renamed(ids: Ids) -> Recording:
    """A PyTorchJob that failed after a GPU fault, resubmitted by its launcher under a new name (``-r1``, the same
    experiment label, a new owner), which the scheduler put back on the same nodes; the failed pods stay in the
    API. The second run dies of a CUDA OOM on rank 1 and torchrun tears the others down."""
    s = Setup(
        "resubmitted-renamed",
        "Attempt 1: Xid 79 on GPU 6 of one node, its rank dies and the others fail on NCCL; the PyTorchJob fails. "
        "Attempt 2: the launcher resubmits it as another PyTorchJob (the name ending -r1, the same experiment "
        "label); rank 1 runs out of GPU memory and torchrun tears the others down.",
        "olmo2-13b-midtrain",
        "research",
        "experiment",
        "pytorchjob",
        "gke-a3",
        "a3-mega",
        "mid-gke",
        day(11, 25, 14),
        3,
        hours=2.5,
    )
    rec, nodes, first = begin(ids, s)
    node = nodes[2]
    t1 = day(11, 25, 14, 44) + timedelta(seconds=31)
    training_chatter(rec, ids, first, t1, ckpt_path="/gcs/ckpt/olmo2-13b-midtrain")
    bad1 = first[2]
    others1 = first[:2]
    _gpu_lost(rec, node, bad1, others1, t1, 6, crash_after=5, nccl_after=17)
    resubmitted = max(p.finished for p in first if p.finished is not None) + timedelta(minutes=12, seconds=40)
    second = make_pods(
        Ids(ids.seed + 1), s.framework, f"{s.experiment}-r1", s.namespace, nodes, created=resubmitted,
        label_key=s.label_key,
    )  # fmt: skip
    for pod in second:
        pod.labels[s.label_key] = s.experiment
        without_gpus(pod, {6} if pod.node is node else ())
    rec.pods.extend(second)
    lifecycle_events(rec, second)
    t2 = resubmitted + timedelta(minutes=37, seconds=18)
    training_chatter(rec, ids, second, t2 - timedelta(minutes=1), ckpt_path="/gcs/ckpt/olmo2-13b-midtrain")
    oom = msg.traceback(
        [("/workspace/olmo/train.py", 1204, "train_batch", "loss.backward()")],
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. GPU 0 has a total capacity of 79.10 GiB "
        "of which 1.21 GiB is free.",
    )
    bad2 = second[1]
    rank_crash(rec, bad2, t2, 0, [oom])
    others2 = [second[0], second[2]]
    torchrun_teardown(rec, others2, t2 + timedelta(seconds=8))
    rec.meta = replace(rec.meta, captured_at=rec.meta.end)
    return expect(
        rec,
        (bad1, "gpu-fallen-off-bus", True, None),
        *((p, "nccl-error", False, bad1) for p in others1),
        (bad2, "cuda-oom", True, None),
        *((p, "peer-failure", False, bad2) for p in others2),
    )
