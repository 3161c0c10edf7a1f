"""The Kubernetes part of a snapshot folder: ``kubernetes/{pods,events,nodes}.json`` in kubectl's List shape
(``kubectl get -o json``), and the container logs the live collector read (``kubernetes/logs/NAMESPACE/POD/
CONTAINER.log``, ``CONTAINER.previous.log`` for ``--previous``, as ``kubectl logs --timestamps`` prints them),
written from what the live collector fetched and read back through the same parsers."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whathappened.collectors.kube_objects.parse import discover_from_objects, events_from_objects, in_window, parse_node
from whathappened.collectors.kube_objects.text import dig
from whathappened.collectors.kubernetes.container_logs import log_events
from whathappened.collectors.recorded import RecordedPart

from whathappened.model import Subject, TimelineEvent
from whathappened.scope import Discovery, Query, Scope

KUBERNETES_FILES = ("pods", "events", "nodes")
LOGS = "logs"
PREVIOUS = ".previous.log"


@dataclass(frozen=True, slots=True)
class LogTail:
    """One container instance's lines as the API served them (``kubectl logs --timestamps``)."""

    namespace: str
    pod: str
    container: str
    previous: bool
    raw: bytes

    def path(self, folder: Path) -> Path:
        name = self.container + (PREVIOUS if self.previous else ".log")
        return folder / "kubernetes" / LOGS / self.namespace / self.pod / name


def present(folder: Path) -> bool:
    return any((folder / "kubernetes" / f"{part}.json").exists() for part in KUBERNETES_FILES)


def write_lists(
    folder: Path,
    pods: Sequence[Mapping[str, Any]],
    events: Sequence[Mapping[str, Any]],
    nodes: Sequence[Mapping[str, Any]],
    tails: Sequence[LogTail] = (),
) -> None:
    """kubernetes/{pods,events,nodes}.json, each a typed List as kubectl prints it, and the container logs read."""
    target = folder / "kubernetes"
    target.mkdir(parents=True, exist_ok=True)
    shapes = (
        ("pods", "PodList", "Pod", pods),
        ("events", "EventList", "Event", events),
        ("nodes", "NodeList", "Node", nodes),
    )
    for name, list_kind, kind, items in shapes:
        typed = [{"apiVersion": "v1", "kind": kind, **item} for item in items]
        body = {"apiVersion": "v1", "kind": list_kind, "metadata": {"resourceVersion": ""}, "items": typed}
        (target / f"{name}.json").write_text(json.dumps(body, indent=1, default=str))
    for tail in tails:
        path = tail.path(folder)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(tail.raw)


class SnapshotKubernetes(RecordedPart):
    name = "kubernetes"

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self._lists: dict[str, list[Mapping[str, Any]]] | None = None

    def _load(self) -> dict[str, list[Mapping[str, Any]]]:
        if self._lists is None:
            self._lists = {part: self._items(self.folder / "kubernetes" / f"{part}.json") for part in KUBERNETES_FILES}
        return self._lists

    def _items(self, path: Path) -> list[Mapping[str, Any]]:
        if not path.exists():
            return []
        try:
            document = json.loads(path.read_bytes().decode("utf-8", errors="replace"))
        except json.JSONDecodeError as exc:
            self._problem(path, f"line {exc.lineno}: not valid JSON ({exc.msg})")
            return []
        except OSError as exc:
            self._problem(path, f"cannot be read ({exc.strerror})")
            return []
        items = document.get("items") if isinstance(document, dict) else None
        if isinstance(document, dict) and items is None and document.get("kind") not in (None, "List"):
            items = [document]  # a single object as `kubectl get pod X -o json` prints it
        if not isinstance(items, list):
            self._problem(path, "line 1: not a Kubernetes List (no items)")
            return []
        return [item for item in items if isinstance(item, dict)]

    def discover(self, query: Query) -> Discovery:
        lists = self._load()
        found = discover_from_objects(lists["pods"], query)
        used = {p.node for p in found.pods if p.node}
        nodes = tuple(parse_node(obj) for obj in lists["nodes"] if _name(obj) in used)
        return Discovery(pods=found.pods, nodes=nodes, candidates=found.candidates)

    def collect(self, scope: Scope) -> list[TimelineEvent]:
        lists = self._load()
        events = events_from_objects(lists["pods"], lists["events"], lists["nodes"], scope)
        lines = self._log_lines(lists["pods"], scope)
        pods = {p.name for p in scope.pods if "kubernetes" in p.sources}
        logged = f", {len(lines)} container log lines" if lines else ""
        self.detail = f"{len(pods)} pods, {len(events)} events, {len(lists['nodes'])} nodes{logged} (snapshot)"
        return events + lines

    def _log_lines(self, pods: Sequence[Mapping[str, Any]], scope: Scope) -> list[TimelineEvent]:
        """The recorded container logs of the scope's pods, as the live collector turned them into events."""
        nodes = {
            (dig(obj, "metadata", "namespace"), dig(obj, "metadata", "name")): dig(obj, "spec", "nodeName")
            for obj in pods
        }
        wanted = {p.key for p in scope.pods}
        found: list[TimelineEvent] = []
        for namespace, pod, container, previous, path in self._log_files():
            if (namespace, pod) not in wanted:
                continue
            try:
                raw = path.read_bytes()
            except OSError as exc:
                self._problem(path, f"cannot be read ({exc.strerror})")
                continue
            subject = Subject(namespace, pod, container, nodes.get((namespace, pod)))
            found += [e for e in log_events(raw, subject, previous, self.name) if in_window(scope, e)]
        return found

    def _log_files(self) -> Iterator[tuple[str, str, str, bool, Path]]:
        root = self.folder / "kubernetes" / LOGS
        if not root.is_dir():
            return
        for path in sorted(root.glob("*/*/*.log")):
            previous = path.name.endswith(PREVIOUS)
            container = path.name.removesuffix(PREVIOUS) if previous else path.name.removesuffix(".log")
            yield path.parent.parent.name, path.parent.name, container, previous, path


def _name(obj: Mapping[str, Any]) -> str | None:
    metadata = obj.get("metadata")
    return metadata.get("name") if isinstance(metadata, dict) else None
