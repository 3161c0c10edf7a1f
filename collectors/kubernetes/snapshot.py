"""The Kubernetes part of a snapshot folder: ``kubernetes/{pods,events,nodes}.json`` in kubectl's List shape
(``kubectl get -o json``), written from what the live collector fetched and read back through the same parsers."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from whathappened.collectors.kube_objects.parse import discover_from_objects, events_from_objects, parse_node
from whathappened.collectors.recorded import RecordedPart

from whathappened.model import TimelineEvent
from whathappened.scope import Discovery, Query, Scope

KUBERNETES_FILES = ("pods", "events", "nodes")


def present(folder: Path) -> bool:
    return any((folder / "kubernetes" / f"{part}.json").exists() for part in KUBERNETES_FILES)


def write_lists(
    folder: Path,
    pods: Sequence[Mapping[str, Any]],
    events: Sequence[Mapping[str, Any]],
    nodes: Sequence[Mapping[str, Any]],
) -> None:
    """kubernetes/{pods,events,nodes}.json, each a typed List as kubectl prints it."""
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
        pods = {p.name for p in scope.pods if "kubernetes" in p.sources}
        self.detail = f"{len(pods)} pods, {len(events)} events, {len(lists['nodes'])} nodes (snapshot)"
        return events


def _name(obj: Mapping[str, Any]) -> str | None:
    metadata = obj.get("metadata")
    return metadata.get("name") if isinstance(metadata, dict) else None
