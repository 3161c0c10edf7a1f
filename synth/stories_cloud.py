"""Cloud-side variants: an Azure spot VM reclaimed (the shared set has the AWS shape)."""

from __future__ import annotations

from datetime import timedelta

from synth import messages as msg
from synth.common import cordon, end, killing, nccl_error_collateral, node_event, training_chatter
from synth.ids import Ids
from synth.spec import Maintenance, Recording
from synth.story import Setup, begin, day, expect


def azure_spot(ids: Ids) -> Recording:
    s = Setup(
        "spot-preemption-azure",
        "Azure reclaims a spot VM of the scale set: a Preempt scheduled event with 30 s notice, AKS cordons and drains "
        "the node, the rank is evicted, the VM and its Node object disappear; the other rank fails on NCCL.",
        "sd3-lora-sweep-114",
        "genai",
        "batch.kubernetes.io/job-name",
        "indexed-job",
        "aks-h100",
        "spoth100",
        "genai-aks",
        day(11, 17, 21),
        2,
    )
    rec, nodes, pods = begin(ids, s)
    victim, node = pods[1], nodes[1]
    for n in nodes:
        rec.node_labels[n.name] = {"kubernetes.azure.com/scalesetpriority": "spot"}
        rec.taints[n.name] = [("kubernetes.azure.com/scalesetpriority", "spot", "NoSchedule", n.created)]
    notice = day(11, 17, 22, 41) + timedelta(seconds=2)
    not_before = notice + timedelta(seconds=30)
    gone = not_before + timedelta(seconds=14)
    stamp = not_before.strftime("%a, %d %b %Y %H:%M:%S GMT")
    training_chatter(rec, ids, pods, notice)
    rec.maintenance.append(
        Maintenance(node.name, "azure", ids.uuid("azure-event", node.name).upper(), "Preempt", notice, not_before, gone)
    )
    node_event(rec, node, notice, "PreemptScheduled", f"Preempt Scheduled for {stamp}", component="custom-scheduledevents-plugin-monitor",
               type_="Warning")  # fmt: skip
    rec.node_api_conditions[node.name] = [
        {"lastTransitionTime": notice.strftime("%Y-%m-%dT%H:%M:%SZ"), "message": f"Preempt Scheduled for {stamp}", "reason": "VMEventScheduled",
         "status": "True", "type": "VMEventScheduled"}
    ]  # fmt: skip
    drain = notice + timedelta(seconds=3)
    cordon(rec, node, drain)
    evict = drain + timedelta(seconds=1)
    victim.disruption = ("EvictionByEvictionAPI", "Eviction API: evicting", evict)
    victim.deletion_at = evict
    killing(rec, victim, evict)
    rec.say(victim, evict + timedelta(seconds=1), msg.SIGTERM_AGENT)
    end(victim, evict + timedelta(seconds=7), 143)
    victim.gone_at = evict + timedelta(seconds=8)
    nccl_error_collateral(rec, [pods[0]], evict + timedelta(seconds=9), victim.rank0)
    rec.node_lost[node.name] = gone
    rec.node_gone[node.name] = gone + timedelta(seconds=50)
    node_event(rec, node, gone + timedelta(seconds=50), "RemovingNode", f"Node {node.name} event: Removing Node {node.name} from Controller",
               component="node-controller")  # fmt: skip
    return expect(rec, (victim, "spot-preemption", True, None), (pods[0], "nccl-error", False, victim))
