"""The one vocabulary of timeline event kinds that collectors emit and correlator rules match.

Every source maps its own words (Kubernetes event reasons, DCGM fields, kernel and NCCL log lines) onto these
kinds, so a rule written once ("an Xid on the pod's GPU") matches the same happening whichever source saw it.
The attributes each kind carries are listed beside it; collectors fill what their payload holds.
"""

from __future__ import annotations

from enum import StrEnum

from whathappened.model import Severity


class Kind(StrEnum):
    # --- pod lifecycle (Kubernetes API, kube-state-metrics, archived events) ---
    POD_CREATED = "pod-created"
    POD_SCHEDULED = "pod-scheduled"  # attrs: node
    FAILED_SCHEDULING = "failed-scheduling"  # attrs: reason, message
    CONTAINER_STARTED = "container-started"
    CONTAINER_TERMINATED = "container-terminated"  # attrs: exit_code, reason, signal, message, previous(bool)
    CONTAINER_RESTARTED = "container-restarted"  # attrs: restarts
    BACK_OFF = "back-off"
    POD_PHASE = "pod-phase"  # attrs: phase
    POD_FAILED = "pod-failed"  # attrs: reason, message (status.reason such as DeadlineExceeded)
    POD_SUCCEEDED = "pod-succeeded"
    POD_DELETED = "pod-deleted"  # attrs: by (user/controller/gc), grace_seconds
    KILLING = "killing"  # kubelet "Killing"/"Stopping container": attrs: message
    DISRUPTION_TARGET = "disruption-target"  # attrs: reason (EvictionByEvictionAPI, PreemptionByScheduler, ...)
    EVICTED = "evicted"  # kubelet node-pressure eviction: attrs: resource, message
    EVICTION_API = "eviction-api"  # drain / Eviction API: attrs: by
    PREEMPTED = "preempted"  # scheduler preemption: attrs: by (preemptor pod)
    TAINT_EVICTION = "taint-eviction"  # TaintManagerEviction: attrs: taint
    OOM_KILLED = "oom-killed"  # container OOMKilled (status or event): attrs: exit_code
    IMAGE_PULL_FAILED = "image-pull-failed"  # attrs: reason, image
    CONFIG_ERROR = "config-error"  # CreateContainerConfigError, FailedMount, missing secret: attrs: reason
    PROBE_FAILED = "probe-failed"  # Unhealthy: attrs: probe (liveness/readiness/startup)
    DEADLINE_EXCEEDED = "deadline-exceeded"  # Job DeadlineExceeded / BackoffLimitExceeded: attrs: reason
    JOB_COMPLETED = "job-completed"
    KUBE_EVENT = "kube-event"  # any other Kubernetes Event (Pulled, FailedCreatePodSandBox, ...): attrs reason

    # --- nodes ---
    NODE_NOT_READY = "node-not-ready"
    NODE_READY = "node-ready"
    NODE_CORDONED = "node-cordoned"
    NODE_UNCORDONED = "node-uncordoned"
    NODE_REBOOTED = "node-rebooted"
    NODE_PRESSURE = "node-pressure"  # attrs: resource (memory/disk/pid), condition
    NODE_CONDITION = (
        "node-condition"  # other true problem conditions (node-problem-detector, custom): attrs: type, reason
    )
    NODE_TAINTED = "node-tainted"  # attrs: taint
    NODE_DELETED = "node-deleted"  # RemovingNode, NodeLost, node vanished
    NODE_SHUTDOWN = "node-shutdown"  # graceful node shutdown
    DRAIN = "drain"  # CordonAndDrain / node-termination-handler drain
    MAINTENANCE_NOTICE = "maintenance-notice"  # attrs: provider, event_type, event_id, not_before (datetime)
    SPOT_INTERRUPTION = "spot-interruption"  # attrs: provider, action, not_before
    REBALANCE_RECOMMENDATION = "rebalance-recommendation"

    # --- GPUs (DCGM metrics, kernel log NVRM lines, node-problem-detector) ---
    GPU_XID = "gpu-xid"  # attrs: xid (int), text, pci, uuid, pid
    GPU_ECC_DBE = "gpu-ecc-dbe"  # attrs: increase, counter
    GPU_ECC_SBE = "gpu-ecc-sbe"  # attrs: increase
    GPU_RETIRED_PAGES = "gpu-retired-pages"  # attrs: increase, cause (dbe/sbe)
    GPU_ROW_REMAP_FAILURE = "gpu-row-remap-failure"
    NVLINK_ERROR = "nvlink-error"  # attrs: counter, increase
    GPU_THERMAL = "gpu-thermal"  # attrs: temperature, violation_us
    GPU_POWER_VIOLATION = "gpu-power-violation"
    GPU_UTIL_DROP = "gpu-util-drop"  # utilization collapsed while the pod lived: attrs: before, after
    GPU_MEMORY_FULL = "gpu-memory-full"  # framebuffer near full: attrs: used_mib, total_mib
    GPU_MISSING = "gpu-missing"  # the GPU's series stopped while its node's others continued
    GPU_UTILIZATION = "gpu-utilization"  # a pod's mean GPU utilization: attrs: samples [[unix_s, %]], gpus, mean

    # --- logs (container and kernel) ---
    KERNEL_OOM = "kernel-oom"  # the kernel OOM killer: attrs: process, pid
    NCCL_TIMEOUT = "nccl-timeout"  # attrs: rank, seq, op, timeout_ms
    NCCL_ERROR = "nccl-error"  # attrs: rank, detail, remote (bool: remote process exited)
    CUDA_ERROR = "cuda-error"  # attrs: error (e.g. "unspecified launch failure", "uncorrectable ECC error")
    CUDA_OOM = "cuda-oom"  # attrs: tried, gpu
    APP_EXCEPTION = "app-exception"  # a Python traceback's final line: attrs: exception, file, line
    SIGTERM_RECEIVED = "sigterm-received"
    LAUNCHER_TEARDOWN = "launcher-teardown"  # torchrun/mpirun tearing ranks down: attrs: failed_rank
    CHECKPOINT_SAVED = "checkpoint-saved"  # attrs: step, path
    NETWORK_ERROR = "network-error"  # NIC / InfiniBand / link errors: attrs: device
    LOG_LINE = "log-line"  # the last lines of a container that ended, kept for context


DEFAULT_SEVERITY: dict[Kind, Severity] = {
    Kind.POD_CREATED: Severity.INFO,
    Kind.POD_SCHEDULED: Severity.INFO,
    Kind.FAILED_SCHEDULING: Severity.WARNING,
    Kind.CONTAINER_STARTED: Severity.INFO,
    Kind.CONTAINER_TERMINATED: Severity.ERROR,
    Kind.CONTAINER_RESTARTED: Severity.WARNING,
    Kind.BACK_OFF: Severity.WARNING,
    Kind.POD_PHASE: Severity.INFO,
    Kind.POD_FAILED: Severity.ERROR,
    Kind.POD_SUCCEEDED: Severity.INFO,
    Kind.POD_DELETED: Severity.WARNING,
    Kind.KILLING: Severity.WARNING,
    Kind.DISRUPTION_TARGET: Severity.WARNING,
    Kind.EVICTED: Severity.ERROR,
    Kind.EVICTION_API: Severity.WARNING,
    Kind.PREEMPTED: Severity.WARNING,
    Kind.TAINT_EVICTION: Severity.ERROR,
    Kind.OOM_KILLED: Severity.ERROR,
    Kind.IMAGE_PULL_FAILED: Severity.ERROR,
    Kind.CONFIG_ERROR: Severity.ERROR,
    Kind.PROBE_FAILED: Severity.WARNING,
    Kind.DEADLINE_EXCEEDED: Severity.ERROR,
    Kind.JOB_COMPLETED: Severity.INFO,
    Kind.KUBE_EVENT: Severity.INFO,
    Kind.NODE_NOT_READY: Severity.ERROR,
    Kind.NODE_READY: Severity.INFO,
    Kind.NODE_CORDONED: Severity.WARNING,
    Kind.NODE_UNCORDONED: Severity.INFO,
    Kind.NODE_REBOOTED: Severity.WARNING,
    Kind.NODE_PRESSURE: Severity.WARNING,
    Kind.NODE_CONDITION: Severity.WARNING,
    Kind.NODE_TAINTED: Severity.WARNING,
    Kind.NODE_DELETED: Severity.ERROR,
    Kind.NODE_SHUTDOWN: Severity.WARNING,
    Kind.DRAIN: Severity.WARNING,
    Kind.MAINTENANCE_NOTICE: Severity.WARNING,
    Kind.SPOT_INTERRUPTION: Severity.WARNING,
    Kind.REBALANCE_RECOMMENDATION: Severity.INFO,
    Kind.GPU_XID: Severity.CRITICAL,
    Kind.GPU_ECC_DBE: Severity.CRITICAL,
    Kind.GPU_ECC_SBE: Severity.WARNING,
    Kind.GPU_RETIRED_PAGES: Severity.WARNING,
    Kind.GPU_ROW_REMAP_FAILURE: Severity.CRITICAL,
    Kind.NVLINK_ERROR: Severity.ERROR,
    Kind.GPU_THERMAL: Severity.WARNING,
    Kind.GPU_POWER_VIOLATION: Severity.INFO,
    Kind.GPU_UTIL_DROP: Severity.WARNING,
    Kind.GPU_UTILIZATION: Severity.INFO,
    Kind.GPU_MEMORY_FULL: Severity.WARNING,
    Kind.GPU_MISSING: Severity.CRITICAL,
    Kind.KERNEL_OOM: Severity.ERROR,
    Kind.NCCL_TIMEOUT: Severity.ERROR,
    Kind.NCCL_ERROR: Severity.ERROR,
    Kind.CUDA_ERROR: Severity.ERROR,
    Kind.CUDA_OOM: Severity.ERROR,
    Kind.APP_EXCEPTION: Severity.ERROR,
    Kind.SIGTERM_RECEIVED: Severity.WARNING,
    Kind.LAUNCHER_TEARDOWN: Severity.WARNING,
    Kind.CHECKPOINT_SAVED: Severity.INFO,
    Kind.NETWORK_ERROR: Severity.ERROR,
    Kind.LOG_LINE: Severity.INFO,
}


def severity_of(kind: Kind | str) -> Severity:
    return DEFAULT_SEVERITY.get(Kind(kind), Severity.INFO)
