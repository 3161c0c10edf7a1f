"""Synthetic incidents written in the scenario folder format (kubectl JSON, OpenMetrics, Elasticsearch bulk
NDJSON), for causes and shapes the generated incidents do not show. Each incident is read back through the real snapshot
collectors, so the test covers the parsers' words and the correlator's rules together.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

BASE = datetime(2026, 11, 20, 6, 0, tzinfo=UTC)
END = BASE + timedelta(hours=2)
STEP = timedelta(seconds=30)


def t(minutes: float, seconds: float = 0) -> datetime:
    return BASE + timedelta(minutes=minutes, seconds=seconds)


def iso(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _labels(labels: dict[str, str]) -> str:
    return ",".join(f'{k}="{v}"' for k, v in labels.items())


@dataclass
class Incident:
    experiment: str
    namespace: str = "ml"
    label_key: str = "experiment"
    pods: list[dict[str, Any]] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    logs: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    families: dict[str, tuple[str, dict[str, list[tuple[datetime, float]]]]] = field(default_factory=dict)

    # --- Kubernetes objects ---

    def node(
        self,
        name: str,
        provider: str = "aws:///us-east-1a/i-0123456789",
        ready: str = "True",
        conditions: tuple[dict[str, Any], ...] = (),
    ) -> None:
        conds = [
            {
                "type": "Ready",
                "status": ready,
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
                "lastHeartbeatTime": iso(END),
                "lastTransitionTime": iso(BASE - timedelta(days=2)),
            },
            *conditions,
        ]
        self.nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "uid": f"uid-{name}",
                    "labels": {"kubernetes.io/hostname": name, "nvidia.com/gpu.count": "8"},
                },
                "spec": {"providerID": provider},
                "status": {"capacity": {"nvidia.com/gpu": "8"}, "conditions": conds},
            }
        )
        self.gauge(
            "kube_node_status_condition",
            {"node": name, "condition": "Ready", "status": "true"},
            [(BASE, 1.0)],
            until=END,
        )

    def pod(
        self,
        name: str,
        node: str | None,
        phase: str,
        gpus: int = 8,
        state: dict[str, Any] | None = None,
        last: dict[str, Any] | None = None,
        restarts: int = 0,
        reason: str | None = None,
        conditions: tuple[dict[str, Any], ...] = (),
        in_api: bool = True,
        gone: datetime | None = None,
        owner: tuple[str, str] | None = None,
    ) -> None:
        """A pod in the API (unless ``in_api`` is False) and its kube-state-metrics history until ``gone``."""
        started = t(2) if node else None
        status: dict[str, Any] = {"phase": phase, "conditions": list(conditions)}
        if started:
            status["startTime"] = iso(started)
        if reason:
            status["reason"] = reason
        status["containerStatuses"] = [
            {
                "name": "main",
                "restartCount": restarts,
                "ready": phase == "Running",
                "state": state or {"running": {"startedAt": iso(t(2, 20))}},
                "lastState": last or {},
            }
        ]
        meta: dict[str, Any] = {
            "name": name,
            "namespace": self.namespace,
            "uid": f"uid-{name}",
            "creationTimestamp": iso(t(1, 55)),
            "labels": {self.label_key: self.experiment},
        }
        if owner:
            meta["ownerReferences"] = [
                {
                    "apiVersion": "batch/v1",
                    "kind": owner[0],
                    "name": owner[1],
                    "uid": f"uid-{owner[1]}",
                    "controller": True,
                }
            ]
        spec: dict[str, Any] = {
            "containers": [
                {
                    "name": "main",
                    "image": "repo/train:1",
                    "resources": {"requests": {"nvidia.com/gpu": str(gpus)}, "limits": {"nvidia.com/gpu": str(gpus)}},
                }
            ]
        }
        if node:
            spec["nodeName"] = node
        if in_api:
            self.pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status})
        until = gone or END
        ident = {"namespace": self.namespace, "pod": name, "uid": f"uid-{name}"}
        self.gauge(
            "kube_pod_info",
            {**ident, "node": node or "", "created_by_kind": "Job", "created_by_name": self.experiment},
            [(t(2), 1.0)],
            until=until,
        )
        label = "label_" + "".join(c if c.isalnum() else "_" for c in self.label_key)
        self.gauge("kube_pod_labels", {**ident, label: self.experiment}, [(t(2), 1.0)], until=until)

    def phases(self, pod: str, changes: list[tuple[datetime, str]], gone: datetime | None = None) -> None:
        ident = {"namespace": self.namespace, "pod": pod, "uid": f"uid-{pod}"}
        for phase in ("Pending", "Running", "Succeeded", "Failed", "Unknown"):
            points = [(at, 1.0 if p == phase else 0.0) for at, p in changes]
            self.gauge("kube_pod_status_phase", {**ident, "phase": phase}, points, until=gone or END)

    def ksm(
        self, family: str, pod: str, at: datetime, gone: datetime | None = None, value: float = 1.0, **labels: str
    ) -> None:
        ident = {"namespace": self.namespace, "pod": pod, "uid": f"uid-{pod}", **labels}
        self.gauge(family, ident, [(at, value)], until=gone or END)

    def event(
        self,
        kind: str,
        name: str,
        reason: str,
        message: str,
        at: datetime,
        type_: str = "Warning",
        component: str = "kubelet",
        host: str | None = None,
    ) -> None:
        namespace = None if kind == "Node" else self.namespace
        involved = {"kind": kind, "name": name, "uid": f"uid-{name}", "apiVersion": "v1"}
        if namespace:
            involved["namespace"] = namespace
        self.events.append(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {
                    "name": f"{name}.{len(self.events):x}",
                    "namespace": namespace or "default",
                    "uid": f"ev-{len(self.events)}",
                    "creationTimestamp": iso(at),
                },
                "involvedObject": involved,
                "reason": reason,
                "message": message,
                "source": {"component": component, **({"host": host} if host else {})},
                "firstTimestamp": iso(at),
                "lastTimestamp": iso(at),
                "count": 1,
                "type": type_,
                "eventTime": None,
            }
        )

    # --- Prometheus ---

    def gauge(
        self,
        family: str,
        labels: dict[str, str],
        points: list[tuple[datetime, float]],
        until: datetime = END,
        kind: str = "gauge",
    ) -> None:
        """A series sampled every 30 s from its first point until ``until``, holding each value until the next."""
        _kind, series = self.families.setdefault(family, (kind, {}))
        samples = series.setdefault(_labels({"job": "exporter", **labels}), [])
        ordered = sorted(points)
        at = ordered[0][0]
        while at <= until:
            value = [v for when, v in ordered if when <= at][-1]
            samples.append((at, value))
            at += STEP

    def dcgm(
        self,
        family: str,
        node: str,
        gpu: str,
        points: list[tuple[datetime, float]],
        pod: str | None = None,
        kind: str = "gauge",
        until: datetime = END,
    ) -> None:
        labels = {
            "Hostname": node,
            "UUID": f"GPU-{node}-{gpu}",
            "gpu": gpu,
            "device": f"nvidia{gpu}",
            "modelName": "NVIDIA H100 80GB HBM3",
        }
        if pod:
            labels.update({"pod": pod, "namespace": self.namespace, "container": "main"})
        self.gauge(family, labels, points, until=until, kind=kind)

    # --- logs ---

    def log(self, pod: str, node: str, at: datetime, message: str) -> None:
        self.logs.append(
            (
                "logs-k8s-2026.11.20",
                {
                    "@timestamp": at.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                    "message": message,
                    "stream": "stderr",
                    "kubernetes": {
                        "namespace": self.namespace,
                        "pod": {"name": pod, "uid": f"uid-{pod}"},
                        "node": {"name": node},
                        "container": {"name": "main"},
                        "labels": {self.label_key.replace(".", "_"): self.experiment},
                    },
                    "host": {"name": node},
                    "data_stream": {"type": "logs", "dataset": "kubernetes.container_logs", "namespace": "default"},
                },
            )
        )

    def kernel(self, node: str, at: datetime, message: str) -> None:
        self.logs.append(
            (
                "logs-node-2026.11.20",
                {
                    "@timestamp": at.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                    "message": message,
                    "host": {"name": node, "hostname": node},
                    "process": {"name": "kernel"},
                    "data_stream": {"type": "logs", "dataset": "system.syslog", "namespace": "default"},
                },
            )
        )

    # --- the folder ---

    def write(self, folder: Path) -> Path:
        (folder / "kubernetes").mkdir(parents=True, exist_ok=True)
        for name, items in (("pods", self.pods), ("events", self.events), ("nodes", self.nodes)):
            kind = {"pods": "PodList", "events": "EventList", "nodes": "NodeList"}[name]
            doc = {"apiVersion": "v1", "kind": kind, "metadata": {"resourceVersion": "1"}, "items": items}
            (folder / "kubernetes" / f"{name}.json").write_text(json.dumps(doc))
        lines = []
        for family, (typ, series) in self.families.items():
            lines.append(f"# TYPE {family} {typ}")
            for labels, samples in series.items():
                lines += [f"{family}{{{labels}}} {value:g} {int(at.timestamp())}" for at, value in samples]
        lines.append("# EOF")
        (folder / "prometheus.om.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
        bulk = []
        for index, doc in sorted(self.logs, key=lambda item: item[1]["@timestamp"]):
            bulk += [json.dumps({"create": {"_index": index}}), json.dumps(doc)]
        (folder / "logs.ndjson").write_text("\n".join(bulk) + "\n")
        return folder
