"""The small incidents `whathappened demo` ships as package data: a GPU that falls off the bus with NCCL collateral,
and an AWS scheduled-maintenance drain. Kept small (60 s scrape, three DCGM fields, 90 minutes)."""

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
    rank_crash,
    training_chatter,
    xid,
)
from synth.ids import Ids
from synth.spec import DcgmStyle, KEvent, Maintenance, Recording
from synth.story import Setup, begin, day, expect

_SMALL = DcgmStyle(fields=("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_GPU_TEMP"))


def xid79_nccl(ids: Ids) -> Recording:
    s = Setup(
        "gpu-xid79-nccl",
        "GPU 3 of one node falls off the bus (Xid 79); its rank dies with a CUDA error and the other "
        "ranks hit the NCCL watchdog timeout ten minutes later.",
        "llama-70b-pretrain-r9",
        "research",
        "training.kubeflow.org/job-name",
        "pytorchjob",
        "aks-h100",
        "h100pool",
        "research-aks",
        day(11, 20, 6),
        3,
        hours=1.5,
        scrape=60,
        dcgm=_SMALL,
    )
    rec, nodes, pods = begin(ids, s)
    bad, gpu, t = pods[1], 3, day(11, 20, 6, 41) + timedelta(seconds=12)
    training_chatter(rec, ids, pods, t, ckpt_path="/mnt/blob/ckpt/llama-70b-pretrain-r9")
    g = nodes[1].gpus[gpu]
    xid(rec, nodes[1], gpu, t, 79, "GPU has fallen off the bus.", None)
    rec.kernel(nodes[1], t + timedelta(seconds=1), f"NVRM: GPU {g.kernel_pci}.0: GPU has fallen off the bus.")
    rec.gpu_gone[(nodes[1].name, gpu)] = t
    rank_crash(rec, bad, t + timedelta(seconds=4), gpu, [msg.cuda_error("unspecified launch failure")])
    nccl_timeout_collateral(rec, [pods[0], pods[2]], t + timedelta(minutes=10, seconds=3), 48211, timeout_ms=600000)
    return expect(
        rec,
        (bad, "gpu-fallen-off-bus", True, None),
        (pods[0], "nccl-timeout", False, bad),
        (pods[2], "nccl-timeout", False, bad),
    )


def aws_maintenance(ids: Ids) -> Recording:
    s = Setup(
        "host-maintenance-drain",
        "AWS schedules a system reboot for one p5 instance; node-termination-handler cordons and drains it, "
        "its rank is evicted and the others fail on NCCL.",
        "mixtral-8x22b-cpt-r3",
        "llm",
        "jobset.sigs.k8s.io/jobset-name",
        "jobset",
        "eks-p5",
        "p5-ondemand",
        "llm-eks",
        day(11, 19, 13),
        2,
        hours=1.5,
        scrape=60,
        dcgm=_SMALL,
    )
    rec, nodes, pods = begin(ids, s)
    victim, node = pods[1], nodes[1]
    notice, reboot = day(11, 19, 13, 50), day(11, 19, 14, 20)
    event_id = "instance-event-0" + ids.hex("ec2-event", node.name, length=16)
    rec.maintenance.append(Maintenance(node.name, "aws", event_id, "system-reboot", notice, reboot, rec.meta.end))
    drain = notice + timedelta(seconds=4)
    training_chatter(rec, ids, pods, drain)
    rec.taints[node.name] = [("aws-node-termination-handler/scheduled-maintenance", event_id, "NoSchedule", drain)]
    node_event(
        rec,
        node,
        drain,
        "ScheduledEvent",
        f"system-reboot will occur between {reboot.strftime('%-d %b %Y %H:%M:%S GMT')} and "
        f"{(reboot + timedelta(hours=2)).strftime('%-d %b %Y %H:%M:%S GMT')} because scheduled reboot",
        component="aws-node-termination-handler",
        type_="Warning",
    )
    cordon(rec, node, drain, drain + timedelta(seconds=1))
    evict = drain + timedelta(seconds=2)
    rec.events.append(
        KEvent(
            at=evict,
            reason="PodEviction",
            message=f"Pod evicted due to node drain (node {node.name})",
            kind="Pod",
            name=victim.name,
            namespace=victim.namespace,
            uid=victim.uid,
            component="aws-node-termination-handler",
            type="Normal",
        )
    )
    victim.disruption = ("EvictionByEvictionAPI", "Eviction API: evicting", evict)
    killing(rec, victim, evict)
    rec.say(victim, evict + timedelta(seconds=1), msg.SIGTERM_AGENT)
    end(victim, evict + timedelta(seconds=6), 143)
    node_event(
        rec,
        node,
        evict + timedelta(seconds=40),
        "CordonAndDrain",
        "Node successfully cordoned and drained",
        component="aws-node-termination-handler",
    )
    nccl_error_collateral(rec, [pods[0]], evict + timedelta(seconds=8), victim.rank0)
    return expect(rec, (victim, "host-maintenance", True, None), (pods[0], "nccl-error", False, victim))
