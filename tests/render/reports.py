"""Hand-built reports for the HTML tests (the Xid 79 incident and a host maintenance drain), shaped like the shared
scenarios' incidents, with the helpers that build their timelines."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from whathappened.kinds import Kind, severity_of
from whathappened.model import (
    ContainerInfo,
    LostWork,
    NodeInfo,
    PodInfo,
    Report,
    SourceReport,
    SourceStatus,
    Subject,
    TimelineEvent,
    Verdict,
    Window,
)

T0 = datetime(2026, 11, 20, 6, 0, tzinfo=UTC)
HOSTILE = '</pre></details><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">\'"&'


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def ev(
    minutes: float,
    kind: Kind,
    summary: str,
    source: str = "logs",
    pod: str | None = None,
    node: str | None = None,
    gpu: str | None = None,
    raw: Any = None,
    **attrs: Any,
) -> TimelineEvent:
    return TimelineEvent(
        at=at(minutes),
        source=source,
        kind=kind.value,
        severity=severity_of(kind),
        summary=summary,
        subject=Subject(namespace="team-lm" if pod else None, pod=pod, node=node, gpu=gpu),
        attrs=attrs,
        raw=raw,
    )


def index_of(timeline: tuple[TimelineEvent, ...], kind: Kind, pod: str | None = None, node: str | None = None) -> int:
    for i, event in enumerate(timeline):
        if (
            event.kind == kind
            and (pod is None or event.subject.pod == pod)
            and (node is None or event.subject.node == node)
        ):
            return i
    raise LookupError(kind)


SOURCES = (
    SourceReport("kubernetes", SourceStatus.OK, "4 pods, 0 events, 4 nodes", requests=3, elapsed_s=0.05),
    SourceReport("prometheus", SourceStatus.OK, "12 series", requests=9, elapsed_s=0.4),
    SourceReport("logs", SourceStatus.OK, "41 documents", requests=2, elapsed_s=0.1),
)


def xid79_report() -> Report:
    """A GPU falls off the bus; its rank dies at once, the three others hit the NCCL watchdog 30 minutes later."""
    pods = [f"gpt-neox-20b-sweep3-workers-0-{i}" for i in range(4)]
    nodes = [f"gpu-node-{17 + i}" for i in range(4)]
    events = [
        ev(2, Kind.POD_SCHEDULED, f"Scheduled on {n}", "kubernetes", pod=p, node=n)
        for p, n in zip(pods, nodes, strict=True)
    ]
    events += [
        ev(2.75, Kind.CONTAINER_STARTED, "Started container pytorch", "kubernetes", pod=p, node=n)
        for p, n in zip(pods, nodes, strict=True)
    ]
    events += [
        ev(45, Kind.CHECKPOINT_SAVED, "saved checkpoint step 12000", pod=pods[0], node=nodes[0], step=12000),
        ev(
            58,
            Kind.GPU_XID,
            "NVRM: Xid (PCI:0000:9b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
            node=nodes[2],
            gpu="5",
            xid=79,
            pci="0000:9b:00",
            raw={
                "@timestamp": "2026-11-20T06:58:00.000Z",
                "message": "NVRM: Xid (PCI:0000:9b:00): 79",
                "host": {"name": nodes[2]},
            },
        ),
        ev(58.02, Kind.GPU_XID, "DCGM_FI_DEV_XID_ERRORS=79", "prometheus", pod=pods[2], node=nodes[2], gpu="5", xid=79),
        ev(58.07, Kind.CUDA_ERROR, "RuntimeError: CUDA error: unspecified launch failure", pod=pods[2], node=nodes[2]),
        ev(
            58.15,
            Kind.CONTAINER_TERMINATED,
            "pytorch exited 1 (Error)",
            "kubernetes",
            pod=pods[2],
            node=nodes[2],
            exit_code=1,
        ),
        ev(
            59,
            Kind.GPU_UTIL_DROP,
            "GPU utilization fell from 97% to 0%",
            "prometheus",
            pod=pods[0],
            node=nodes[0],
            gpu="0",
            before=97,
            after=0,
            samples=[[at(m).timestamp(), 96 if m < 58 else 0] for m in range(3, 92, 2)],
        ),
    ]
    for i in (0, 1, 3):
        events += [
            ev(
                88.05,
                Kind.NCCL_TIMEOUT,
                f"[Rank {i * 8}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=48211, OpType=ALLREDUCE) ran for 1800000 milliseconds",
                pod=pods[i],
                node=nodes[i],
                rank=i * 8,
                timeout_ms=1800000,
            ),
            ev(
                88.2,
                Kind.CONTAINER_TERMINATED,
                "pytorch exited 1 (Error)",
                "kubernetes",
                pod=pods[i],
                node=nodes[i],
                exit_code=1,
            ),
        ]
    timeline = tuple(sorted(events, key=lambda e: e.at))
    xid = index_of(timeline, Kind.GPU_XID)
    chain = (
        xid,
        index_of(timeline, Kind.CUDA_ERROR),
        index_of(timeline, Kind.CONTAINER_TERMINATED, pods[2]),
        index_of(timeline, Kind.NCCL_TIMEOUT, pods[0]),
    )
    root = Verdict(
        pods[2],
        "team-lm",
        nodes[2],
        "gpu-fallen-off-bus",
        "infrastructure",
        True,
        True,
        None,
        0.95,
        f"GPU 5 on {nodes[2]} fell off the bus (Xid 79) and rank 16 died with a CUDA error.",
        chain[:3],
        "Retry on other nodes; ask the cluster team to drain and check gpu-node-19.",
        "5",
        at(58.15),
    )
    collateral = [
        Verdict(
            pods[i],
            "team-lm",
            nodes[i],
            "nccl-timeout",
            "unknown",
            True,
            False,
            pods[2],
            0.85,
            "NCCL watchdog timed out waiting for the failed rank.",
            (index_of(timeline, Kind.NCCL_TIMEOUT, pods[i]),),
            ended=at(88.2),
        )
        for i in (0, 1, 3)
    ]
    return Report(
        experiment="gpt-neox-20b-sweep3",
        namespace="team-lm",
        window=Window(T0, at(120)),
        sources=SOURCES,
        pods=tuple(
            PodInfo(
                p,
                "team-lm",
                node=n,
                phase="Failed",
                started=at(2.75),
                ended=at(88.2) if p != pods[2] else at(58.15),
                gpus_requested=8,
                containers=(ContainerInfo("pytorch", state="terminated", exit_code=1),),
            )
            for p, n in zip(pods, nodes, strict=True)
        ),
        nodes=tuple(NodeInfo(n, provider="azure", gpu_product="NVIDIA-H100-80GB-HBM3", gpu_count=8) for n in nodes),
        timeline=timeline,
        verdicts=(root, *collateral),
        root_cause=root,
        next_step=root.next_step,
        lost_work=LostWork(gpu_hours=57.3, since=at(45), until=at(58), basis="checkpoint"),
        chain=chain,
    )


def maintenance_report() -> Report:
    """An Azure maintenance notice, a cordon and drain, the eviction of one worker, NCCL errors on the rest."""
    pods = [f"llama-70b-run7-worker-{i}" for i in range(4)]
    nodes = [f"aks-gpu-12345678-vmss00000{i}" for i in range(4)]
    notice = {
        "EventId": "A1B2",
        "EventType": "Reboot",
        "ResourceType": "VirtualMachine",
        "NotBefore": "Fri, 20 Nov 2026 07:16:00 GMT",
    }
    events = [
        ev(
            61,
            Kind.MAINTENANCE_NOTICE,
            "Azure Reboot scheduled, not before 07:16 UTC",
            "prometheus",
            node=nodes[2],
            raw=notice,
            provider="azure",
            event_type="Reboot",
            event_id="A1B2",
        ),
        ev(62, Kind.NODE_CORDONED, "Node marked unschedulable", "kubernetes", node=nodes[2]),
        ev(62.5, Kind.DRAIN, "Draining node for maintenance", "kubernetes", node=nodes[2]),
        ev(63, Kind.EVICTION_API, "Evicted by the eviction API (drain)", "kubernetes", pod=pods[2], node=nodes[2]),
        ev(
            63.02,
            Kind.SIGTERM_RECEIVED,
            "Received Signals.SIGTERM death signal, shutting down workers",
            pod=pods[2],
            node=nodes[2],
        ),
        ev(
            63.3,
            Kind.CONTAINER_TERMINATED,
            "pytorch exited 143",
            "kubernetes",
            pod=pods[2],
            node=nodes[2],
            exit_code=143,
        ),
    ]
    for i in (0, 1, 3):
        events += [
            ev(
                63.52,
                Kind.NCCL_ERROR,
                "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
                pod=pods[i],
                node=nodes[i],
                remote=True,
            ),
            ev(
                63.9,
                Kind.CONTAINER_TERMINATED,
                "pytorch exited 1",
                "kubernetes",
                pod=pods[i],
                node=nodes[i],
                exit_code=1,
            ),
        ]
    timeline = tuple(sorted(events, key=lambda e: e.at))
    chain = tuple(
        index_of(timeline, k, p)
        for k, p in (
            (Kind.MAINTENANCE_NOTICE, None),
            (Kind.NODE_CORDONED, None),
            (Kind.EVICTION_API, pods[2]),
            (Kind.NCCL_ERROR, pods[0]),
        )
    )
    root = Verdict(
        pods[2],
        "research",
        nodes[2],
        "host-maintenance",
        "infrastructure",
        True,
        True,
        None,
        0.9,
        "Azure scheduled a reboot of the host; the node was drained and the worker evicted.",
        chain[:3],
        ended=at(63.3),
    )
    others = [
        Verdict(
            pods[i],
            "research",
            nodes[i],
            "nccl-error",
            "unknown",
            True,
            False,
            pods[2],
            0.8,
            "NCCL error after the evicted rank left.",
            (index_of(timeline, Kind.NCCL_ERROR, pods[i]),),
            ended=at(63.9),
        )
        for i in (0, 1, 3)
    ]
    return Report(
        "llama-70b-run7",
        "research",
        Window(T0, at(120)),
        SOURCES,
        tuple(PodInfo(p, "research", node=n, started=at(1)) for p, n in zip(pods, nodes, strict=True)),
        tuple(NodeInfo(n, provider="azure") for n in nodes),
        timeline,
        (root, *others),
        root,
        "Resubmit; the host is back after maintenance.",
        None,
        chain,
    )
