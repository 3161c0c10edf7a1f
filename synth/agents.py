"""GPU health written onto the Node by another agent, as each writes it (real-formats.md section 5.6 and the
agents' own tests): NVIDIA NVSentinel's ``<Check>IsNotHealthy`` conditions, GKE's ``XidCriticalError`` whose
reason is a JSON map of Xids, the EKS node monitoring agent's ``AcceleratedHardwareReady`` with its
``NvidiaXID<code>Error`` reason. ``reported_by`` turns a story's Xid into such a condition and takes away the other
witnesses (the kernel log's NVRM lines, the DCGM Xid gauge, the GPU vanishing from DCGM), so that the agent's
word is the node's only GPU evidence.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from synth.spec import Gpu, Recording, iso

Condition = Callable[[int, Gpu, datetime], dict[str, Any]]


def nvsentinel(code: int, gpu: Gpu, t: datetime) -> dict[str, Any]:
    return {
        "type": "GpuXidError",
        "status": "True",
        "reason": "GpuXidErrorIsNotHealthy",
        "message": f"ErrorCode:{code} GPU:{gpu.index} PCI:{gpu.pci_bus_id.lower()[4:]} GPU_UUID:{gpu.uuid} "
        "Recommended Action=RESTART_VM;",
        "lastTransitionTime": iso(t),
    }


def _gke(code: int, gpu: Gpu, t: datetime) -> dict[str, Any]:
    return {
        "type": "XidCriticalError",
        "status": "True",
        "reason": json.dumps({str(code): True}, separators=(",", ":")),
        "message": "6e43a052-e544-467b-a972-63d7cd2ce80a",
        "lastTransitionTime": iso(t),
    }


def _eks(code: int, gpu: Gpu, t: datetime) -> dict[str, Any]:
    """The EKS node monitoring agent: AcceleratedHardwareReady turns False with a classified reason."""
    return {
        "type": "AcceleratedHardwareReady",
        "status": "False",
        "reason": f"NvidiaXID{code}Error",
        "message": "",
        "lastTransitionTime": iso(t),
    }


# AKS node-problem-detector's XIDError is read too (quiet while False), but its wording when True is not in any
# source we have: no incident invents it.
AGENTS: dict[str, Condition] = {"nvsentinel": nvsentinel, "gke": _gke, "eks": _eks}


def quarantine(rec: Recording, node: str, code: int, gpu: int, t: datetime) -> None:
    """NVSentinel's fault-quarantine: the cordon, and the annotations its node-drainer reads back
    (QuarantineHealthEventAnnotationKey, QuarantineHealthEventIsCordonedAnnotationKey)."""
    rec.cordoned[node] = t
    event = {
        "checkName": "GpuXidError",
        "componentClass": "GPU",
        "errorCode": [str(code)],
        "isFatal": True,
        "entitiesImpacted": [{"entityType": "GPU", "entityValue": str(gpu)}],
        "recommendedAction": "RESTART_VM",
    }
    annotations = rec.node_annotations.setdefault(node, {})
    annotations["quarantineHealthEvent"] = (json.dumps([event], separators=(",", ":")), t)
    annotations["quarantineHealthEventIsCordoned"] = ("True", t)


def reported_by(rec: Recording, agent: str) -> None:
    """The recording's Xids as ``agent``'s node condition, and no other GPU witness. NVSentinel also quarantines
    the node: its fault-quarantine cordons it half a minute later and leaves the health event in annotations."""
    condition = AGENTS[agent]
    nodes = {n.name: n for n in rec.nodes}
    for (node_name, index), hits in rec.xids.items():
        t, code = hits[-1]
        conditions = rec.node_api_conditions.setdefault(node_name, [])
        conditions.append(condition(code, nodes[node_name].gpus[index], t))
        if agent == "nvsentinel":
            quarantine(rec, node_name, code, index, t + timedelta(seconds=30))
    rec.xids.clear()
    rec.gpu_gone.clear()
    rec.logs = [line for line in rec.logs if not (line.node and "NVRM" in line.message)]


# NVSentinel's state-manager label (commons/pkg/statemanager): quarantined -> draining -> drain-succeeded or
# drain-failed -> remediating -> ...; the node-drainer evicts the node's pods through the Eviction API
NVSENTINEL_STATE = "dgxc.nvidia.com/nvsentinel-state"
