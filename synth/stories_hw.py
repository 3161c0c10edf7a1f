"""Hardware and infrastructure stories: a node that dies, NVLink, thermal shutdown, a failing InfiniBand link,
and two guards (an Xid that predates the pod; a node clock two minutes off)."""

from __future__ import annotations

from datetime import timedelta

from synth import messages as msg
from synth.common import (
    end,
    killing,
    nccl_error_collateral,
    rank_crash,
    torchrun_teardown,
    training_chatter,
    xid,
)
from synth.endings import node_lost
from synth.ids import Ids
from synth.spec import Counter, DcgmStyle, KEvent, Ramp, Recording
from synth.story import Setup, begin, day, expect


def node_failure(ids: Ids) -> Recording:
    s = Setup(
        "node-failure",
        "A node stops answering with no maintenance notice: NotReady, then the taint manager marks its pod for "
        "deletion; the other ranks fail on NCCL.",
        "llm-13b-curriculum-v2",
        "pretrain",
        "volcano.sh/job-name",
        "volcano",
        "onprem-h200",
        "dgxh200",
        "dc1",
        day(11, 12, 9),
        3,
    )
    rec, nodes, pods = begin(ids, s)
    dead, lost = pods[1], day(11, 12, 10, 12) + timedelta(seconds=7)
    node = nodes[1]
    training_chatter(rec, ids, pods, lost)
    node_lost(rec, node, dead, [pods[0], pods[2]], lost)
    return expect(
        rec,
        (dead, "node-failure", True, None),
        (pods[0], "nccl-error", False, dead),
        (pods[2], "nccl-error", False, dead),
    )


def nvlink_error(ids: Ids) -> Recording:
    s = Setup(
        "nvlink-error",
        "An NVLink fatal error (Xid 74) on one GPU; its rank dies with an uncorrectable NVLink error, the others "
        "fail on NCCL.",
        "llama3-8b-sft-nvl",
        "llm",
        "whathappened.io/experiment",
        "pytorchjob",
        "gke-a3mega",
        "a3mega",
        "llm-prod",
        day(11, 13, 14),
        4,
        dcgm=DcgmStyle(hostname_label="hostname", xid_err_labels=True),
    )
    rec, nodes, pods = begin(ids, s)
    bad, gpu, t = pods[2], 5, day(11, 13, 15, 7) + timedelta(seconds=30)
    training_chatter(rec, ids, pods, t, style="megatron", ckpt_path="/gcs/ckpt/llama3-8b-sft-nvl")
    node = nodes[2]
    rec.counters.append(
        Counter(
            "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
            node.name,
            gpu,
            ((t - timedelta(minutes=3), 3.0), (t - timedelta(minutes=1), 41.0), (t, 1873.0)),
        )
    )
    rec.counters.append(Counter("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", node.name, 2, ((t, 12.0),)))
    xid(rec, node, gpu, t, 74, "NVLink: fatal error detected on link 11(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)", 48211)
    rank_crash(
        rec,
        bad,
        t + timedelta(seconds=3),
        gpu,
        [msg.cuda_error("uncorrectable NVLink error detected during the execution")],
    )
    nccl_error_collateral(rec, [pods[0], pods[1], pods[3]], t + timedelta(seconds=21), bad.rank0 + gpu)
    return expect(
        rec, (bad, "nvlink-error", True, None), *((p, "nccl-error", False, bad) for p in (pods[0], pods[1], pods[3]))
    )


def gpu_thermal(ids: Ids) -> Recording:
    s = Setup(
        "gpu-thermal",
        "One GPU overheats: temperature climbs past the slowdown point, the clocks are thermally throttled, then "
        "the GPU shuts down and its rank dies; the Job hits its backoff limit and deletes the other pod.",
        "dinov3-vitg-pretrain-e2",
        "vision",
        "batch.kubernetes.io/job-name",
        "indexed-job",
        "gke-a3",
        "a3-pool",
        "vision-gke",
        day(11, 14, 2),
        2,
    )
    rec, nodes, pods = begin(ids, s)
    hot, other, gpu = pods[1], pods[0], 3
    node = nodes[1]
    shutdown = day(11, 14, 3, 21) + timedelta(seconds=40)
    training_chatter(rec, ids, pods, shutdown, ckpt_path="/mnt/ckpt/dinov3")
    rec.gpu_temp[(node.name, gpu)] = Ramp(day(11, 14, 3, 2), shutdown, 66, 97)
    slow = day(11, 14, 3, 12)
    rec.counters.append(
        Counter(
            "DCGM_FI_DEV_THERMAL_VIOLATION",
            node.name,
            gpu,
            tuple((slow + timedelta(minutes=m), float(m * 41_000_000_000)) for m in range(1, 10)),
        )
    )
    rec.counters.append(Counter("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", node.name, gpu, ((slow, 64.0),), kind="gauge"))
    rec.gpu_gone[(node.name, gpu)] = shutdown
    for i, step in enumerate((2.1, 4.8, 11.7)):
        rec.say(
            hot,
            slow + timedelta(minutes=3 * i + 1),
            f"[rank{hot.rank0}] step time {step:.1f}s is {step / 0.9:.1f}x the median; slowest rank 11 (local_rank 3)",
            "stdout",
        )
    rank_crash(rec, hot, shutdown + timedelta(seconds=3), gpu, [msg.cuda_error("unspecified launch failure")])
    job = hot.owner.name if hot.owner else s.experiment
    fail_at = shutdown + timedelta(seconds=12)
    rec.events.append(
        KEvent(
            at=fail_at,
            reason="BackoffLimitExceeded",
            message="Job has reached the specified backoff limit",
            kind="Job",
            name=job,
            namespace=s.namespace,
            uid=hot.owner.uid if hot.owner else "",
            api_version="batch/v1",
            component="job-controller",
            type="Warning",
        )
    )
    rec.events.append(
        KEvent(
            at=fail_at,
            reason="SuccessfulDelete",
            message=f"Deleted pod: {other.name}",
            kind="Job",
            name=job,
            namespace=s.namespace,
            uid=hot.owner.uid if hot.owner else "",
            api_version="batch/v1",
            component="job-controller",
        )
    )
    killing(rec, other, fail_at)
    rec.say(other, fail_at, msg.SIGTERM_AGENT)
    torchrun_teardown(rec, [other], fail_at + timedelta(seconds=1))
    other.deletion_at, other.gone_at = fail_at, (other.finished or fail_at) + timedelta(seconds=2)
    return expect(rec, (hot, "gpu-thermal", True, None), (other, "peer-failure", False, hot))


def network_error(ids: Ids) -> Recording:
    s = Setup(
        "network-error",
        "An InfiniBand cable fault on one worker's node: the port goes down, NCCL reports completion errors "
        "(status 12) and mpirun aborts the job.",
        "gpt3-6b7-mpi-ib",
        "research",
        "training.kubeflow.org/job-name",
        "mpijob",
        "aks-h100",
        "ndh100",
        "research-aks",
        day(11, 15, 20),
        5,
    )
    rec, _nodes, pods = begin(ids, s)
    launcher, workers = pods[0], pods[1:]
    launcher.cpu, launcher.memory = "8", "32Gi"
    for w in workers:
        w.command = ["/usr/sbin/sshd", "-De"]
        w.rank0 -= 8
    t = day(11, 15, 21, 14) + timedelta(seconds=5)
    training_chatter(rec, ids, workers, t, speaker=launcher)
    bad = workers[2]
    assert bad.node is not None
    rec.kernel(
        bad.node,
        t,
        "mlx5_core 0103:00:00.0: Port module event[error]: module 2, Cable error, Bad or shorted cable/module",
    )
    rec.kernel(bad.node, t + timedelta(seconds=1), "mlx5_core 0103:00:00.0 ibP259p0s0: Link down")
    peer = workers[1]
    assert peer.node is not None
    rec.say(launcher, t + timedelta(seconds=9), msg.nccl_ib_completion_error(bad.hostname, 1733, 2, peer.node.ip))
    rec.say(launcher, t + timedelta(seconds=9), msg.nccl_ib_completion_error(peer.hostname, 1802, 2, bad.node.ip))
    for line in msg.nccl_remote_error(bad.rank0 + 2, t + timedelta(seconds=10), peer.rank0 + 2)[:2]:
        rec.say(launcher, t + timedelta(seconds=10), line)
    rec.say(
        launcher,
        t + timedelta(seconds=24),
        "--------------------------------------------------------------------------\n"
        "Primary job  terminated normally, but 1 process returned\na non-zero exit code. Per user-direction, the job has been aborted.\n"
        "--------------------------------------------------------------------------",
    )
    rec.say(
        launcher,
        t + timedelta(seconds=25),
        "--------------------------------------------------------------------------\n"
        "mpirun detected that one or more processes exited with non-zero status, thus causing\nthe job to be terminated. The first "
        f"process to do so was:\n\n  Process name: [[36721,1],{bad.rank0 + 2}]\n  Exit code:    1\n"
        "--------------------------------------------------------------------------",
    )
    end(launcher, t + timedelta(seconds=26), 1)
    return expect(rec, (launcher, "network-error", True, None))


def xid_predates_pod(ids: Ids) -> Recording:
    s = Setup(
        "guard-xid-predates-pod",
        "A double-bit ECC Xid on a GPU half an hour before the job's pods exist (the DCGM gauge keeps "
        "showing 48 afterwards); the run later dies of a data-loader bug, which is the cause.",
        "olmo-7b-anneal-r5",
        "team-lm",
        "jobset.sigs.k8s.io/jobset-name",
        "jobset",
        "onprem-h200",
        "dgxh200",
        "dc1",
        day(11, 10, 5),
        2,
        created_after=3720,
    )
    rec, nodes, pods = begin(ids, s)
    bad = pods[1]
    old = day(11, 10, 5, 31) + timedelta(seconds=12)
    xid(
        rec,
        nodes[1],
        2,
        old,
        48,
        "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 2, "
        "subpartition 0.",
        77120,
    )
    rec.kernel(
        nodes[1],
        old + timedelta(seconds=1),
        msg.nvrm_xid(
            nodes[1].gpus[2].kernel_pci,
            63,
            "Row Remapper: New row (0x0000000000ab12c0) was marked for remapping, reset gpu to activate.",
            77120,
        ),
    )
    t = day(11, 10, 6, 47) + timedelta(seconds=20)
    training_chatter(rec, ids, pods, t, ckpt_path="/weka/olmo/anneal-r5")
    frames = [
        ("/opt/olmo/scripts/train.py", 301, "<module>", "main()"),
        ("/opt/olmo/scripts/train.py", 288, "main", "trainer.fit()"),
        ("/opt/olmo/olmo/data/iterable_dataset.py", 164, "__iter__", "yield from self._read_chunk(path)"),
        ("/opt/olmo/olmo/data/memmap_dataset.py", 97, "_read_chunk", "with open(path, 'rb') as f:"),
    ]
    rank_crash(
        rec,
        bad,
        t,
        1,
        [
            msg.traceback(
                frames,
                "FileNotFoundError: [Errno 2] No such file or directory: '/weka/olmo/dolmino/part-0412-00017.npy'",
            )
        ],
    )
    torchrun_teardown(rec, [pods[0]], t + timedelta(seconds=9))
    return expect(rec, (bad, "application-error", True, None), (pods[0], "peer-failure", False, bad))


def clock_skew(ids: Ids) -> Recording:
    s = Setup(
        "guard-clock-skew",
        "A GSP timeout (Xid 119) kills one rank; that node's clock runs 105 s ahead, so its kernel and "
        "container logs and its kubelet's times come after the other ranks' NCCL errors.",
        "phi-4-mm-pretrain-s2",
        "research",
        "experiment",
        "pytorchjob",
        "eks-p5",
        "p5-ondemand",
        "research-eks",
        day(11, 16, 12),
        3,
    )
    rec, nodes, pods = begin(ids, s)
    bad, gpu, skew = pods[1], 6, 105.0
    node = nodes[1]
    t = day(11, 16, 12, 40)
    training_chatter(rec, ids, pods, t)
    rec.log_skew[node.name] = skew
    xid(
        rec,
        node,
        gpu,
        t,
        119,
        "Timeout after 6s of waiting for RPC response from GPU6 GSP! Expected function 76 (GSP_RM_CONTROL) "
        "(0x2080014b 0x5).",
        41877,
    )
    rank_crash(rec, bad, t + timedelta(seconds=6), gpu, [msg.cuda_error("unspecified launch failure")])
    assert bad.finished is not None
    bad.finished += timedelta(seconds=skew)  # the kubelet on that node stamps finishedAt with its own clock
    for event in rec.events:
        if event.host == node.name:
            event.at += timedelta(seconds=skew)  # and its events too
    nccl_error_collateral(rec, [pods[0], pods[2]], t + timedelta(seconds=20), bad.rank0 + gpu)
    return expect(
        rec,
        (bad, "gpu-hardware-error", True, None),
        (pods[0], "nccl-error", False, bad),
        (pods[2], "nccl-error", False, bad),
    )
