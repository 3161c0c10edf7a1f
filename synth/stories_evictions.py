"""Stories of pods the platform removed: evicted for node pressure, preempted with a spot VM, never scheduled."""

from __future__ import annotations

from datetime import timedelta

from synth.common import (
    cordon,
    end,
    killing,
    node_event,
    pod_event,
    training_chatter,
)
from synth.ids import Ids
from synth.spec import KEvent, Maintenance, Recording
from synth.story import Setup, begin, day, expect


def node_pressure_eviction(ids: Ids) -> Recording:
    s = Setup(
        "node-pressure-eviction",
        "The kubelet evicts the worker because its node runs low on memory.",
        "wav2vec2-distill-r1",
        "speech",
        "experiment",
        "indexed-job",
        "onprem-a100",
        "dgxa100",
        "dc2",
        day(11, 18, 9),
        1,
        gpus=4,
    )
    rec, nodes, pods = begin(ids, s)
    pod, node = pods[0], nodes[0]
    pod.memory = "400Gi"
    t = day(11, 18, 9, 44) + timedelta(seconds=20)
    training_chatter(rec, ids, pods, t)
    rec.node_conditions[node.name] = [("MemoryPressure", t - timedelta(seconds=10), True)]
    node_event(rec, node, t - timedelta(seconds=10), "NodeHasInsufficientMemory",
               f"Node {node.name} status is now: NodeHasInsufficientMemory")  # fmt: skip
    node_event(
        rec, node, t - timedelta(seconds=5), "EvictionThresholdMet", "Attempting to reclaim memory", type_="Warning"
    )
    why = (
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 48312Ki. Container "
        f"{pod.container} was using 471Gi, request is 400Gi, has larger consumption of memory. "
    )
    rec.events.append(pod_event(pod, t, "Evicted", why, type_="Warning"))
    killing(rec, pod, t + timedelta(seconds=1))
    pod.disruption = ("TerminationByKubelet", why, t)
    pod.status_reason, pod.status_message = "Evicted", why
    end(pod, t + timedelta(seconds=31), 137, "ContainerStatusUnknown")
    pod.term_message = "The container could not be located when the pod was terminated"
    return expect(rec, (pod, "node-pressure-eviction", True, None))


def spot_preemption(ids: Ids) -> Recording:
    s = Setup(
        "spot-preemption",
        "An AWS spot instance receives an interruption notice; node-termination-handler cordons and drains it, the "
        "learner is evicted and the node disappears.",
        "impala-procgen-seed3",
        "rl",
        "experiment",
        "indexed-job",
        "eks-g6e",
        "g6e-spot",
        "rl-eks",
        day(11, 19, 6),
        2,
        gpus=4,
    )
    rec, nodes, pods = begin(ids, s)
    victim, node = pods[1], nodes[1]
    for n in nodes:
        rec.node_labels[n.name] = {"eks.amazonaws.com/capacityType": "SPOT"}
    notice = day(11, 19, 6, 52) + timedelta(seconds=6)
    not_before = notice + timedelta(minutes=2)
    event_id = "spot-itn-" + ids.hex("spot-itn", node.name, length=10)
    training_chatter(rec, ids, pods, notice, speaker=victim)
    rec.maintenance.append(Maintenance(node.name, "aws", event_id, "spot-interruption", notice, not_before, not_before))
    drain = notice + timedelta(seconds=2)
    rec.taints[node.name] = [("aws-node-termination-handler/spot-itn", event_id, "NoSchedule", drain)]
    stamp = not_before.strftime("%Y-%m-%dT%H:%M:%SZ")
    node_event(rec, node, drain, "SpotInterruption", f"Spot Interruption notice for instance was sent at {stamp}",
               component="aws-node-termination-handler", type_="Warning")  # fmt: skip
    cordon(rec, node, drain, drain + timedelta(seconds=1))
    evict = drain + timedelta(seconds=3)
    victim.disruption = ("EvictionByEvictionAPI", "Eviction API: evicting", evict)
    victim.deletion_at = evict
    killing(rec, victim, evict)
    rec.say(victim, evict + timedelta(seconds=1), "received SIGTERM: saving actor state and shutting down learner")
    end(victim, evict + timedelta(seconds=9), 143)
    victim.gone_at = evict + timedelta(seconds=10)
    node_event(rec, node, evict + timedelta(seconds=20), "CordonAndDrain", "Node successfully cordoned and drained",
               component="aws-node-termination-handler")  # fmt: skip
    rec.node_lost[node.name] = not_before
    rec.node_gone[node.name] = not_before + timedelta(seconds=40)
    return expect(rec, (victim, "spot-preemption", True, None))


def unschedulable(ids: Ids) -> Recording:
    s = Setup(
        "unschedulable",
        "The job never starts: there are not enough free GPUs and part of the pool is cordoned.",
        "nemotron-340b-pt-r1",
        "research",
        "jobset.sigs.k8s.io/jobset-name",
        "jobset",
        "gke-a3mega",
        "a3mega",
        "research-gke",
        day(11, 19, 12),
        4,
        created_after=1800,
    )
    rec, nodes, pods = begin(ids, s)
    rec.events = []
    for node in nodes[:2]:
        rec.cordoned[node.name] = rec.meta.start
    reason = (
        f"0/{len(nodes)} nodes are available: 2 Insufficient nvidia.com/gpu, 2 node(s) were unschedulable. "
        f"preemption: 0/{len(nodes)} nodes are available: 2 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling."
    )
    for pod in pods:
        pod.node, pod.scheduled, pod.started, pod.ready, pod.ip = None, None, None, False, ""
        pod.unschedulable_message = reason
        rec.events.append(
            KEvent(
                at=pod.created + timedelta(seconds=1),
                reason="FailedScheduling",
                message=reason,
                kind="Pod",
                name=pod.name,
                namespace=pod.namespace,
                uid=pod.uid,
                component="default-scheduler",
                type="Warning",
                new_api=True,
                action="Scheduling",
                reporting_instance="default-scheduler-gke",
            )
        )
    return expect(rec, *((p, "unschedulable", True, None) for p in pods))
