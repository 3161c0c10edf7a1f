"""Format checks shared by the synth tests: kubectl List JSON, OpenMetrics ordering rules, bulk NDJSON pairs."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

CAUSES = {
    "host-maintenance", "spot-preemption", "node-failure", "node-pressure-eviction", "gpu-fallen-off-bus", "gpu-memory-error",
    "gpu-hardware-error", "nvlink-error", "gpu-thermal", "network-error", "nccl-timeout", "nccl-error", "peer-failure",
    "scheduler-preemption", "unschedulable", "oom-killed", "cuda-oom", "application-error", "config-error", "liveness-probe",
    "deadline-exceeded", "deleted", "completed", "unknown",
}  # fmt: skip
INDEX_PREFIXES = ("logs-k8s-", "logs-node-", "kube-events-")


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
        assert index.startswith(INDEX_PREFIXES), index
        body = json.loads(doc)
        assert body["@timestamp"].endswith("Z")
        out.append((index, body))
    return out
