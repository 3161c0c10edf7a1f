"""The Kubernetes-side misattribution guards: exit 137 during a maintenance drain is not an OOM; SIGTERM on
scale-down is not a crash."""

from __future__ import annotations

from datetime import timedelta

from synth import messages as msg
from synth.common import end, killing, nccl_error_collateral, node_event, training_chatter
from synth.ids import Ids
from synth.spec import KEvent, Maintenance, Recording
from synth.story import Setup, begin, day, expect


def drain_137_not_oom(ids: Ids) -> Recording:
    s = Setup(
        "guard-drain-exit137-not-oom",
        "GCE host maintenance (TERMINATE_ON_HOST_MAINTENANCE) on one node: the VM shuts down and the kubelet's graceful node "
        "shutdown drains it; the rank ignores SIGTERM inside a collective and is killed with exit 137, which is not an OOM. "
        "The node reboots and comes back Ready.",
        "mistral-12b-cpt-lowlr",
        "research",
        "app.kubernetes.io/instance",
        "pytorchjob",
        "gke-a3",
        "a3-pool",
        "research-gke",
        day(11, 11, 4),
        3,
    )
    rec, nodes, pods = begin(ids, s)
    victim, node = pods[1], nodes[1]
    notice, start = day(11, 11, 4, 52), day(11, 11, 5, 10)
    # The exporter on the node reports the notice until the VM goes down for the maintenance.
    rec.maintenance.append(
        Maintenance(node.name, "gcp", "maintenance-event", "TERMINATE_ON_HOST_MAINTENANCE", notice, start, start)
    )
    rec.node_labels[node.name] = {"cloud.google.com/scheduled-maintenance-time": str(int(start.timestamp()))}
    shutdown = start + timedelta(seconds=4)
    training_chatter(rec, ids, pods, shutdown)
    rec.taints[node.name] = [("cloud.google.com/impending-node-termination", "", "NoSchedule", shutdown)]
    reason = "Pod was terminated in response to imminent node shutdown."
    victim.disruption = ("TerminationByKubelet", reason, shutdown)
    victim.status_reason, victim.status_message = "Terminated", reason
    rec.say(victim, shutdown + timedelta(seconds=1), msg.SIGTERM_AGENT)
    end(victim, shutdown + timedelta(seconds=30), 137)  # SIGKILL after the shutdown grace period
    nccl_error_collateral(rec, [pods[0], pods[2]], shutdown + timedelta(seconds=32), victim.rank0)
    down, back = shutdown + timedelta(seconds=75), start + timedelta(minutes=6, seconds=20)
    rec.node_ready[node.name] = [(shutdown + timedelta(seconds=2), "false"), (down, "unknown"), (back, "true")]
    node_event(
        rec, node, down, "NodeNotReady", f"Node {node.name} status is now: NodeNotReady", component="node-controller"
    )
    boot = ids.uuid("boot", node.name, "after-maintenance")
    node_event(rec, node, back - timedelta(seconds=15), "Starting", "Starting kubelet.")
    node_event(
        rec,
        node,
        back - timedelta(seconds=10),
        "Rebooted",
        f"Node {node.name} has been rebooted, boot id: {boot}",
        type_="Warning",
    )
    node_event(rec, node, back, "NodeReady", f"Node {node.name} status is now: NodeReady")
    return expect(
        rec,
        (victim, "host-maintenance", True, None),
        (pods[0], "nccl-error", False, victim),
        (pods[2], "nccl-error", False, victim),
    )


def sigterm_scale_down(ids: Ids) -> Recording:
    s = Setup(
        "guard-sigterm-scale-down",
        "An elastic PyTorchJob is scaled from four to two nodes: the operator deletes two workers, "
        "which exit 143 on SIGTERM; the survivors see NCCL errors, re-rendezvous and keep training.",
        "bert-large-elastic-e7",
        "research",
        "training.kubeflow.org/job-name",
        "pytorchjob",
        "aks-a100",
        "nda100",
        "research-aks",
        day(11, 10, 2),
        4,
    )
    rec, _nodes, pods = begin(ids, s)
    for pod in pods:
        pod.command = [
            "torchrun",
            "--nnodes",
            "2:4",
            "--nproc-per-node",
            "8",
            "--max-restarts",
            "3",
            "--rdzv-backend",
            "c10d",
            "train.py",
        ]
    t = day(11, 10, 3, 30)
    removed, kept = pods[2:], pods[:2]
    for i, pod in enumerate(removed):
        at = t + timedelta(seconds=i)
        rec.events.append(
            KEvent(
                at=at,
                reason="SuccessfulDeletePod",
                message=f"Deleted pod: {pod.name}",
                kind="PyTorchJob",
                name=s.experiment,
                namespace=s.namespace,
                uid=pod.owner.uid if pod.owner else "",
                api_version="kubeflow.org/v1",
                component="pytorchjob-controller",
            )
        )
        killing(rec, pod, at)
        rec.say(pod, at + timedelta(seconds=1), msg.SIGTERM_AGENT)
        rec.say(pod, at + timedelta(seconds=2), msg.signal_exception(17))
        end(pod, at + timedelta(seconds=4), 143)
        pod.deletion_at, pod.gone_at = at, at + timedelta(seconds=5)
    for pod in kept:
        for j, line in enumerate(msg.nccl_remote_error(pod.rank0, t + timedelta(seconds=3), removed[0].rank0)):
            rec.say(pod, t + timedelta(seconds=3 + j), line)
        rec.say(
            pod,
            t + timedelta(seconds=9),
            "torch.distributed.elastic.agent.server.api: [INFO] [default] Worker group FAILED. 3/3 attempts "
            "left; will restart worker group",
        )
        rec.say(
            pod,
            t + timedelta(seconds=41),
            "torch.distributed.elastic.agent.server.api: [INFO] [default] Rendezvous complete for "
            f"workers. Result:\n  restart_count=1\n  master_addr={pods[0].name}\n  master_port=23456\n  group_rank={kept.index(pod)}\n"
            "  group_world_size=2\n  local_ranks=[0, 1, 2, 3, 4, 5, 6, 7]",
            "stdout",
        )
    training_chatter(rec, ids, pods, rec.meta.end)  # rank 0 survives: its loss lines go on after the re-rendezvous
    return expect(rec, (removed[0], "deleted", True, None), (removed[1], "deleted", False, None))
