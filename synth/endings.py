"""How a run ends, written once for the stories that tell one incident and for the fleet's month (synth/fleet.py):
a GPU off the bus, an uncorrectable memory error, a node lost, a user's deletion. Each writes into the recording
what the cluster would have recorded, from ``t`` on; the caller says who the victim and the other ranks are."""

from __future__ import annotations

from datetime import datetime, timedelta

from synth import messages as msg
from synth.common import end, killing, nccl_error_collateral, nccl_timeout_collateral, node_event, rank_crash, xid
from synth.spec import Counter, KEvent, Node, Pod, Recording


def off_the_bus(
    rec: Recording, node: Node, gpu: int, bad: Pod, others: list[Pod], t: datetime, gone_after: float = 45.0
) -> None:
    """Xid 79 on the GPU; DCGM reports it ``gone_after`` seconds more, then the GPU is gone from its list; its rank
    crashes with a CUDA error and the others hit the NCCL watchdog thirty minutes later."""
    xid(rec, node, gpu, t, 79, "GPU has fallen off the bus.", None)
    rec.kernel(node, t + timedelta(seconds=1), f"NVRM: GPU {node.gpus[gpu].kernel_pci}.0: GPU has fallen off the bus.")
    rec.gpu_gone[(node.name, gpu)] = t + timedelta(seconds=gone_after)
    rank_crash(rec, bad, t + timedelta(seconds=3), gpu, [msg.cuda_error("unspecified launch failure")])
    nccl_timeout_collateral(rec, others, t + timedelta(minutes=30, seconds=2), 91544)


def memory_error(rec: Recording, node: Node, gpu: int, bad: Pod, others: list[Pod], t: datetime) -> None:
    """A double-bit ECC error (Xid 48 and the DBE counter); its rank crashes, the others fail on NCCL."""
    xid(rec, node, gpu, t, 48, "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer "
        "at partition 3, subpartition 1.", 20931)  # fmt: skip
    rec.counters.append(Counter("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", node.name, gpu, ((t, 1.0),)))
    rank_crash(rec, bad, t + timedelta(seconds=2), gpu, [msg.cuda_error("uncorrectable ECC error encountered")])
    nccl_error_collateral(rec, others, t + timedelta(seconds=14), bad.rank0 + gpu)


def node_lost(rec: Recording, node: Node, dead: Pod, others: list[Pod], lost: datetime) -> datetime:
    """The node stops answering: NotReady after 40 s, the unreachable taints, the taint manager marks the pod for
    deletion five minutes on; the other ranks see InfiniBand completion errors and fail on NCCL. The eviction's
    time."""
    rec.node_lost[node.name] = lost
    seen = lost + timedelta(seconds=40)
    rec.node_ready[node.name] = [(seen, "unknown")]
    rec.taints[node.name] = [
        ("node.kubernetes.io/unreachable", "", "NoSchedule", seen),
        ("node.kubernetes.io/unreachable", "", "NoExecute", seen + timedelta(seconds=1)),
    ]
    node_event(
        rec, node, seen, "NodeNotReady", f"Node {node.name} status is now: NodeNotReady", component="node-controller"
    )
    rec.events.append(
        KEvent(at=seen, reason="NodeNotReady", message="Node is not ready", kind="Pod", name=dead.name,
               namespace=dead.namespace, uid=dead.uid, component="node-controller", type="Warning")
    )  # fmt: skip
    evict = seen + timedelta(seconds=301)
    rec.events.append(
        KEvent(at=evict, reason="TaintManagerEviction", message=f"Marking for deletion Pod {dead.namespace}/{dead.name}",
               kind="Pod", name=dead.name, namespace=dead.namespace, uid=dead.uid,
               component="taint-eviction-controller")
    )  # fmt: skip
    dead.kubelet_lost_at, dead.deletion_at, dead.ready = lost, evict, False
    dead.disruption = ("DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint", evict)
    for i, pod in enumerate(others):
        rec.say(pod, lost + timedelta(seconds=11 + i), msg.nccl_ib_completion_error(pod.hostname, 1700 + pod.rank0, 3,
                                                                                    node.ip))  # fmt: skip
    nccl_error_collateral(rec, others, lost + timedelta(seconds=14), dead.rank0 + 3)
    return evict


def user_deletion(rec: Recording, pods: list[Pod], t: datetime) -> None:
    """Someone deletes the job: each pod stopped (SIGTERM, exit 143) and removed, a second apart."""
    for i, pod in enumerate(pods):
        at = t + timedelta(seconds=i)
        killing(rec, pod, at)
        rec.say(pod, at + timedelta(seconds=1), msg.SIGTERM_AGENT)
        end(pod, at + timedelta(seconds=4), 143)
        pod.deletion_at, pod.gone_at = at, at + timedelta(seconds=5)
