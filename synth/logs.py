"""Elasticsearch bulk NDJSON as Filebeat ships it (other shippers: ``shippers``): container logs (logs-k8s-*), kernel logs (logs-node-*) and
archived Kubernetes events (kube-events-*), each document in ECS fields.

Per-pod and per-node JSON tails are rendered once, so writing a million documents is string concatenation.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import IO, Any

from synth.kube import container_id
from synth.shippers import SHIPPERS, Labels
from synth.shippers import day as _day
from synth.spec import Node, Pod, iso_ms

FILEBEAT = "filebeat"


def _dedot(key: str) -> str:
    """Filebeat's add_kubernetes_metadata writes label keys with dots replaced: training_kubeflow_org/job-name."""
    return key.replace(".", "_")


class BulkWriter:
    """Filebeat's documents by default; ``shipper`` names another shape (``shippers.SHIPPERS``), whose Events
    may carry the involved object's labels (``about``)."""

    def __init__(self, stream: IO[str], shipper: str = FILEBEAT, about: Labels | None = None) -> None:
        self._out = stream
        self._shipper = None if shipper == FILEBEAT else SHIPPERS[shipper]
        self._about: Labels = about or (lambda kind, name: {})
        self._pod_tails: dict[str, str] = {}
        self._node_tails: dict[tuple[str, str], str] = {}
        self.count = 0

    def _pod_tail(self, pod: Pod) -> str:
        tail = self._pod_tails.get(pod.uid)
        if tail is None:
            node = pod.node.name if pod.node else ""
            cid = container_id(pod, len(pod.runs))
            doc: dict[str, Any] = {
                "kubernetes": {
                    "namespace": pod.namespace,
                    "pod": {"name": pod.name, "uid": pod.uid, "ip": pod.ip},
                    "node": {"name": node},
                    "container": {"name": pod.container},
                    "labels": {_dedot(k): v for k, v in sorted(pod.labels.items())},
                },
                "container": {"id": cid, "runtime": "containerd", "image": {"name": pod.image}},
                "host": {"name": node},
                "log": {"file": {"path": f"/var/log/containers/{pod.name}_{pod.namespace}_{pod.container}-{cid}.log"}},
                "input": {"type": "container"},
                "ecs": {"version": "8.0.0"},
                "data_stream": {"type": "logs", "dataset": "kubernetes.container_logs", "namespace": "default"},
            }
            tail = json.dumps(doc)[1:]
            self._pod_tails[pod.uid] = tail
        return tail

    def _node_tail(self, node: Node, severity: str) -> str:
        key = (node.name, severity)
        tail = self._node_tails.get(key)
        if tail is None:
            doc = {
                "host": {"name": node.name, "hostname": node.name},
                "log": {"syslog": {"facility": {"name": "kern"}, "severity": {"name": severity}}},
                "process": {"name": "kernel"},
                "data_stream": {"type": "logs", "dataset": "system.syslog", "namespace": "default"},
                "event": {"dataset": "system.syslog", "module": "system"},
            }
            tail = json.dumps(doc)[1:]
            self._node_tails[key] = tail
        return tail

    def _write(self, indexed: tuple[str, dict[str, Any]]) -> None:
        index, doc = indexed
        self._out.write(f'{{"create": {{"_index": "{index}"}}}}\n{json.dumps(doc)}\n')
        self.count += 1

    def container(self, pod: Pod, t: datetime, message: str, stream: str = "stdout") -> None:
        if self._shipper is not None:
            return self._write(self._shipper.container(pod, t, message, stream))
        self._out.write(
            f'{{"create": {{"_index": "logs-k8s-{_day(t)}"}}}}\n'
            f'{{"@timestamp": "{iso_ms(t)}", "message": {json.dumps(message)}, "stream": "{stream}", {self._pod_tail(pod)}\n'
        )
        self.count += 1

    def write_container_raw(self, pod: Pod, stamp: str, message: str) -> None:
        """A pre-formatted time and a message known to need no JSON escaping: the scale benchmark's fast path."""
        self._out.write(
            f'{{"create": {{"_index": "logs-k8s-{stamp[:4]}.{stamp[5:7]}.{stamp[8:10]}"}}}}\n'
            f'{{"@timestamp": "{stamp}", "message": "{message}", "stream": "stdout", {self._pod_tail(pod)}\n'
        )
        self.count += 1

    def kernel(self, node: Node, t: datetime, message: str, severity: str = "err") -> None:
        if self._shipper is not None:
            return self._write(self._shipper.kernel(node, t, message, severity))
        self._out.write(
            f'{{"create": {{"_index": "logs-node-{_day(t)}"}}}}\n'
            f'{{"@timestamp": "{iso_ms(t)}", "message": {json.dumps(message)}, {self._node_tail(node, severity)}\n'
        )
        self.count += 1

    def event(self, event: dict[str, Any], t: datetime) -> None:
        if self._shipper is not None:
            return self._write(self._shipper.event(event, t, self._about))
        doc = {**event, "@timestamp": iso_ms(t)}
        self._out.write(f'{{"create": {{"_index": "kube-events-{_day(t)}"}}}}\n{json.dumps(doc)}\n')
        self.count += 1


def skewed(t: datetime, seconds: float) -> datetime:
    return t + timedelta(seconds=seconds)
