"""The cause rules, as data: what death each explains, from what evidence, on which subject, within what time.

Rules are tried in order and the first that matches a death explains it, so the order is the precedence:
scheduling and cloud notices first, then hardware, then the node, then the application, then reactions to
other ranks (NCCL errors, launcher teardown), then the outcomes that are no fault at all. That order is also
what keeps the guards true: an exit 137 during a drain is explained by the drain before the OOM rule is asked
(and no rule ever reads 137 alone as an OOM), a SIGTERM is a crash only when some fault explains it.
A few rules need logic beyond "an event of this kind on this subject in this window": they name a ``check``
function (checks.py), the escape hatch.
"""

from __future__ import annotations

from whathappened.correlate import checks, words
from whathappened.correlate import templates as say
from whathappened.correlate.evidence import GPU, HOST, JOB, NODE, POD
from whathappened.correlate.fates import NEVER_STARTED
from whathappened.correlate.rule import ANY, MINUTES_5, MINUTES_10, MINUTES_15, MINUTES_30, WHOLE_WINDOW, Rule, Support
from whathappened.kinds import Kind


def _kinds(*kinds: Kind) -> frozenset[str]:
    return frozenset(str(k) for k in kinds)


_CUDA = Support(_kinds(Kind.CUDA_ERROR), on=POD, before=MINUTES_30)
_NODE_PRESSURE = Support(_kinds(Kind.NODE_PRESSURE), on=NODE, before=MINUTES_30)
_NODE_DOWN = Support(_kinds(Kind.NODE_NOT_READY, Kind.NODE_DELETED, Kind.NODE_REBOOTED), on=NODE, before=MINUTES_30)
_KERNEL_OOM = Support(_kinds(Kind.KERNEL_OOM), on=NODE, before=MINUTES_15)
_PROBES = Support(_kinds(Kind.PROBE_FAILED), on=POD, before=MINUTES_15, where=words.liveness)

# fmt: off
RULES: tuple[Rule, ...] = (
    # --- pods that never ran ---
    Rule("image-or-config", "config-error", 0.9, say.CONFIG, _kinds(Kind.IMAGE_PULL_FAILED, Kind.CONFIG_ERROR),
         before=WHOLE_WINDOW, fate=ANY, where=words.not_from_log, check=checks.since_last_start),
    Rule("failed-scheduling", "unschedulable", 0.9, say.UNSCHEDULABLE, _kinds(Kind.FAILED_SCHEDULING),
         before=WHOLE_WINDOW, fate=NEVER_STARTED),
    Rule("never-scheduled", "unschedulable", 0.6, say.NEVER_SCHEDULED, fate=NEVER_STARTED,
         check=checks.never_scheduled),
    Rule("admission-lost-gpu", "gpu-fallen-off-bus", 0.8, say.ADMISSION_LOST_GPU, _kinds(Kind.POD_FAILED),
         before=MINUTES_15, where=words.admission_lost_gpu, check=checks.refused_at_admission),
    Rule("admission-unhealthy-gpu", "gpu-hardware-error", 0.75, say.ADMISSION_UNHEALTHY_GPU,
         _kinds(Kind.POD_FAILED), before=MINUTES_15, where=words.admission_unhealthy_gpu,
         check=checks.refused_at_admission),
    Rule("admission-rejected", "unschedulable", 0.85, say.ADMISSION, _kinds(Kind.POD_FAILED), before=MINUTES_15,
         where=words.admission_rejected, check=checks.refused_at_admission),
    # --- scheduling and the kubelet taking the pod away ---
    Rule("preempted", "scheduler-preemption", 0.95, say.PREEMPTED,
         _kinds(Kind.PREEMPTED, Kind.DISRUPTION_TARGET, Kind.POD_FAILED), before=MINUTES_15, where=words.preemption),
    Rule("kubelet-eviction", "node-pressure-eviction", 0.9, say.PRESSURE,
         _kinds(Kind.EVICTED, Kind.POD_FAILED, Kind.DISRUPTION_TARGET), before=MINUTES_15,
         where=words.pressure_eviction, support=(_NODE_PRESSURE,)),
    # --- cloud notices: the chain notice -> cordon -> drain -> exit ---
    Rule("spot-interruption", "spot-preemption", 0.9, say.SPOT, check=checks.spot_interruption),
    Rule("host-maintenance", "host-maintenance", 0.9, say.MAINTENANCE, check=checks.host_maintenance),
    # --- the GPU: Xid and ECC on the pod's node and GPU, not older than the pod ---
    Rule("thermal-shutdown", "gpu-thermal", 0.85, say.THERMAL_SHUTDOWN, before=MINUTES_30,
         check=checks.thermal_shutdown),
    Rule("fallen-off-bus", "gpu-fallen-off-bus", 0.95, say.FALLEN, _kinds(Kind.GPU_XID, Kind.GPU_MISSING), on=GPU,
         before=MINUTES_30, where=words.fallen_off_bus, since_start=True, skip_stale=True, support=(_CUDA,)),
    Rule("gpu-memory", "gpu-memory-error", 0.95, say.GPU_MEMORY,
         _kinds(Kind.GPU_XID, Kind.GPU_ECC_DBE, Kind.GPU_ROW_REMAP_FAILURE, Kind.GPU_RETIRED_PAGES), on=GPU,
         before=MINUTES_30, where=words.memory_fault, since_start=True, skip_stale=True, support=(_CUDA,)),
    Rule("nvlink", "nvlink-error", 0.85, say.NVLINK, _kinds(Kind.GPU_XID, Kind.NVLINK_ERROR), on=GPU,
         before=MINUTES_30, where=words.nvlink_fault, since_start=True, skip_stale=True, support=(_CUDA,)),
    Rule("gpu-hardware", "gpu-hardware-error", 0.85, say.GPU_HARDWARE, _kinds(Kind.GPU_XID), on=GPU,
         before=MINUTES_30, where=words.hardware_xid, since_start=True, skip_stale=True, support=(_CUDA,)),
    Rule("cuda-nvlink", "nvlink-error", 0.7, say.CUDA_NVLINK, _kinds(Kind.CUDA_ERROR), before=MINUTES_15,
         where=words.nvlink_text, before_stop=True),
    Rule("cuda-ecc", "gpu-memory-error", 0.7, say.CUDA_ECC, _kinds(Kind.CUDA_ERROR), before=MINUTES_15,
         where=words.ecc_text, before_stop=True),
    Rule("cuda-lost-gpu", "gpu-fallen-off-bus", 0.7, say.CUDA_LOST, _kinds(Kind.CUDA_ERROR), before=MINUTES_15,
         where=words.lost_gpu_text, before_stop=True),
    # --- the node ---
    Rule("node-lost", "node-failure", 0.85, say.NODE_LOST,
         _kinds(Kind.TAINT_EVICTION, Kind.POD_FAILED, Kind.DISRUPTION_TARGET), before=MINUTES_15,
         where=words.node_lost, support=(_NODE_DOWN,)),
    Rule("node-down", "node-failure", 0.8, say.NODE_DOWN,
         _kinds(Kind.NODE_NOT_READY, Kind.NODE_DELETED, Kind.NODE_REBOOTED, Kind.NODE_SHUTDOWN), on=HOST,
         before=MINUTES_15, since_start=True, before_drain=True),
    # --- the application ---
    Rule("oom-killed", "oom-killed", 0.95, say.OOM, _kinds(Kind.OOM_KILLED, Kind.CONTAINER_TERMINATED),
         before=MINUTES_10, where=words.oom_killed, support=(_KERNEL_OOM,)),
    Rule("kernel-oom", "oom-killed", 0.75, say.KERNEL_OOM, _kinds(Kind.KERNEL_OOM), on=HOST, before=MINUTES_5,
         check=checks.kernel_oom),
    Rule("cuda-oom", "cuda-oom", 0.9, say.CUDA_OOM, _kinds(Kind.CUDA_OOM), before=MINUTES_15, before_stop=True),
    # the pod's own set-up, as its log says it at the end (/dev/shm too small, no usable CUDA driver)
    Rule("setup-in-log", "config-error", 0.8, say.SETUP_IN_LOG, _kinds(Kind.CONFIG_ERROR), before=MINUTES_15,
         where=words.from_log, before_stop=True),
    # (a probe's kill before the container's last start ended an earlier run of it, not this one)
    Rule("liveness", "liveness-probe", 0.85, say.LIVENESS, _kinds(Kind.KILLING, Kind.PROBE_FAILED),
         before=MINUTES_15, where=words.liveness, support=(_PROBES,), check=checks.probe_since_last_start),
    # the contract has no code of its own for a startup probe: the kubelet's kill for a failed health probe
    Rule("startup-probe", "liveness-probe", 0.85, say.STARTUP_PROBE, _kinds(Kind.KILLING), before=MINUTES_15,
         where=words.startup_kill, check=checks.probe_since_last_start),
    Rule("deadline", "deadline-exceeded", 0.9, say.DEADLINE, _kinds(Kind.DEADLINE_EXCEEDED, Kind.POD_FAILED),
         before=MINUTES_15, where=words.deadline),
    Rule("job-deadline", "deadline-exceeded", 0.85, say.DEADLINE, _kinds(Kind.DEADLINE_EXCEEDED), on=JOB,
         before=MINUTES_15, after=MINUTES_10, check=checks.job_deadline),
    Rule("traceback", "application-error", 0.85, say.TRACEBACK, _kinds(Kind.APP_EXCEPTION), before=MINUTES_15,
         where=words.own_exception, before_stop=True),
    # the process crashing (a segfault, glibc's abort) with no NCCL or CUDA error, SIGTERM or teardown just before
    Rule("own-crash", "application-error", 0.8, say.TRACEBACK, _kinds(Kind.APP_EXCEPTION), before=MINUTES_15,
         where=words.own_crash, before_stop=True, check=checks.crash_first),
    Rule("cannot-run", "config-error", 0.8, say.CONFIG, _kinds(Kind.CONTAINER_TERMINATED), before=MINUTES_10,
         where=words.cannot_run),
    # after the pod's own exceptions and memory: a GPU held in exclusive mode by another process is set-up too
    Rule("cuda-unavailable-gpu", "gpu-hardware-error", 0.6, say.CUDA_UNAVAILABLE, _kinds(Kind.CUDA_ERROR),
         before=MINUTES_15, where=words.unavailable_gpu_text, before_stop=True),
    # --- faults near the pod that explain a death its own logs do not: heat, the network ---
    Rule("gpu-thermal", "gpu-thermal", 0.65, say.THERMAL, _kinds(Kind.GPU_THERMAL), on=GPU, before=MINUTES_15,
         since_start=True, skip_stale=True, support=(_CUDA,)),
    Rule("network", "network-error", 0.8, say.NETWORK, _kinds(Kind.NETWORK_ERROR), on=HOST, before=MINUTES_10,
         since_start=True),
    Rule("cuda-error", "application-error", 0.55, say.CUDA_APP, _kinds(Kind.CUDA_ERROR), before=MINUTES_15,
         where=words.cuda_error_named, before_stop=True),
    Rule("application-xid", "application-error", 0.6, say.APP_XID, _kinds(Kind.GPU_XID), on=GPU,
         before=MINUTES_15, where=words.application_xid, since_start=True, skip_stale=True),
    # --- a fault on the node of a rank that is still running, seen here only as the reaction to it ---
    Rule("fault-elsewhere", "unknown", 0.7, say.ELSEWHERE, before=MINUTES_10, check=checks.fault_elsewhere),
    # --- reactions to another rank's failure ---
    Rule("nccl-timeout", "nccl-timeout", 0.8, say.NCCL_TIMEOUT, _kinds(Kind.NCCL_TIMEOUT), before=MINUTES_15,
         before_stop=True),
    Rule("nccl-error", "nccl-error", 0.8, say.NCCL_ERROR, _kinds(Kind.NCCL_ERROR), before=MINUTES_15,
         before_stop=True),
    Rule("own-rank", "application-error", 0.6, say.OWN_RANK, _kinds(Kind.LAUNCHER_TEARDOWN), before=MINUTES_15,
         where=words.own_rank_failed, before_stop=True),
    Rule("teardown", "peer-failure", 0.75, say.TEARDOWN, _kinds(Kind.LAUNCHER_TEARDOWN), before=MINUTES_15,
         check=checks.teardown_by_launcher),
    # --- endings seen only from the node or the Job, when nothing on the pod itself says more ---
    Rule("node-pressure", "node-pressure-eviction", 0.6, say.PRESSURE, _kinds(Kind.NODE_PRESSURE), on=NODE,
         before=MINUTES_15, since_start=True),
    Rule("job-limit", "deadline-exceeded", 0.6, say.JOB_LIMIT, _kinds(Kind.DEADLINE_EXCEEDED), on=JOB,
         before=MINUTES_15, after=MINUTES_10, check=checks.job_limit),
    Rule("notice-only", "host-maintenance", 0.55, say.MAINTENANCE, check=checks.maintenance_notice_only),
    # --- no fault ---
    Rule("stopped", "deleted", 0.8, say.STOPPED, check=checks.stopped_without_fault),
    # a launcher's report that the program raised, when nothing before named a reaction or a stop
    Rule("wrapped-error", "application-error", 0.6, say.TRACEBACK, _kinds(Kind.APP_EXCEPTION), before=MINUTES_15,
         where=words.wrapped_error, before_stop=True),
    Rule("completed", "completed", 0.95, say.COMPLETED,
         _kinds(Kind.POD_SUCCEEDED, Kind.JOB_COMPLETED, Kind.CONTAINER_TERMINATED, Kind.POD_PHASE),
         before=MINUTES_10, where=words.success),
    Rule("pod-status", "unknown", 0.6, say.STATUS, check=checks.pod_status),
    Rule("unexplained", "unknown", 0.3, say.UNKNOWN, fate=ANY, check=checks.unexplained),
)
# fmt: on
