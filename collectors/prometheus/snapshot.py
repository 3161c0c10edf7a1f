"""The Prometheus part of a snapshot folder: ``prometheus.om.gz`` (OpenMetrics text, second timestamps, ``# EOF``),
written from the series the live collector fetched and read back through the same series parsers."""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from pathlib import Path

from whathappened.collectors.prometheus.fleet import ends_in_series
from whathappened.collectors.prometheus.model import Series
from whathappened.collectors.prometheus.openmetrics import parse_openmetrics, write_openmetrics
from whathappened.collectors.prometheus.series import discover_from_series, events_from_series
from whathappened.collectors.recorded import RecordedPart

from whathappened.model import FoundEnds, TimelineEvent, Window
from whathappened.scope import Discovery, Query, Scope

OPENMETRICS_FILES = ("prometheus.om.gz", "prometheus.om", "prometheus.txt.gz", "prometheus.txt")


def recorded_file(folder: Path) -> Path | None:
    return next((folder / name for name in OPENMETRICS_FILES if (folder / name).exists()), None)


def write_series(folder: Path, series: Sequence[Series]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / OPENMETRICS_FILES[0]
    path.write_bytes(gzip.compress(write_openmetrics(series).encode("utf-8")))
    return path


class SnapshotPrometheus(RecordedPart):
    name = "prometheus"

    def __init__(self, folder: Path, path: Path, utilization: bool = True) -> None:
        super().__init__(folder)
        self.path = path
        self._utilization = utilization  # as the live source: the strip only when the report draws it
        self._series: list[Series] | None = None

    def _load(self) -> list[Series]:
        if self._series is None:
            try:
                raw = self.path.read_bytes()
                if self.path.suffix == ".gz":
                    raw = gzip.decompress(raw)
            except (OSError, EOFError, gzip.BadGzipFile) as exc:
                self._problem(self.path, f"cannot be read ({getattr(exc, 'strerror', None) or exc})")
                self._series = []
                return self._series
            series, problems = parse_openmetrics(raw.decode("utf-8", errors="replace"))
            for problem in problems[:20]:
                self._problem(self.path, problem)
            if len(problems) > 20:
                self._problem(self.path, f"{len(problems) - 20} more bad lines")
            self._series = series
        return self._series

    def discover(self, query: Query) -> Discovery:
        return discover_from_series(self._load(), query)

    def pod_ends(self, window: Window, label_keys: Sequence[str], namespace: str | None = None) -> FoundEnds:
        """``whathappened fleet``: the recorded experiment pods' ends in the window (fleet.py)."""
        return ends_in_series(self._load(), window, label_keys, namespace)

    def collect(self, scope: Scope) -> list[TimelineEvent]:
        series = self._load()
        events = events_from_series(series, scope, utilization=self._utilization)
        self.detail = f"{len(series)} series, {len(events)} events (snapshot)"
        return events
