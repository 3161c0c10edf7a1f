"""The core incidents every release must explain, written by the project in its own words and clusters: one per
common way a training pod dies (a GPU off the bus, a host maintenance drain, an ECC error, the OOM killer, a CUDA
OOM, an application traceback, a deletion, NCCL timeouts with no cause, a node-pressure eviction, a spot reclaim,
a job that never schedules) and the maintenance story asked about hours after the pods were deleted.

The tests read these; the shared acceptance scenarios stay an independent check of the same causes."""

from __future__ import annotations

from datetime import timedelta

from synth import messages as msg
from synth.common import (
    cordon,
    end,
    killing,
    nccl_error_collateral,
    nccl_timeout_collateral,
    node_event,
    pod_event,
    rank_crash,
    restart,
    torchrun_teardown,
    training_chatter,
)
from synth.endings import memory_error, off_the_bus, user_deletion
from synth.ids import Ids
from synth.spec import Maintenance, Node, Pod, Recording
from synth.story import Setup, begin, day, expect


def xid79_fallen_off_bus(ids: Ids) -> Recording:
    s = Setup(
        "xid79-fallen-off-bus",
        "GPU 5 of one node falls off the bus (Xid 79); its rank dies with a CUDA error and the other ranks hit the "
        "NCCL watchdog timeout thirty minutes later.",
        "falcon-40b-cpt-s2",
        "lm-team",
        "jobset.sigs.k8s.io/jobset-name",
        "jobset",
        "gke-a3",
        "a3-highgpu",
        "lm-gke",
        day(11, 12, 6),
        4,
    )
    rec, nodes, pods = begin(ids, s)
    bad, node, gpu = pods[2], nodes[2], 5
    t = day(11, 12, 6, 47) + timedelta(seconds=21)  # scraped once before the rank's pod ends
    training_chatter(rec, ids, pods, t, ckpt_path="/gcs/ckpt/falcon-40b-cpt-s2")
    others = [p for p in pods if p is not bad]
    off_the_bus(rec, node, gpu, bad, others, t)  # DCGM reports the Xid on the next scrape; then the GPU is gone
    return expect(rec, (bad, "gpu-fallen-off-bus", True, None), *((p, "nccl-timeout", False, bad) for p in others))


def _azure_drain(rec: Recording, ids: Ids, node: Node, victim: Pod, notice_at: tuple[int, int, int, int]) -> Pod:
    """An Azure Reboot scheduled event on the node; AKS cordons and drains it and the rank is evicted."""
    notice = day(*notice_at)
    not_before = notice + timedelta(minutes=15)
    event_id = ids.uuid("azure-event", node.name).upper()
    rec.maintenance.append(Maintenance(node.name, "azure", event_id, "Reboot", notice, not_before, rec.meta.end))
    stamp = not_before.strftime("%a, %d %b %Y %H:%M:%S GMT")
    node_event(rec, node, notice, "RebootScheduled", f"Reboot Scheduled for {stamp}", component="custom-scheduledevents-plugin-monitor",
               type_="Warning")  # fmt: skip
    # AKS node-problem-detector: the VMEventScheduled condition turns True, with the event in its message
    rec.node_api_conditions[node.name] = [
        {"lastTransitionTime": notice.strftime("%Y-%m-%dT%H:%M:%SZ"), "message": f"Reboot Scheduled for {stamp}",
         "reason": "VMEventScheduled", "status": "True", "type": "VMEventScheduled"}
    ]  # fmt: skip
    drain = notice + timedelta(minutes=2)
    cordon(rec, node, drain)
    evict = drain + timedelta(seconds=3)
    victim.disruption = ("EvictionByEvictionAPI", "Eviction API: evicting", evict)
    killing(rec, victim, evict)
    rec.say(victim, evict + timedelta(seconds=1), msg.SIGTERM_AGENT)
    end(victim, evict + timedelta(seconds=6), 143)
    return victim


def maintenance_eviction(ids: Ids) -> Recording:
    s = Setup(
        "maintenance-eviction",
        "Azure schedules a reboot of one node's host; the node is cordoned and drained, its worker is evicted and the "
        "other ranks fail on NCCL.",
        "phi-3-medium-pt-r5",
        "research",
        "training.kubeflow.org/job-name",
        "pytorchjob",
        "aks-h100",
        "h100pool",
        "research-aks",
        day(11, 13, 8),
        4,
    )
    rec, nodes, pods = begin(ids, s)
    victim = pods[3]
    training_chatter(rec, ids, pods, day(11, 13, 9, 2))
    _azure_drain(rec, ids, nodes[3], victim, (11, 13, 9, 0))
    evicted = victim.finished or rec.meta.start
    others = pods[:3]
    nccl_error_collateral(rec, others, evicted + timedelta(seconds=2), victim.rank0)
    return expect(rec, (victim, "host-maintenance", True, None), *((p, "nccl-error", False, victim) for p in others))


def history_after_deletion(ids: Ids) -> Recording:
    s = Setup(
        "history-after-deletion",
        "A host maintenance drain asked about six hours later: the job was deleted, its pods are gone and their events "
        "expired from the API; Prometheus history, the log store and the archived events remain.",
        "codegen-7b-longctx-r2",
        "research",
        "training.kubeflow.org/job-name",
        "pytorchjob",
        "aks-a100",
        "a100v4",
        "research-aks",
        day(11, 14, 6),
        3,
    )
    rec, nodes, pods = begin(ids, s)
    victim = pods[0]
    training_chatter(rec, ids, pods, day(11, 14, 6, 52), speaker=pods[1])
    _azure_drain(rec, ids, nodes[0], victim, (11, 14, 6, 50))
    evicted = victim.finished or rec.meta.start
    others = pods[1:]
    nccl_error_collateral(rec, others, evicted + timedelta(seconds=2), victim.rank0)
    deleted = evicted + timedelta(minutes=20)
    for pod in pods:
        pod.deletion_at, pod.gone_at = deleted, deleted + timedelta(seconds=3)
    rec.archive_events = True
    return expect(
        rec,
        (victim, "host-maintenance", True, None),
        *((p, "nccl-error", False, victim) for p in others),
        captured_at=rec.meta.end + timedelta(hours=6),
    )


def ecc_dbe(ids: Ids) -> Recording:
    s = Setup(
        "ecc-dbe",
        "A double-bit ECC error (Xid 48) on one GPU; its rank crashes with an uncorrectable ECC error and the other "
        "ranks fail on NCCL.",
        "olmo-13b-anneal-c",
        "research",
        "training.kubeflow.org/job-name",
        "pytorchjob",
        "eks-p5",
        "p5-reserved",
        "research-eks",
        day(11, 15, 6),
        3,
    )
    rec, nodes, pods = begin(ids, s)
    bad, node, gpu = pods[1], nodes[1], 2
    t = day(11, 15, 7, 12) + timedelta(seconds=22)  # scraped once before the rank's pod ends
    training_chatter(rec, ids, pods, t, style="megatron", ckpt_path="/fsx/ckpt/olmo-13b-anneal-c")
    others = [pods[0], pods[2]]
    memory_error(rec, node, gpu, bad, others, t)
    return expect(rec, (bad, "gpu-memory-error", True, None), *((p, "nccl-error", False, bad) for p in others))


def oom_killed(ids: Ids) -> Recording:
    s = Setup(
        "oom-killed",
        "A tokenization pod exceeds its memory limit and the kernel's OOM killer stops it three times; the Job "
        "restarts it in place until it gives up.",
        "tokenize-redpajama-p17",
        "data",
        "experiment",
        "legacy-job",
        "onprem-a100",
        "cpu-heavy",
        "dc2",
        day(11, 16, 6),
        1,
        gpus=0,
        created_after=60,
        image="registry.internal:5000/data/tokenize:1.8.0",
    )
    rec, nodes, pods = begin(ids, s)
    pod, node = pods[0], nodes[0]
    pod.restart_policy = "OnFailure"
    pod.memory = "64Gi"
    pod.command = ["python", "-m", "tokenize_shards", "--shard", "17", "--workers", "48"]
    assert pod.started is not None
    starts = [pod.started]
    kills = [day(11, 16, 6, 58), day(11, 16, 7, 21), day(11, 16, 7, 44)]
    for i, kill in enumerate(kills):
        pid = 52110 + 37 * i
        rec.say(pod, kill - timedelta(minutes=3), f"tokenized 1{i}4,000,000 documents; buffering shard batch", "stdout")
        rec.kernel(node, kill, "python invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=999")
        rec.kernel(
            node,
            kill,
            f"Memory cgroup out of memory: Killed process {pid} (python) total-vm:70318204kB, anon-rss:66977912kB, "
            "file-rss:10420kB, shmem-rss:0kB, UID:0 pgtables:131784kB oom_score_adj:999",
        )
        node_event(rec, node, kill, "OOMKilling", f"Memory cgroup out of memory: Killed process {pid} (python) "
                   "total-vm:70318204kB, anon-rss:66977912kB, file-rss:10420kB, shmem-rss:0kB, UID:0", component="kernel-monitor",
                   type_="Warning")  # fmt: skip
        if i < len(kills) - 1:
            restart(pod, starts[-1], kill, 137, "OOMKilled")
            starts.append(kill + timedelta(seconds=10 + 10 * i))
            back_off = (
                f"Back-off restarting failed container {pod.container} in pod {pod.name}_{pod.namespace}({pod.uid})"
            )
            rec.events.append(pod_event(pod, kill + timedelta(seconds=1), "BackOff", back_off, type_="Warning"))
    pod.started = starts[-1]
    end(pod, kills[-1], 137, "OOMKilled")
    return expect(rec, (pod, "oom-killed", True, None))


def cuda_oom(ids: Ids) -> Recording:
    s = Setup(
        "cuda-oom",
        "Rank 0 runs out of GPU memory after a batch-size change; torchrun tears the other node's ranks down.",
        "dinov2-g14-bs2048",
        "vision",
        "app.kubernetes.io/instance",
        "pytorchjob",
        "aks-a100",
        "a100v4",
        "vision-aks",
        day(11, 16, 9),
        2,
    )
    rec, _nodes, pods = begin(ids, s)
    bad, other = pods[0], pods[1]
    t = day(11, 16, 9, 9) + timedelta(seconds=41)
    training_chatter(rec, ids, pods, t - timedelta(minutes=1))
    oom = msg.traceback(
        [
            (
                "/workspace/dinov2/train/train.py",
                310,
                "do_train",
                "loss_dict = model.forward_backward(data, teacher_temp)",
            ),
            ("/usr/local/lib/python3.10/dist-packages/torch/_tensor.py", 581, "backward", "torch.autograd.backward("),
        ],
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.12 GiB. GPU 0 has a total capacity of 79.14 GiB "
        "of which 1.94 GiB is free. Process 8812 has 77.19 GiB memory in use. Of the allocated memory 72.48 GiB is "
        "allocated by PyTorch, and 3.99 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory "
        "is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
        "documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
    )
    rank_crash(rec, bad, t, 0, [oom])
    torchrun_teardown(rec, [other], t + timedelta(seconds=9))
    return expect(rec, (bad, "cuda-oom", True, None), (other, "peer-failure", False, bad))


def app_traceback(ids: Ids) -> Recording:
    s = Setup(
        "app-traceback",
        "A data bug: rank 0 raises KeyError on a malformed sample and torchrun tears the other node's ranks down.",
        "sft-qwen2-lr2e-5",
        "finetune",
        "training.kubeflow.org/job-name",
        "pytorchjob",
        "gke-a2",
        "a2-ultra",
        "ft-gke",
        day(11, 17, 6),
        2,
    )
    rec, _nodes, pods = begin(ids, s)
    bad, other = pods[0], pods[1]
    t = day(11, 17, 6, 31) + timedelta(seconds=4)
    training_chatter(rec, ids, pods, t - timedelta(minutes=2), ckpt_path="/gcs/ckpt/sft-qwen2-lr2e-5")
    error = msg.traceback(
        [
            ("/app/sft/train.py", 214, "main", "for step, batch in enumerate(loader):"),
            ("/app/sft/data.py", 88, "__getitem__", 'prompt = sample["conversations"][0]["value"]'),
        ],
        "KeyError: 'conversations'",
    )
    rank_crash(rec, bad, t, 0, [error])
    torchrun_teardown(rec, [other], t + timedelta(seconds=9))
    return expect(rec, (bad, "application-error", True, None), (other, "peer-failure", False, bad))


def deleted_by_user(ids: Ids) -> Recording:
    s = Setup(
        "deleted-by-user",
        "Someone deletes the job: its pods are stopped and removed, with no fault anywhere.",
        "yi-34b-dpo-sweep-9",
        "alignment",
        "app.kubernetes.io/instance",
        "pytorchjob",
        "eks-p5",
        "p5-ondemand",
        "align-eks",
        day(11, 17, 12),
        2,
    )
    rec, _nodes, pods = begin(ids, s)
    t = day(11, 17, 13, 31) + timedelta(seconds=17)  # within the hour the API keeps events
    training_chatter(rec, ids, pods, t)
    user_deletion(rec, pods, t)
    return expect(rec, (pods[0], "deleted", True, None), (pods[1], "deleted", False, None))


def nccl_timeout_unknown(ids: Ids) -> Recording:
    s = Setup(
        "nccl-timeout-unknown",
        "Every rank hits the NCCL watchdog timeout and no hardware, node or maintenance signal explains it.",
        "dbrx-moe-run4",
        "research",
        "jobset.sigs.k8s.io/jobset-name",
        "jobset",
        "eks-p5",
        "p5-reserved",
        "research-eks",
        day(11, 18, 6),
        4,
    )
    rec, _nodes, pods = begin(ids, s)
    t = day(11, 18, 7, 3) + timedelta(seconds=12)
    training_chatter(rec, ids, pods, t - timedelta(minutes=30))
    nccl_timeout_collateral(rec, pods, t, 208113)
    return expect(rec, *((p, "nccl-timeout", None, None) for p in pods))
