"""The contract's cause codes (CONTRACT.md section 3): the one table a verdict's category, retryable, title, plain
words and next step come from; the JSON Schema's cause enum is checked against it (tests/correlate/test_causes.py).

Beside the contract's two columns each cause carries a ``tier``, how strongly it explains a failure when several
pods failed at once: infrastructure and hardware evidence outranks an application's own error, which outranks a
reaction to another rank's death. ``reaction`` marks the causes that are symptoms of someone else's failure.
"""

from __future__ import annotations

from dataclasses import dataclass

HARDWARE_TICKET = "cordon {fault_node} and open a hardware ticket for {gpu}; resubmitting is safe"


@dataclass(frozen=True, slots=True)
class Cause:
    code: str
    category: str
    retryable: bool
    tier: int  # 3 hardware/infrastructure, 2 scheduling, 1 application, 0 symptom or no fault
    title: str  # a report's heading: "GPU fell off the bus"
    plain: str  # a few words for a sentence that names another pod's failure: "its GPU falling off the bus"
    next_step: str  # what to do, a template filled with the verdict's facts ({node}, {gpu}, {pod}, ...)
    reaction: bool = False  # a symptom of another rank's failure: never the root by itself


_TABLE: tuple[Cause, ...] = (
    Cause(
        "host-maintenance",
        "infrastructure",
        True,
        3,
        "Host maintenance",
        "host maintenance",
        "resubmitting is safe: {node} was taken for host maintenance; run `whathappened preflight` before long "
        "runs to skip nodes with maintenance due",
    ),
    Cause(
        "spot-preemption",
        "infrastructure",
        True,
        3,
        "Spot instance reclaimed",
        "a spot reclaim",
        "resubmitting is safe: the spot VM {node} was reclaimed; resume from the last checkpoint, or use "
        "on-demand capacity for long runs",
    ),
    Cause(
        "node-failure",
        "infrastructure",
        True,
        3,
        "Node failure",
        "its node failing",
        "cordon {fault_node} and check it (kubelet, kernel log, hardware); resubmitting is safe",
    ),
    Cause(
        "node-pressure-eviction",
        "infrastructure",
        True,
        3,
        "Evicted under node pressure",
        "a kubelet eviction",
        "resubmitting is safe; set the memory request near real use so the kubelet on {node} does not evict it again",
    ),
    Cause(
        "gpu-fallen-off-bus",
        "infrastructure",
        True,
        3,
        "GPU fell off the bus",
        "its GPU falling off the bus",
        HARDWARE_TICKET,
    ),
    Cause("gpu-memory-error", "infrastructure", True, 3, "GPU memory error", "a GPU memory error", HARDWARE_TICKET),
    Cause("gpu-hardware-error", "infrastructure", True, 3, "GPU hardware error", "a GPU fault", HARDWARE_TICKET),
    Cause(
        "nvlink-error",
        "infrastructure",
        True,
        3,
        "NVLink error",
        "an NVLink error",
        "cordon {fault_node} and open a hardware ticket for the NVLink of {gpu}; resubmitting is safe",
    ),
    Cause(
        "gpu-thermal",
        "infrastructure",
        True,
        3,
        "GPU overheated",
        "its GPU overheating",
        "cordon {fault_node} and have its cooling checked ({gpu} overheated); resubmitting is safe",
    ),
    Cause(
        "network-error",
        "infrastructure",
        True,
        3,
        "Network error",
        "a network fault",
        "cordon {fault_node} and have its network links checked; resubmitting is safe",
    ),
    Cause(
        "nccl-timeout",
        "unknown",
        True,
        0,
        "NCCL timeout",
        "an NCCL timeout",
        "no fault found behind the NCCL timeout: check the network fabric and look for a hung rank (py-spy "
        "dump, NCCL_DEBUG=INFO), then resubmit",
        reaction=True,
    ),
    Cause(
        "nccl-error",
        "unknown",
        True,
        0,
        "NCCL error",
        "an NCCL error",
        "no fault found behind the NCCL error: rerun with NCCL_DEBUG=INFO and check the network, then resubmit",
        reaction=True,
    ),
    Cause(
        "peer-failure",
        "collateral",
        True,
        0,
        "Torn down after another rank failed",
        "another rank failing",
        "look at the rank that failed first; resubmitting is safe once it is fixed",
        reaction=True,
    ),
    Cause(
        "scheduler-preemption",
        "scheduling",
        True,
        2,
        "Preempted by the scheduler",
        "preemption",
        "resubmitting is safe: a higher-priority pod took the node; use a higher priority class or reserved capacity",
    ),
    Cause(
        "unschedulable",
        "scheduling",
        False,
        2,
        "Never scheduled",
        "not being scheduled",
        "not retryable as is: {what}; free or add capacity, or lower the request",
    ),
    Cause(
        "oom-killed",
        "application",
        False,
        1,
        "Out of memory (container limit)",
        "running out of memory",
        "not retryable: raise the memory limit of {pod} or lower its memory use",
    ),
    Cause(
        "cuda-oom",
        "application",
        False,
        1,
        "CUDA out of memory",
        "running out of GPU memory",
        "not retryable: lower the batch size or use activation checkpointing, then resubmit",
    ),
    Cause(
        "application-error",
        "application",
        False,
        1,
        "Application error",
        "an application error",
        "not retryable: fix {fix} ({exception}), then resubmit",
    ),
    Cause(
        "config-error",
        "application",
        False,
        1,
        "Configuration error",
        "a configuration error",
        "not retryable: fix the image or configuration ({what}), then resubmit",
    ),
    Cause(
        "liveness-probe",
        "application",
        False,
        1,
        "Failed its liveness probe",
        "a failed liveness probe",
        "not retryable: fix the liveness probe or the hang it catches",
    ),
    Cause(
        "deadline-exceeded",
        "application",
        False,
        1,
        "Deadline exceeded",
        "its Job's deadline",
        "not retryable as is: raise the Job's activeDeadlineSeconds or backoffLimit, or make it finish sooner",
    ),
    Cause(
        "deleted",
        "user",
        False,
        0,
        "Deleted",
        "being stopped",
        "nothing failed: the pods were stopped on purpose; resubmit if that was not intended",
    ),
    Cause("completed", "none", False, 0, "Completed", "finishing", "nothing to do: the run finished"),
    Cause(
        "unknown",
        "unknown",
        False,
        0,
        "Unknown",
        "an unexplained exit",
        "the evidence does not decide: read the last log lines of {pod} and the kernel log of {node}",
    ),
)

CAUSES: dict[str, Cause] = {cause.code: cause for cause in _TABLE}

# Outcomes that are not failures: they never make a pod the root of a failure.
NO_FAULT: frozenset[str] = frozenset({"deleted", "completed"})


def cause(code: str) -> Cause:
    """The table row for a code; an unknown code is a bug in a rule, so it raises."""
    return CAUSES[code]
