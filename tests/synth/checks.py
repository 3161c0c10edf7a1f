"""Format checks shared by the synth tests: kubectl List JSON, OpenMetrics ordering rules, bulk NDJSON pairs."""

from __future__ import annotations

import fnmatch
import gzip
import json
from pathlib import Path
from typing import Any

from whathappened.collectors.kube_objects import parse as kube_parse
from whathappened.collectors.logs.fields import Reading, event_of, time_of
from whathappened.collectors.logs.shapes import ARCHIVER_DEFAULT_INDICES, SHIPPER_DEFAULT_INDICES

from whathappened.config import ElasticsearchSettings

CAUSES = {
    "host-maintenance", "spot-preemption", "node-failure", "node-pressure-eviction", "gpu-fallen-off-bus", "gpu-memory-error",
    "gpu-hardware-error", "nvlink-error", "gpu-thermal", "network-error", "nccl-timeout", "nccl-error", "peer-failure",
    "scheduler-preemption", "unschedulable", "oom-killed", "cuda-oom", "application-error", "config-error", "liveness-probe",
    "deadline-exceeded", "deleted", "completed", "unknown",
}  # fmt: skip
# Every index the generator writes is one the collector searches by default (the contract's patterns, the other
# shippers' and archivers' default names): a generated store is found with no index flag.
DEFAULT_PATTERNS = (
    *ElasticsearchSettings.log_index.split(","),
    *SHIPPER_DEFAULT_INDICES,
    *ElasticsearchSettings.event_index.split(","),
    *ARCHIVER_DEFAULT_INDICES,
)


def k8s_list(path: Path, kind: str) -> list[dict[str, Any]]:
    doc = json.loads(path.read_text())
    assert doc["kind"] == kind and doc["apiVersion"] == "v1", path
    for item in doc["items"]:
        assert item["kind"] == kind.removesuffix("List") and item["metadata"]["name"], path
    return list(doc["items"])


def openmetrics_series(path: Path) -> dict[str, list[int]]:
    """Every series with its timestamps, after checking the rules promtool enforces: one block per family,
    samples of a series in time order, `# EOF` last."""
    families: set[str] = set()
    current = ""
    series: dict[str, list[int]] = {}
    last_line = ""
    with gzip.open(path, "rt") as stream:
        for line in stream:
            last_line = line
            if line.startswith("# TYPE "):
                current = line.split()[2]
                assert current not in families, f"family {current} interleaved"
                families.add(current)
                continue
            if line.startswith("#"):
                continue
            key, _, rest = line.rpartition("} ")
            name = key.split("{", 1)[0]
            assert name in (current, current + "_total"), f"{name} outside its family {current}"
            stamp = int(rest.split()[1])
            stamps = series.setdefault(key, [])
            assert not stamps or stamps[-1] < stamp, f"{key} out of time order"
            stamps.append(stamp)
    assert last_line == "# EOF\n"
    return series


def bulk_documents(path: Path) -> list[tuple[str, dict[str, Any]]]:
    lines = path.read_text().splitlines()
    assert len(lines) % 2 == 0, "bulk NDJSON comes in action/document pairs"
    out = []
    for action, doc in zip(lines[::2], lines[1::2], strict=True):
        index = json.loads(action)["create"]["_index"]
        assert any(fnmatch.fnmatchcase(index, p) for p in DEFAULT_PATTERNS), index
        body = json.loads(doc)
        event = event_of(body)
        if event is None:
            assert time_of(body, Reading().for_doc(body)) is not None, body
        else:
            assert event["reason"] and kube_parse.event_regarding(event).get("name"), body
            assert any(event.get(k) for k in ("eventTime", "lastTimestamp", "firstTimestamp")), body
        out.append((index, body))
    return out
