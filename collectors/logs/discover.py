"""Discovery from log-store documents: the experiment's pods and nodes as the log store knows them, shared by the
live log collector (over its aggregation's one synthetic document per pod and container, and archived Events)
and the snapshot collector (over every document of a recorded ``logs.ndjson``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from whathappened.collectors.kube_objects import parse as kube_parse
from whathappened.collectors.logs.fields import (
    FieldMapping,
    Reading,
    as_reading,
    event_of,
    get_path,
    label_value,
    name_of,
    time_of,
    timestamp_of,
)

from whathappened.model import ContainerInfo, NodeInfo, PodInfo, Window
from whathappened.scope import Discovery, Query

Doc = tuple[str, Mapping[str, Any]]
SOURCE = "logs"
MAX_CANDIDATES = 50


def discover_from_documents(docs: Iterable[Doc], query: Query, reading: Reading | FieldMapping) -> Discovery:
    """The experiment's pods and nodes as the log store knows them: from the pod-label fields the shippers
    write (first label key with any match wins, as for the Kubernetes API) and from archived Events'
    ``involvedObject.labels``. Candidates ("did you mean") only when nothing matched."""
    found: dict[int, dict[tuple[str, str], _Seen]] = defaultdict(dict)
    seen_values: set[str] = set()
    reading = as_reading(reading)
    for _index, doc in docs:
        event = event_of(doc)
        if event is not None:
            _discover_event(event, query, found, seen_values)
        else:
            _discover_log(doc, query, reading.for_doc(doc), found, seen_values)
    if not found:
        return Discovery(candidates=tuple(sorted(seen_values))[:MAX_CANDIDATES])
    chosen = found[min(found)]
    pods = tuple(sorted((seen.pod_info(key) for key, seen in chosen.items()), key=lambda p: (p.namespace, p.name)))
    nodes = tuple(NodeInfo(name=n, sources=frozenset({SOURCE})) for n in sorted({p.node for p in pods if p.node}))
    return Discovery(pods=pods, nodes=nodes)


@dataclass
class _Seen:
    label_key: str
    experiment: str
    node: str | None = None
    node_at: datetime | None = None
    containers: frozenset[str] = frozenset()

    def saw(self, node: str | None, at: datetime | None, container: str | None) -> None:
        if node and (self.node_at is None or (at is not None and at >= self.node_at)):
            self.node, self.node_at = node, at
        if container:
            self.containers = self.containers | {container}

    def pod_info(self, key: tuple[str, str]) -> PodInfo:
        return PodInfo(
            name=key[1],
            namespace=key[0],
            node=self.node,
            labels={self.label_key: self.experiment},
            containers=tuple(ContainerInfo(name=c) for c in sorted(self.containers)),
            sources=frozenset({SOURCE}),
        )


def _discover_log(
    doc: Mapping[str, Any], query: Query, mapping: FieldMapping, found: dict[int, dict[Any, _Seen]], seen: set[str]
) -> None:
    at = time_of(doc, mapping)
    if at is None or not query.window.contains(at):
        return
    namespace = name_of(doc, mapping.namespace)
    if query.namespace is not None and namespace != query.namespace:
        return
    pod = name_of(doc, mapping.pod)
    for rank, key in enumerate(query.label_keys):
        value = label_value(doc, mapping, key)
        if value is None:
            continue
        seen.add(value)
        if value == query.experiment and pod and namespace:
            entry = found[rank].setdefault((namespace, pod), _Seen(key, value))
            entry.saw(name_of(doc, mapping.node), at, name_of(doc, mapping.container))


def _discover_event(doc: Mapping[str, Any], query: Query, found: dict[int, dict[Any, _Seen]], seen: set[str]) -> None:
    """Any archived pod Event names its pod, whether or not the timeline tracks its reason."""
    regarding = kube_parse.event_regarding(doc)
    at = _event_time(doc)
    if at is None or not near_window(at, query.window):
        return
    namespace = name_of(regarding, "namespace") or name_of(doc, "metadata.namespace")
    if query.namespace is not None and namespace != query.namespace:
        return
    labels = regarding.get("labels")
    if not isinstance(labels, Mapping):
        return
    for rank, key in enumerate(query.label_keys):
        value = _event_label(labels, key)
        if value is None:
            continue
        seen.add(value)
        name = name_of(regarding, "name")
        if value == query.experiment and regarding.get("kind") == "Pod" and name and namespace:
            entry = found[rank].setdefault((namespace, name), _Seen(key, value))
            entry.saw(_event_node(doc), at, None)


def _event_time(doc: Mapping[str, Any]) -> datetime | None:
    """The time parse_event gives an Event: eventTime, series, last, first, then creation."""
    for path in (
        "eventTime",
        "series.lastObservedTime",
        "lastTimestamp",
        "deprecatedLastTimestamp",
        "firstTimestamp",
        "deprecatedFirstTimestamp",
        "metadata.creationTimestamp",
    ):
        value = get_path(doc, path)
        if isinstance(value, str | int | float):
            at = timestamp_of(value)
            if at is not None:
                return at
    return None


def _event_node(doc: Mapping[str, Any]) -> str | None:
    """The kubelet that reported a pod Event is on the pod's node."""
    host = name_of(doc, "source.host") or name_of(doc, "deprecatedSource.host")
    component = name_of(doc, "source.component") or name_of(doc, "reportingComponent")
    if host is None and component == "kubelet":
        host = name_of(doc, "reportingInstance")
    return host


def _event_label(labels: Mapping[str, Any], key: str) -> str | None:
    """kubernetes-event-exporter keeps label keys as-is; its ``deDot`` option writes dots as ``_``."""
    for variant in (key, key.replace(".", "_")):
        value = labels.get(variant)
        if value is None:
            value = get_path(labels, variant)
        if isinstance(value, str) and value:
            return value
    return None


def near_window(at: datetime, window: Window) -> bool:
    slack = kube_parse.WINDOW_SLACK
    return window.start - slack <= at <= window.end + slack
