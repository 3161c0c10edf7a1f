"""Offline sources: a recorded incident folder read through the same parsers the live collectors use.

The folder is the scenario format (or what ``whathappened collect`` writes)::

    kubernetes/pods.json, events.json, nodes.json   kubectl ``get -o json`` List objects
    prometheus.om.gz (or prometheus.om)              OpenMetrics text with second timestamps
    logs.ndjson                                      Elasticsearch bulk NDJSON ({"create": ...} + document)

Each part becomes its own source named like the live one (kubernetes, prometheus, logs), so the report's
source health reads the same online and offline, and a part that is missing is "not configured". A file that
cannot be read or has bad lines is named with its line in the source's detail; everything else is still used.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from whathappened.collectors import _kube_parse, _log_parse, _openmetrics, _prom_series

from whathappened.errors import SnapshotError
from whathappened.model import SourceReport, SourceStatus, TimelineEvent
from whathappened.scope import Collector, Discovery, Query, Scope

KUBERNETES_FILES = ("pods", "events", "nodes")
OPENMETRICS_FILES = ("prometheus.om.gz", "prometheus.om", "prometheus.txt.gz", "prometheus.txt")
LOGS_FILE = "logs.ndjson"
# A bulk body line longer than this is not a log document we can use; it is reported, not parsed.
MAX_NDJSON_LINE = 8 * 1024 * 1024


class _SnapshotSource:
    """Shared bookkeeping: problems found while reading (file and line), shown as the source's detail."""

    name = "snapshot"

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.requests = 0
        self.problems: list[str] = []
        self.detail = ""

    def _problem(self, path: Path, what: str) -> None:
        self.problems.append(f"{path.relative_to(self.folder)}: {what}")


class SnapshotKubernetes(_SnapshotSource):
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
        found = _kube_parse.discover_from_objects(lists["pods"], query)
        used = {p.node for p in found.pods if p.node}
        nodes = tuple(_kube_parse.parse_node(obj) for obj in lists["nodes"] if _name(obj) in used)
        return Discovery(pods=found.pods, nodes=nodes, candidates=found.candidates)

    def collect(self, scope: Scope) -> list[TimelineEvent]:
        lists = self._load()
        events = _kube_parse.events_from_objects(lists["pods"], lists["events"], lists["nodes"], scope)
        pods = {p.name for p in scope.pods if "kubernetes" in p.sources}
        self.detail = f"{len(pods)} pods, {len(events)} events, {len(lists['nodes'])} nodes (snapshot)"
        return events


class SnapshotPrometheus(_SnapshotSource):
    name = "prometheus"

    def __init__(self, folder: Path, path: Path, utilization: bool = True) -> None:
        super().__init__(folder)
        self.path = path
        self._utilization = utilization  # as the live source: the strip only when the report draws it
        self._series: list[_prom_series.Series] | None = None

    def _load(self) -> list[_prom_series.Series]:
        if self._series is None:
            try:
                raw = self.path.read_bytes()
                if self.path.suffix == ".gz":
                    raw = gzip.decompress(raw)
            except (OSError, EOFError, gzip.BadGzipFile) as exc:
                self._problem(self.path, f"cannot be read ({getattr(exc, 'strerror', None) or exc})")
                self._series = []
                return self._series
            series, problems = _openmetrics.parse_openmetrics(raw.decode("utf-8", errors="replace"))
            for problem in problems[:20]:
                self._problem(self.path, problem)
            if len(problems) > 20:
                self._problem(self.path, f"{len(problems) - 20} more bad lines")
            self._series = series
        return self._series

    def discover(self, query: Query) -> Discovery:
        return _prom_series.discover_from_series(self._load(), query)

    def collect(self, scope: Scope) -> list[TimelineEvent]:
        series = self._load()
        events = _prom_series.events_from_series(series, scope, utilization=self._utilization)
        self.detail = f"{len(series)} series, {len(events)} events (snapshot)"
        return events


class SnapshotLogs(_SnapshotSource):
    name = "logs"

    def __init__(self, folder: Path, path: Path, preset: str = "auto") -> None:
        super().__init__(folder)
        self.path = path
        self.reading = _log_parse.reading_for(preset)
        self._docs: list[tuple[str, Mapping[str, Any]]] | None = None

    def _load(self) -> list[tuple[str, Mapping[str, Any]]]:
        if self._docs is None:
            self._docs = list(self._read_bulk())
        return self._docs

    def _read_bulk(self) -> Iterator[tuple[str, Mapping[str, Any]]]:
        index = "logs"
        try:
            handle = self.path.open("rb")
        except OSError as exc:
            self._problem(self.path, f"cannot be read ({exc.strerror})")
            return
        with handle:
            for number, line in enumerate(handle, start=1):
                if len(line) > MAX_NDJSON_LINE:
                    self._problem(self.path, f"line {number}: longer than {MAX_NDJSON_LINE // 1048576} MiB, skipped")
                    continue
                text = line.decode("utf-8", errors="replace").strip()
                if not text:
                    continue
                try:
                    value = json.loads(text)
                except json.JSONDecodeError as exc:
                    self._problem(self.path, f"line {number}: not valid JSON ({exc.msg})")
                    continue
                if not isinstance(value, dict):
                    self._problem(self.path, f"line {number}: not a JSON object")
                    continue
                action = _bulk_action(value)
                if action is not None:
                    index = action
                    continue
                yield index, value

    def discover(self, query: Query) -> Discovery:
        return _log_parse.discover_from_documents(self._load(), query, self.reading)

    def collect(self, scope: Scope) -> list[TimelineEvent]:
        docs = self._load()
        events = _log_parse.events_from_documents(docs, scope, self.reading)
        self.detail = f"{len(docs)} documents, {len(events)} events (snapshot)"
        return events


def _bulk_action(value: Mapping[str, Any]) -> str | None:
    """The target index when this bulk line is an action line ({"create": {"_index": ...}}), else None."""
    if len(value) != 1:
        return None
    ((verb, meta),) = value.items()
    if verb in ("create", "index") and isinstance(meta, dict):
        return str(meta.get("_index", "logs"))
    return None


def _name(obj: Mapping[str, Any]) -> str | None:
    metadata = obj.get("metadata")
    return metadata.get("name") if isinstance(metadata, dict) else None


def snapshot_collectors(
    folder: str | Path, preset: str = "auto", utilization: bool = True
) -> tuple[list[Collector], list[SourceReport]]:
    """The collectors a snapshot folder supports, and a not_configured report for each part it lacks;
    ``utilization``: whether the Prometheus part reports each pod's GPU utilization strip."""
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise SnapshotError(f"snapshot folder {root} does not exist or is not a folder")
    collectors: list[Collector] = []
    missing: list[SourceReport] = []
    if any((root / "kubernetes" / f"{part}.json").exists() for part in KUBERNETES_FILES):
        collectors.append(SnapshotKubernetes(root))
    else:
        missing.append(SourceReport("kubernetes", SourceStatus.NOT_CONFIGURED, "snapshot has no kubernetes/*.json"))
    om = next((root / name for name in OPENMETRICS_FILES if (root / name).exists()), None)
    if om is not None:
        collectors.append(SnapshotPrometheus(root, om, utilization))
    else:
        missing.append(SourceReport("prometheus", SourceStatus.NOT_CONFIGURED, "snapshot has no prometheus.om.gz"))
    if (root / LOGS_FILE).exists():
        collectors.append(SnapshotLogs(root, root / LOGS_FILE, preset))
    else:
        missing.append(SourceReport("logs", SourceStatus.NOT_CONFIGURED, f"snapshot has no {LOGS_FILE}"))
    if not collectors:
        raise SnapshotError(f"{root} holds no snapshot files (kubernetes/*.json, prometheus.om.gz, logs.ndjson)")
    return collectors, missing


def without(collectors: Iterable[Collector], names: Iterable[str]) -> list[Collector]:
    left_out = set(names)
    return [c for c in collectors if c.name not in left_out]
