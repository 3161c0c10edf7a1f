"""Pure Kubernetes parsers shared by the live collector and the offline snapshot collector.

Everything here works on plain JSON mappings as the API serves them (``kubectl get -o json``, the recorded
``kubernetes/*.json`` of a snapshot, the events kubernetes-event-exporter archives into Elasticsearch), so
what a snapshot says and what a live cluster says go through one path: the live collector fetches, then calls
``events_from_objects`` exactly as the snapshot collector does.

The reason -> kind table is ``REASONS`` (collectors/kube_objects/reasons.py), the one place the vocabulary is kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any

from whathappened.collectors.kube_objects.nodes import gpu_health, node_events, parse_node
from whathappened.collectors.kube_objects.pods import parse_pod, pod_events
from whathappened.collectors.kube_objects.reasons import (
    MESH_PROXIES,
    REASONS,
    Reason,
    classify,
    provider_from,
    xid_in_reason,
)
from whathappened.collectors.kube_objects.text import (
    container_of,
    dig,
    event_id,
    event_type,
    first_time,
    not_before,
    one_line,
    oom_process,
    probe_of,
    resource_of,
    text,
    xid_of,
)

from whathappened.kinds import Kind, severity_of
from whathappened.model import Severity, Subject, TimelineEvent
from whathappened.scope import Discovery, Query, Scope

__all__ = [
    "REASONS",
    "WINDOW_SLACK",
    "discover_from_objects",
    "event_names",
    "event_regarding",
    "event_relevance",
    "events_from_objects",
    "in_window",
    "node_events",
    "parse_event",
    "parse_node",
    "parse_pod",
    "pod_events",
    "pod_experiment",
    "scope_event_objects",
]

WINDOW_SLACK = timedelta(minutes=2)  # events stamped just outside the window still explain what is inside
_ASSIGNED = re.compile(r"Successfully assigned \S{1,512} to (\S{1,256})")
_PREEMPTOR = re.compile(r"Preempted by (?:pod )?(\S{1,512}?)(?: on node (\S{1,256}))?$")
_IMAGE = re.compile(r'image "([^"\n]{1,1024})"')
# a Job's "Deleted pod: x" is about that pod, as its pod failure policy's "Container c for pod ns/x failed with exit
# code N matching FailJob rule at index 0" is
_POD_IN_MESSAGE = re.compile(
    r"(?:Deleted|Created) pod: (\S{1,256})|^Container \S{1,253} for pod [\w.-]{1,63}/([\w.-]{1,253}) failed with exit code"
)


def pod_experiment(labels: Mapping[str, str], label_keys: Sequence[str]) -> str | None:
    """The experiment a pod belongs to: the value of the first label key present."""
    for key in label_keys:
        value = labels.get(key)
        if value:
            return value
    return None


def event_regarding(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The object an event is about, in either API shape (core/v1 involvedObject, events.k8s.io regarding)."""
    return obj.get("involvedObject") or obj.get("regarding") or {}


def _component(obj: Mapping[str, Any]) -> str:
    return text(
        dig(obj, "source", "component")
        or dig(obj, "deprecatedSource", "component")
        or obj.get("reportingComponent")
        or obj.get("reportingController")
    )


def _host(obj: Mapping[str, Any]) -> str | None:
    host = dig(obj, "source", "host") or dig(obj, "deprecatedSource", "host")
    if not host and _component(obj) == "kubelet":
        host = obj.get("reportingInstance")
    return host or None


def _count(obj: Mapping[str, Any]) -> int | None:
    for value in (obj.get("count"), obj.get("deprecatedCount"), dig(obj, "series", "count")):
        if isinstance(value, int) and value > 0:
            return value
    return None


def _subject(obj: Mapping[str, Any], regarding: Mapping[str, Any], message: str) -> Subject:
    kind, name = text(regarding.get("kind")), text(regarding.get("name"))
    namespace = regarding.get("namespace") or dig(obj, "metadata", "namespace") or None
    if kind == "Node":
        return Subject(node=name or _host(obj))
    if kind == "Pod":
        container = container_of(regarding.get("fieldPath"))
        return Subject(namespace=namespace, pod=name or None, container=container, node=_host(obj))
    named = _POD_IN_MESSAGE.search(message)
    return Subject(namespace=namespace, pod=(named.group(1) or named.group(2)) if named else None)


def _kind_attrs(kind: Kind, row: Reason, obj: Mapping[str, Any], message: str) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    if row.notice or kind in (Kind.MAINTENANCE_NOTICE, Kind.SPOT_INTERRUPTION):
        attrs["provider"] = row.provider or provider_from(_component(obj), message)
        attrs["event_type"] = event_type(message) or text(obj.get("reason"))
        attrs["event_id"] = event_id(message)
        attrs["not_before"] = not_before(message)
    if kind in (Kind.EVICTED, Kind.NODE_PRESSURE):
        attrs["resource"] = resource_of(message)
    if kind is Kind.PROBE_FAILED:
        attrs["probe"] = probe_of(message)
    if kind is Kind.KERNEL_OOM:
        attrs.update(oom_process(message))
    xid = xid_of(message) if kind is Kind.GPU_XID else None
    if xid is not None:
        attrs["xid"], attrs["pci"] = xid
    elif kind is Kind.GPU_XID:
        attrs["xid"] = xid_in_reason(text(obj.get("reason")))
    image = _IMAGE.search(message) if kind is Kind.IMAGE_PULL_FAILED else None
    if image is not None:
        attrs["image"] = image.group(1)
    assigned = _ASSIGNED.search(message) if kind is Kind.POD_SCHEDULED else None
    if assigned is not None:
        attrs["node"] = assigned.group(1)
    if kind is Kind.PREEMPTED:
        by = _PREEMPTOR.search(message)
        attrs["by"] = dig(obj, "related", "name") or (by.group(1) if by else None)
    if kind in (Kind.EVICTION_API, Kind.DRAIN):
        attrs["by"] = _component(obj) or None
    return attrs


# the kubelet's hook messages before 1.26 name the container ('Exec lifecycle hook ([pilot-agent wait]) for Container
# "istio-proxy" in Pod ...'); since, only the Event's fieldPath does
_HOOK_CONTAINER = re.compile(r'for Container "([^"\n]{1,63})"')


def _container_named(regarding: Mapping[str, Any], message: str) -> str | None:
    named = _HOOK_CONTAINER.search(message)
    return container_of(regarding.get("fieldPath")) or (named.group(1) if named else None)


def parse_event(obj: Mapping[str, Any], source: str = "kubernetes") -> TimelineEvent | None:
    """One Event (core/v1, events.k8s.io/v1, or archived by kubernetes-event-exporter) as a TimelineEvent.

    None only when the event carries no time at all.
    """
    regarding = event_regarding(obj)
    reason, message = text(obj.get("reason")), text(obj.get("message") or obj.get("note"))
    warning_on_node = regarding.get("kind") == "Node" and obj.get("type") == "Warning"
    kind, row = classify(reason, message, warning_on_node)
    if kind is Kind.CONFIG_ERROR and _container_named(regarding, message) in MESH_PROXIES:
        kind = Kind.KUBE_EVENT
    last = obj.get("lastTimestamp") or obj.get("deprecatedLastTimestamp")
    first = obj.get("firstTimestamp") or obj.get("deprecatedFirstTimestamp")
    at = first_time(
        obj.get("eventTime"),
        dig(obj, "series", "lastObservedTime"),
        last,
        first,
        dig(obj, "metadata", "creationTimestamp"),
    )
    if at is None:
        return None
    attrs: dict[str, Any] = {
        "reason": reason,
        "message": message,
        "count": _count(obj),
        "k8s_type": obj.get("type"),
        "component": _component(obj) or None,
        "first_seen": first_time(first, obj.get("eventTime")),
        "last_seen": first_time(dig(obj, "series", "lastObservedTime"), last),
        "object": f"{text(regarding.get('kind'))}/{text(regarding.get('name'))}",
        "uid": dig(obj, "metadata", "uid"),
    }
    attrs.update(_kind_attrs(kind, row, obj, message))
    subject = _subject(obj, regarding, message)
    if kind is Kind.NODE_CONDITION:  # a health agent's Event on the node says what its condition would
        kind, gpu = gpu_health(reason, reason, message, attrs)
        subject = replace(subject, gpu=gpu) if gpu is not None else subject
    return TimelineEvent(
        at=at,
        source=source,
        kind=kind,
        severity=Severity.WARNING if kind is Kind.KUBE_EVENT and obj.get("type") == "Warning" else severity_of(kind),
        summary=one_line(f"{reason}: {message}" if message else reason),
        subject=subject,
        attrs={k: v for k, v in attrs.items() if v is not None},
        raw=obj,
    )


def _owner_refs(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(dig(obj, "metadata", "ownerReferences") or ())


def _owned_names(objects: list[Mapping[str, Any]], experiment: str) -> set[str]:
    """The experiment's name plus every non-pod object (Job, StatefulSet, ...) owned by it, transitively."""
    names = {experiment}
    owners = [o for o in objects if o.get("kind") not in (None, "Pod")]
    grew = True
    while grew:
        grew = False
        for obj in owners:
            name = text(dig(obj, "metadata", "name"))
            if name not in names and any(ref.get("name") in names for ref in _owner_refs(obj)):
                names.add(name)
                grew = True
    return names


def discover_from_objects(pod_objs: Iterable[Mapping[str, Any]], query: Query) -> Discovery:
    """The experiment's pods among these objects: label keys first (first key wins), then owner names.

    Non-pod objects in ``pod_objs`` (Jobs, for instance) let the owner walk go JobSet -> Job -> Pod.
    """
    objects = [o for o in pod_objs if query.namespace is None or dig(o, "metadata", "namespace") == query.namespace]
    pods = [o for o in objects if o.get("kind") in (None, "Pod")]
    candidates: set[str] = set()
    for obj in pods:
        labels = dig(obj, "metadata", "labels") or {}
        candidates.update(labels[k] for k in query.label_keys if labels.get(k))
        candidates.update(text(ref.get("name")) for ref in _owner_refs(obj) if ref.get("name"))
    chosen: list[Mapping[str, Any]] = []
    for key in query.label_keys:
        chosen = [o for o in pods if (dig(o, "metadata", "labels") or {}).get(key) == query.experiment]
        if chosen:
            break
    if not chosen:
        owners = _owned_names(objects, query.experiment)
        chosen = [o for o in pods if any(ref.get("name") in owners for ref in _owner_refs(o))]
    infos = sorted((parse_pod(o) for o in chosen), key=lambda p: (p.namespace, p.name))
    return Discovery(pods=tuple(infos), candidates=tuple(sorted(candidates)))


def in_window(scope: Scope, event: TimelineEvent) -> bool:
    """Within the scope's window, give or take WINDOW_SLACK."""
    return scope.window.start - WINDOW_SLACK <= event.at <= scope.window.end + WINDOW_SLACK


def _event_key(obj: Mapping[str, Any]) -> tuple[Any, ...]:
    uid = dig(obj, "metadata", "uid")
    return (uid,) if uid else (dig(obj, "metadata", "namespace"), dig(obj, "metadata", "name"))


# Controllers whose Events (DeadlineExceeded, BackoffLimitExceeded, SuccessfulDelete, ...) say why pods ended.
_WORKLOAD_KINDS = frozenset(
    {
        "Job",
        "JobSet",
        "PyTorchJob",
        "MPIJob",
        "TFJob",
        "TrainJob",
        "RayJob",
        "RayCluster",
        "LeaderWorkerSet",
        "StatefulSet",
        "ReplicaSet",
        "Deployment",
        "VolcanoJob",
    }
)


def _workload_prefixes(scope: Scope) -> set[tuple[str, str]]:
    """(namespace, name) of every workload that could own a scope pod by the naming convention of controllers:
    every prefix of a pod's name that ends before a "-" (``job-x`` of ``job-x-abcde``).

    Owner references go with deleted pods; the naming convention of every controller stays, so a Job's
    DeadlineExceeded still explains its pods after they are gone.
    """
    return {(p.namespace, prefix) for p in scope.pods for prefix in _dash_prefixes(p.name)}


def _dash_prefixes(name: str) -> Iterator[str]:
    at = name.find("-", 1)
    while at != -1:
        yield name[:at]
        at = name.find("-", at + 1)


def event_names(scope: Scope) -> set[str]:
    """Every object name an Event that ``event_relevance`` keeps can be about: a store asked by name must be
    asked for all of them, the workloads named by convention included (a deleted Job's DeadlineExceeded)."""
    names = set(scope.pod_names) | set(scope.node_names) | {p.owner_name for p in scope.pods if p.owner_name}
    return names | {name for _, name in _workload_prefixes(scope)} | {scope.query.experiment}


def event_relevance(scope: Scope) -> Callable[[Mapping[str, Any]], bool]:
    """Whether an Event is about the scope's pods (by namespace/name or uid), their owners, or their nodes.

    Built once per scope and cheap per event: a namespace's 50,000 events go through it as they arrive.
    """
    pods = {(p.namespace, p.name) for p in scope.pods}
    uids = {p.uid for p in scope.pods if p.uid}
    owners = {(p.namespace, p.owner_kind, p.owner_name) for p in scope.pods if p.owner_name}
    nodes = set(scope.node_names)
    workloads = _workload_prefixes(scope)
    experiment = scope.query.experiment

    def relevant(obj: Mapping[str, Any]) -> bool:
        regarding = event_regarding(obj)
        kind, name = regarding.get("kind"), regarding.get("name")
        if kind == "Node" and name in nodes:
            return True
        namespace = regarding.get("namespace") or dig(obj, "metadata", "namespace")
        if kind == "Pod" and ((namespace, name) in pods or regarding.get("uid") in uids):
            return True
        if (namespace, kind, name) in owners:
            return True
        # a workload named like the experiment, or like the start of a scope pod's name
        return kind in _WORKLOAD_KINDS and bool(name) and (name == experiment or (namespace, name) in workloads)

    return relevant


def scope_event_objects(event_objs: Iterable[Mapping[str, Any]], scope: Scope) -> list[Mapping[str, Any]]:
    """Events about the scope's pods (by namespace/name or uid), their owners, or their nodes; one per uid."""
    relevant = event_relevance(scope)
    seen: set[tuple[Any, ...]] = set()
    kept = []
    for obj in event_objs:
        if not relevant(obj):
            continue
        key = _event_key(obj)
        if key not in seen:
            seen.add(key)
            kept.append(obj)
    return kept


def events_from_objects(
    pod_objs: Iterable[Mapping[str, Any]],
    event_objs: Iterable[Mapping[str, Any]],
    node_objs: Iterable[Mapping[str, Any]],
    scope: Scope,
    source: str = "kubernetes",
) -> list[TimelineEvent]:
    """The scope's timeline from API objects: pods' own status, their and their nodes' Events, node state."""
    pods = {(p.namespace, p.name) for p in scope.pods}
    nodes = set(scope.node_names)
    found: list[TimelineEvent] = []
    for obj in pod_objs:
        if (dig(obj, "metadata", "namespace"), dig(obj, "metadata", "name")) in pods:
            found.extend(pod_events(obj, source))
    for obj in scope_event_objects(event_objs, scope):
        event = parse_event(obj, source)
        if event is not None:
            found.append(event)
    for obj in node_objs:
        if dig(obj, "metadata", "name") in nodes:
            found.extend(node_events(obj, scope.window, source))
    return [e for e in found if in_window(scope, e)]
