"""Pure readers of Kubernetes Pod objects: PodInfo, and the timeline a pod's own status tells.

A pod keeps its history in time stamps: condition transitions, container start/finish (current and last
state), the deletion time. Each becomes a TimelineEvent so a pod whose Events expired (1 h TTL) still says
when it was scheduled, how each container ended, and whether it was disrupted, evicted or deleted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from whathappened.collectors.kube_objects.reasons import DISRUPTION_KINDS, POD_STATUS_KINDS, WAITING_KINDS
from whathappened.collectors.kube_objects.text import dig, first_time, one_line, resource_of, text, when

from whathappened.kinds import Kind, severity_of
from whathappened.model import ContainerInfo, PodInfo, Subject, TimelineEvent

GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")
# The conditions a controller sets on a pod it is about to end: Kubernetes' DisruptionTarget (1.26+), and Kueue's
# own TerminationTarget ("StoppedByKueue": the PodsReady timeout, a workload gone, or preempted to make room)
_DISRUPTION_CONDITIONS = frozenset({"DisruptionTarget", "TerminationTarget"})
_PREEMPTED = re.compile(r"\bPreempted\b", re.IGNORECASE)


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _gpus(obj: Mapping[str, Any]) -> int:
    total = 0
    for container in dig(obj, "spec", "containers") or ():
        limits = dig(container, "resources", "limits") or {}
        requests = dig(container, "resources", "requests") or {}
        for resource in GPU_RESOURCES:
            total += _int(limits.get(resource, requests.get(resource))) or 0
    return total


def _container(status: Mapping[str, Any], init: bool) -> ContainerInfo:
    state: Mapping[str, Any] = status.get("state") or {}
    phase = next((name for name in ("terminated", "waiting", "running") if state.get(name)), None)
    current: Mapping[str, Any] = state.get(phase) or {} if phase else {}
    last: Mapping[str, Any] = dig(status, "lastState", "terminated") or {}
    return ContainerInfo(
        name=text(status.get("name")),
        restarts=_int(status.get("restartCount")) or 0,
        state=phase,
        reason=current.get("reason"),
        exit_code=_int(current.get("exitCode")),
        signal=_int(current.get("signal")) or None,
        message=current.get("message"),
        started=when(current.get("startedAt")),
        finished=when(current.get("finishedAt")),
        last_reason=last.get("reason"),
        last_exit_code=_int(last.get("exitCode")),
        last_finished=when(last.get("finishedAt")),
        init=init,
    )


def _statuses(obj: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], bool]]:
    found: list[tuple[Mapping[str, Any], bool]] = [(s, True) for s in dig(obj, "status", "initContainerStatuses") or ()]
    found += [(s, False) for s in dig(obj, "status", "containerStatuses") or ()]
    return found


def _owner(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    owners = dig(obj, "metadata", "ownerReferences") or ()
    controller = [o for o in owners if o.get("controller")]
    return (controller or list(owners) or [{}])[0]


def deletion_requested(obj: Mapping[str, Any]) -> datetime | None:
    """When deletion was asked for: deletionTimestamp is that moment plus the grace period."""
    deadline = when(dig(obj, "metadata", "deletionTimestamp"))
    if deadline is None:
        return None
    grace = _int(dig(obj, "metadata", "deletionGracePeriodSeconds")) or 0
    return deadline - timedelta(seconds=grace)


def parse_pod(obj: Mapping[str, Any]) -> PodInfo:
    containers = tuple(_container(s, init) for s, init in _statuses(obj))
    finished = [c.finished for c in containers if c.finished is not None]
    deleted = when(dig(obj, "metadata", "deletionTimestamp"))
    owner = _owner(obj)
    return PodInfo(
        name=text(dig(obj, "metadata", "name")),
        namespace=text(dig(obj, "metadata", "namespace")),
        node=dig(obj, "spec", "nodeName") or None,
        uid=dig(obj, "metadata", "uid") or None,
        labels=dict(dig(obj, "metadata", "labels") or {}),
        owner_kind=owner.get("kind"),
        owner_name=owner.get("name"),
        owner_uid=owner.get("uid"),
        phase=dig(obj, "status", "phase"),
        reason=dig(obj, "status", "reason"),
        message=dig(obj, "status", "message"),
        created=when(dig(obj, "metadata", "creationTimestamp")),
        started=when(dig(obj, "status", "startTime")),
        ended=max(finished) if finished else deleted,
        deleted=deleted,
        gpus_requested=_gpus(obj),
        containers=containers,
        sources=frozenset({"kubernetes"}),
    )


class _PodTimeline:
    """Collects one pod's events; knows its subject and source."""

    def __init__(self, obj: Mapping[str, Any], source: str) -> None:
        self.obj = obj
        self.source = source
        self.namespace = text(dig(obj, "metadata", "namespace"))
        self.pod = text(dig(obj, "metadata", "name"))
        self.node = dig(obj, "spec", "nodeName") or None
        self.events: list[TimelineEvent] = []

    def add(self, at: datetime | None, kind: Kind, summary: str, container: str | None = None, **attrs: Any) -> None:
        if at is None:
            return
        subject = Subject(namespace=self.namespace, pod=self.pod, container=container, node=self.node)
        self.events.append(
            TimelineEvent(
                at=at,
                source=self.source,
                kind=kind,
                severity=severity_of(kind),
                summary=one_line(summary),
                subject=subject,
                attrs={k: v for k, v in attrs.items() if v is not None},
                raw=self.obj if kind in (Kind.POD_FAILED, Kind.EVICTED) else None,
            )
        )


def _condition_events(tl: _PodTimeline) -> None:
    for condition in dig(tl.obj, "status", "conditions") or ():
        at = when(condition.get("lastTransitionTime"))
        ctype, status = condition.get("type"), condition.get("status")
        reason, message = text(condition.get("reason")), text(condition.get("message"))
        if ctype == "PodScheduled" and status == "True":
            tl.add(at, Kind.POD_SCHEDULED, f"scheduled on {tl.node}" if tl.node else "scheduled", node=tl.node)
        elif ctype == "PodScheduled" and status == "False":
            summary = f"{reason or 'Unschedulable'}: {message}" if message else reason or "Unschedulable"
            tl.add(at, Kind.FAILED_SCHEDULING, summary, reason=reason or "Unschedulable", message=message)
        elif ctype in _DISRUPTION_CONDITIONS and status == "True":
            tl.add(at, Kind.DISRUPTION_TARGET, f"{ctype} {reason}: {message}", reason=reason, message=message)
            kind = DISRUPTION_KINDS.get(reason)
            if kind is None and ctype == "TerminationTarget" and reason.startswith("WorkloadEvicted"):
                kind = Kind.EVICTION_API  # Kueue 0.7+: "WorkloadEvictedDueTo<the eviction's reason>"
            if kind is Kind.EVICTION_API and (_PREEMPTED.search(message) or reason.endswith("DueToPreempted")):
                kind = Kind.PREEMPTED  # Kueue stopping the pod to make room ("Preempted to accommodate ...")
            if kind is not None:
                tl.add(at, kind, f"{reason}: {message}", reason=reason, message=message)


def _terminated(tl: _PodTimeline, name: str, term: Mapping[str, Any], previous: bool, fallback: Any = None) -> None:
    """A container's end. ContainerStatusUnknown (the container could not be located when the pod was
    terminated) comes with null start and finish times: it is placed when the pod stopped being ready."""
    exit_code, reason = _int(term.get("exitCode")), text(term.get("reason"))
    tl.add(when(term.get("startedAt")), Kind.CONTAINER_STARTED, f"container {name} started", name, previous=previous)
    at = when(term.get("finishedAt")) or when(fallback)
    attrs = {
        "exit_code": exit_code,
        "reason": reason or None,
        "signal": _int(term.get("signal")) or None,
        "message": term.get("message"),
        "previous": previous,
    }
    label = "previous container" if previous else "container"
    summary = f"{label} {name} terminated: {reason or 'exit'} (exit code {exit_code})"
    tl.add(at, Kind.CONTAINER_TERMINATED, summary, name, **attrs)
    if reason == "OOMKilled":
        tl.add(at, Kind.OOM_KILLED, f"{label} {name} OOMKilled (exit code {exit_code})", name, **attrs)


def _container_events(tl: _PodTimeline) -> None:
    fallback = first_time(_ready_changed(tl.obj), dig(tl.obj, "status", "startTime"))
    for status, init in _statuses(tl.obj):
        name = text(status.get("name"))
        state: Mapping[str, Any] = status.get("state") or {}
        if state.get("running"):
            started = when(dig(state, "running", "startedAt"))
            tl.add(started, Kind.CONTAINER_STARTED, f"container {name} started", name, previous=False, init=init)
        if state.get("terminated"):
            _terminated(tl, name, state["terminated"], previous=False, fallback=_ready_changed(tl.obj))
        last = dig(status, "lastState", "terminated")
        if last:
            _terminated(tl, name, last, previous=True)
        restarts = _int(status.get("restartCount")) or 0
        if restarts:
            at = when(dig(state, "running", "startedAt")) or when(dig(state, "terminated", "startedAt"))
            tl.add(
                at, Kind.CONTAINER_RESTARTED, f"container {name} restarted {restarts} times", name, restarts=restarts
            )
        waiting = text(dig(state, "waiting", "reason"))
        if waiting in WAITING_KINDS:
            message = text(dig(state, "waiting", "message"))
            tl.add(fallback, WAITING_KINDS[waiting], f"container {name} {waiting}: {message}", name, reason=waiting)


def _condition_time(obj: Mapping[str, Any], ctype: str) -> Any:
    for condition in dig(obj, "status", "conditions") or ():
        if condition.get("type") == ctype and condition.get("status") == "True":
            return condition.get("lastTransitionTime")
    return None


def _ready_changed(obj: Mapping[str, Any]) -> Any:
    for condition in dig(obj, "status", "conditions") or ():
        if condition.get("type") == "Ready":
            return condition.get("lastTransitionTime")
    return None


def _status_events(tl: _PodTimeline) -> None:
    phase, reason = dig(tl.obj, "status", "phase"), text(dig(tl.obj, "status", "reason"))
    message = text(dig(tl.obj, "status", "message"))
    info = parse_pod(tl.obj)
    ended = first_time(info.ended, _ready_changed(tl.obj))
    if reason:
        kind = POD_STATUS_KINDS.get(reason, Kind.POD_FAILED)
        attrs: dict[str, Any] = {"reason": reason, "message": message, "phase": phase}
        if kind is Kind.EVICTED:
            attrs["resource"] = resource_of(message)
        # The kubelet marks the pod DisruptionTarget when it decides to evict or shut it down: that moment,
        # not the container's end after its grace period, is when the status reason happened.
        decided = first_time(_condition_time(tl.obj, "DisruptionTarget"), ended)
        tl.add(decided, kind, f"pod {reason}: {message}" if message else f"pod {reason}", **attrs)
    elif phase == "Failed" and message:
        # a status message with no reason (some kubelets and API copies leave the reason out): it still says why
        tl.add(ended, Kind.POD_FAILED, f"pod Failed: {message}", message=message, phase=phase)
    elif phase == "Failed":
        tl.add(ended, Kind.POD_PHASE, "pod Failed", phase=phase)
    if phase == "Succeeded":
        tl.add(ended, Kind.POD_SUCCEEDED, "pod Succeeded", phase=phase)


def pod_events(obj: Mapping[str, Any], source: str = "kubernetes") -> list[TimelineEvent]:
    """What a pod object itself tells: scheduling, containers' starts and ends, disruption, deletion."""
    tl = _PodTimeline(obj, source)
    tl.add(when(dig(obj, "metadata", "creationTimestamp")), Kind.POD_CREATED, "pod created")
    _condition_events(tl)
    _container_events(tl)
    _status_events(tl)
    requested = deletion_requested(obj)
    grace = _int(dig(obj, "metadata", "deletionGracePeriodSeconds"))
    tl.add(requested, Kind.POD_DELETED, "pod deletion requested", grace_seconds=grace)
    return tl.events
