"""Edges -> timeline events: what each watched series means, on which node, GPU and pod.

Pure functions over the edges signals finds (in raw samples or in what the server returned). Subjects carry
the node, the GPU index and the pod when known; a dcgm series names its pod by the exporter's pod labels while
the pod held the GPU, and otherwise by ``Scope.gpus`` (which GPUs the experiment's pods held) during the pod's
life, never before it began.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from whathappened.collectors.kube_objects.reasons import PRESSURE, WAITING_KINDS
from whathappened.collectors.prometheus.model import Series
from whathappened.collectors.prometheus.placement import dcgm_pod, node_of
from whathappened.collectors.prometheus.signals import EXPORTER_XIDS, FB_NEAR_FULL, UTIL_COLLAPSE, Edge, fb_total_mib
from whathappened.collectors.prometheus.vocab import (
    CAUSE,
    GPU_COUNTERS,
    POD_REASON_KINDS,
    REBALANCE_EVENT_TYPES,
    SPOT_EVENT_TYPES,
)

from whathappened import xids
from whathappened.kinds import Kind, severity_of
from whathappened.model import PodInfo, Severity, Subject, TimelineEvent
from whathappened.scope import Scope
from whathappened.timeutils import from_unix, isoformat

SOURCE = "prometheus"


@dataclass(frozen=True)
class Context:
    """What the builders need besides the edge: the scope's pods, and every edge (for cross-series lookups)."""

    scope: Scope
    pods: Mapping[tuple[str, str], PodInfo]
    edges: tuple[Edge, ...]

    @functools.cached_property
    def nodes(self) -> frozenset[str]:
        """The scope's node names, as a set (asked once per series: a sorted tuple rebuilt each time is quadratic
        at thousands of nodes)."""
        return frozenset(self.scope.node_names)

    @functools.cached_property
    def _pods_by_node(self) -> Mapping[str, tuple[PodInfo, ...]]:
        grouped: dict[str, list[PodInfo]] = {}
        for pod in self.pods.values():
            if pod.node is not None:
                grouped.setdefault(pod.node, []).append(pod)
        return {node: tuple(pods) for node, pods in grouped.items()}

    def pods_on(self, node: str) -> tuple[PodInfo, ...]:
        """The scope's pods on ``node``, in the scope's order."""
        return self._pods_by_node.get(node, ())

    @functools.cached_property
    def _edges_by_metric(self) -> Mapping[str, tuple[Edge, ...]]:
        grouped: dict[str, list[Edge]] = {}
        for edge in self.edges:
            grouped.setdefault(edge.series.name, []).append(edge)
        return {metric: tuple(found) for metric, found in grouped.items()}

    def value_near(self, metric: str, like: Series, at: float, keys: tuple[str, ...]) -> float | None:
        """The edge value of a sibling series (same ``keys`` labels) nearest to ``at`` within five minutes."""
        best: tuple[float, float] | None = None
        for edge in self._edges_by_metric.get(metric, ()):
            if any(edge.series.labels.get(k) != like.labels.get(k) for k in keys):
                continue
            distance = abs(edge.at - at)
            if distance <= 300 and (best is None or distance < best[0]):
                best = (distance, edge.value)
        return None if best is None else best[1]


Builder = Callable[[Edge, Context], Iterable[TimelineEvent]]


def event(
    at: float, kind: Kind, summary: str, subject: Subject, raw: Series | None = None, **attrs: Any
) -> TimelineEvent:
    if raw is not None and raw.labels.get("GPU_I_ID"):
        # a MIG instance's series: the pod on that instance of the GPU (dcgm-exporter's GPU_I_PROFILE/GPU_I_ID)
        attrs = {**attrs, "mig_profile": raw.labels.get("GPU_I_PROFILE"), "gpu_instance": raw.labels["GPU_I_ID"]}
    return TimelineEvent(
        at=from_unix(at),
        source=SOURCE,
        kind=kind.value,
        severity=severity_of(kind),
        summary=summary,
        subject=subject,
        attrs={k: v for k, v in attrs.items() if v is not None},
        raw={"metric": raw.name, "labels": dict(raw.labels)} if raw is not None else None,
    )


# --- GPU ------------------------------------------------------------------------------------------------------


def gpu_subject(series: Series, at: float, ctx: Context) -> Subject:
    node = node_of(series.labels, ctx.nodes)
    gpu = series.label("gpu")
    # the project's exporter names no workload: a pod on its series is the scrape's (a ServiceMonitor without
    # honorLabels, as deploy/ ships it, names the exporter's own pod), so its GPU's pod is the one that held it
    attributed = None if series.name == EXPORTER_XIDS else dcgm_pod(series.labels)
    if attributed is not None:
        pod = ctx.pods.get(attributed)
        return Subject(namespace=attributed[0] or None, pod=pod.name if pod else None, node=node, gpu=gpu)
    holder = _holder(node, gpu, at, ctx)
    return Subject(
        namespace=holder.namespace if holder else None, pod=holder.name if holder else None, node=node, gpu=gpu
    )


def _holder(node: str | None, gpu: str | None, at: float, ctx: Context) -> PodInfo | None:
    """The scope pod that held this GPU at ``at``, for exporters that attach no pod labels."""
    if node is None or gpu is None or gpu not in ctx.scope.gpus.get(node, ()):
        return None
    when = from_unix(at)
    for pod in ctx.pods_on(node):
        began = pod.started or pod.created
        if began is not None and began <= when and (pod.ended is None or when <= pod.ended):
            return pod
    return None


def _gpu_text(subject: Subject) -> str:
    return f"GPU {subject.gpu} on {subject.node}" if subject.gpu is not None else f"a GPU on {subject.node}"


def xid(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    series = edge.series
    if series.name in (EXPORTER_XIDS, "DCGM_EXP_XID_ERRORS_COUNT"):  # a count per Xid code, the code a label
        code = series.labels.get("xid", "")
        # every edge of the project's counter is that Xid again (signals: COUNT); dcgm-exporter's count over its
        # window says a new one only by rising
        risen = edge.previous is not None and edge.value > edge.previous
        if not code.isdigit() or (series.name != EXPORTER_XIDS and not risen):
            return
        number = int(code)
    else:
        if edge.value == 0:
            return  # the gauge went back to 0: the exporter restarted or the error was cleared
        number = int(edge.value)
    subject = gpu_subject(series, edge.at, ctx)
    text = series.labels.get("err_msg") or xids.meaning(number)
    summary = f"Xid {number} on {_gpu_text(subject)}" + (f": {text}" if text else "")
    yield event(
        edge.at, Kind.GPU_XID, summary, subject, series, xid=number, text=text, uuid=series.label("UUID", "uuid")
    )


def counter(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    series = edge.series
    if edge.previous is None or edge.value <= edge.previous:
        return  # a reset (exporter or driver restart) is not an error
    kind, what = GPU_COUNTERS[series.name]
    increase = edge.value - edge.previous
    subject = gpu_subject(series, edge.at, ctx)
    attrs: dict[str, Any] = {"counter": series.name, "increase": increase, "uuid": series.label("UUID", "uuid")}
    if kind in (Kind.GPU_THERMAL, Kind.GPU_POWER_VIOLATION):
        attrs["violation_us"] = round(increase / 1000.0, 1)
        summary = f"{what} on {_gpu_text(subject)}"  # an episode: its length is in violation_us
    else:
        summary = f"{increase:g} new {what} on {_gpu_text(subject)}"
    if kind is Kind.GPU_RETIRED_PAGES:
        attrs["cause"] = next((c for k, c in CAUSE.items() if k in series.name), None)
    yield event(edge.at, kind, summary, subject, series, **attrs)


def temperature(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    subject = gpu_subject(edge.series, edge.at, ctx)
    part = "memory" if "MEMORY" in edge.series.name else "GPU"
    summary = f"{part} temperature {edge.value:.0f} C on {_gpu_text(subject)}"
    yield event(edge.at, Kind.GPU_THERMAL, summary, subject, edge.series, temperature=edge.value, part=part.lower())


def remap_failure(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    subject = gpu_subject(edge.series, edge.at, ctx)
    yield event(
        edge.at, Kind.GPU_ROW_REMAP_FAILURE, f"HBM row remapping failed on {_gpu_text(subject)}", subject, edge.series
    )


def util_drop(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    subject = gpu_subject(edge.series, edge.at, ctx)
    if subject.pod is None:
        return  # an idle GPU nobody of ours used says nothing
    summary = f"GPU utilization collapsed on {_gpu_text(subject)} while {subject.pod} was running"
    yield event(edge.at, Kind.GPU_UTIL_DROP, summary, subject, edge.series, uuid=edge.series.label("UUID", "uuid"))


def fb_full(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    subject = gpu_subject(edge.series, edge.at, ctx)
    total = fb_total_mib(edge.series.labels.get("modelName", ""))
    summary = f"GPU memory nearly full on {_gpu_text(subject)} ({edge.value:.0f} MiB used)"
    yield event(edge.at, Kind.GPU_MEMORY_FULL, summary, subject, edge.series, used_mib=edge.value, total_mib=total)


# --- pods ------------------------------------------------------------------------------------------------------


def pod_subject(series: Series, ctx: Context) -> Subject:
    namespace, name = series.labels.get("namespace"), series.labels.get("pod")
    pod = ctx.pods.get((namespace or "", name or ""))
    return Subject(
        namespace=namespace, pod=name, container=series.labels.get("container") or None, node=pod.node if pod else None
    )


def phase(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    value = edge.series.labels.get("phase", "")
    kind = Kind.POD_SUCCEEDED if value == "Succeeded" else Kind.POD_PHASE
    yield event(edge.at, kind, f"pod {value}", pod_subject(edge.series, ctx), edge.series, phase=value)


# From kube-state-metrics v2.19 the status-reason list also matches DisruptionTarget condition reasons: the pod
# was not failed for this reason, its kubelet ended it (an eviction, a shutdown) as the condition says.
CONDITION_REASONS = frozenset({"TerminationByKubelet"})


def pod_reason(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    reason = edge.series.labels.get("reason", "")
    if reason in CONDITION_REASONS:
        yield from disruption(edge, ctx)
        return
    kind = POD_REASON_KINDS.get(reason, Kind.POD_FAILED)
    yield event(edge.at, kind, f"pod status reason {reason}", pod_subject(edge.series, ctx), edge.series, reason=reason)


def disruption(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    reason = edge.series.labels.get("reason", "")
    subject = pod_subject(edge.series, ctx)
    yield event(edge.at, Kind.DISRUPTION_TARGET, f"DisruptionTarget {reason}", subject, edge.series, reason=reason)


def unschedulable(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    subject = pod_subject(edge.series, ctx)
    yield event(edge.at, Kind.FAILED_SCHEDULING, "pod unschedulable", subject, edge.series, reason="Unschedulable")


def deletion(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    requested = isoformat(from_unix(edge.value))
    subject = pod_subject(edge.series, ctx)
    yield event(edge.at, Kind.POD_DELETED, "pod deletion requested", subject, edge.series, requested=requested)


def terminated(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    series = edge.series
    reason = series.labels.get("reason", "")
    previous = series.name.endswith("last_terminated_reason")
    keys = ("namespace", "pod", "container")
    exit_code = finished = None
    if previous:
        code = ctx.value_near("kube_pod_container_status_last_terminated_exitcode", series, edge.at, keys)
        exit_code = None if code is None else int(code)
        stamp = ctx.value_near("kube_pod_container_status_last_terminated_timestamp", series, edge.at, keys)
        finished = None if stamp is None else isoformat(from_unix(stamp))
    subject = pod_subject(series, ctx)
    label = "container" if subject.container is None else f"container {subject.container}"
    code_text = "" if exit_code is None else f" (exit code {exit_code})"
    attrs = {"reason": reason, "exit_code": exit_code, "previous": previous, "finished": finished}
    yield event(
        edge.at, Kind.CONTAINER_TERMINATED, f"{label} terminated: {reason}{code_text}", subject, series, **attrs
    )
    if reason == "OOMKilled":
        yield event(edge.at, Kind.OOM_KILLED, f"{label} OOMKilled{code_text}", subject, series, **attrs)


def waiting(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    reason = edge.series.labels.get("reason", "")
    kind = WAITING_KINDS.get(reason)
    if kind is not None:
        yield event(
            edge.at, kind, f"container waiting: {reason}", pod_subject(edge.series, ctx), edge.series, reason=reason
        )


def restarts(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    if edge.previous is None or edge.value <= edge.previous:
        return
    subject = pod_subject(edge.series, ctx)
    summary = f"container {subject.container or ''} restarted ({int(edge.value)} restarts)".replace("  ", " ")
    yield event(edge.at, Kind.CONTAINER_RESTARTED, summary, subject, edge.series, restarts=int(edge.value))


# --- nodes -----------------------------------------------------------------------------------------------------


def node_subject(series: Series) -> Subject:
    return Subject(node=series.labels.get("node"))


def cordon(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    subject = node_subject(edge.series)
    if edge.value >= 1:
        yield event(edge.at, Kind.NODE_CORDONED, f"node {subject.node} cordoned", subject, edge.series)
    else:
        yield event(edge.at, Kind.NODE_UNCORDONED, f"node {subject.node} uncordoned", subject, edge.series)


def condition(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    name = edge.series.labels.get("condition", "")
    subject = node_subject(edge.series)
    if name == "Ready":
        kind = Kind.NODE_READY if edge.value >= 1 else Kind.NODE_NOT_READY
        text = "Ready" if edge.value >= 1 else "NotReady"
        yield event(edge.at, kind, f"node {subject.node} {text}", subject, edge.series, condition=name)
    elif edge.value >= 1 and name in PRESSURE:
        summary = f"node {subject.node} has {name}"
        yield event(edge.at, Kind.NODE_PRESSURE, summary, subject, edge.series, condition=name, resource=PRESSURE[name])
    elif edge.value >= 1 and name != "NetworkUnavailable":
        yield event(
            edge.at, Kind.NODE_CONDITION, f"node {subject.node} condition {name}", subject, edge.series, type=name
        )


def taint(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    labels = edge.series.labels
    text = f"{labels.get('key', '')}={labels.get('value', '')}:{labels.get('effect', '')}".replace("=:", ":")
    subject = node_subject(edge.series)
    yield event(edge.at, Kind.NODE_TAINTED, f"node {subject.node} tainted {text}", subject, edge.series, taint=text)


def maintenance(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    series = edge.series
    event_type = series.labels.get("event_type", "")
    if event_type.lower() in SPOT_EVENT_TYPES:
        kind = Kind.SPOT_INTERRUPTION
    elif event_type.lower() in REBALANCE_EVENT_TYPES:
        kind = Kind.REBALANCE_RECOMMENDATION
    else:
        kind = Kind.MAINTENANCE_NOTICE
    keys = ("node", "provider", "event_id", "event_type")
    stamp = ctx.value_near("whathappened_node_maintenance_not_before_timestamp_seconds", series, edge.at, keys)
    not_before: datetime | None = from_unix(stamp) if stamp else None
    subject = node_subject(series)
    provider = series.labels.get("provider")
    when = f", not before {isoformat(not_before)}" if not_before else ""
    summary = f"{provider or 'cloud'} {event_type} notice for {subject.node}{when}"
    attrs = {
        "provider": provider,
        "event_type": event_type,
        "event_id": series.labels.get("event_id"),
        "not_before": not_before,
    }
    yield event(edge.at, kind, summary, subject, series, **attrs)


def _none(edge: Edge, ctx: Context) -> Iterable[TimelineEvent]:
    return ()


BUILDERS: Mapping[str, Builder] = {
    "DCGM_FI_DEV_XID_ERRORS": xid,
    "DCGM_EXP_XID_ERRORS_COUNT": xid,
    EXPORTER_XIDS: xid,
    **dict.fromkeys(GPU_COUNTERS, counter),
    "DCGM_FI_DEV_GPU_TEMP": temperature,
    "DCGM_FI_DEV_MEMORY_TEMP": temperature,
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": remap_failure,
    UTIL_COLLAPSE: util_drop,
    FB_NEAR_FULL: fb_full,
    "kube_pod_status_phase": phase,
    "kube_pod_status_reason": pod_reason,
    "kube_pod_status_disruption_reason": disruption,
    "kube_pod_status_unschedulable": unschedulable,
    "kube_pod_deletion_timestamp": deletion,
    "kube_pod_container_status_terminated_reason": terminated,
    "kube_pod_container_status_last_terminated_reason": terminated,
    "kube_pod_container_status_last_terminated_exitcode": _none,
    "kube_pod_container_status_last_terminated_timestamp": _none,
    "kube_pod_container_status_waiting_reason": waiting,
    "kube_pod_container_status_restarts_total": restarts,
    "kube_node_spec_unschedulable": cordon,
    "kube_node_status_condition": condition,
    "kube_node_spec_taint": taint,
    "whathappened_node_maintenance_scheduled": maintenance,
    "whathappened_node_maintenance_not_before_timestamp_seconds": _none,
}


def gpu_missing(series: Series, last_seen: float, ctx: Context) -> TimelineEvent:
    subject = gpu_subject(series, last_seen, ctx)
    summary = f"{_gpu_text(subject)} stopped reporting while the node's other GPUs continued"
    return event(
        last_seen,
        Kind.GPU_MISSING,
        summary,
        subject,
        series,
        uuid=series.label("UUID", "uuid"),
        last_seen=isoformat(from_unix(last_seen)),
    )


__all__ = ["BUILDERS", "SOURCE", "Context", "Severity", "event", "gpu_missing"]
