"""Building blocks the stories share: a healthy experiment (pods, lifecycle events, training chatter) and the
usual ways ranks die (a fault on one rank, NCCL errors or timeouts on the others, torchrun tearing ranks down)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta

from synth import messages as msg
from synth.ids import Ids
from synth.spec import KEvent, Node, Pod, Recording, Run


def pod_event(
    pod: Pod,
    t: datetime,
    reason: str,
    message: str,
    *,
    type_: str = "Normal",
    last: datetime | None = None,
    count: int = 1,
    component: str = "kubelet",
) -> KEvent:
    """An event about a pod's container as the kubelet records it (other components: no host, no fieldPath)."""
    kubelet = component == "kubelet"
    return KEvent(
        at=t,
        reason=reason,
        message=message,
        kind="Pod",
        name=pod.name,
        namespace=pod.namespace,
        uid=pod.uid,
        component=component,
        type=type_,
        host=pod.node.name if kubelet and pod.node else "",
        field_path=f"spec.containers{{{pod.container}}}" if kubelet else "",
        last=last,
        count=count,
    )


def lifecycle_events(rec: Recording, pods: list[Pod]) -> None:
    """Scheduled (events.k8s.io, as the scheduler writes it), then the kubelet's Pulling/Pulled/Created/Started."""
    for i, pod in enumerate(pods):
        if pod.scheduled is None or pod.node is None:
            continue
        node = pod.node.name
        rec.events.append(
            KEvent(
                at=pod.scheduled,
                reason="Scheduled",
                message=f"Successfully assigned {pod.namespace}/{pod.name} to {node}",
                kind="Pod",
                name=pod.name,
                namespace=pod.namespace,
                uid=pod.uid,
                component="default-scheduler",
                new_api=True,
                action="Binding",
                reporting_instance=f"default-scheduler-{node}",
            )
        )
        if pod.started is None:
            continue
        if i % 3 == 0:
            rec.events.append(
                pod_event(pod, pod.scheduled + timedelta(seconds=1), "Pulling", f'Pulling image "{pod.image}"')
            )
            pulled = msg.pulled(pod.image, 19.2 + i, 9_873_112_084)
        else:
            pulled = f'Container image "{pod.image}" already present on machine'
        rec.events.append(pod_event(pod, pod.started - timedelta(seconds=2), "Pulled", pulled))
        rec.events.append(
            pod_event(pod, pod.started - timedelta(seconds=1), "Created", f"Created container {pod.container}")
        )
        rec.events.append(pod_event(pod, pod.started, "Started", f"Started container {pod.container}"))


def training_chatter(
    rec: Recording,
    ids: Ids,
    pods: list[Pod],
    until: datetime,
    *,
    style: str = "steps",
    every: int = 300,
    checkpoint_every: int = 1800,
    ckpt_path: str = "/checkpoints",
    speaker: Pod | None = None,
) -> None:
    """Process-group init on every pod; loss lines and checkpoints on global rank 0 until `until`."""
    world = sum(p.local_ranks for p in pods if p.gpu_request)
    rng = ids.rng("chatter", rec.meta.name)
    for pod in pods:
        if pod.started is None or not pod.gpu_request:
            continue
        t = pod.started + timedelta(seconds=20)
        rec.say(pod, t, msg.pg_init(pod.rank0, world), "stdout")
        host = pod.hostname or pod.name
        rec.say(pod, t + timedelta(seconds=3), msg.nccl_ib_info(host, 1700 + pod.rank0, pod.ip), "stdout")
    first = speaker or next((p for p in pods if p.gpu_request and p.started), None)
    if first is None or first.started is None:
        return
    t = first.started + timedelta(seconds=45)
    step = 12000 + ids.number(0, 40, rec.meta.name) * 100
    last_ckpt = t
    while t < until:
        loss = 2.0 + rng.random() * 0.5
        if style == "megatron":
            rec.say(first, t, msg.megatron_line(step, 50000, loss, 2400 + rng.random() * 60), "stdout")
        else:
            rec.say(first, t, msg.step_line(step, loss, 400000 + rng.randint(0, 19000)), "stdout")
        if (t - last_ckpt).total_seconds() >= checkpoint_every:
            line = (
                msg.megatron_checkpoint(step, ckpt_path)
                if style == "megatron"
                else msg.checkpoint_line(step, ckpt_path)
            )
            rec.say(first, t + timedelta(seconds=40), line, "stdout")
            last_ckpt = t
        t += timedelta(seconds=every)
        step += 25


def end(pod: Pod, t: datetime, exit_code: int, reason: str = "Error", phase: str = "Failed") -> None:
    pod.finished, pod.exit_code, pod.term_reason = t, exit_code, reason
    pod.final_phase = phase  # type: ignore[assignment]
    pod.ready = False


def killing(rec: Recording, pod: Pod, t: datetime, message: str | None = None) -> None:
    rec.events.append(pod_event(pod, t, "Killing", message or f"Stopping container {pod.container}"))


def node_event(
    rec: Recording,
    node: Node,
    t: datetime,
    reason: str,
    message: str,
    component: str = "kubelet",
    type_: str = "Normal",
) -> None:
    rec.events.append(
        KEvent(
            at=t,
            reason=reason,
            message=message,
            kind="Node",
            name=node.name,
            namespace="default",
            uid=node.name,
            component=component,
            host=node.name if component == "kubelet" else "",
            type=type_,
        )
    )


def cordon(rec: Recording, node: Node, t: datetime, reported: datetime | None = None) -> None:
    """The node marked unschedulable at ``t``; the kubelet's NodeNotSchedulable event at ``reported`` (or ``t``)."""
    rec.cordoned[node.name] = t
    node_event(rec, node, reported or t, "NodeNotSchedulable", f"Node {node.name} status is now: NodeNotSchedulable")


def xid(
    rec: Recording, node: Node, gpu: int, t: datetime, code: int, text: str, pid: int | None, first: bool = True
) -> None:
    g = node.gpus[gpu]
    if first:
        rec.kernel(node, t - timedelta(seconds=1), msg.nvrm_gpu_at(g.kernel_pci, g.uuid))
    rec.kernel(node, t, msg.nvrm_xid(g.kernel_pci, code, text, pid))
    rec.xids.setdefault((node.name, gpu), []).append((t, code))


def rank_crash(rec: Recording, pod: Pod, t: datetime, local_rank: int, lines: list[str], exit_at: float = 8.0) -> None:
    """One rank raises; torchrun reports the child failure and the pod exits 1."""
    for i, line in enumerate(lines):
        rec.say(pod, t + timedelta(seconds=i), line)
    host = pod.hostname or pod.name
    pid = 4000 + local_rank
    rec.say(pod, t + timedelta(seconds=exit_at - 3), msg.torchrun_failed(local_rank, pid, 1))
    rec.say(
        pod,
        t + timedelta(seconds=exit_at - 2),
        msg.child_failed("train.py", t, host, pod.rank0 + local_rank, local_rank, 1, pid),
    )
    end(pod, t + timedelta(seconds=exit_at), 1)


def nccl_error_collateral(rec: Recording, pods: list[Pod], t: datetime, peer_rank: int) -> None:
    for i, pod in enumerate(pods):
        at = t + timedelta(seconds=i % 3)
        for j, line in enumerate(msg.nccl_remote_error(pod.rank0, at, peer_rank)):
            rec.say(pod, at + timedelta(seconds=j), line)
        end(pod, at + timedelta(seconds=6 + i % 2), 1)


def nccl_timeout_collateral(rec: Recording, pods: list[Pod], t: datetime, seq: int, timeout_ms: int = 1800000) -> None:
    for i, pod in enumerate(pods):
        at = t + timedelta(seconds=i)
        for j, line in enumerate(msg.nccl_timeout(pod.rank0, at, seq, "ALLREDUCE", 262144000, timeout_ms)):
            rec.say(pod, at + timedelta(seconds=j), line)
        end(pod, at + timedelta(seconds=5), 134)


def torchrun_teardown(rec: Recording, pods: list[Pod], t: datetime) -> None:
    """The agents of the other nodes stop their local workers: SIGTERM to each child, exit 143 after a grace."""
    for i, pod in enumerate(pods):
        at = t + timedelta(seconds=i)
        rec.say(pod, at, msg.sigterm_closing(900 + pod.rank0))
        end(pod, at + timedelta(seconds=5), 143)


def without_gpus(pod: Pod, gone: Collection[int]) -> None:
    """The pod scheduled anew on a node that lost these GPUs: it gets, and asks for, the others only."""
    pod.gpu_indices = tuple(g for g in pod.gpu_indices if g not in gone)
    pod.gpu_request = len(pod.gpu_indices)


def restart(pod: Pod, started: datetime, finished: datetime, exit_code: int, reason: str = "Error") -> None:
    pod.runs.append(Run(started, finished, exit_code, reason))
