"""The scale benchmark's experiment: hundreds of pods on as many 8-GPU nodes over hours, tens of thousands of
Kubernetes events and a million log documents, with one real fault (a GPU that falls off the bus) among the noise.

Everything is streamed: events and log documents are written as they are made, metrics family by family.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from synth import messages as msg
from synth.common import rank_crash, xid
from synth.ids import Ids
from synth.ksm import write_metrics
from synth.kube import event_object
from synth.logs import BulkWriter
from synth.spec import DcgmStyle, KEvent, Pod, Recording, iso_ms
from synth.story import Setup, begin, day
from synth.writer import scenario_yaml, write_kubernetes

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

    @property
    def event_count(self) -> int:
        return self.events if self.events is not None else 50_000 * self.pods // 512

    @property
    def log_count(self) -> int:
        return self.logs if self.logs is not None else 1_000_000 * self.pods // 512


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
    rec, _nodes, pods = begin(ids, s)
    rec.ksm_scrape_seconds = opts.ksm_scrape
    rec.event_ttl = timedelta(hours=opts.hours + 1)  # a benchmark cluster keeping events longer than the default hour
    victim = pods[ids.number(0, opts.pods - 1, "victim")]
    assert victim.node is not None
    if opts.hours * 60 < 15:
        raise ValueError(
            "the scale window must be at least 15 minutes: the collateral ranks time out 10 minutes after the fault"
        )
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
    expected: list[dict[str, Any]] = [{"pod": victim.name, "cause": "gpu-fallen-off-bus", "root": True}]
    expected += [
        {"pod": p.name, "cause": "nccl-timeout", "root": False, "caused_by": victim.name}
        for p in pods
        if p is not victim
    ]
    rec.meta = replace(rec.meta, expected=tuple(expected))
    return rec, victim, fault


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


def _write_events(rec: Recording, ids: Ids, opts: ScaleOptions, folder: Path) -> int:
    events = rec.events + _noise_events(rec, ids, max(opts.event_count - len(rec.events), 0))
    events.sort(key=lambda e: (e.last_seen, e.name))
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "events.json").open("w") as out:
        out.write('{\n    "apiVersion": "v1",\n    "items": [\n')
        for i, e in enumerate(events):
            out.write(("," if i else "") + json.dumps(event_object(e, i), indent=4) + "\n")
        out.write(
            '    ],\n    "kind": "EventList",\n    "metadata": {\n        "resourceVersion": "48213377"\n    }\n}\n'
        )
    return len(events)


def _kernel_noise(i: int) -> str:
    """Benign kernel chatter of a large fleet: NIC links re-training after maintenance of the fabric."""
    bus, port = f"{0x0C + i % 8:02x}", f"ibp{0x0C + i % 8}s0"
    return (
        f"mlx5_core 0000:{bus}:00.0: Port module event: module {i % 8}, Cable plugged",
        f"mlx5_core 0000:{bus}:00.0 {port}: Link up",
        f"IPv6: ADDRCONF(NETDEV_CHANGE): {port}: link becomes ready",
    )[i % 3]


def _write_logs(rec: Recording, opts: ScaleOptions, path: Path) -> int:
    """The story's own lines, kernel noise, and per-rank progress lines filling the rest of the budget."""
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
    events_written = _write_events(rec, ids, opts, folder / "kubernetes")
    samples = write_metrics(rec, folder / "prometheus.om.gz", opts.seed, level=1)  # level 1: gzip is the bottleneck
    docs = _write_logs(rec, opts, folder / "logs.ndjson")
    return {
        "pods": len(rec.pods),
        "nodes": len(rec.nodes),
        "events": events_written,
        "log_documents": docs,
        "samples": samples,
        "root": victim.name,
        "fault": fault.isoformat(),
    }
