"""The scale benchmark's experiment: hundreds of pods on as many 8-GPU nodes over hours, tens of thousands of
Kubernetes events and a million log documents, with one real fault (a GPU that falls off the bus) among the noise.
With ``attempts`` above one, the JobSet was restarted before that: each earlier attempt ended by a GPU fault of its
own (alternately a double-bit ECC error and a GPU fallen off the bus, each on another node), its other ranks
failing on NCCL errors, then JobSet's failure policy recreating every child Job (label ``restart-attempt``).

Everything is streamed: events and log documents are written as they are made, metrics family by family.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from synth import messages as msg
from synth.common import lifecycle_events, nccl_error_collateral, rank_crash, without_gpus, xid
from synth.frameworks import make_pods
from synth.ids import Ids
from synth.ksm import write_metrics
from synth.kube import event_object
from synth.logs import BulkWriter
from synth.spec import DcgmStyle, KEvent, Node, Pod, Recording, iso_ms
from synth.story import Setup, begin, day
from synth.writer import scenario_yaml, write_kubernetes

RESTART_ATTEMPT = "jobset.sigs.k8s.io/restart-attempt"
JOBSET_UID = "jobset.sigs.k8s.io/jobset-uid"
SCALE_FIELDS = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_GPU_TEMP")


@dataclass(frozen=True, slots=True)
class ScaleOptions:
    pods: int = 512
    seed: int = 20261120
    hours: float = 6.0
    scrape: int = 15
    ksm_scrape: int = 30
    events: int | None = None
    logs: int | None = None
    fields: tuple[str, ...] = SCALE_FIELDS
    attempts: int = 1
    # How long the API server keeps events (kube-apiserver --event-ttl); None: the whole window and an hour more.
    # A TTL shorter than the window archives every event in the log store too, as an event exporter does.
    event_ttl_hours: float | None = None

    # Events and log documents keep the 512-pod, 6-hour experiment's density per pod-hour.
    @property
    def event_count(self) -> int:
        return self.events if self.events is not None else round(50_000 * self.pods / 512 * self.hours / 6)

    @property
    def log_count(self) -> int:
        return self.logs if self.logs is not None else round(1_000_000 * self.pods / 512 * self.hours / 6)


def build(opts: ScaleOptions, ids: Ids) -> tuple[Recording, Pod, datetime]:
    experiment = f"llama4-scout-pretrain-{opts.pods}n"
    s = Setup(
        f"scale-{opts.pods}",
        f"{opts.pods} pods on {opts.pods} nodes x 8 GPUs over {opts.hours:g} h: GPU 6 of one node falls off "
        "the bus; every other rank hits the NCCL watchdog timeout ten minutes later. Noise: a benign Xid 63 elsewhere, "
        "eval jobs coming and going, a flapping readiness probe, an unschedulable sweep, NIC links re-training.",
        experiment,
        "pretrain",
        "jobset.sigs.k8s.io/jobset-name",
        "jobset",
        "aks-h100",
        "ndh100v5",
        "frontier-aks",
        day(11, 18, 0),
        opts.pods,
        hours=opts.hours,
        created_after=-900,
        scrape=opts.scrape,
        dcgm=DcgmStyle(fields=opts.fields),
    )
    rec, nodes, pods = begin(ids, s)
    rec.ksm_scrape_seconds = opts.ksm_scrape
    if opts.event_ttl_hours is None:
        rec.event_ttl = timedelta(hours=opts.hours + 1)  # a benchmark cluster keeping events past the default hour
    else:
        rec.event_ttl = timedelta(hours=opts.event_ttl_hours)
        rec.archive_events = opts.event_ttl_hours < opts.hours
    if opts.hours * 60 < 15 * opts.attempts:
        raise ValueError(
            "the scale window must give each attempt at least 15 minutes: the last attempt's collateral ranks time "
            "out 10 minutes after its fault"
        )
    expected: list[dict[str, Any]] = []
    for number in range(1, opts.attempts):
        expected += _earlier_attempt(rec, ids, s, opts, pods, number)
        pods = _restarted(rec, ids, s, nodes, pods, number)
    victim = pods[ids.number(0, opts.pods - 1, "victim")]
    assert victim.node is not None
    latest = timedelta(hours=opts.hours) - timedelta(minutes=12)
    fault = s.start + min(timedelta(hours=opts.hours * 0.7, seconds=ids.number(0, 600, "fault")), latest)
    xid(rec, victim.node, 6, fault, 79, "GPU has fallen off the bus.", None)
    rec.gpu_gone[(victim.node.name, 6)] = fault
    # Noise a large fleet always has: a row-remap event (Xid 63, no action needed) on another rank's GPU.
    other = pods[(pods.index(victim) + 7) % len(pods)]
    if other is not victim and other.node is not None:
        remap = "Row Remapper: New row (0x00000000007ab1c0) was marked for remapping, reset gpu to activate."
        xid(rec, other.node, 2, s.start + timedelta(minutes=40), 63, remap, 80211)
    rank_crash(rec, victim, fault + timedelta(seconds=4), 6, [msg.cuda_error("unspecified launch failure")])
    for i, pod in enumerate(p for p in pods if p is not victim):
        at = fault + timedelta(minutes=10, seconds=3 + i % 7)
        for j, line in enumerate(msg.nccl_timeout(pod.rank0, at, 48211, "ALLREDUCE", 262144000, 600000)):
            rec.say(pod, at + timedelta(seconds=j), line)
        pod.finished, pod.exit_code, pod.term_reason, pod.final_phase, pod.ready = (
            at + timedelta(seconds=5),
            134,
            "Error",
            "Failed",
            False,
        )
    expected.append({"pod": victim.name, "cause": "gpu-fallen-off-bus", "root": True})
    expected += [
        {"pod": p.name, "cause": "nccl-timeout", "root": False, "caused_by": victim.name}
        for p in pods
        if p is not victim
    ]
    rec.meta = replace(rec.meta, expected=tuple(expected))
    return rec, victim, fault


# The earlier attempts' faults, in turn: (Xid, its NVRM text, the CUDA error the rank raised, the cause)
EARLIER_FAULTS = (
    (
        48,
        "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 2, "
        "subpartition 0.",
        "uncorrectable ECC error encountered",
        "gpu-memory-error",
    ),
    (79, "GPU has fallen off the bus.", "unspecified launch failure", "gpu-fallen-off-bus"),
)


def attempt_fault_at(opts: ScaleOptions, start: datetime, number: int) -> datetime:
    """When attempt ``number`` (1-based, earlier than the last) met its fault: the window's first 60 % shared out
    between the earlier attempts, the last attempt's fault at 70 % as with one attempt."""
    share = opts.hours * 0.6 / max(opts.attempts - 1, 1)
    return start + timedelta(hours=share * (number - 0.4))


def _earlier_attempt(
    rec: Recording, ids: Ids, s: Setup, opts: ScaleOptions, pods: list[Pod], number: int
) -> list[dict[str, Any]]:
    """Attempt ``number`` ends: one GPU faults, its rank raises the CUDA error, every other rank fails on the
    NCCL error its communicator reports when a peer is gone."""
    code, text, cuda, cause = EARLIER_FAULTS[(number - 1) % len(EARLIER_FAULTS)]
    victim = pods[ids.number(0, opts.pods - 1, "victim", number)]
    assert victim.node is not None
    gpu = (number * 3) % 8
    fault = attempt_fault_at(opts, s.start, number) + timedelta(seconds=ids.number(0, 300, "fault", number))
    xid(rec, victim.node, gpu, fault, code, text, None if code == 79 else 30211 + number)
    if code == 79:
        rec.gpu_gone[(victim.node.name, gpu)] = fault
    rank_crash(rec, victim, fault + timedelta(seconds=3), gpu, [msg.cuda_error(cuda)])
    others = [p for p in pods if p is not victim]
    nccl_error_collateral(rec, others, fault + timedelta(seconds=13), victim.rank0 + gpu)
    return [{"pod": victim.name, "cause": cause, "root": True}] + [
        {"pod": p.name, "cause": "nccl-error", "root": False, "caused_by": victim.name} for p in others
    ]


def _restarted(rec: Recording, ids: Ids, s: Setup, nodes: list[Node], pods: list[Pod], number: int) -> list[Pod]:
    """JobSet's failure policy: every child Job deleted and created again, the pods labelled with the next
    restart-attempt; the JobSet (its uid label) is the same one. A GPU gone from the bus is left out of the new
    pod's devices."""
    ended = max(p.finished for p in pods if p.finished is not None)
    restarted = ended + timedelta(seconds=20)
    for pod in pods:
        pod.deletion_at, pod.gone_at = restarted, restarted + timedelta(seconds=5)
    again = make_pods(
        Ids(ids.seed + number), s.framework, s.experiment, s.namespace, nodes, created=restarted + timedelta(seconds=6),
        label_key=s.label_key,
    )  # fmt: skip
    jobset_uid = pods[0].labels[JOBSET_UID]
    for pod in again:
        pod.labels = {**pod.labels, RESTART_ATTEMPT: str(number), JOBSET_UID: jobset_uid}
        gone = {g for (node, g), at in rec.gpu_gone.items() if pod.node is not None and node == pod.node.name}
        without_gpus(pod, gone)
    rec.pods.extend(again)
    lifecycle_events(rec, again)
    return again


def _noise_events(rec: Recording, ids: Ids, count: int) -> list[KEvent]:
    """Other workloads of a busy namespace: eval jobs coming and going, a flapping inference readiness probe, a
    sweep that cannot be scheduled, a checkpoint-GC CronJob."""
    start, span = rec.meta.start, (rec.meta.end - rec.meta.start).total_seconds()
    ns = rec.meta.namespace
    out = []
    for i in range(count):
        t = start + timedelta(seconds=span * i / max(count, 1))
        kind = i % 5
        if kind == 0:
            pod = f"eval-harness-{ids.suffix('eval', i // 5, length=10)}"
            out.append(
                KEvent(
                    at=t,
                    reason="Scheduled",
                    message=f"Successfully assigned {ns}/{pod} to aks-cpupool-18332207-vmss{i % 40:06d}",
                    kind="Pod",
                    name=pod,
                    namespace=ns,
                    component="default-scheduler",
                    new_api=True,
                    action="Binding",
                )
            )
        elif kind == 1:
            pod = f"eval-harness-{ids.suffix('eval', i // 5, length=10)}"
            out.append(
                KEvent(
                    at=t,
                    reason="Started",
                    message="Started container harness",
                    kind="Pod",
                    name=pod,
                    namespace=ns,
                    component="kubelet",
                    field_path="spec.containers{harness}",
                    host=f"aks-cpupool-18332207-vmss{i % 40:06d}",
                )
            )
        elif kind == 2:
            pod = f"reward-model-serve-7c9d5b8f4-{ids.suffix('rm', i % 12)}"
            out.append(
                KEvent(
                    at=t,
                    reason="Unhealthy",
                    type="Warning",
                    message=f"Readiness probe failed: HTTP probe failed with statuscode: {503 if i % 2 else 500}",
                    kind="Pod",
                    name=pod,
                    namespace=ns,
                    component="kubelet",
                    field_path="spec.containers{server}",
                    count=1 + i % 9,
                )
            )
        elif kind == 3:
            pod = f"hparam-sweep-{i % 300:03d}-0-{ids.suffix('sweep', i % 300)}"
            out.append(
                KEvent(
                    at=t,
                    reason="FailedScheduling",
                    type="Warning",
                    message=f"0/{rec.meta.expected and len(rec.nodes) + 40} nodes are "
                    f"available: 40 node(s) didn't match Pod's node affinity/selector, {len(rec.nodes)} Insufficient nvidia.com/gpu. "
                    "preemption: 0/552 nodes are available: 552 No preemption victims found for incoming pod.",
                    kind="Pod",
                    name=pod,
                    namespace=ns,
                    component="default-scheduler",
                    new_api=True,
                    action="Scheduling",
                )
            )
        else:
            job = f"ckpt-gc-{29_000_000 + i}"
            out.append(
                KEvent(
                    at=t,
                    reason="SuccessfulCreate",
                    message=f"Created job {job}",
                    kind="CronJob",
                    name="ckpt-gc",
                    namespace=ns,
                    component="cronjob-controller",
                    api_version="batch/v1",
                )
            )
    return out


def _all_events(rec: Recording, ids: Ids, opts: ScaleOptions) -> list[KEvent]:
    events = rec.events + _noise_events(rec, ids, max(opts.event_count - len(rec.events), 0))
    events.sort(key=lambda e: (e.last_seen, e.name))
    return events


def _write_events(rec: Recording, events: list[KEvent], folder: Path) -> int:
    """The namespace's events as the API server holds them when the experiment is captured: its TTL's worth."""
    horizon = rec.meta.captured_at - rec.event_ttl
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    with (folder / "events.json").open("w") as out:
        out.write('{\n    "apiVersion": "v1",\n    "items": [\n')
        for i, e in enumerate(events):
            if e.last_seen < horizon or e.at > rec.meta.captured_at:
                continue
            out.write(("," if written else "") + json.dumps(event_object(e, i), indent=4) + "\n")
            written += 1
        out.write(
            '    ],\n    "kind": "EventList",\n    "metadata": {\n        "resourceVersion": "48213377"\n    }\n}\n'
        )
    return written


def _kernel_noise(i: int) -> str:
    """Benign kernel chatter of a large fleet: NIC links re-training after maintenance of the fabric."""
    bus, port = f"{0x0C + i % 8:02x}", f"ibp{0x0C + i % 8}s0"
    return (
        f"mlx5_core 0000:{bus}:00.0: Port module event: module {i % 8}, Cable plugged",
        f"mlx5_core 0000:{bus}:00.0 {port}: Link up",
        f"IPv6: ADDRCONF(NETDEV_CHANGE): {port}: link becomes ready",
    )[i % 3]


def _write_logs(rec: Recording, opts: ScaleOptions, path: Path, archived: list[KEvent]) -> int:
    """The story's own lines, kernel noise, per-rank progress lines filling the rest of the budget, and the
    ``archived`` events (every one of the window, as an event exporter ships them)."""
    by_name = {p.name: p for p in rec.pods}
    nodes = {n.name: n for n in rec.nodes}
    stamps: dict[float, str] = {}
    with path.open("w") as stream:
        bulk = BulkWriter(stream)
        for line in sorted(rec.logs, key=lambda x: x.at):
            if line.node:
                bulk.kernel(nodes[line.node], line.at, line.message, line.severity)
            else:
                bulk.container(by_name[line.pod], line.at, line.message, line.stream)
        for i, event in enumerate(archived):
            bulk.event(event_object(event, i), event.last_seen)
        kernel_budget = opts.log_count // 100
        for i in range(kernel_budget):
            node = rec.nodes[i % len(rec.nodes)]
            t = rec.meta.start + timedelta(
                seconds=(rec.meta.end - rec.meta.start).total_seconds() * i / max(kernel_budget, 1)
            )
            bulk.kernel(
                node,
                t,
                _kernel_noise(i),
                severity="info",
            )
        remaining = max(opts.log_count - bulk.count, 0)
        per_pod, extra = divmod(remaining, len(rec.pods))
        for p_index, pod in enumerate(rec.pods):
            n = per_pod + (1 if p_index < extra else 0)
            stop = pod.finished or rec.meta.end
            begin_at = (pod.started or rec.meta.start) + timedelta(seconds=60)
            step = (stop - begin_at).total_seconds() / max(n, 1)
            base = begin_at.timestamp()
            for k in range(n):
                sec = round(base + k * step, 3)
                stamp = stamps.get(sec)
                if stamp is None:
                    stamp = stamps[sec] = iso_ms(datetime.fromtimestamp(sec, tz=rec.meta.start.tzinfo))
                bulk.write_container_raw(
                    pod,
                    stamp,
                    f"[rank{pod.rank0 + k % 8}] step {20000 + k} loss {2.0 + (k % 97) / 200:.4f} "
                    f"grad_norm {0.3 + (k % 13) / 40:.3f} tokens/s {395000 + (k * 7919) % 20000}",
                )
        return bulk.count


def write_scale(opts: ScaleOptions, folder: Path) -> dict[str, Any]:
    ids = Ids(opts.seed)
    rec, victim, fault = build(opts, ids)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "scenario.yaml").write_text(scenario_yaml(rec))
    story_events, rec.events = rec.events, []
    write_kubernetes(rec, folder / "kubernetes")  # pods and nodes; events.json is streamed next
    rec.events = story_events
    events = _all_events(rec, ids, opts)
    events_written = _write_events(rec, events, folder / "kubernetes")
    samples = write_metrics(rec, folder / "prometheus.om.gz", opts.seed, level=1)  # level 1: gzip is the bottleneck
    docs = _write_logs(rec, opts, folder / "logs.ndjson", events if rec.archive_events else [])
    return {
        "pods": len(rec.pods),
        "attempts": opts.attempts,
        "nodes": len(rec.nodes),
        "events": events_written,
        "log_documents": docs,
        "samples": samples,
        "root": victim.name,
        "fault": fault.isoformat(),
    }
