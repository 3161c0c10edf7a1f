"""What a verdict says: one plain sentence per finding, and the next step per cause.

Templates are filled from the facts of a finding (the deciding event's attributes, the pod, its node and GPU,
times in UTC). A fact a source did not give reads as a plain stand-in ("its node", "a GPU"), never as a blank.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from whathappened.correlate.causes import CAUSES

CONFIG = "{pod} could not start its container: {what} ({at})."
UNSCHEDULABLE = "{pod} was never scheduled: {what} (first seen {at})."
NEVER_SCHEDULED = "{pod} stayed Pending with no node from {at} to {died}: it was never scheduled."
SETUP_IN_LOG = "{pod} stopped at {at} because of how its pod is set up: {what}."
ADMISSION = "The kubelet on {node} refused {pod} at {at}, so it never ran: {what}."
ADMISSION_LOST_GPU = "The kubelet on {node} refused {pod} at {at} because a GPU there is gone: {what}."
ADMISSION_UNHEALTHY_GPU = "The kubelet on {node} refused {pod} at {at} because its GPUs there are unhealthy: {what}."
PREEMPTED = "{pod} was preempted on {node} at {at} to make room for a higher-priority pod."
PRESSURE = "The kubelet evicted {pod} from {node} at {at} because the node ran low on {resource}."
SPOT = "{pod} stopped at {died} because {node}, a spot VM, was reclaimed by {provider} (interruption notice at {at})."
MAINTENANCE = (
    "{pod} was stopped at {died} when {node} was drained for {provider} host maintenance ({event} notice at {at})."
)
FALLEN = "{gpu} on {node} fell off the bus (Xid 79) at {at}; {pod} died with it at {died}."
GPU_MEMORY = "{gpu} on {node} hit an uncorrectable memory error ({what}) at {at}; {pod} {ended} at {died}."
NVLINK = "An NVLink error ({what}) hit {gpu} on {node} at {at}; {pod} {ended} at {died}."
GPU_HARDWARE = "{gpu} on {node} failed ({what}) at {at}; {pod} {ended} at {died}."
CUDA_ECC = "{pod} crashed at {at} on an uncorrectable ECC error that CUDA reported on {node}."
CUDA_NVLINK = "{pod} crashed at {at} on an uncorrectable NVLink error that CUDA reported on {node}."
APP_XID = (
    "{pod} died at {died} after its own GPU work faulted ({what} at {at}): an application fault, the GPU is healthy."
)
KERNEL_OOM = "The kernel's OOM killer killed a process of {pod} on {node} at {at} ({what}); the pod ended at {died}."
CUDA_LOST = "{pod} crashed at {at}: CUDA lost its GPU on {node} ({what})."
CUDA_UNAVAILABLE = "{pod} crashed at {at}: CUDA found its GPU on {node} unusable ({what}); the GPU needs a reset."
THERMAL_SHUTDOWN = "{gpu} on {node} overheated ({what}) at {at} and shut down; {pod} died with it at {died}."
ELSEWHERE = (
    "{pod} failed at {died} reacting to a fault on {fault_node}, where another rank of the job ran: {what} at {at}."
)
THERMAL = "{gpu} on {node} overheated ({what}) at {at} and {pod} died at {died}."
NODE_LOST = "{node} stopped responding at {began}; {pod} was removed from it at {at}."
NODE_DOWN = "{node} went down ({what}) at {at}; {pod} died with it at {died}."
NETWORK = "{node} reported a network error ({what}) at {at}; {pod} failed at {died}."
OOM = "{pod} was killed at {died} for going over its memory limit (OOMKilled) on {node}."
CUDA_OOM = "{pod} ran out of GPU memory at {at} ({what})."
LIVENESS = "{pod} was killed at {at} after failing its liveness probe."
STARTUP_PROBE = "{pod} was killed at {at} after failing its startup probe."
DEADLINE = "{pod} was stopped at {died} because its Job hit its deadline or backoff limit ({what})."
# the Job's ending read when nothing stopped the pod: it ended by itself, and its Job failed on it
JOB_LIMIT = "{pod} ended at {died}, and its Job then failed on its deadline or backoff limit ({what})."
TRACEBACK = "{pod} crashed at {at} with {exception}{location}."
CUDA_APP = "{pod} crashed at {at} with a CUDA error ({what}), and no GPU fault was found on {node}."
NCCL_TIMEOUT = "{pod} hit the NCCL watchdog timeout at {at}{blame}."
NCCL_ERROR = "{pod} failed on an NCCL error at {at}{blame}."
TEARDOWN = "{pod} was torn down by its launcher at {at}{blame}."
OWN_RANK = (
    "{pod} failed at {at}: one of its own ranks exited with an error ({what}) and nothing outside it explains why."
)
PEER = "{pod} stopped at {died}{blame}."
STOPPED = "{pod} was stopped at {at} ({what}) with no fault found: deleted or stopped by a user or controller."
COMPLETED = "{pod} finished successfully at {died}."
STATUS = "{pod} ended at {died}; its Kubernetes status says {status}."
UNKNOWN = "{pod} ended at {died} and the evidence does not say why."

NOTHING_FAILED = "nothing failed in this window"


class _Facts(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return ""


def fill(template: str, facts: Mapping[str, Any]) -> str:
    return template.format_map(_Facts(facts))


def next_step(code: str, facts: Mapping[str, Any]) -> str:
    return fill((CAUSES.get(code) or CAUSES["unknown"]).next_step, facts)


def place(file: object, line: object) -> str:
    """ "line 88 of data.py" from a traceback's file and line, or nothing."""
    if not file:
        return ""
    name = os.path.basename(str(file))
    return f"line {line} of {name}" if line not in (None, "") else name
