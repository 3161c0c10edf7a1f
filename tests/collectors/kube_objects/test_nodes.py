"""Nodes: providers, taints, conditions, maintenance notices and the GPU health other agents write."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from whathappened.collectors.kube_objects.parse import (
    node_events,
    parse_event,
    parse_node,
)

from tests.collectors.kube_objects.test_parse import SCENARIOS, WINDOW, at, recorded
from whathappened.kinds import Kind
from whathappened.model import Window

# --- nodes ---


def test_parse_node_providers_and_taints() -> None:
    azure = parse_node(recorded("maintenance-eviction", "nodes")[3])
    aws = parse_node(recorded("spot-preemption", "nodes")[0])
    assert (azure.provider, azure.instance_type, azure.gpu_count, azure.unschedulable, azure.ready) == (
        "azure", "Standard_ND96isr_H100_v5", 8, True, True,
    )  # fmt: skip
    assert azure.taints == ("node.kubernetes.io/unschedulable:NoSchedule",)
    assert azure.gpu_product == "NVIDIA-H100-80GB-HBM3"
    assert aws.provider == "aws"
    gce = parse_node(
        {
            "metadata": {"name": "g"},
            "spec": {
                "providerID": "gce://p/us-central1-a/g",
                "taints": [{"key": "k", "value": "v", "effect": "NoExecute"}],
            },
        }
    )
    assert (gce.provider, gce.taints) == ("gcp", ("k=v:NoExecute",))


def test_node_events_maintenance_condition_and_cordon_taint() -> None:
    node = recorded("maintenance-eviction", "nodes")[3]
    scenario = SCENARIOS["maintenance-eviction"]
    window = Window(scenario.start, scenario.end)
    events = {e.kind: e for e in node_events(node, window)}
    notice = events[Kind.MAINTENANCE_NOTICE]
    assert (notice.at, notice.attrs["provider"], notice.attrs["not_before"]) == (
        at("2026-11-13T09:00:00Z"), "azure", at("2026-11-13T09:15:00Z"),
    )  # fmt: skip
    assert events[Kind.NODE_CORDONED].at == at("2026-11-13T09:02:00Z")
    assert len(node_events(node, Window(window.start - timedelta(days=1), window.start))) == 0


def test_node_events_pressure_ready_npd_labels_and_taints() -> None:
    node = {
        "metadata": {"name": "n", "labels": {"cloud.google.com/scheduled-maintenance-time": "1795158000"}},
        "spec": {"taints": [{"key": "aws-node-termination-handler/spot-itn", "value": "spot-itn-1", "effect": "NoSchedule", "timeAdded": "2026-11-20T07:10:00Z"}]},
        "status": {"conditions": [
            {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown", "lastTransitionTime": "2026-11-20T07:20:00Z"},
            {"type": "MemoryPressure", "status": "True", "lastTransitionTime": "2026-11-20T07:05:00Z"},
            {"type": "KernelDeadlock", "status": "True", "reason": "DockerHung", "lastTransitionTime": "2026-11-20T07:06:00Z"},
            {"type": "DiskPressure", "status": "False", "lastTransitionTime": "2026-11-20T07:06:00Z"},
        ]},
    }  # fmt: skip
    events = {e.kind: e for e in node_events(node, WINDOW)}
    assert set(events) == {
        Kind.NODE_NOT_READY,
        Kind.NODE_PRESSURE,
        Kind.NODE_CONDITION,
        Kind.SPOT_INTERRUPTION,
        Kind.MAINTENANCE_NOTICE,
    }
    assert events[Kind.NODE_PRESSURE].attrs["resource"] == "memory"
    assert events[Kind.SPOT_INTERRUPTION].attrs["provider"] == "aws"
    gke = events[Kind.MAINTENANCE_NOTICE]
    assert (gke.attrs["provider"], gke.attrs["not_before"]) == ("gcp", datetime.fromtimestamp(1795158000, UTC))


# --- GPU health written by other agents (verbatim shapes from the agents' own output, see real-formats.md) ---

HEALTH_WINDOW = Window(datetime(2025, 1, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC))


def condition_events(condition: dict[str, Any]) -> list[Any]:
    return node_events({"metadata": {"name": "n"}, "status": {"conditions": [condition]}}, HEALTH_WINDOW)


def test_gke_xid_critical_error_reads_its_reason_as_a_map_of_xids() -> None:
    # GoogleCloudPlatform/container-engine-accelerators#497
    [event] = condition_events(
        {"lastHeartbeatTime": "2025-06-23T18:58:44Z", "lastTransitionTime": "2025-06-23T18:44:57Z",
         "message": "6e43a052-e544-467b-a972-63d7cd2ce80a", "reason": '{"31":true}', "status": "True",
         "type": "XidCriticalError"}
    )  # fmt: skip
    assert (event.kind, event.attrs["xid"], event.subject.node) == (Kind.GPU_XID, 31, "n")


def test_nvsentinel_conditions_name_the_gpu_and_what_is_wrong() -> None:
    # NVSentinel platform-connector test expectations and a real GB300 node (NVIDIA/aicr#2641)
    [xid] = condition_events(
        {"type": "GpuXidError", "status": "True", "reason": "GpuXidErrorIsNotHealthy",
         "message": "ErrorCode:44 GPU:0 Recommended Action=CONTACT_SUPPORT;", "lastTransitionTime": "2026-09-08T00:00:00Z"}
    )  # fmt: skip
    assert (xid.kind, xid.attrs["xid"], xid.subject.gpu) == (Kind.GPU_XID, 44, "0")
    [nvlink] = condition_events(
        {"type": "GpuNvlinkWatch", "status": "True", "reason": "GpuNvlinkWatchIsNotHealthy",
         "message": "ErrorCode:DCGM_FR_IMEX_UNHEALTHY GPU:0 PCI:0000:9d:00.0 GPU_UUID:GPU-bb3e1419-1111-2222-3333-444455556666"
                    " IMEX daemon status is -3 (not READY)", "lastTransitionTime": "2026-09-08T00:00:00Z"}
    )  # fmt: skip
    # no IMEX daemon running (every idle node without one) is no NVLink fault (NVSentinel's NVLink watch says it)
    assert (nvlink.kind, nvlink.attrs["uuid"]) == (Kind.NODE_CONDITION, "GPU-bb3e1419-1111-2222-3333-444455556666")
    healthy = condition_events(
        {"type": "GpuXidError", "status": "False", "reason": "GpuXidErrorIsHealthy", "message": "No Health Failures",
         "lastTransitionTime": "2026-09-08T00:00:00Z"}
    )  # fmt: skip
    assert healthy == []


def test_aks_npd_xid_condition_is_quiet_while_good_and_eks_ready_conditions_count_when_false() -> None:
    # Azure/AgentBaker#8797: a fresh GPU node's conditions
    good = {"type": "XIDError", "status": "False", "lastTransitionTime": "2026-06-30T16:57:54Z",
            "reason": "XIDErrorIsNotPresent", "message": "XID error status is good"}  # fmt: skip
    assert condition_events(good) == []
    [bad] = condition_events({"type": "AcceleratedHardwareReady", "status": "False", "reason": "NotReady",
                              "message": "", "lastTransitionTime": "2026-06-30T16:57:54Z"})  # fmt: skip
    assert bad.kind == Kind.NODE_CONDITION
    assert condition_events({"type": "AcceleratedHardwareReady", "status": "True", "reason": "Ready",
                             "lastTransitionTime": "2026-06-30T16:57:54Z"}) == []  # fmt: skip


@pytest.mark.parametrize(
    ("scenario", "xid", "gpu"), [("agent-nvsentinel", 79, "5"), ("agent-gke", 79, None), ("agent-eks", 48, None)]
)
def test_generated_agent_conditions_carry_the_xid(scenario: str, xid: int, gpu: str | None) -> None:
    """The incident's Xid exists only in the agent's node condition: read from it, on its GPU where named."""
    window = Window(at("2026-11-01T00:00:00Z"), at("2026-12-01T00:00:00Z"))
    xids = [e for n in recorded(scenario, "nodes") for e in node_events(n, window) if e.kind == Kind.GPU_XID]
    assert [(e.attrs["xid"], e.subject.gpu) for e in xids] == [(xid, gpu)]


@pytest.mark.parametrize(
    ("reason", "kind", "xid"),
    [
        ("NvidiaXID79Error", Kind.GPU_XID, 79),
        ("NvidiaXID13Warning", Kind.GPU_XID, 13),
        ("NvidiaDoubleBitError", Kind.GPU_ECC_DBE, None),
        ("NvidiaNVLinkError", Kind.NVLINK_ERROR, None),
        ("NvidiaThermalError", Kind.GPU_THERMAL, None),
        ("NotReady", Kind.NODE_CONDITION, None),
    ],
)
def test_eks_node_monitoring_agent_reasons_name_the_gpu_fault(reason: str, kind: Kind, xid: int | None) -> None:
    # aws/eks-node-monitoring-agent: AcceleratedHardwareReady=False with the classified reason
    [event] = condition_events({"type": "AcceleratedHardwareReady", "status": "False", "reason": reason,
                                "message": "", "lastTransitionTime": "2026-06-30T16:57:54Z"})  # fmt: skip
    assert (event.kind, event.attrs.get("xid")) == (kind, xid)


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (4, Kind.GPU_ECC_DBE),  # DCGM_FR_VOLATILE_DBE_DETECTED
        (81, Kind.GPU_ECC_DBE),  # DCGM_FR_UNCONTAINED_ERROR (Xid 95)
        (80, Kind.GPU_ROW_REMAP_FAILURE),
        (14, Kind.NVLINK_ERROR),  # DCGM_FR_NVLINK_DOWN
        (109, Kind.NVLINK_ERROR),  # DCGM_FR_SXID_ERROR
        (41, Kind.GPU_THERMAL),  # DCGM_FR_THERMAL_VIOLATIONS_TS
        (120, Kind.GPU_MISSING),  # DCGM_FR_FALLEN_OFF_BUS
        (101, Kind.NODE_CONDITION),  # DCGM_FR_XID_ERROR: any Xid, an application's too
        (85, Kind.NODE_CONDITION),  # DCGM_FR_PENDING_ROW_REMAP: repaired at the next reset
        (122, Kind.NODE_CONDITION),  # DCGM_FR_IMEX_UNHEALTHY
    ],
)
def test_eks_agent_dcgm_health_codes_name_the_fault_dcgm_errors_h_gives_them(code: int, kind: Kind) -> None:
    """The agent's DCGM health incidents carry only dcgm_errors.h's number, as a node condition (fatal) or an Event
    (aws/eks-node-monitoring-agent monitors/nvidia/dcgm/dcgm_healthcheck.go)."""
    message = f"DCGM detected issues in health check system with error code {code}"
    [condition] = condition_events({"type": "AcceleratedHardwareReady", "status": "False",
                                    "reason": f"DCGMHealthCode{code}", "message": message,
                                    "lastTransitionTime": "2026-06-30T16:57:54Z"})  # fmt: skip
    event = parse_event({
        "involvedObject": {"kind": "Node", "name": "ip-10-0-1-20.ec2.internal"}, "reason": f"DCGMHealthCode{code}",
        "message": message, "type": "Warning", "source": {"component": "eks-node-monitoring-agent"},
        "lastTimestamp": "2026-06-30T16:57:54Z",
    })  # fmt: skip
    assert event is not None
    assert (condition.kind, event.kind, event.attrs["dcgm_code"]) == (kind, kind, code)


def test_a_cordon_by_nvsentinel_names_the_remediator_and_its_reason() -> None:
    """NVSentinel's fault-quarantine cordons the node and leaves its health event in an annotation: the cordon
    is its act (nvsentinel common QuarantineHealthEventAnnotationKey and QuarantineHealthEventIsCordoned)."""
    event = {"checkName": "GpuXidError", "errorCode": ["79"], "componentClass": "GPU", "isFatal": True}
    node = {
        "metadata": {
            "name": "gpu-7",
            "annotations": {"quarantineHealthEvent": json.dumps([event]), "quarantineHealthEventIsCordoned": "True"},
        },
        "spec": {"unschedulable": True, "taints": [
            {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": "2026-09-08T00:01:00Z"}
        ]},
    }  # fmt: skip
    [cordon] = [e for e in node_events(node, HEALTH_WINDOW) if e.kind == Kind.NODE_CORDONED]
    assert (cordon.attrs["remediator"], cordon.attrs["remediation_reason"]) == (
        "NVSentinel",
        "GpuXidError ErrorCode:79",
    )
    assert cordon.summary.endswith("by NVSentinel (GpuXidError ErrorCode:79)")
    node["metadata"]["annotations"] = {"quarantineHealthEvent": "not json"}
    [plain] = [e for e in node_events(node, HEALTH_WINDOW) if e.kind == Kind.NODE_CORDONED]
    assert plain.attrs["remediator"] == "NVSentinel" and "remediation_reason" not in plain.attrs


@pytest.mark.parametrize(("reason", "xid"), [("NvidiaXID79Error", 79), ("NvidiaXID13Warning", 13)])
def test_eks_agent_xid_events_on_the_node(reason: str, xid: int) -> None:
    """The EKS node monitoring agent's Event per Xid (a Warning-only code never sets the condition)."""
    event = {
        "involvedObject": {"kind": "Node", "name": "ip-10-0-1-20.ec2.internal"},
        "reason": reason,
        "message": "",
        "type": "Warning",
        "source": {"component": "eks-node-monitoring-agent"},
        "lastTimestamp": "2026-06-30T16:57:54Z",
    }
    parsed = parse_event(event)
    assert parsed is not None
    assert (parsed.kind, parsed.attrs["xid"], parsed.subject.node) == (Kind.GPU_XID, xid, "ip-10-0-1-20.ec2.internal")
    assert parse_event({**event, "reason": "NvidiaXIDError"}).kind != Kind.GPU_XID  # no number, no Xid
