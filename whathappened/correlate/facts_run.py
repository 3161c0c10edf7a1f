"""The facts a verdict carries beyond its cause: global rank, GPU identity, traceback frames, CUDA OOM figures,
training time and the last checkpoint. Each is absent (not guessed) when the evidence does not hold it.

The global rank comes, best first, from the pod's own log lines (torch prefixes them with the global rank), then
from its labels: a PyTorchJob's ``training.kubeflow.org/replica-index`` (the master is node 0, worker i is node
i+1, as the training operator sets RANK) or a JobSet/indexed Job's ``batch.kubernetes.io/job-completion-index``,
times the GPUs per pod (torchrun's nproc_per_node), plus the local rank when a line names one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from whathappened.correlate.evidence import Finding
from whathappened.correlate.facts_text import (
    frames_in,
    global_rank_in,
    local_rank_in,
    oom_figures,
    pci_key,
    pci_text,
    size,
)
from whathappened.correlate.fates import Fate
from whathappened.kinds import Kind
from whathappened.model import PodInfo, TimelineEvent

KUBEFLOW_INDEX = "training.kubeflow.org/replica-index"
KUBEFLOW_TYPE = "training.kubeflow.org/replica-type"
# the completion index of an indexed Job (JobSet's jobs are indexed Jobs); the annotation's twin label since 1.28
INDEX_LABELS = ("batch.kubernetes.io/job-completion-index", "jobset.sigs.k8s.io/job-index")


def text_of(event: TimelineEvent) -> str:
    """The event's original line when the collector kept it, else what the summary says."""
    raw = event.raw.get("line") if isinstance(event.raw, Mapping) else None
    return str(raw or event.attrs.get("text") or event.summary)


def run_facts(
    fate: Fate, finding: Finding, timeline: Sequence[TimelineEvent], checkpoints: Sequence[TimelineEvent]
) -> dict[str, Any]:
    """What a death's verdict says of the run: the rank, the GPU, the failing frames, CUDA OOM figures, how long it
    trained, and the last of ``checkpoints`` (the timeline's saves) before it."""
    own = [timeline[i] for i in fate.events]
    said: dict[str, Any] = {}
    rank = global_rank(fate.pod, own)
    if rank is not None:
        said["rank"] = rank
    gpu = gpu_identity(fate, finding, timeline)
    if gpu:
        said["gpu_identity"] = gpu
    trigger = timeline[finding.trigger] if finding.trigger is not None else None
    if trigger is not None and trigger.kind == Kind.APP_EXCEPTION:
        frames = frames_in(text_of(trigger))
        if frames:
            said["frames"] = [str(f) for f in frames]
    oom = next((oom_figures(text_of(e)) for e in own if e.kind == Kind.CUDA_OOM), None)
    if oom is not None:
        said["oom"] = {
            "tried": oom.tried,
            "total": oom.total,
            "free": oom.free,
            "allocated": oom.allocated,
            "reserved_unallocated": oom.reserved_unallocated,
            "fragmented": oom.fragmented,
            "advice": oom.advice(),
            "text": " · ".join(
                f"{name} {size(value)}"
                for name, value in (("asked", oom.tried), ("total", oom.total), ("free", oom.free),
                                    ("in tensors", oom.allocated), ("reserved unused", oom.reserved_unallocated))
                if value is not None
            ),
        }  # fmt: skip
    if fate.started is not None and finding.onset > fate.started:
        said["trained_s"] = round((finding.onset - fate.started).total_seconds())
    # rank 0 alone usually logs the save, and every rank rolls back to it: the experiment's last one counts
    checkpoint = last_checkpoint(checkpoints, finding.onset)
    if checkpoint is not None:
        said["checkpoint"] = checkpoint
    return said


def global_rank(pod: PodInfo, own: Sequence[TimelineEvent]) -> int | None:
    """torchrun's failure summary names the failed rank; else the latest line that names a rank (the one nearest
    the death: a pod of 8 ranks logs several); else the pod's labels and the local rank a line names."""
    for event in own:
        failed = event.attrs.get("failed_rank")
        if isinstance(failed, int) and not isinstance(failed, bool):
            return failed
    local = None
    for event in reversed(own):
        rank = event.attrs.get("rank")
        if isinstance(rank, int) and not isinstance(rank, bool):
            return rank
        text = text_of(event)
        rank = global_rank_in(text)
        if rank is not None:
            return rank
        if local is None:
            found = event.attrs.get("local_rank")
            local = found if isinstance(found, int) and not isinstance(found, bool) else local_rank_in(text)
    node_rank = _node_rank(pod.labels)
    if node_rank is None:
        return None
    per_node = max(1, pod.gpus_requested)
    if local is None and per_node > 1:
        return None  # the node's first rank is not this process's rank
    return node_rank * per_node + (local if local is not None else 0)


def _node_rank(labels: Mapping[str, str]) -> int | None:
    index = _int(labels.get(KUBEFLOW_INDEX))
    if index is not None:
        # the training operator gives the master RANK 0 and worker i RANK i+1
        return index + 1 if labels.get(KUBEFLOW_TYPE, "").lower() == "worker" else index
    for label in INDEX_LABELS:
        index = _int(labels.get(label))
        if index is not None:
            return index
    return None


def gpu_identity(fate: Fate, finding: Finding, timeline: Sequence[TimelineEvent]) -> dict[str, str]:
    """index, PCI address and UUID of the GPU the finding is about, joined across the events of its node
    (the kernel line gives PCI and UUID, dcgm-exporter gives the index and UUID, sometimes pci_bus_id)."""
    node = fate.node
    cited = [timeline[i] for i in (*finding.evidence, *([finding.trigger] if finding.trigger is not None else []))]
    seed: dict[str, str] = {}
    for event in cited:
        if event.subject.node not in (None, node):
            continue
        _merge(seed, _ids(event))
    if not seed:
        return {}
    for event in timeline:
        if event.subject.node != node:
            continue
        ids = _ids(event)
        if any(seed.get(k) == v for k, v in ids.items()):
            _merge(seed, ids)
    return seed


def _ids(event: TimelineEvent) -> dict[str, str]:
    ids: dict[str, str] = {}
    if event.subject.gpu is not None:
        ids["index"] = str(event.subject.gpu)
    uuid = event.attrs.get("uuid")
    if isinstance(uuid, str) and uuid.startswith("GPU-"):
        ids["uuid"] = uuid
    key = pci_key(event.attrs.get("pci") or event.attrs.get("pci_bus_id"))
    if key is not None:
        ids["pci"] = pci_text(key)
    return ids


def _merge(into: dict[str, str], ids: Mapping[str, str]) -> None:
    for key, value in ids.items():
        into.setdefault(key, value)


def last_checkpoint(events: Sequence[TimelineEvent], before: datetime) -> dict[str, Any] | None:
    saved = [e for e in events if e.kind == Kind.CHECKPOINT_SAVED and e.at <= before]
    if not saved:
        return None
    last = max(saved, key=lambda e: e.at)
    said: dict[str, Any] = {"at": last.at}
    step = last.attrs.get("step")
    if isinstance(step, int) and not isinstance(step, bool):
        said["step"] = step
    if last.attrs.get("path"):
        said["path"] = str(last.attrs["path"])
    return said


def describe_gpu(identity: Mapping[str, str]) -> str:
    """'GPU 3 (PCI 0004:00:00, GPU-0615...)' from what is known."""
    extra = [f"PCI {identity['pci']}" if "pci" in identity else "", identity.get("uuid", "")]
    inner = ", ".join(x for x in extra if x)
    name = f"GPU {identity['index']}" if "index" in identity else "GPU"
    return f"{name} ({inner})" if inner else name


def _int(value: object) -> int | None:
    try:
        return int(str(value)) if value is not None else None
    except ValueError:
        return None
