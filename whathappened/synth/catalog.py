"""Every generated incident by name, and where each set lives in the repository."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from whathappened.synth import demo, stories_cloud, stories_core, stories_gpu, stories_guards, stories_hw, stories_k8s
from whathappened.synth.ids import Ids
from whathappened.synth.spec import Recording

Story = Callable[[Ids], Recording]

SCENARIOS: dict[str, Story] = {
    "xid79-fallen-off-bus": stories_core.xid79_fallen_off_bus,
    "maintenance-eviction": stories_core.maintenance_eviction,
    "history-after-deletion": stories_core.history_after_deletion,
    "ecc-dbe": stories_core.ecc_dbe,
    "oom-killed": stories_core.oom_killed,
    "cuda-oom": stories_core.cuda_oom,
    "app-traceback": stories_core.app_traceback,
    "deleted-by-user": stories_core.deleted_by_user,
    "nccl-timeout-unknown": stories_core.nccl_timeout_unknown,
    "node-pressure-eviction": stories_core.node_pressure_eviction,
    "spot-preemption": stories_core.spot_preemption,
    "unschedulable": stories_core.unschedulable,
    "node-failure": stories_hw.node_failure,
    "nvlink-error": stories_hw.nvlink_error,
    "gpu-thermal": stories_hw.gpu_thermal,
    "network-error": stories_hw.network_error,
    "scheduler-preemption": stories_k8s.scheduler_preemption,
    "config-error": stories_k8s.config_error,
    "liveness-probe": stories_k8s.liveness_probe,
    "deadline-exceeded": stories_k8s.deadline_exceeded,
    "completed": stories_k8s.completed,
    "guard-drain-exit137-not-oom": stories_guards.drain_137_not_oom,
    "guard-sigterm-scale-down": stories_guards.sigterm_scale_down,
    "guard-xid-predates-pod": stories_hw.xid_predates_pod,
    "guard-clock-skew": stories_hw.clock_skew,
    "gpu-uncontained-ecc": stories_gpu.uncontained_ecc,
    "spot-preemption-azure": stories_cloud.azure_spot,
}


def shipped(story: Story, shipper: str, name: str) -> Story:
    """``story`` with its logs as ``shipper`` stores them (synth.shippers) and its Events archived by that
    shipper's archiver: the same incident, read through another shape."""

    def variant(ids: Ids) -> Recording:
        rec = story(ids)
        rec.meta = replace(rec.meta, name=name, description=f"{rec.meta.description} Logs shipped by {shipper}.")
        rec.shipper, rec.archive_events = shipper, True
        return rec

    return variant


# One core incident per log shipper (issue 21): the store holds only that shipper's shape and no flag names it.
SHIPPED: dict[str, tuple[str, str]] = {
    "shipper-elastic-agent": ("history-after-deletion", "elastic-agent"),
    "shipper-fluent-bit": ("xid79-fallen-off-bus", "fluent-bit"),
    "shipper-fluentd": ("ecc-dbe", "fluentd"),
    "shipper-vector": ("maintenance-eviction", "vector"),
    "shipper-otel": ("cuda-oom", "otel"),
    "shipper-ss4o": ("app-traceback", "ss4o"),
}
SCENARIOS.update({name: shipped(SCENARIOS[base], shipper, name) for name, (base, shipper) in SHIPPED.items()})

DEMOS: dict[str, Story] = {
    "gpu-xid79-nccl": demo.xid79_nccl,
    "host-maintenance-drain": demo.aws_maintenance,
}

DEFAULT_SEED = 20261120
REPO = Path(__file__).resolve().parents[2]
SCENARIOS_DIR = REPO / "tests" / "scenarios"
DEMOS_DIR = REPO / "whathappened" / "data" / "incidents"
# The core incidents (one per common way a training pod dies): the tests run these against every backend.
CORE = tuple(name for name, story in SCENARIOS.items() if story.__module__ == stories_core.__name__)
