"""Log documents as each real shipper stores them (shared/reference real-formats.md sections 3 and 4, from the
shippers' own code, sample events and golden files): the container line, a node's kernel line and an archived
Event, each with the index name the shipper writes by default.

Filebeat (the default, written by ``BulkWriter``'s fast path) and these: Elastic Agent (ECS container logs,
journald through the system integration, Events in Metricbeat's snake_case metrics data stream), Fluent Bit
(kubernetes filter, systemd input, kubernetes_events input), Fluentd (kubernetes_metadata filter, syslog file with
the printk uptime prefix, kubernetes-event-exporter), Vector (kubernetes_logs and journald sources, bulk mode's
``timestamp``), the OpenTelemetry Collector's Elasticsearch exporter in ``otel`` mode (``resource.attributes``,
``body.text``, a kern.log file line) and its OpenSearch exporter (SS4O: a flat ``resource`` map, ``body`` text).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from synth.kube import container_id, machine_id
from synth.spec import Node, Pod, iso_ms

Doc = dict[str, Any]
Indexed = tuple[str, Doc]
SEVERITY_NUMBER = {"emerg": 0, "alert": 1, "crit": 2, "err": 3, "warning": 4, "notice": 5, "info": 6, "debug": 7}


def day(t: datetime) -> str:
    """The date suffix of daily indices (logstash-YYYY.MM.DD)."""
    return t.strftime("%Y.%m.%d")


def _uptime(node: Node, t: datetime) -> str:
    """The printk stamp a syslog file keeps in front of a kernel line: seconds since the node booted."""
    return f"[{(t - node.created).total_seconds():12.6f}]"


def _syslog_line(node: Node, t: datetime, message: str) -> str:
    return f"{t.strftime('%b %e %H:%M:%S')} {node.name} kernel: {_uptime(node, t)} {message}"


def _log_path(pod: Pod) -> str:
    return f"/var/log/pods/{pod.namespace}_{pod.name}_{pod.uid}/{pod.container}/0.log"


def _journald(node: Node, message: str, severity: str) -> Doc:
    """A kernel record as journald holds it (the keys Fluent Bit's systemd input forwards as-is)."""
    return {
        "PRIORITY": str(SEVERITY_NUMBER.get(severity, 3)),
        "SYSLOG_FACILITY": "0",
        "SYSLOG_IDENTIFIER": "kernel",
        "_TRANSPORT": "kernel",
        "_HOSTNAME": node.name,
        "_MACHINE_ID": machine_id(node.name),
        "MESSAGE": message,
    }


# --- container lines -------------------------------------------------------------------------------------------


def _agent_container(pod: Pod, t: datetime, message: str, stream: str) -> Indexed:
    node = pod.node.name if pod.node else ""
    doc = {
        "@timestamp": iso_ms(t),
        "message": message,
        "stream": stream,
        "kubernetes": {
            "namespace": pod.namespace,
            "pod": {"name": pod.name, "uid": pod.uid, "ip": pod.ip},
            "node": {"name": node, "hostname": node},
            "container": {"name": pod.container},
            "labels": {k.replace(".", "_"): v for k, v in sorted(pod.labels.items())},
        },
        "container": {"id": container_id(pod, len(pod.runs)), "runtime": "containerd"},
        "log": {"file": {"path": _log_path(pod)}, "offset": 3673},
        "input": {"type": "filestream"},
        "host": {"hostname": node},
        "data_stream": {"namespace": "default", "type": "logs", "dataset": "kubernetes.container_logs"},
        "ecs": {"version": "8.0.0"},
    }
    return "logs-kubernetes.container_logs-default", doc


def _fluent_kubernetes(pod: Pod) -> Doc:
    """The kubernetes filter's (and kubernetes_metadata's) record: label keys keep their dots."""
    return {
        "pod_name": pod.name,
        "namespace_name": pod.namespace,
        "pod_id": pod.uid,
        "labels": dict(sorted(pod.labels.items())),
        "host": pod.node.name if pod.node else "",
        "container_name": pod.container,
        "docker_id": container_id(pod, len(pod.runs)),
        "container_image": pod.image,
    }


def _fluent_bit_container(pod: Pod, t: datetime, message: str, stream: str) -> Indexed:
    doc = {
        "@timestamp": iso_ms(t),
        "time": iso_ms(t),
        "stream": stream,
        "logtag": "F",
        "log": message,
        "kubernetes": _fluent_kubernetes(pod),
    }
    return f"logstash-{day(t)}", doc


def _fluentd_container(pod: Pod, t: datetime, message: str, stream: str) -> Indexed:
    kubernetes = _fluent_kubernetes(pod)
    kubernetes.pop("docker_id")
    doc = {
        "@timestamp": iso_ms(t),
        "log": message + "\n",
        "stream": stream,
        "docker": {"container_id": container_id(pod, len(pod.runs))},
        "kubernetes": kubernetes,
    }
    return f"logstash-{day(t)}", doc


def _vector_container(pod: Pod, t: datetime, message: str, stream: str) -> Indexed:
    doc = {
        "file": _log_path(pod),
        "kubernetes": {
            "container_id": f"containerd://{container_id(pod, len(pod.runs))}",
            "container_image": pod.image,
            "container_name": pod.container,
            "pod_ip": pod.ip,
            "pod_labels": dict(sorted(pod.labels.items())),
            "pod_name": pod.name,
            "pod_namespace": pod.namespace,
            "pod_node_name": pod.node.name if pod.node else "",
            "pod_uid": pod.uid,
        },
        "message": message,
        "source_type": "kubernetes_logs",
        "stream": stream,
        "timestamp": iso_ms(t),
    }
    return f"vector-{day(t)}", doc


def _k8s_resource(pod: Pod) -> Doc:
    """k8sattributes' resource attributes, pod labels under ``k8s.pod.labels.<key>``."""
    resource = {
        "k8s.pod.name": pod.name,
        "k8s.pod.uid": pod.uid,
        "k8s.container.name": pod.container,
        "k8s.container.restart_count": str(max(len(pod.runs) - 1, 0)),
        "k8s.namespace.name": pod.namespace,
        "k8s.node.name": pod.node.name if pod.node else "",
    }
    resource.update({f"k8s.pod.labels.{k}": v for k, v in sorted(pod.labels.items())})
    return resource


def _otel_container(pod: Pod, t: datetime, message: str, stream: str) -> Indexed:
    doc = {
        "@timestamp": iso_ms(t),
        "observed_timestamp": iso_ms(t),
        "data_stream": {"type": "logs", "dataset": "generic.otel", "namespace": "default"},
        "attributes": {"log.iostream": stream, "log.file.path": _log_path(pod), "logtag": "F"},
        "resource": {"attributes": _k8s_resource(pod)},
        "scope": {"name": "filelog"},
        "body": {"text": message},
    }
    return "logs-generic.otel-default", doc


def _ss4o_container(pod: Pod, t: datetime, message: str, stream: str) -> Indexed:
    doc = {
        "@timestamp": iso_ms(t),
        "observedTimestamp": iso_ms(t),
        "attributes": {"log.iostream": stream, "log.file.path": _log_path(pod)},
        "body": message,
        "resource": _k8s_resource(pod),
        "instrumentationScope": {"name": "filelog"},
        "severity": {"text": "", "number": 0},
    }
    return "ss4o_logs-default-namespace", doc


# --- a node's kernel lines -------------------------------------------------------------------------------------


def _agent_kernel(node: Node, t: datetime, message: str, severity: str) -> Indexed:
    """journald through Elastic Agent's system integration: the pipeline keeps numeric syslog fields and
    ``host.hostname``, and drops journald's own keys."""
    doc = {
        "@timestamp": iso_ms(t),
        "message": message,
        "host": {"hostname": node.name, "id": machine_id(node.name)},
        "log": {"syslog": {"priority": SEVERITY_NUMBER.get(severity, 3), "facility": {"code": 0}}},
        "process": {"name": "kernel"},
        "input": {"type": "journald"},
        "data_stream": {"namespace": "default", "type": "logs", "dataset": "system.syslog"},
    }
    return "logs-system.syslog-default", doc


def _fluent_bit_kernel(node: Node, t: datetime, message: str, severity: str) -> Indexed:
    return f"logstash-{day(t)}", {"@timestamp": iso_ms(t), **_journald(node, message, severity)}


def _fluentd_kernel(node: Node, t: datetime, message: str, severity: str) -> Indexed:
    """in_tail over /var/log/kern.log with the syslog parser: the printk uptime stays in the message."""
    doc = {"@timestamp": iso_ms(t), "host": node.name, "ident": "kernel", "message": f"{_uptime(node, t)} {message}"}
    return f"logstash-{day(t)}", doc


def _vector_kernel(node: Node, t: datetime, message: str, severity: str) -> Indexed:
    doc = {
        "timestamp": iso_ms(t),
        "message": message,
        "host": node.name,
        "source_type": "journald",
        "PRIORITY": str(SEVERITY_NUMBER.get(severity, 3)),
        "SYSLOG_IDENTIFIER": "kernel",
        "_TRANSPORT": "kernel",
    }
    return f"vector-{day(t)}", doc


def _otel_kernel(node: Node, t: datetime, message: str, severity: str) -> Indexed:
    doc = {
        "@timestamp": iso_ms(t),
        "observed_timestamp": iso_ms(t),
        "data_stream": {"type": "logs", "dataset": "generic.otel", "namespace": "default"},
        "attributes": {"log.file.path": "/var/log/kern.log"},
        "resource": {"attributes": {"host.name": node.name, "os.type": "linux"}},
        "body": {"text": _syslog_line(node, t, message)},
    }
    return "logs-generic.otel-default", doc


def _ss4o_kernel(node: Node, t: datetime, message: str, severity: str) -> Indexed:
    doc = {
        "@timestamp": iso_ms(t),
        "observedTimestamp": iso_ms(t),
        "attributes": {"log.file.path": "/var/log/kern.log"},
        "body": _syslog_line(node, t, message),
        "resource": {"host.name": node.name},
    }
    return "ss4o_logs-default-namespace", doc


# --- archived Events -------------------------------------------------------------------------------------------

Labels = Callable[[str, str], Mapping[str, Any]]  # (kind, name) -> the object's labels and owner references


def _fluent_bit_event(event: Doc, t: datetime, about: Labels) -> Indexed:
    """Fluent Bit's kubernetes_events input: the Event object, @timestamp from last, first, then creation time."""
    return f"kube-events-{day(t)}", {**event, "@timestamp": iso_ms(t)}


def _event_exporter_event(event: Doc, t: datetime, about: Labels) -> Indexed:
    """kubernetes-event-exporter's EnhancedEvent: the Event inline, ``clusterName``, the involved object's labels,
    owner references and ``deleted``; no @timestamp."""
    involved = dict(event.get("involvedObject") or {})
    involved.update(about(str(involved.get("kind")), str(involved.get("name"))))
    involved.setdefault("deleted", False)
    return f"kube-events-{day(t)}", {**event, "clusterName": "training", "involvedObject": involved}


def _metricbeat_event(event: Doc, t: datetime, about: Labels) -> Indexed:
    """Metricbeat / Elastic Agent kubernetes.event (beats metricbeat/module/kubernetes/event/event.go), with the
    Agent pipeline's ``kubernetes.namespace.name``."""
    involved = event.get("involvedObject") or {}
    meta = event.get("metadata") or {}
    source = event.get("source") or {}
    first = event.get("firstTimestamp") or event.get("eventTime") or meta.get("creationTimestamp")
    last = event.get("lastTimestamp") or first
    doc = {
        "@timestamp": iso_ms(t),
        "kubernetes": {
            "event": {
                "count": event.get("count") or 1,
                "involved_object": {
                    "api_version": involved.get("apiVersion"),
                    "kind": involved.get("kind"),
                    "name": involved.get("name"),
                    "resource_version": involved.get("resourceVersion", ""),
                    "uid": involved.get("uid", ""),
                },
                "message": event.get("message"),
                "metadata": {
                    "name": meta.get("name"),
                    "namespace": meta.get("namespace"),
                    "resource_version": meta.get("resourceVersion"),
                    "timestamp": {"created": meta.get("creationTimestamp")},
                    "uid": meta.get("uid"),
                },
                "reason": event.get("reason"),
                "source": {
                    "component": source.get("component") or event.get("reportingComponent") or "",
                    "host": source.get("host") or "",
                },
                "timestamp": {"first_occurrence": first, "last_occurrence": last},
                "type": event.get("type"),
            },
            "namespace": {"name": meta.get("namespace")},
        },
        "metricset": {"name": "event"},
        "event": {"dataset": "kubernetes.event", "module": "kubernetes"},
        "data_stream": {"type": "metrics", "dataset": "kubernetes.event", "namespace": "default"},
    }
    return "metrics-kubernetes.event-default", doc


@dataclass(frozen=True)
class Shipper:
    name: str
    container: Callable[[Pod, datetime, str, str], Indexed]
    kernel: Callable[[Node, datetime, str, str], Indexed]
    event: Callable[[Doc, datetime, Labels], Indexed]


SHIPPERS: dict[str, Shipper] = {
    s.name: s
    for s in (
        Shipper("elastic-agent", _agent_container, _agent_kernel, _metricbeat_event),
        Shipper("fluent-bit", _fluent_bit_container, _fluent_bit_kernel, _fluent_bit_event),
        Shipper("fluentd", _fluentd_container, _fluentd_kernel, _event_exporter_event),
        Shipper("vector", _vector_container, _vector_kernel, _event_exporter_event),
        Shipper("otel", _otel_container, _otel_kernel, _event_exporter_event),
        Shipper("ss4o", _ss4o_container, _ss4o_kernel, _event_exporter_event),
    )
}
