"""More GPU stories for the acceptance set: variants of the shared ones in other shapes, so rules are written for
the real signals rather than for one recording."""

from __future__ import annotations

from datetime import timedelta

from synth import messages as msg
from synth.agents import NVSENTINEL_STATE, nvsentinel, quarantine
from synth.common import end, killing, nccl_error_collateral, rank_crash, training_chatter, xid
from synth.ids import Ids
from synth.spec import Counter, Recording
from synth.story import Setup, begin, day, expect


def uncontained_ecc(ids: Ids) -> Recording:
    """Xid 95 then Xid 45 on the same GPU: the DCGM gauge keeps only the last value (45, a sympathetic Xid), so
    the kernel log and the remapped-rows counter carry the cause."""
    s = Setup(
        "gpu-uncontained-ecc",
        "An uncontained memory error (Xid 95) on one A100; the driver tears the channels down (Xid 45, which is all "
        "the DCGM gauge still shows), the rank dies with an uncorrectable ECC error and the others fail on NCCL.",
        "t5-xxl-distill-v8",
        "nlp",
        "experiment",
        "pytorchjob",
        "aks-a100",
        "a100v4",
        "nlp-aks",
        day(11, 17, 18),
        3,
    )
    rec, nodes, pods = begin(ids, s)
    bad, node, gpu = pods[1], nodes[1], 4
    t = day(11, 17, 19, 26) + timedelta(seconds=41)
    training_chatter(rec, ids, pods, t, style="megatron", ckpt_path="/mnt/azureblob/t5-xxl-distill-v8")
    xid(rec, node, gpu, t, 95, "Uncontained: LTC TAG (0x2, 0x1). RST: Yes, D-RST: No", 31337)
    xid(rec, node, gpu, t + timedelta(seconds=1), 45, "Ch 00000008 caused by previous Xid 95", 31337, first=False)
    rec.counters.append(Counter("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", node.name, gpu, ((t, 1.0),)))
    rank_crash(rec, bad, t + timedelta(seconds=2), gpu, [msg.cuda_error("uncorrectable ECC error encountered")])
    nccl_error_collateral(rec, [pods[0], pods[2]], t + timedelta(seconds=19), bad.rank0 + gpu)
    return expect(
        rec,
        (bad, "gpu-memory-error", True, None),
        (pods[0], "nccl-error", False, bad),
        (pods[2], "nccl-error", False, bad),
    )


def nvsentinel_drain(ids: Ids) -> Recording:
    """A row-remapper failure (Xid 64) the rank survives; NVIDIA NVSentinel marks the GPU unhealthy, quarantines
    the node (cordon and health-event annotations), and its node-drainer evicts the rank through the Eviction API;
    the other ranks fail on NCCL. The rank died of the remediation, and the remediation of the GPU."""
    s = Setup(
        "nvsentinel-drain",
        "Xid 64 on one H200; NVSentinel quarantines the node and drains it, evicting the rank; the others fail on NCCL.",
        "mixtral-8x22b-sft-v3",
        "post-training",
        "jobset.sigs.k8s.io/jobset-name",
        "jobset",
        "onprem-h200",
        "dgxh200",
        "dc4",
        day(11, 19, 2),
        4,
    )
    rec, nodes, pods = begin(ids, s)
    victim, node, gpu = pods[2], nodes[2], 3
    t = day(11, 19, 3, 11) + timedelta(seconds=7)
    training_chatter(rec, ids, pods, t)
    xid(rec, node, gpu, t, 64, "Dynamic Page Retirement: New page retired, reboot to activate (0x00000a3f).", None)
    rec.node_api_conditions.setdefault(node.name, []).append(nvsentinel(64, node.gpus[gpu], t + timedelta(seconds=4)))
    quarantine(rec, node.name, 64, gpu, t + timedelta(seconds=9))
    evict = t + timedelta(seconds=41)
    victim.disruption = ("EvictionByEvictionAPI", "Eviction API: evicting", evict)
    killing(rec, victim, evict)
    rec.say(victim, evict + timedelta(seconds=1), msg.SIGTERM_AGENT)
    end(victim, evict + timedelta(seconds=7), 143)
    rec.node_labels.setdefault(node.name, {})[NVSENTINEL_STATE] = "drain-succeeded"
    others = [p for p in pods if p is not victim]
    nccl_error_collateral(rec, others, evict + timedelta(seconds=9), victim.rank0)
    return expect(rec, (victim, "gpu-memory-error", True, None), *((p, "nccl-error", False, victim) for p in others))
