"""The log store's part of a snapshot folder: ``logs.ndjson``, Elasticsearch bulk NDJSON (an action line, then the
document), written from the documents the live collector fetched and read back through the same document parsers."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from whathappened.collectors.logs import parse as log_parse
from whathappened.collectors.recorded import RecordedPart

from whathappened.model import TimelineEvent
from whathappened.scope import Discovery, Query, Scope

LOGS_FILE = "logs.ndjson"
# A bulk body line longer than this is not a log document we can use; it is reported, not parsed.
MAX_NDJSON_LINE = 8 * 1024 * 1024


def write_bulk(folder: Path, documents: Iterable[tuple[str, Mapping[str, Any]]]) -> Path:
    """Each (index, document) as a create action and its body."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOGS_FILE
    with path.open("w", encoding="utf-8") as out:
        for index, doc in documents:
            out.write(json.dumps({"create": {"_index": index}}) + "\n")
            out.write(json.dumps(doc, default=str) + "\n")
    return path


class SnapshotLogs(RecordedPart):
    name = "logs"

    def __init__(self, folder: Path, path: Path, preset: str = "auto") -> None:
        super().__init__(folder)
        self.path = path
        self.reading = log_parse.reading_for(preset)
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
        return log_parse.discover_from_documents(self._load(), query, self.reading)

    def collect(self, scope: Scope) -> list[TimelineEvent]:
        docs = self._load()
        events = log_parse.events_from_documents(docs, scope, self.reading)
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
