"""How the HTML report draws each kind of event: marker categories (shape, colour, legend) and short tags."""

from __future__ import annotations

from dataclasses import dataclass

from whathappened.kinds import Kind
from whathappened.model import TimelineEvent


@dataclass(frozen=True)
class Category:
    key: str
    label: str
    shape: str  # diamond | triangle-down | square | star | circle | triangle-up | cross | dot | hexagon
    color: str


CATEGORIES: dict[str, Category] = {
    c.key: c
    for c in (
        Category("maintenance", "Maintenance / spot notice", "diamond", "#2563eb"),
        Category("node", "Node state (cordon, drain, NotReady)", "triangle-down", "#0e7490"),
        Category("eviction", "Eviction, preemption, deletion", "square", "#ea580c"),
        Category("gpu", "GPU fault (Xid, ECC, NVLink)", "star", "#dc2626"),
        Category("gpu-signal", "GPU signal (utilization, memory, power)", "circle", "#f87171"),
        Category("oom", "Out of memory", "circle", "#9333ea"),
        Category("nccl", "NCCL / network", "triangle-up", "#b45309"),
        Category("app", "Application error or signal", "hexagon", "#be185d"),
        Category("scheduling", "Scheduling", "square", "#64748b"),
        Category("exit", "Container or pod ended", "cross", "#111827"),
        Category("success", "Completed", "circle", "#16a34a"),
        Category("checkpoint", "Checkpoint saved", "dot", "#059669"),
        Category("info", "Other", "dot", "#9ca3af"),
    )
}

_KIND_CATEGORY: dict[str, str] = {
    **dict.fromkeys((Kind.MAINTENANCE_NOTICE, Kind.SPOT_INTERRUPTION, Kind.REBALANCE_RECOMMENDATION), "maintenance"),
    **dict.fromkeys(
        (
            Kind.NODE_NOT_READY,
            Kind.NODE_CORDONED,
            Kind.NODE_REBOOTED,
            Kind.NODE_PRESSURE,
            Kind.NODE_CONDITION,
            Kind.NODE_TAINTED,
            Kind.NODE_DELETED,
            Kind.NODE_SHUTDOWN,
            Kind.DRAIN,
        ),
        "node",
    ),
    **dict.fromkeys(
        (
            Kind.EVICTED,
            Kind.EVICTION_API,
            Kind.DISRUPTION_TARGET,
            Kind.TAINT_EVICTION,
            Kind.PREEMPTED,
            Kind.POD_DELETED,
            Kind.KILLING,
        ),
        "eviction",
    ),
    **dict.fromkeys(
        (
            Kind.GPU_XID,
            Kind.GPU_ECC_DBE,
            Kind.GPU_ECC_SBE,
            Kind.GPU_RETIRED_PAGES,
            Kind.GPU_ROW_REMAP_FAILURE,
            Kind.NVLINK_ERROR,
            Kind.GPU_THERMAL,
            Kind.GPU_MISSING,
        ),
        "gpu",
    ),
    **dict.fromkeys((Kind.GPU_UTIL_DROP, Kind.GPU_MEMORY_FULL, Kind.GPU_POWER_VIOLATION), "gpu-signal"),
    **dict.fromkeys((Kind.OOM_KILLED, Kind.KERNEL_OOM, Kind.CUDA_OOM), "oom"),
    **dict.fromkeys((Kind.NCCL_TIMEOUT, Kind.NCCL_ERROR, Kind.NETWORK_ERROR), "nccl"),
    **dict.fromkeys(
        (
            Kind.APP_EXCEPTION,
            Kind.CUDA_ERROR,
            Kind.SIGTERM_RECEIVED,
            Kind.LAUNCHER_TEARDOWN,
            Kind.PROBE_FAILED,
            Kind.BACK_OFF,
            Kind.CONFIG_ERROR,
            Kind.IMAGE_PULL_FAILED,
            Kind.CONTAINER_RESTARTED,
        ),
        "app",
    ),
    **dict.fromkeys((Kind.FAILED_SCHEDULING,), "scheduling"),
    **dict.fromkeys((Kind.CONTAINER_TERMINATED, Kind.POD_FAILED, Kind.DEADLINE_EXCEEDED), "exit"),
    **dict.fromkeys((Kind.POD_SUCCEEDED, Kind.JOB_COMPLETED, Kind.NODE_READY, Kind.NODE_UNCORDONED), "success"),
    Kind.CHECKPOINT_SAVED: "checkpoint",
}


def category_of(event: TimelineEvent) -> Category:
    key = _KIND_CATEGORY.get(event.kind, "info")
    if key == "exit" and event.attrs.get("exit_code") == 0:
        key = "success"
    return CATEGORIES[key]


def tag_of(event: TimelineEvent) -> str:
    """A few characters drawn beside a marker, for the events a reader looks for first."""
    attrs = event.attrs
    if event.kind == Kind.GPU_XID and attrs.get("xid") is not None:
        return f"Xid {attrs['xid']}"
    if event.kind == Kind.CONTAINER_TERMINATED and attrs.get("exit_code") is not None:
        return f"exit {attrs['exit_code']}"
    return _TAGS.get(event.kind, "")


_TAGS: dict[str, str] = {
    Kind.GPU_ECC_DBE: "ECC DBE",
    Kind.GPU_MISSING: "GPU gone",
    Kind.NVLINK_ERROR: "NVLink",
    Kind.GPU_THERMAL: "thermal",
    Kind.OOM_KILLED: "OOMKilled",
    Kind.KERNEL_OOM: "kernel OOM",
    Kind.CUDA_OOM: "CUDA OOM",
    Kind.NCCL_TIMEOUT: "NCCL timeout",
    Kind.NCCL_ERROR: "NCCL error",
    Kind.MAINTENANCE_NOTICE: "maintenance",
    Kind.SPOT_INTERRUPTION: "spot reclaim",
    Kind.NODE_CORDONED: "cordon",
    Kind.DRAIN: "drain",
    Kind.NODE_NOT_READY: "NotReady",
    Kind.EVICTED: "evicted",
    Kind.EVICTION_API: "evicted",
    Kind.PREEMPTED: "preempted",
    Kind.FAILED_SCHEDULING: "unschedulable",
    Kind.POD_DELETED: "deleted",
    Kind.CUDA_ERROR: "CUDA error",
}
