"""More GPU stories for the acceptance set: variants of the shared ones in other shapes, so rules are written for
the real signals rather than for one recording."""

from __future__ import annotations

from datetime import timedelta

from whathappened.synth import messages as msg
from whathappened.synth.common import nccl_error_collateral, rank_crash, training_chatter, xid
from whathappened.synth.ids import Ids
from whathappened.synth.spec import Counter, Recording
from whathappened.synth.story import Setup, begin, day, expect


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
