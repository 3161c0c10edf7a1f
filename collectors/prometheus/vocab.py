"""The Prometheus side's words: what kube-state-metrics reasons, dcgm counters and Xid codes mean, as kinds."""

from __future__ import annotations

from collections.abc import Mapping

from whathappened.kinds import Kind

SPOT_EVENT_TYPES = frozenset({"preempt", "spot-interruption", "preempted", "spot", "preemption"})
REBALANCE_EVENT_TYPES = frozenset({"rebalance-recommendation"})

POD_REASON_KINDS: Mapping[str, Kind] = {
    "Evicted": Kind.EVICTED,
    "DeadlineExceeded": Kind.DEADLINE_EXCEEDED,
    "PreemptionByScheduler": Kind.PREEMPTED,
    "NodeLost": Kind.NODE_NOT_READY,
    "Shutdown": Kind.NODE_SHUTDOWN,
    "Terminated": Kind.NODE_SHUTDOWN,
}
GPU_COUNTERS: Mapping[str, tuple[Kind, str]] = {
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": (Kind.GPU_ECC_DBE, "uncorrectable (double-bit) ECC errors"),
    "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL": (Kind.GPU_ECC_DBE, "uncorrectable (double-bit) ECC errors"),
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": (Kind.GPU_ECC_SBE, "correctable (single-bit) ECC errors"),
    "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL": (Kind.GPU_ECC_SBE, "correctable (single-bit) ECC errors"),
    "DCGM_FI_DEV_RETIRED_DBE": (Kind.GPU_RETIRED_PAGES, "pages retired after double-bit errors"),
    "DCGM_FI_DEV_RETIRED_SBE": (Kind.GPU_RETIRED_PAGES, "pages retired after single-bit errors"),
    "DCGM_FI_DEV_RETIRED_PENDING": (Kind.GPU_RETIRED_PAGES, "pages pending retirement"),
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": (Kind.GPU_RETIRED_PAGES, "HBM rows remapped after uncorrectable errors"),
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": (Kind.NVLINK_ERROR, "NVLink flow-control CRC errors"),
    "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL": (Kind.NVLINK_ERROR, "NVLink data CRC errors"),
    "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL": (Kind.NVLINK_ERROR, "NVLink replay errors"),
    "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL": (Kind.NVLINK_ERROR, "NVLink recovery errors"),
    "DCGM_FI_DEV_THERMAL_VIOLATION": (Kind.GPU_THERMAL, "thermal throttling"),
    "DCGM_FI_DEV_POWER_VIOLATION": (Kind.GPU_POWER_VIOLATION, "power-cap throttling"),
}
# dcgm-exporter's 1.x-compatibility names (its etc/1.x-compatibility-metrics.csv, a verbatim copy in
# tests/data/real-formats): old name -> the DCGM field's name. Profiling fields keep their name in lower case.
DCGM_1X_NAMES: Mapping[str, str] = {
    "dcgm_sm_clock": "DCGM_FI_DEV_SM_CLOCK",
    "dcgm_memory_clock": "DCGM_FI_DEV_MEM_CLOCK",
    "dcgm_memory_temp": "DCGM_FI_DEV_MEMORY_TEMP",
    "dcgm_gpu_temp": "DCGM_FI_DEV_GPU_TEMP",
    "dcgm_power_usage": "DCGM_FI_DEV_POWER_USAGE",
    "dcgm_total_energy_consumption": "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
    "dcgm_pcie_replay_counter": "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
    "dcgm_gpu_utilization": "DCGM_FI_DEV_GPU_UTIL",
    "dcgm_mem_copy_utilization": "DCGM_FI_DEV_MEM_COPY_UTIL",
    "dcgm_enc_utilization": "DCGM_FI_DEV_ENC_UTIL",
    "dcgm_dec_utilization": "DCGM_FI_DEV_DEC_UTIL",
    "dcgm_xid_errors": "DCGM_FI_DEV_XID_ERRORS",
    "dcgm_power_violation": "DCGM_FI_DEV_POWER_VIOLATION",
    "dcgm_thermal_violation": "DCGM_FI_DEV_THERMAL_VIOLATION",
    "dcgm_sync_boost_violation": "DCGM_FI_DEV_SYNC_BOOST_VIOLATION",
    "dcgm_board_limit_violation": "DCGM_FI_DEV_BOARD_LIMIT_VIOLATION",
    "dcgm_low_util_violation": "DCGM_FI_DEV_LOW_UTIL_VIOLATION",
    "dcgm_reliability_violation": "DCGM_FI_DEV_RELIABILITY_VIOLATION",
    "dcgm_fb_free": "DCGM_FI_DEV_FB_FREE",
    "dcgm_fb_used": "DCGM_FI_DEV_FB_USED",
    "dcgm_ecc_sbe_volatile_total": "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
    "dcgm_ecc_dbe_volatile_total": "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
    "dcgm_ecc_sbe_aggregate_total": "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL",
    "dcgm_ecc_dbe_aggregate_total": "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
    "dcgm_retired_pages_sbe": "DCGM_FI_DEV_RETIRED_SBE",
    "dcgm_retired_pages_dbe": "DCGM_FI_DEV_RETIRED_DBE",
    "dcgm_retired_pages_pending": "DCGM_FI_DEV_RETIRED_PENDING",
    "dcgm_nvlink_flit_crc_error_count_total": "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
    "dcgm_nvlink_data_crc_error_count_total": "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
    "dcgm_nvlink_replay_error_count_total": "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
    "dcgm_nvlink_recovery_error_count_total": "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
    "dcgm_nvlink_bandwidth_total": "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
}
_OLD_PROFILING = "dcgm_fi_"


def every_name(metric: str) -> str:
    """A regex of every name dcgm-exporter gives this field: the current one and its 1.x-compatibility names."""
    return "|".join([metric, *(old for old, name in DCGM_1X_NAMES.items() if name == metric)])


def canonical_metric(name: str) -> str:
    """A dcgm-exporter metric's current name (1.x-compatibility names mapped back); others as they are."""
    known = DCGM_1X_NAMES.get(name)
    if known is not None:
        return known
    return name.upper() if name.startswith(_OLD_PROFILING) else name


CAUSE = {"DBE": "dbe", "SBE": "sbe", "PENDING": "pending", "REMAPPED": "row-remap"}
