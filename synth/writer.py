"""Writes a Recording as a scenario folder: scenario.yaml, kubernetes/*.json, prometheus.om.gz, logs.ndjson."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from synth.ksm import write_metrics
from synth.kube import event_object, k8s_list, node_object, pod_object
from synth.logs import BulkWriter, skewed
from synth.shippers import Labels
from synth.spec import Recording, iso


def _q(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid double-quoted YAML scalar


def scenario_yaml(rec: Recording) -> str:
    m = rec.meta
    lines = [
        f"name: {_q(m.name)}",
        f"description: {_q(m.description)}",
        f"experiment: {_q(m.experiment)}",
        f"namespace: {_q(m.namespace)}",
        f"label_key: {_q(m.label_key)}",
        "window:",
        f"  start: {_q(iso(m.start))}",
        f"  end: {_q(iso(m.end))}",
        f"captured_at: {_q(iso(m.captured_at))}",
        "expected:",
    ]
    for entry in m.expected:
        lines.append(f"  - pod: {_q(entry['pod'])}")
        lines.append(f"    cause: {_q(entry['cause'])}")
        root = entry["root"]
        lines.append(f"    root: {'null' if root is None else str(root).lower()}")
        if entry.get("caused_by"):
            lines.append(f"    caused_by: {_q(entry['caused_by'])}")
    return "\n".join(lines) + "\n"


def _dump(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=4) + "\n")


def write_kubernetes(rec: Recording, folder: Path) -> None:
    now = rec.meta.captured_at
    folder.mkdir(parents=True, exist_ok=True)
    pods = [
        pod_object(p, now, rec.k8s_release)
        for p in rec.pods
        if p.created <= now and (p.gone_at is None or p.gone_at > now)
    ]
    _dump(folder / "pods.json", k8s_list("PodList", pods))
    horizon = now - rec.event_ttl
    events = sorted(
        (e for e in rec.events if e.at <= now and e.last_seen >= horizon), key=lambda e: (e.last_seen, e.name)
    )
    _dump(folder / "events.json", k8s_list("EventList", [event_object(e, i) for i, e in enumerate(events)]))
    nodes = [
        node_object(n, rec, now, rec.node_labels.get(n.name))
        for n in rec.nodes
        if n.name not in rec.node_gone or rec.node_gone[n.name] > now
    ]
    _dump(folder / "nodes.json", k8s_list("NodeList", nodes))


def write_logs(rec: Recording, path: Path) -> int:
    now = rec.meta.captured_at
    pods = {p.name: p for p in rec.pods}
    nodes = {n.name: n for n in rec.nodes}
    entries: list[tuple[Any, int, Any]] = []
    for i, line in enumerate(rec.logs):
        node = line.node or (pods[line.pod].node.name if pods[line.pod].node else "")  # type: ignore[union-attr]
        entries.append((skewed(line.at, rec.log_skew.get(node, 0.0)), i, line))
    if rec.archive_events:
        ordered = sorted(rec.events, key=lambda e: (e.last_seen, e.name))
        for i, e in enumerate(ordered):
            entries.append((e.last_seen, len(rec.logs) + i, (e, i)))
    entries.sort(key=lambda x: (x[0], x[1]))
    with path.open("w") as stream:
        bulk = BulkWriter(stream, rec.shipper, _about(rec))
        for t, _, item in entries:
            if t > now:
                continue
            if isinstance(item, tuple):
                bulk.event(event_object(item[0], item[1]), t)
            elif item.node:
                bulk.kernel(nodes[item.node], t, item.message, item.severity)
            else:
                bulk.container(pods[item.pod], t, item.message, item.stream)
        return bulk.count


def _about(rec: Recording) -> Labels:
    """An involved pod's labels and owner, as kubernetes-event-exporter enriches an Event with them."""
    pods = {p.name: p for p in rec.pods}

    def about(kind: str, name: str) -> dict[str, Any]:
        pod = pods.get(name) if kind == "Pod" else None
        if pod is None:
            return {}
        found: dict[str, Any] = {"labels": dict(sorted(pod.labels.items()))}
        if pod.owner is not None:
            owner = {
                "apiVersion": pod.owner.api_version,
                "kind": pod.owner.kind,
                "name": pod.owner.name,
                "uid": pod.owner.uid,
            }
            found["ownerReferences"] = [{**owner, "controller": True, "blockOwnerDeletion": True}]
        return found

    return about


METRICS_FILE = "prometheus.om.gz"


def write_recording(rec: Recording, folder: Path, seed: int, metrics: bytes | None = None) -> None:
    """``metrics``: the metrics file a caller already wrote for the same recording and seed but for its logs and
    events (which the metrics never read), copied instead of written again."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "scenario.yaml").write_text(scenario_yaml(rec))
    write_kubernetes(rec, folder / "kubernetes")
    if metrics is None:
        write_metrics(rec, folder / METRICS_FILE, seed)
    else:
        (folder / METRICS_FILE).write_bytes(metrics)
    write_logs(rec, folder / "logs.ndjson")
