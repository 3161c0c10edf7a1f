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

from collections.abc import Iterable
from pathlib import Path

from whathappened.collectors.kubernetes.snapshot import SnapshotKubernetes
from whathappened.collectors.kubernetes.snapshot import present as kubernetes_present
from whathappened.collectors.logs.elasticsearch.snapshot import LOGS_FILE, SnapshotLogs
from whathappened.collectors.prometheus.snapshot import SnapshotPrometheus
from whathappened.collectors.prometheus.snapshot import recorded_file as prometheus_file

from whathappened.errors import SnapshotError
from whathappened.model import SourceReport, SourceStatus
from whathappened.scope import Collector


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
    if kubernetes_present(root):
        collectors.append(SnapshotKubernetes(root))
    else:
        missing.append(SourceReport("kubernetes", SourceStatus.NOT_CONFIGURED, "snapshot has no kubernetes/*.json"))
    om = prometheus_file(root)
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
