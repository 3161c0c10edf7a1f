"""The contract's cause codes (CONTRACT.md section 3): the one table a verdict's category and retryable come from.

Beside the contract's two columns each cause carries a ``tier``, how strongly it explains a failure when several
pods failed at once: infrastructure and hardware evidence outranks an application's own error, which outranks a
reaction to another rank's death. ``reaction`` marks the causes that are symptoms of someone else's failure.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Cause:
    code: str
    category: str
    retryable: bool
    tier: int  # 3 hardware/infrastructure, 2 scheduling, 1 application, 0 symptom or no fault
    reaction: bool = False  # a symptom of another rank's failure: never the root by itself


_TABLE: tuple[Cause, ...] = (
    Cause("host-maintenance", "infrastructure", True, 3),
    Cause("spot-preemption", "infrastructure", True, 3),
    Cause("node-failure", "infrastructure", True, 3),
    Cause("node-pressure-eviction", "infrastructure", True, 3),
    Cause("gpu-fallen-off-bus", "infrastructure", True, 3),
    Cause("gpu-memory-error", "infrastructure", True, 3),
    Cause("gpu-hardware-error", "infrastructure", True, 3),
    Cause("nvlink-error", "infrastructure", True, 3),
    Cause("gpu-thermal", "infrastructure", True, 3),
    Cause("network-error", "infrastructure", True, 3),
    Cause("nccl-timeout", "unknown", True, 0, reaction=True),
    Cause("nccl-error", "unknown", True, 0, reaction=True),
    Cause("peer-failure", "collateral", True, 0, reaction=True),
    Cause("scheduler-preemption", "scheduling", True, 2),
    Cause("unschedulable", "scheduling", False, 2),
    Cause("oom-killed", "application", False, 1),
    Cause("cuda-oom", "application", False, 1),
    Cause("application-error", "application", False, 1),
    Cause("config-error", "application", False, 1),
    Cause("liveness-probe", "application", False, 1),
    Cause("deadline-exceeded", "application", False, 1),
    Cause("deleted", "user", False, 0),
    Cause("completed", "none", False, 0),
    Cause("unknown", "unknown", False, 0),
)

CAUSES: dict[str, Cause] = {cause.code: cause for cause in _TABLE}

# Outcomes that are not failures: they never make a pod the root of a failure.
NO_FAULT: frozenset[str] = frozenset({"deleted", "completed"})


def cause(code: str) -> Cause:
    """The table row for a code; an unknown code is a bug in a rule, so it raises."""
    return CAUSES[code]
