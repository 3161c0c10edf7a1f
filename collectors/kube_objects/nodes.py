"""Pure readers of Kubernetes Node objects: what a node is, and what its conditions, taints and labels say.

A node carries its own history only as "since when" stamps: a condition's lastTransitionTime, a taint's
timeAdded. Those that fall in the window and describe a problem become timeline events; maintenance labels
(GKE's scheduled-maintenance-time, node-termination-handler's action-time) become notices with not_before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from whathappened.collectors.kube_objects.reasons import PRESSURE
from whathappened.collectors.kube_objects.text import dig, event_id, event_type, not_before, one_line, text, when

from whathappened.kinds import Kind, severity_of
from whathappened.model import NodeInfo, Subject, TimelineEvent, Window

_PROVIDERS = (("azure://", "azure"), ("aws://", "aws"), ("gce://", "gcp"))
_INSTANCE_TYPE = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
_GPU_PRODUCT = ("nvidia.com/gpu.product", "cloud.google.com/gke-accelerator", "accelerator")
# Conditions whose problem state is False (EKS node monitoring agent: "AcceleratedHardwareReady" and its kin).
_READY_CONDITIONS = frozenset(
    {"AcceleratedHardwareReady", "StorageReady", "NetworkingReady", "KernelReady", "ContainerRuntimeReady"}
)
# GPU health written by other agents: AKS node-problem-detector ("XIDError"), GKE's device plugin
# ("XidCriticalError", its reason a JSON map of Xids: '{"31":true}'), NVIDIA NVSentinel ("<Check>" types with
# reasons "<Check>IsNotHealthy" and messages "ErrorCode:44 GPU:0 PCI:... GPU_UUID:GPU-... Recommended Action=...").
_XID_CONDITIONS = frozenset({"XIDError", "XidCriticalError", "GpuXidError", "SysLogsXIDError"})
_HEALTH_WORDS: tuple[tuple[str, Kind], ...] = (
    ("nvlink", Kind.NVLINK_ERROR),
    ("thermal", Kind.GPU_THERMAL),
    ("temperature", Kind.GPU_THERMAL),
)
# DCGM health codes an NVLink or GPU watch raises for software beside the GPU, not the GPU: the IMEX daemon not
# running ("IMEX daemon status is -3 (not READY)", every idle node without one)
_SOFTWARE_CODES = ("dcgm_fr_imex_unhealthy",)
_XID_IN_TEXT = re.compile(
    r"(?:\bXID|\bXid|ErrorCode)[ :=]{0,3}(\d{1,3})\b|\"(\d{1,3})\"\s*:\s*true|\bNvidiaXID(\d{1,3})(?:Error|Warning)\b"
)
# The EKS node monitoring agent's AcceleratedHardwareReady reasons (eks-node-monitoring-agent dcgm classify tests:
# NvidiaXID<code>Error, and these), each the GPU fault it names.
_EKS_GPU_REASONS: Mapping[str, Kind] = {
    "NvidiaDoubleBitError": Kind.GPU_ECC_DBE,
    "NvidiaNVLinkError": Kind.NVLINK_ERROR,
    "NvidiaThermalError": Kind.GPU_THERMAL,
}
# The EKS node monitoring agent names a DCGM health incident by its code alone (reason "DCGMHealthCode<N>", message
# "DCGM detected issues in health check system with error code <N>"): dcgm_errors.h's dcgmError_t. The codes that
# name a GPU fault; the others (DCGM_FR_XID_ERROR 101 is any Xid, an application's too; a pending row remap; the
# IMEX daemon's state) decide nothing by themselves.
_DCGM_HEALTH_CODE = re.compile(r"\bDCGMHealthCode(\d{1,3})\b|\bhealth check system with error code (\d{1,3})\b")
_DCGM_FAULTS: Mapping[int, Kind] = {
    **dict.fromkeys((4, 8, 52, 57, 58, 81, 83, 84, 103, 106, 118, 132), Kind.GPU_ECC_DBE),  # DBE, uncontained (95)
    80: Kind.GPU_ROW_REMAP_FAILURE,
    **dict.fromkeys((13, 14, 15, 70, 71, 99, 109, 119, 121), Kind.NVLINK_ERROR),  # links, NVSwitch fatal (SXid)
    **dict.fromkeys((40, 41, 42), Kind.GPU_THERMAL),  # thermal violations, temperature too high
    120: Kind.GPU_MISSING,  # DCGM_FR_FALLEN_OFF_BUS
}
_GPU_IN_TEXT = re.compile(r"\bGPU:(\d{1,2})\b")
_UUID_IN_TEXT = re.compile(r"GPU_UUID:(GPU-[0-9a-fA-F-]{36})")
_CONDITION_NOTICES = {
    "VMEventScheduled": (Kind.MAINTENANCE_NOTICE, "azure"),
    "PreemptionScheduled": (Kind.SPOT_INTERRUPTION, "azure"),
}
# Taint key -> (kind, provider). Keys as node-termination-handler, GKE, AKS and Kubernetes write them.
_TAINTS: dict[str, tuple[Kind, str | None]] = {
    "node.kubernetes.io/unschedulable": (Kind.NODE_CORDONED, None),
    "node.kubernetes.io/not-ready": (Kind.NODE_NOT_READY, None),
    "node.kubernetes.io/unreachable": (Kind.NODE_NOT_READY, None),
    "node.kubernetes.io/out-of-service": (Kind.NODE_SHUTDOWN, None),
    "node.kubernetes.io/memory-pressure": (Kind.NODE_PRESSURE, None),
    "node.kubernetes.io/disk-pressure": (Kind.NODE_PRESSURE, None),
    "node.kubernetes.io/pid-pressure": (Kind.NODE_PRESSURE, None),
    "aws-node-termination-handler/spot-itn": (Kind.SPOT_INTERRUPTION, "aws"),
    "aws-node-termination-handler/scheduled-maintenance": (Kind.MAINTENANCE_NOTICE, "aws"),
    "aws-node-termination-handler/asg-lifecycle-termination": (Kind.DRAIN, "aws"),
    "aws-node-termination-handler/rebalance-recommendation": (Kind.REBALANCE_RECOMMENDATION, "aws"),
    "cloud.google.com/impending-node-termination": (Kind.MAINTENANCE_NOTICE, "gcp"),
    "cloud.google.com/maintenance-window-started": (Kind.MAINTENANCE_NOTICE, "gcp"),
    "remediator.kubernetes.azure.com/unschedulable": (Kind.MAINTENANCE_NOTICE, "azure"),
}
# Node annotations a remediator leaves on the nodes it cordons: the cordon is then its act, with its reason.
# NVIDIA NVSentinel's fault-quarantine (nvsentinel common: QuarantineHealthEventAnnotationKey and friends).
_REMEDIATOR_ANNOTATIONS: tuple[tuple[str, str], ...] = (("quarantineHealthEvent", "NVSentinel"),)
_MAINTENANCE_LABELS = (
    ("cloud.google.com/scheduled-maintenance-time", "gcp"),
    ("aws-node-termination-handler/action-time", "aws"),
)


def node_provider(provider_id: str) -> str | None:
    for prefix, provider in _PROVIDERS:
        if provider_id.startswith(prefix):
            return provider
    return None


def _first_label(labels: Mapping[str, str], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        if labels.get(key):
            return labels[key]
    return None


def _taint_text(taint: Mapping[str, Any]) -> str:
    value = text(taint.get("value"))
    key = text(taint.get("key"))
    return f"{key}={value}:{text(taint.get('effect'))}" if value else f"{key}:{text(taint.get('effect'))}"


def _gpu_count(labels: Mapping[str, str], obj: Mapping[str, Any]) -> int:
    for raw in (labels.get("nvidia.com/gpu.count"), dig(obj, "status", "capacity", "nvidia.com/gpu")):
        try:
            return int(str(raw))
        except (TypeError, ValueError):
            continue
    return 0


def parse_node(obj: Mapping[str, Any]) -> NodeInfo:
    labels: Mapping[str, str] = dig(obj, "metadata", "labels") or {}
    ready = None
    for condition in dig(obj, "status", "conditions") or ():
        if condition.get("type") == "Ready":
            ready = condition.get("status") == "True"
    return NodeInfo(
        name=text(dig(obj, "metadata", "name")),
        provider=node_provider(text(dig(obj, "spec", "providerID"))),
        instance_type=_first_label(labels, _INSTANCE_TYPE),
        gpu_product=_first_label(labels, _GPU_PRODUCT),
        gpu_count=_gpu_count(labels, obj),
        unschedulable=bool(dig(obj, "spec", "unschedulable")),
        ready=ready,
        labels=dict(labels),
        taints=tuple(_taint_text(t) for t in dig(obj, "spec", "taints") or ()),
        sources=frozenset({"kubernetes"}),
    )


def _event(
    at: datetime,
    kind: Kind,
    node: str,
    summary: str,
    source: str,
    attrs: dict[str, Any],
    raw: Any,
    gpu: str | None = None,
) -> TimelineEvent:
    return TimelineEvent(
        at=at,
        source=source,
        kind=kind,
        severity=severity_of(kind),
        summary=one_line(summary),
        subject=Subject(node=node, gpu=gpu),
        attrs=attrs,
        raw=raw,
    )


def _notice_attrs(provider: str | None, message: str) -> dict[str, Any]:
    attrs: dict[str, Any] = {"provider": provider, "event_type": event_type(message)}
    found_id = event_id(message)
    if found_id:
        attrs["event_id"] = found_id
    attrs["not_before"] = not_before(message)
    return attrs


def _condition_kind(ctype: str, status: str) -> tuple[Kind, str | None] | None:
    if ctype == "Ready":
        return (Kind.NODE_NOT_READY, None) if status != "True" else (Kind.NODE_READY, None)
    if ctype in _READY_CONDITIONS:
        return (Kind.NODE_CONDITION, None) if status == "False" else None
    if status != "True":
        return None
    if ctype in PRESSURE:
        return Kind.NODE_PRESSURE, None
    if ctype in _CONDITION_NOTICES:
        return _CONDITION_NOTICES[ctype]
    # node-problem-detector and custom conditions: True means the problem is present
    return Kind.NODE_CONDITION, None


def _condition_events(obj: Mapping[str, Any], name: str, window: Window, source: str) -> list[TimelineEvent]:
    found = []
    for condition in dig(obj, "status", "conditions") or ():
        at = when(condition.get("lastTransitionTime"))
        ctype, status = text(condition.get("type")), text(condition.get("status"))
        kind_provider = _condition_kind(ctype, status)
        if at is None or kind_provider is None or not window.contains(at):
            continue
        kind, provider = kind_provider
        message, reason = text(condition.get("message")), text(condition.get("reason"))
        attrs: dict[str, Any] = {"type": ctype, "condition": ctype, "status": status, "reason": reason}
        attrs["message"] = message
        if kind is Kind.NODE_PRESSURE:
            attrs["resource"] = PRESSURE[ctype]
        if kind in (Kind.MAINTENANCE_NOTICE, Kind.SPOT_INTERRUPTION):
            attrs.update(_notice_attrs(provider, message))
        summary = f"{ctype}={status}" + (f" ({reason}): {message}" if message else f" ({reason})")
        gpu_kind, gpu = gpu_health(ctype, reason, message, attrs) if kind is Kind.NODE_CONDITION else (kind, None)
        found.append(_event(at, gpu_kind, name, summary, source, attrs, condition, gpu))
    return found


def gpu_health(ctype: str, reason: str, message: str, attrs: dict[str, Any]) -> tuple[Kind, str | None]:
    """What another agent's GPU health condition (or the node Event it writes) says: an Xid (its number from the
    message or the reason's JSON map; NVSentinel's catch-all "GpuAllWatch" names it only in the message, "GPU had
    an uncontained error (XID 95)"), NVLink or heat; the GPU index and UUID where the agent names them."""
    words = f"{ctype} {reason} {message}"
    gpu = _GPU_IN_TEXT.search(message)
    uuid = _UUID_IN_TEXT.search(message)
    if uuid:
        attrs["uuid"] = uuid.group(1)
    if ctype in _XID_CONDITIONS or "xid" in words.lower():
        found = _XID_IN_TEXT.search(f"{message} {reason}")
        if found:
            attrs["xid"] = int(next(g for g in found.groups() if g))
            attrs["text"] = message
            return Kind.GPU_XID, gpu.group(1) if gpu else None
    if reason in _EKS_GPU_REASONS:
        return _EKS_GPU_REASONS[reason], gpu.group(1) if gpu else None
    code = _DCGM_HEALTH_CODE.search(f"{reason} {message}")
    if code:
        attrs["dcgm_code"] = int(code.group(1) or code.group(2))
        return _DCGM_FAULTS.get(attrs["dcgm_code"], Kind.NODE_CONDITION), gpu.group(1) if gpu else None
    lowered = words.lower()
    if any(code in lowered for code in _SOFTWARE_CODES):
        return Kind.NODE_CONDITION, None
    for word, kind in _HEALTH_WORDS:
        if word in lowered and ("gpu" in lowered or "nvlink" in lowered):
            return kind, gpu.group(1) if gpu else None
    return Kind.NODE_CONDITION, None


def _taint_events(obj: Mapping[str, Any], name: str, window: Window, source: str) -> list[TimelineEvent]:
    found = []
    for taint in dig(obj, "spec", "taints") or ():
        at = when(taint.get("timeAdded"))
        if at is None or not window.contains(at):
            continue
        key = text(taint.get("key"))
        kind, provider = _TAINTS.get(key, (Kind.NODE_TAINTED, None))
        attrs: dict[str, Any] = {"taint": _taint_text(taint), "key": key}
        if kind in (Kind.MAINTENANCE_NOTICE, Kind.SPOT_INTERRUPTION, Kind.REBALANCE_RECOMMENDATION):
            attrs.update(_notice_attrs(provider, text(taint.get("value"))))
        if kind is Kind.NODE_PRESSURE:
            attrs["resource"] = key.rsplit("/", 1)[-1].removesuffix("-pressure")
        summary = f"taint {_taint_text(taint)} added"
        if kind is Kind.NODE_CORDONED:
            summary += _remediator(obj, attrs)
        found.append(_event(at, kind, name, summary, source, attrs, taint))
    return found


def _remediator(obj: Mapping[str, Any], attrs: dict[str, Any]) -> str:
    """Who cordoned the node and why, where a remediator's annotation says so (its health check and error
    codes read from the annotation's JSON where it parses); the summary's addition."""
    annotations: Mapping[str, Any] = dig(obj, "metadata", "annotations") or {}
    for key, who in _REMEDIATOR_ANNOTATIONS:
        if key not in annotations:
            continue
        attrs["remediator"] = who
        why = _health_event_words(annotations[key])
        if why:
            attrs["remediation_reason"] = why
        return f" by {who}" + (f" ({why})" if why else "")
    return ""


def _health_event_words(raw: Any) -> str:
    """``checkName`` and ``errorCode`` of the health events a quarantine annotation holds (JSON), or ""."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return ""
    events = value if isinstance(value, list) else [value]
    words = []
    for one in events:
        if not isinstance(one, Mapping):
            continue
        check, codes = one.get("checkName"), one.get("errorCode")
        codes = ",".join(str(c) for c in codes) if isinstance(codes, list) else str(codes or "")
        words.append(" ".join(w for w in (str(check or ""), f"ErrorCode:{codes}" if codes else "") if w))
    return "; ".join(w for w in words if w)


def _label_events(obj: Mapping[str, Any], name: str, window: Window, source: str) -> list[TimelineEvent]:
    labels: Mapping[str, str] = dig(obj, "metadata", "labels") or {}
    found = []
    for key, provider in _MAINTENANCE_LABELS:
        due = when(labels.get(key))
        if due is None or due < window.start:
            continue
        # The label says when maintenance is due, not when it was set: place it at its due time, or at the
        # window's end when it is still ahead (a pending notice seen at capture).
        at = min(due, window.end)
        attrs = {"provider": provider, "event_type": "scheduled-maintenance", "not_before": due, "label": key}
        summary = f"maintenance scheduled ({key}={labels[key]})"
        found.append(_event(at, Kind.MAINTENANCE_NOTICE, name, summary, source, attrs, {key: labels[key]}))
    return found


def node_events(obj: Mapping[str, Any], window: Window, source: str = "kubernetes") -> list[TimelineEvent]:
    """What a node object itself tells about the window: problem conditions, taints, maintenance labels."""
    name = text(dig(obj, "metadata", "name"))
    return [
        *_condition_events(obj, name, window, source),
        *_taint_events(obj, name, window, source),
        *_label_events(obj, name, window, source),
    ]
