"""Every generated incident by name, and where each set lives in the repository."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from synth import (
    agents,
    demo,
    stories_attempts,
    stories_cloud,
    stories_core,
    stories_evictions,
    stories_gpu,
    stories_guards,
    stories_hw,
    stories_k8s,
)
from synth.ids import Ids
from synth.spec import DcgmStyle, Recording

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
    "node-pressure-eviction": stories_evictions.node_pressure_eviction,
    "spot-preemption": stories_evictions.spot_preemption,
    "unschedulable": stories_evictions.unschedulable,
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
    "nvsentinel-drain": stories_gpu.nvsentinel_drain,
    "spot-preemption-azure": stories_cloud.azure_spot,
    "jobset-restarted": stories_attempts.jobset_restarted,
    "job-retried": stories_attempts.job_retried,
    "restarted-in-place": stories_attempts.restarted_in_place,
    "volcano-restarted": stories_attempts.volcano_restarted,
    "resubmitted-renamed": stories_attempts.resubmitted_renamed,
}


def variant(story: Story, name: str, note: str, change: Callable[[Recording], None]) -> Story:
    """``story`` as another real shape records it (``change`` edits the recording): the same incident under
    ``name``, its description saying what differs."""

    def made(ids: Ids) -> Recording:
        rec = story(ids)
        rec.meta = replace(rec.meta, name=name, description=f"{rec.meta.description} {note}")
        change(rec)
        return rec

    return made


def _shipped_by(shipper: str) -> Callable[[Recording], None]:
    """Logs as ``shipper`` stores them (synth.shippers), Events archived by that shipper's archiver."""

    def change(rec: Recording) -> None:
        rec.shipper, rec.archive_events = shipper, True

    return change


# One core incident per log shipper (issue 21): the store holds only that shipper's shape and no flag names it.
SHIPPED: dict[str, tuple[str, str]] = {
    "shipper-elastic-agent": ("history-after-deletion", "elastic-agent"),
    "shipper-fluent-bit": ("xid79-fallen-off-bus", "fluent-bit"),
    "shipper-fluentd": ("ecc-dbe", "fluentd"),
    "shipper-vector": ("maintenance-eviction", "vector"),
    "shipper-otel": ("cuda-oom", "otel"),
    "shipper-ss4o": ("app-traceback", "ss4o"),
}
SCENARIOS.update(
    {
        name: variant(SCENARIOS[base], name, f"Logs shipped by {shipper}.", _shipped_by(shipper))
        for name, (base, shipper) in SHIPPED.items()
    }
)


def _styled(style: dict[str, Any]) -> Callable[[Recording], None]:
    """The recording's sources in another release's shape (``Recording`` fields ``dcgm``, ``ksm_release``,
    ``k8s_release``)."""

    def change(rec: Recording) -> None:
        for key, value in style.items():
            setattr(rec, key, value)

    return change


# One incident per dcgm-exporter major version and scrape variant, and per kube-state-metrics emission style
# (issue 21), each in the label set its release writes (tests/data/real-formats).
STYLED: dict[str, tuple[str, str, dict[str, Any]]] = {
    "dcgm-2x": (
        "xid79-fallen-off-bus",
        "dcgm-exporter 2.x: no pci_bus_id, no err_code/err_msg, no driver label.",
        {"dcgm": DcgmStyle(pci_bus_id=False, driver_label=False)},
    ),
    "dcgm-2x-old-namespace": (
        "nvlink-error",
        "dcgm-exporter 2.x run with --use-old-namespace and the 1.x counters file: uuid, pod_name, pod_namespace,"
        " container_name, dcgm_nvlink_flit_crc_error_count_total.",
        {"dcgm": DcgmStyle(pci_bus_id=False, driver_label=False, pod_labels="old-namespace", old_names=True)},
    ),
    "dcgm-1x-names": (
        "xid79-fallen-off-bus",
        "dcgm-exporter with the 1.x-compatibility counters file: dcgm_xid_errors, dcgm_gpu_utilization, UUID.",
        {"dcgm": DcgmStyle(pci_bus_id=False, xid_err_labels=True, old_names=True)},
    ),
    "dcgm-3x-servicemonitor": (
        "ecc-dbe",
        "dcgm-exporter 3.3 scraped by the GPU Operator's ServiceMonitor (honorLabels false): exported_pod.",
        {"dcgm": DcgmStyle(xid_err_labels=True, pod_labels="exported")},
    ),
    "dcgm-4x-hostname": (
        "gpu-thermal",
        "dcgm-exporter 4.x after the hostname rename, scraped without honorLabels.",
        {"dcgm": DcgmStyle(hostname_label="hostname", xid_err_labels=True, pod_labels="exported")},
    ),
    "dcgm-gpu-operator-relabelled": (
        "xid79-fallen-off-bus",
        "An older GPU Operator: Hostname is the exporter's pod, the node only in a relabelled kubernetes_node.",
        {"dcgm": DcgmStyle(hostname_is_exporter=True, node_label="kubernetes_node", pod_labels="exported")},
    ),
    "dcgm-gpu-operator-unrelabelled": (
        "ecc-dbe",
        "An older GPU Operator scraped without relabelling: Hostname is the exporter's pod, found on its node only"
        " through kube-state-metrics.",
        {"dcgm": DcgmStyle(hostname_is_exporter=True, xid_err_labels=True, pod_labels="exported")},
    ),
    "dcgm-gpu-operator-instance": (
        "gpu-thermal",
        "An older GPU Operator with its documented relabelling: the node's name in instance.",
        {"dcgm": DcgmStyle(hostname_is_exporter=True, node_label="instance", pod_labels="exported")},
    ),
    "k8s-1.21-shutdown": (
        "guard-drain-exit137-not-oom",
        "Kubernetes 1.21: graceful node shutdown says Shutdown, 'Node is shutting, evicting pods'.",
        {"k8s_release": "1.21"},
    ),
    "k8s-1.22-shutdown": (
        "guard-drain-exit137-not-oom",
        "Kubernetes 1.22: Terminated, and the pod left in phase Running.",
        {"k8s_release": "1.22"},
    ),
    "k8s-1.32-eviction": (
        "node-pressure-eviction",
        "Kubernetes 1.32: the evicted pod has no status reason, only its DisruptionTarget condition.",
        {"k8s_release": "1.32"},
    ),
    "ksm-v2.13": (
        "node-pressure-eviction",
        "kube-state-metrics v2.3-v2.18: every listed reason a series, 0 or 1; no disruption-reason family.",
        {"ksm_release": "v2.13"},
    ),
    "ksm-servicemonitor-exported": (
        "history-after-deletion",
        "kube-state-metrics scraped by the standalone chart's ServiceMonitor (honorLabels false): exported_pod,"
        " exported_namespace, exported_container; pod and namespace name kube-state-metrics itself.",
        {"ksm_honor_labels": False},
    ),
    "ksm-v2.13-exported": (
        "maintenance-eviction",
        "kube-state-metrics v2.13, scraped without honorLabels: 0/1 reasons under exported_pod.",
        {"ksm_release": "v2.13", "ksm_honor_labels": False},
    ),
    "ksm-v2.19": (
        "guard-drain-exit137-not-oom",
        "kube-state-metrics v2.19: eight listed reasons, 0 or 1, TerminationByKubelet from the condition.",
        {"ksm_release": "v2.19"},
    ),
}
SCENARIOS.update(
    {name: variant(SCENARIOS[base], name, note, _styled(style)) for name, (base, note, style) in STYLED.items()}
)


# Whole stacks as real clusters run them: every source in a shape other than the default at once, so that the
# readers' detections are shown to compose (the release and shipper incidents above change one source each).
COMBINED: dict[str, tuple[str, str, dict[str, Any]]] = {
    "stack-gpu-operator-fluent-bit": (
        "ecc-dbe",
        "GPU Operator 3.3 and the standalone kube-state-metrics chart, both through ServiceMonitors without"
        " honorLabels; Fluent Bit ships the logs and archives the events; Kubernetes 1.32.",
        {
            "dcgm": DcgmStyle(xid_err_labels=True, pod_labels="exported"),
            "ksm_honor_labels": False,
            "shipper": "fluent-bit",
            "archive_events": True,
            "k8s_release": "1.32",
        },
    ),
    "stack-old-exporter-vector": (
        "maintenance-eviction",
        "dcgm-exporter 2.x with --use-old-namespace and the 1.x names, kube-state-metrics v2.19, Vector, Kubernetes"
        " 1.22.",
        {
            "dcgm": DcgmStyle(pci_bus_id=False, driver_label=False, pod_labels="old-namespace", old_names=True),
            "ksm_release": "v2.19",
            "shipper": "vector",
            "archive_events": True,
            "k8s_release": "1.22",
        },
    ),
    "stack-unrelabelled-fluentd": (
        "xid79-fallen-off-bus",
        "An older GPU Operator, not relabelled (Hostname is its pod), kube-state-metrics without honorLabels (the"
        " exporter's pod too is exported_pod), Fluentd.",
        {
            "dcgm": DcgmStyle(hostname_is_exporter=True, xid_err_labels=True, pod_labels="exported"),
            "ksm_honor_labels": False,
            "shipper": "fluentd",
            "archive_events": True,
        },
    ),
    "stack-nvsentinel-otel": (
        "nvsentinel-drain",
        "NVSentinel's drain on a cluster with dcgm-exporter 4.x (hostname), kube-state-metrics without honorLabels"
        " and the OpenTelemetry Collector writing to Elasticsearch.",
        {
            "dcgm": DcgmStyle(hostname_label="hostname", xid_err_labels=True, pod_labels="exported"),
            "ksm_honor_labels": False,
            "shipper": "otel",
            "archive_events": True,
        },
    ),
}
SCENARIOS.update(
    {name: variant(SCENARIOS[base], name, note, _styled(style)) for name, (base, note, style) in COMBINED.items()}
)

# One incident per node-health agent (issue 21): the Xid reaches the report only through the agent's condition.
AGENT_REPORTED: dict[str, tuple[str, str]] = {
    "agent-nvsentinel": ("xid79-fallen-off-bus", "nvsentinel"),
    "agent-gke": ("xid79-fallen-off-bus", "gke"),
    "agent-eks": ("ecc-dbe", "eks"),
}
SCENARIOS.update(
    {
        name: variant(SCENARIOS[b], name, f"Only {a} reports the Xid.", partial(agents.reported_by, agent=a))
        for name, (b, a) in AGENT_REPORTED.items()
    }
)

DEMOS: dict[str, Story] = {
    "gpu-xid79-nccl": demo.xid79_nccl,
    "host-maintenance-drain": demo.aws_maintenance,
}

DEFAULT_SEED = 20261120
REPO = Path(__file__).resolve().parents[1]
SCENARIOS_DIR = REPO / "tests" / "scenarios"
DEMOS_DIR = REPO / "whathappened" / "data" / "incidents"
# The core incidents (one per common way a training pod dies): the tests run these against every backend.
CORE = tuple(
    name for name, story in SCENARIOS.items() if story.__module__ in (stories_core.__name__, stories_evictions.__name__)
)
