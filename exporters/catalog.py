"""The one metric catalog: what the exporter exposes, and which outside metrics the dashboards may name.

The exporter registers its metrics from ``EXPORTER_METRICS``; the dashboard generator and the dashboard tests
check every expression against ``known_metric_names()``. Adding a metric here is the only way to add one.
Pod names are never labels (cardinality): the exporter runs per node, and the dashboards join to pods through
kube-state-metrics.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class MetricSpec:
    name: str
    type: str  # "gauge" | "counter" | "info" | "histogram"
    labels: tuple[str, ...]
    help: str


MAINTENANCE_LABELS = ("node", "provider", "event_id", "event_type")
GPU_LABELS = ("node", "gpu", "uuid")

MAINTENANCE_SCHEDULED = MetricSpec(
    "whathappened_node_maintenance_scheduled",
    "gauge",
    MAINTENANCE_LABELS,
    "1 while the host has a maintenance or interruption notice from its cloud.",
)
MAINTENANCE_NOT_BEFORE = MetricSpec(
    "whathappened_node_maintenance_not_before_timestamp_seconds",
    "gauge",
    MAINTENANCE_LABELS,
    "When the noticed maintenance may start, in Unix seconds.",
)
PREFLIGHT_OK = MetricSpec(
    "whathappened_preflight_ok",
    "gauge",
    ("node",),
    "1 when no maintenance is due within the preflight window (default 60 minutes), 0 when one is; absent "
    "while the answer is unknown (see whathappened_preflight_unknown).",
)
PREFLIGHT_UNKNOWN = MetricSpec(
    "whathappened_preflight_unknown",
    "gauge",
    ("node",),
    "1 while the preflight answer is unknown (the metadata service cannot be read, has not answered lately, or "
    "there is none, as on premises), 0 when it is known.",
)
POLL_ERRORS = MetricSpec(
    "whathappened_poll_errors_total",
    "counter",
    ("provider",),
    "Failed polls of the cloud metadata service.",
)
LAST_POLL_SUCCESS = MetricSpec(
    "whathappened_last_poll_success_timestamp_seconds",
    "gauge",
    ("provider",),
    "When the cloud metadata service last answered, in Unix seconds.",
)
GPU_HEALTH_ENABLED = MetricSpec(
    "whathappened_gpu_health_enabled",
    "gauge",
    ("node",),
    "1 when GPU health comes from NVML on this host; 0 when there is no GPU or no NVML library.",
)
GPU_XID_ERRORS = MetricSpec(
    "whathappened_gpu_xid_errors_total",
    "counter",
    (*GPU_LABELS, "xid"),
    "Xid errors reported by the NVML event API, by Xid code.",
)
GPU_ECC_ERRORS = MetricSpec(
    "whathappened_gpu_ecc_errors_total",
    "counter",
    (*GPU_LABELS, "type"),
    "Volatile ECC error counts from NVML (type: corrected | uncorrected).",
)
GPU_REMAPPED_ROWS = MetricSpec(
    "whathappened_gpu_remapped_rows",
    "gauge",
    (*GPU_LABELS, "type"),
    "Remapped HBM rows from NVML (type: correctable | uncorrectable | pending | failure).",
)
GPU_THROTTLE = MetricSpec(
    "whathappened_gpu_throttle_active",
    "gauge",
    (*GPU_LABELS, "reason"),
    "1 while NVML reports this clock throttle reason active.",
)

# The event_type label values the exporter writes, per provider (readers map them onto kinds):
#   azure: Scheduled Events EventType verbatim: Freeze, Reboot, Redeploy, Preempt, Terminate
#   aws:   scheduled event Code verbatim (instance-reboot, system-reboot, system-maintenance, instance-retirement,
#          instance-stop), "spot-interruption" (event_id spot-itn-<hash>), "rebalance-recommendation"
#   gcp:   maintenance-event value verbatim (MIGRATE_ON_HOST_MAINTENANCE, TERMINATE_ON_HOST_MAINTENANCE),
#          "preempted", "upcoming-maintenance"
SPOT_EVENT_TYPES: frozenset[str] = frozenset({"Preempt", "spot-interruption", "preempted"})
REBALANCE_EVENT_TYPES: frozenset[str] = frozenset({"rebalance-recommendation"})

# What `whathappened watch` exports (CONTRACT.md section 3a); the fleet dashboard reads the first two.
WATCH_FAILURES = MetricSpec(
    "whathappened_pod_failures_total",
    "counter",
    ("namespace", "cause", "category", "retryable", "root"),
    "Pod deaths explained by whathappened watch, by cause.",
)
WATCH_EXPLAIN_SECONDS = MetricSpec(
    "whathappened_explain_seconds",
    "histogram",
    (),
    "How long one explanation of an incident took.",
)
WATCH_METRICS: tuple[MetricSpec, ...] = (WATCH_FAILURES, WATCH_EXPLAIN_SECONDS)

EXPORTER_METRICS: tuple[MetricSpec, ...] = (
    MAINTENANCE_SCHEDULED,
    MAINTENANCE_NOT_BEFORE,
    PREFLIGHT_OK,
    PREFLIGHT_UNKNOWN,
    POLL_ERRORS,
    LAST_POLL_SUCCESS,
    GPU_HEALTH_ENABLED,
    GPU_XID_ERRORS,
    GPU_ECC_ERRORS,
    GPU_REMAPPED_ROWS,
    GPU_THROTTLE,
)

# Outside metrics the dashboards and the Prometheus collector rely on, by exporter.
DCGM_METRICS: frozenset[str] = frozenset(
    {
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_FB_FREE",
        "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_MEMORY_TEMP",
        "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_XID_ERRORS",
        "DCGM_EXP_XID_ERRORS_COUNT",
        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL",
        "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
        "DCGM_FI_DEV_RETIRED_SBE",
        "DCGM_FI_DEV_RETIRED_DBE",
        "DCGM_FI_DEV_RETIRED_PENDING",
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
        "DCGM_FI_DEV_ROW_REMAP_FAILURE",
        "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
        "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
        "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
        "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
        "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
        "DCGM_FI_DEV_THERMAL_VIOLATION",
        "DCGM_FI_DEV_POWER_VIOLATION",
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
        "DCGM_FI_DEV_SM_CLOCK",
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    }
)

KUBE_STATE_METRICS: frozenset[str] = frozenset(
    {
        "kube_pod_info",
        "kube_pod_labels",
        "kube_pod_status_phase",
        "kube_pod_status_reason",
        "kube_pod_status_disruption_reason",
        "kube_pod_container_status_terminated_reason",
        "kube_pod_container_status_last_terminated_reason",
        "kube_pod_container_status_last_terminated_exitcode",
        "kube_pod_container_status_last_terminated_timestamp",
        "kube_pod_container_status_restarts_total",
        "kube_pod_container_status_waiting_reason",
        "kube_pod_container_resource_requests",
        "kube_pod_deletion_timestamp",
        "kube_node_spec_unschedulable",
        "kube_node_spec_taint",
        "kube_node_status_condition",
        "kube_node_info",
        "kube_node_labels",
    }
)


def known_metric_names() -> frozenset[str]:
    histograms = {f"{m.name}{part}" for m in WATCH_METRICS if m.type == "histogram" for part in _HISTOGRAM_SERIES}
    watched = {m.name for m in WATCH_METRICS if m.type != "histogram"} | histograms
    return frozenset(m.name for m in EXPORTER_METRICS) | watched | DCGM_METRICS | KUBE_STATE_METRICS


_HISTOGRAM_SERIES = ("_bucket", "_count", "_sum")
