"""What the Kubernetes API test double serves: a scenario's objects, indexed by resource, plus container logs.

Events are stored once in core/v1 shape and served through events.k8s.io/v1 by the same field mapping the
API server uses (involvedObject<->regarding, message<->note, source<->deprecatedSource, ...), because in a
real cluster both APIs are views of the same objects.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whathappened.collectors.logs import fields as log_fields

# The training jobs that own experiment pods, by plural as Route.plural spells it: (group, version, kind). Served
# (get, list; create and patch when the double is writable) so the watch's opt-in writes can be read back with kubectl.
OWNERS: dict[str, tuple[str, str, str]] = {
    "jobs.batch": ("batch", "v1", "Job"),
    "jobsets.jobset.x-k8s.io": ("jobset.x-k8s.io", "v1alpha2", "JobSet"),
    "pytorchjobs.kubeflow.org": ("kubeflow.org", "v1", "PyTorchJob"),
}
JOBSET_LABELS = ("jobset.sigs.k8s.io/jobset-name", "jobset.sigs.k8s.io/jobset-uid")


def owners_of(pods: Iterable[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The training jobs the pods name, as their controllers would have created them: each owner reference of a
    served kind, and a Job's JobSet where the pod carries the JobSet's name and UID labels (the JobSet controller
    writes them on its Jobs and pods)."""
    plural_of = {(group, kind): plural for plural, (group, _, kind) in OWNERS.items()}
    found: dict[str, dict[tuple[str, str], dict[str, Any]]] = defaultdict(dict)
    for pod in pods:
        meta = pod.get("metadata") or {}
        labels = meta.get("labels") or {}
        for ref in meta.get("ownerReferences") or ():
            group = str(ref.get("apiVersion") or "").rpartition("/")[0]
            plural = plural_of.get((group, ref.get("kind")))
            if plural is None or not ref.get("name"):
                continue
            obj = _owner_object(ref, meta)
            jobset, jobset_uid = (labels.get(k) for k in JOBSET_LABELS)
            if plural == "jobs.batch" and jobset and jobset_uid:
                parent = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": jobset, "uid": jobset_uid}
                obj["metadata"]["ownerReferences"] = [{**parent, "controller": True}]
                found["jobsets.jobset.x-k8s.io"].setdefault(
                    (meta.get("namespace"), jobset), _owner_object(parent, meta)
                )
            found[plural].setdefault((meta.get("namespace"), ref["name"]), obj)
    return {plural: _ordered(list(objects.values())) for plural, objects in found.items()}


def _owner_object(ref: Mapping[str, Any], pod_meta: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": ref.get("apiVersion"),
        "kind": ref.get("kind"),
        "metadata": {
            "name": ref.get("name"),
            "namespace": pod_meta.get("namespace"),
            "uid": ref.get("uid") or "",
            "resourceVersion": "1",
            "creationTimestamp": pod_meta.get("creationTimestamp"),
        },
        "spec": {},
        "status": {},
    }


def to_events_v1(event: Mapping[str, Any]) -> dict[str, Any]:
    """A core/v1 Event as events.k8s.io/v1 serves it."""
    converted: dict[str, Any] = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": event.get("metadata", {}),
        "eventTime": event.get("eventTime"),
        "reason": event.get("reason"),
        "regarding": event.get("involvedObject", {}),
        "note": event.get("message"),
        "type": event.get("type"),
        "reportingController": event.get("reportingComponent") or "",
        "reportingInstance": event.get("reportingInstance") or "",
        "deprecatedSource": event.get("source"),
        "deprecatedFirstTimestamp": event.get("firstTimestamp"),
        "deprecatedLastTimestamp": event.get("lastTimestamp"),
        "deprecatedCount": event.get("count"),
    }
    for optional in ("series", "action", "related"):
        if event.get(optional):
            converted[optional] = event[optional]
    return converted


def to_core_event(event: Mapping[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event (if a scenario holds one) in core/v1 shape; core events pass unchanged."""
    if event.get("apiVersion") != "events.k8s.io/v1":
        return dict(event)
    converted = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": event.get("metadata", {}),
        "involvedObject": event.get("regarding", {}),
        "reason": event.get("reason"),
        "message": event.get("note"),
        "source": event.get("deprecatedSource") or {},
        "firstTimestamp": event.get("deprecatedFirstTimestamp"),
        "lastTimestamp": event.get("deprecatedLastTimestamp"),
        "count": event.get("deprecatedCount"),
        "type": event.get("type"),
        "eventTime": event.get("eventTime"),
        "reportingComponent": event.get("reportingController"),
        "reportingInstance": event.get("reportingInstance"),
    }
    for optional in ("series", "action", "related"):
        if event.get(optional):
            converted[optional] = event[optional]
    return converted


def _namespace(name: str) -> dict[str, Any]:
    uid = hashlib.sha1(name.encode()).hexdigest()
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": name,
            "uid": f"{uid[:8]}-{uid[8:12]}-{uid[12:16]}-{uid[16:20]}-{uid[20:32]}",
            "resourceVersion": "1",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"kubernetes.io/metadata.name": name},
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


@dataclass(frozen=True)
class LogLine:
    timestamp: str  # RFC 3339 as the log store holds it
    container_id: str
    message: str


# Where each shipper keeps the container id (ECS, Fluent Bit, Fluentd, Vector's "containerd://<id>")
CONTAINER_ID_FIELDS = ("container.id", "kubernetes.docker_id", "docker.container_id", "kubernetes.container_id")


@dataclass
class LogBook:
    """Container log lines by (namespace, pod, container), oldest first."""

    lines: dict[tuple[str, str, str], list[LogLine]] = field(default_factory=lambda: defaultdict(list))

    @classmethod
    def from_ndjson(cls, path: Path) -> LogBook:
        book = cls()
        if not path.is_file():
            return book
        for raw in path.read_text().splitlines():
            doc = json.loads(raw) if raw.strip() else {}
            if "create" in doc or "index" in doc:
                continue
            mapping = log_fields.detect(doc)  # whichever shipper wrote the store, as the log collector reads it
            if mapping is None:
                continue
            key = tuple(log_fields.name_of(doc, f) or "" for f in (mapping.namespace, mapping.pod, mapping.container))
            cid = next((str(v) for f in CONTAINER_ID_FIELDS if (v := log_fields.get_path(doc, f))), "")
            stamp = next((str(v) for f in mapping.timestamp if (v := log_fields.get_path(doc, f))), "")
            text = log_fields.message_of(doc, mapping)
            book.lines[key].append(LogLine(stamp, cid.rsplit("/", 1)[-1], text))  # type: ignore[index]
        for lines in book.lines.values():
            lines.sort(key=lambda line: line.timestamp)
        return book


@dataclass
class Store:
    """Objects by resource; every list is kept in the API server's key order (namespace, name)."""

    pods: list[dict[str, Any]]
    events: list[dict[str, Any]]
    nodes: list[dict[str, Any]]
    namespaces: list[dict[str, Any]]
    logs: LogBook = field(default_factory=LogBook)
    owners: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by plural (OWNERS)
    resource_version: str = "1000"
    _by_involved: dict[str, list[dict[str, Any]]] | None = field(default=None, repr=False)
    # Speed only, so a benchmark measures the client and not the double: each object is serialized once, each
    # events.k8s.io view converted once, each selector's matches computed once. The store is never changed
    # after build (resourceVersion is fixed), so none of these can go stale.
    _encoded: dict[int, tuple[Mapping[str, Any], bytes]] = field(default_factory=dict, repr=False)
    _as_v1: dict[int, dict[str, Any]] = field(default_factory=dict, repr=False)
    _matched: dict[tuple[Any, ...], list[dict[str, Any]]] = field(default_factory=dict, repr=False)

    @classmethod
    def build(
        cls,
        pods: Iterable[Mapping[str, Any]],
        events: Iterable[Mapping[str, Any]],
        nodes: Iterable[Mapping[str, Any]],
        logs: LogBook | None = None,
        extra_namespaces: Iterable[str] = (),
    ) -> Store:
        pod_list = [dict(p) for p in pods]
        event_list = [to_core_event(e) for e in events]
        names = {"default", "kube-system", *extra_namespaces}
        names |= {o.get("metadata", {}).get("namespace") for o in pod_list + event_list} - {None, ""}
        versions = [int(o.get("metadata", {}).get("resourceVersion", 0) or 0) for o in pod_list + event_list]
        store = cls(
            pods=_ordered(pod_list),
            events=_ordered(event_list),
            nodes=_ordered([dict(n) for n in nodes]),
            namespaces=[_namespace(n) for n in sorted(names)],
            logs=logs or LogBook(),
            owners=owners_of(pod_list),
            resource_version=str(max([1000, *versions]) + 1),
        )
        return store

    @classmethod
    def from_scenario(cls, folder: Path, extra_namespaces: Iterable[str] = ()) -> Store:
        kube = folder / "kubernetes"

        def items(name: str) -> list[dict[str, Any]]:
            path = kube / f"{name}.json"
            return json.loads(path.read_text()).get("items", []) if path.is_file() else []

        return cls.build(
            items("pods"),
            items("events"),
            items("nodes"),
            LogBook.from_ndjson(folder / "logs.ndjson"),
            extra_namespaces,
        )

    def events_about(self, name: str) -> list[dict[str, Any]]:
        """Events whose involvedObject has this name, in key order (an index built on first use)."""
        if self._by_involved is None:
            index: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for event in self.events:
                index[(event.get("involvedObject") or {}).get("name", "")].append(event)
            self._by_involved = index
        return self._by_involved.get(name, [])

    def encoded(self, obj: Mapping[str, Any]) -> bytes:
        """``json.dumps(obj)`` as bytes, computed once per stored object."""
        hit = self._encoded.get(id(obj))
        if hit is None or hit[0] is not obj:  # the object is kept with its bytes, so its id is never reused
            hit = (obj, json.dumps(obj).encode())
            self._encoded[id(obj)] = hit
        return hit[1]

    def warm(self) -> None:
        """Serialize every object now, at load, rather than while a client under measurement waits."""
        for obj in (*self.pods, *self.events, *self.nodes, *self.namespaces):
            self.encoded(obj)

    def as_v1(self, event: dict[str, Any]) -> dict[str, Any]:
        """The events.k8s.io/v1 view of a stored core/v1 Event, the same object every time."""
        converted = self._as_v1.get(id(event))
        if converted is None:
            converted = self._as_v1[id(event)] = to_events_v1(event)
        return converted

    def matched(self, key: tuple[Any, ...], compute: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
        """A list's matches by (route, selectors), computed on first use: continue pages slice the same list."""
        found = self._matched.get(key)
        if found is None:
            found = self._matched[key] = compute()
        return found

    def apply(self, change: str, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """ADDED, MODIFIED or DELETED applied with the next resourceVersion; the stored (or last) object. The
        caches are dropped: a changed store is no longer the one they were computed for."""
        version = int(self.resource_version) + 1
        self.resource_version = str(version)
        stored = {**obj, "metadata": {**(obj.get("metadata") or {}), "resourceVersion": str(version)}}
        items = self.objects(resource)
        key = _key(stored)
        kept = [o for o in items if _key(o) != key]
        items[:] = _ordered([*kept, stored] if change != "DELETED" else kept)
        self._matched.clear()
        self._as_v1.clear()  # keyed by id(): a replaced event's id may be reused by a new object
        self._by_involved = None
        return stored

    def in_phase(self, name: str, phase: str) -> dict[str, Any]:
        """The stored pod of that name with its phase changed: what a test hands to ``KubeDouble.change``."""
        [pod] = [p for p in self.pods if p["metadata"]["name"] == name]
        return in_phase(pod, phase)

    def objects(self, resource: str) -> list[dict[str, Any]]:
        """A resource's objects: "pods", "events", "nodes", "namespaces" or an owner's plural (OWNERS)."""
        if resource in OWNERS:
            return self.owners.setdefault(resource, [])
        return {"pods": self.pods, "events": self.events, "nodes": self.nodes, "namespaces": self.namespaces}[resource]


def in_phase(pod: Mapping[str, Any], phase: str) -> dict[str, Any]:
    """A pod object with its phase changed."""
    return {**pod, "status": {**(pod.get("status") or {}), "phase": phase}}


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    return (obj.get("metadata", {}).get("namespace", ""), obj.get("metadata", {}).get("name", ""))


def _ordered(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        objects, key=lambda o: (o.get("metadata", {}).get("namespace", ""), o.get("metadata", {}).get("name", ""))
    )
