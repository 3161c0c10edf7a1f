"""Where log shippers put things: field-mapping presets and safe accessors for log-store documents.

Filebeat / Elastic Agent write ECS (``kubernetes.pod.name``, ``message``, label keys with dots as ``_``);
Fluent Bit's kubernetes filter writes ``kubernetes.pod_name``, ``log`` and, through the Elasticsearch output's
``Replace_Dots``, the same ``_`` label keys (without it, Elasticsearch expands the dots into objects, which the
path lookup below also reads). A document may hold a field nested (``{"kubernetes": {"pod": ...}}``) or flat
(``{"kubernetes.pod.name": ...}``) or mixed; ``get_path`` reads all three.

Documents come from the outside world: values can be of any JSON type and any size, and nothing here raises on
them.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Any, TypeGuard

from whathappened.errors import ConfigError
from whathappened.timeutils import parse_timestamp

MAX_TEXT = 64 * 1024  # what of a huge line is examined: its head and tail (errors sit at either end)


# Where the node agents whose words are evidence about a node's pods run: aws-node-termination-handler and the
# cloud monitors (kube-system), Karpenter, NVIDIA's GPU operator (device plugin, DCGM exporter, driver) and the
# health agents (NVSentinel, gpud). Their lines on the experiment's nodes are read as the node's own.
AGENT_NAMESPACES: frozenset[str] = frozenset(
    {"kube-system", "karpenter", "gpu-operator", "nvidia-gpu-operator", "nvsentinel", "gpud", "node-problem-detector"}
)


@dataclass(frozen=True)
class FieldMapping:
    name: str
    timestamp: tuple[str, ...]  # first present wins
    message: tuple[str, ...]
    pod: str
    namespace: str
    node: str  # the node of a container log document
    container: str
    labels: str  # prefix under which pod labels sit
    host: tuple[str, ...]  # the node of a node (kernel/syslog) document
    label_dots: str = "_"  # what the shipper writes for a dot in a label key ("" keeps dots)

    def label_fields(self, key: str) -> tuple[str, ...]:
        """The document fields a pod label may sit in: shipper-sanitized first, then as-is."""
        sanitized = key.replace(".", self.label_dots) if self.label_dots else key
        found = [f"{self.labels}.{sanitized}"]
        if sanitized != key:
            found.append(f"{self.labels}.{key}")
        return tuple(found)

    @property
    def message_field(self) -> str:
        return self.message[0]


# What each shipper writes (real-formats.md section 3): where the pod, its namespace, node and container, the line
# and its time sit, and how label keys are spelled. Filebeat, Elastic Agent and the OpenTelemetry exporter's ECS
# mode share "ecs"; Fluentd's kubernetes_metadata filter writes what Fluent Bit's kubernetes filter writes.
# Node (kernel/syslog) documents carry no pod field: their host is read from every spelling the shippers use.
PRESETS: Mapping[str, FieldMapping] = {
    "ecs": FieldMapping(
        name="ecs",
        timestamp=("@timestamp",),
        message=("message",),
        pod="kubernetes.pod.name",
        namespace="kubernetes.namespace",
        node="kubernetes.node.name",
        container="kubernetes.container.name",
        labels="kubernetes.labels",
        # journald and file syslog: host.name may be the agent's container, host.hostname is the machine
        host=("host.hostname", "host.name"),
    ),
    "fluent-bit": FieldMapping(
        name="fluent-bit",
        timestamp=("@timestamp", "time"),
        message=("log", "message", "MESSAGE"),  # docker/multiline parsers, the cri regex parser, systemd input
        pod="kubernetes.pod_name",
        namespace="kubernetes.namespace_name",
        node="kubernetes.host",
        container="kubernetes.container_name",
        labels="kubernetes.labels",
        host=("hostname", "host", "host.name", "_HOSTNAME"),  # record_modifier, syslog parser, ECS, systemd
    ),
    "vector": FieldMapping(
        name="vector",
        timestamp=("timestamp", "@timestamp"),  # bulk mode keeps "timestamp"; data_stream mode writes @timestamp
        message=("message",),
        pod="kubernetes.pod_name",
        namespace="kubernetes.pod_namespace",
        node="kubernetes.pod_node_name",
        container="kubernetes.container_name",
        labels="kubernetes.pod_labels",
        host=("host", "hostname", "host.name"),
        label_dots="",
    ),
    "otel": FieldMapping(
        name="otel",
        timestamp=("@timestamp", "timestamp"),
        message=("body.text", "body.structured.message", "body"),
        pod="resource.attributes.k8s.pod.name",
        namespace="resource.attributes.k8s.namespace.name",
        node="resource.attributes.k8s.node.name",
        container="resource.attributes.k8s.container.name",
        labels="resource.attributes.k8s.pod.labels",
        host=("resource.attributes.host.name", "resource.attributes.k8s.node.name", "host.hostname", "host.name"),
        label_dots="",
    ),
    "ss4o": FieldMapping(  # the OpenSearch exporter's Simple Schema for Observability: flat resource map
        name="ss4o",
        timestamp=("@timestamp", "observedTimestamp"),
        message=("body",),
        pod="resource.k8s.pod.name",
        namespace="resource.k8s.namespace.name",
        node="resource.k8s.node.name",
        container="resource.k8s.container.name",
        labels="resource.k8s.pod.labels",
        host=("resource.host.name", "resource.k8s.node.name"),
        label_dots="",
    ),
}
ALIASES: Mapping[str, str] = {"filebeat": "ecs", "elastic-agent": "ecs", "fluentd": "fluent-bit", "opensearch": "ss4o"}
AUTO = "auto"
# A document's shipper is the first preset whose pod and namespace fields it has (the pairs are distinct).
DETECTION_ORDER: tuple[str, ...] = ("ecs", "fluent-bit", "vector", "otel", "ss4o")


def preset_choices() -> str:
    """The ``--log-preset`` values as the help text and the docs list them: "auto | ecs | ... (aliases ...)"."""
    aliases = ", ".join(f"{alias}={name}" for alias, name in ALIASES.items())
    return " | ".join([AUTO, *PRESETS]) + f" (aliases {aliases})"


def _union(values: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for group in values for v in group))


# A node's own document (kernel, journald, syslog) in any shipper's shape: every spelling of time, text and host.
NODE_MAPPING = replace(
    PRESETS["ecs"],
    name="node",
    timestamp=_union(m.timestamp for m in PRESETS.values()),
    message=_union(m.message for m in PRESETS.values()),
    host=_union(m.host for m in PRESETS.values()),
)


def detect(doc: Mapping[str, Any]) -> FieldMapping | None:
    """The preset whose pod and namespace fields this document has; None for a node's own document."""
    for name in DETECTION_ORDER:
        preset = PRESETS[name]
        if get_path(doc, preset.pod) is not None and get_path(doc, preset.namespace) is not None:
            return preset
    return None


@dataclass(frozen=True)
class Reading:
    """How documents are read: one mapping the user chose (``--log-preset``), or each document by its own shape
    (``auto``: its shipper detected from its fields, a node's own document by any shipper's spelling)."""

    fixed: FieldMapping | None = None

    @property
    def name(self) -> str:
        return self.fixed.name if self.fixed is not None else AUTO

    def for_doc(self, doc: Mapping[str, Any]) -> FieldMapping:
        if self.fixed is not None:
            return self.fixed
        return detect(doc) or NODE_MAPPING

    def presets(self) -> tuple[FieldMapping, ...]:
        """The mappings the store may hold: the chosen one, or every preset."""
        return (self.fixed,) if self.fixed is not None else tuple(PRESETS[n] for n in DETECTION_ORDER)


def as_reading(reading: Reading | FieldMapping) -> Reading:
    return reading if isinstance(reading, Reading) else Reading(reading)


def preset_name(preset: str) -> str | None:
    """The canonical preset name for a user's spelling (``Fluent_Bit``, ``fluentd``), ``auto``, or None."""
    if not isinstance(preset, str):
        return None
    name = preset.strip().lower().replace("_", "-")
    name = ALIASES.get(name, name)
    return name if name in PRESETS or name == AUTO else None


def reading_for(preset: str, overrides: Mapping[str, Any] | None = None) -> Reading:
    """``auto`` (each document by its shape) or one preset, with any fields replaced."""
    if preset_name(preset) == AUTO and not overrides:
        return Reading()
    return Reading(mapping_for(preset, overrides))


def mapping_for(preset: str, overrides: Mapping[str, Any] | None = None) -> FieldMapping:
    """A preset by name (``ecs``, ``fluent-bit``, ``vector``, ``otel``, ``ss4o``; aliases ``filebeat``,
    ``elastic-agent``, ``fluentd``, ``opensearch``), with any fields replaced (``{"pod": "k8s.pod"}``);
    ``auto`` with overrides starts from ``ecs``."""
    name = preset_name(preset)
    if name is None:
        choices = ", ".join([AUTO, *PRESETS, *ALIASES])
        raise ConfigError(f"unknown log field preset {preset!r}; use one of {choices}")
    base = PRESETS["ecs" if name == AUTO else name]
    if not overrides:
        return base
    known = {f.name: f for f in fields(FieldMapping)}
    changes: dict[str, Any] = {}
    for key, value in overrides.items():
        if key not in known or key == "name":
            raise ConfigError(f"unknown log field mapping setting {key!r}")
        tupled = isinstance(getattr(base, key), tuple)
        changes[key] = (value,) if tupled and isinstance(value, str) else tuple(value) if tupled else str(value)
    return replace(base, name=f"{base.name}+custom", **changes)


def get_path(doc: Any, path: str) -> Any:
    """``a.b.c`` in a nested, flat-dotted or mixed document; None where absent."""
    if not _is_mapping(doc):
        return None
    if path in doc:
        return doc[path]
    return _walk(doc, path.split("."), 0)


def _walk(doc: Mapping[str, Any], parts: list[str], start: int) -> Any:
    """The value at ``parts[start:]`` under ``doc``, the keys split at any dot (shortest head first)."""
    head = parts[start]
    for cut in range(start + 1, len(parts)):
        inner = doc.get(head)
        if _is_mapping(inner):
            rest = ".".join(parts[cut:])
            found = inner[rest] if rest in inner else _walk(inner, parts, cut)
            if found is not None:
                return found
        head = f"{head}.{parts[cut]}"
    return None


def _is_mapping(value: Any) -> TypeGuard[Mapping[str, Any]]:
    # dict first: documents are parsed JSON, and the ABC check costs most of a lookup
    return type(value) is dict or isinstance(value, Mapping)


def set_path(doc: dict[str, Any], path: str, value: Any) -> None:
    """Write ``value`` at ``a.b.c`` as nested objects (how the shippers' documents look)."""
    *parents, last = path.split(".")
    for part in parents:
        doc = doc.setdefault(part, {})
    doc[last] = value


def text_of(value: Any) -> str:
    """Any JSON value as text, never raising; long text keeps its head and tail."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    elif isinstance(value, list):
        value = "\n".join(text_of(v) for v in value)
    elif not isinstance(value, str):
        value = str(value)
    if len(value) > MAX_TEXT:
        half = MAX_TEXT // 2
        value = f"{value[:half]}\n…\n{value[-half:]}"
    return value.rstrip("\n")


def name_of(doc: Mapping[str, Any], path: str) -> str | None:
    value = get_path(doc, path)
    if isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) and value else None


def message_of(doc: Mapping[str, Any], mapping: FieldMapping) -> str:
    for path in mapping.message:
        value = get_path(doc, path)
        if value is not None:
            return text_of(value)
    return ""


def time_of(doc: Mapping[str, Any], mapping: FieldMapping) -> datetime | None:
    for path in mapping.timestamp:
        at = timestamp_of(get_path(doc, path))
        if at is not None:
            return at
    return None


def timestamp_of(value: Any) -> datetime | None:
    """A document's time value, or None: also for numbers no clock holds (``1e300``), on which the lenient
    parser's ``datetime.fromtimestamp`` raises."""
    if value is None or isinstance(value, bool | Mapping | list):
        return None
    try:
        return parse_timestamp(value)
    except (OverflowError, OSError, ValueError):
        return None


def host_of(doc: Mapping[str, Any], mapping: FieldMapping, among: Set[str] | None = None) -> str | None:
    """The node a node document is about: the first host spelling that names one of ``among`` (an agent may
    write its own container's name into ``host.name``), else the first present."""
    first = None
    for path in mapping.host:
        name = name_of(doc, path)
        if name:
            if among is None or name in among:
                return name
            first = first or name
    return first


def label_value(doc: Mapping[str, Any], mapping: FieldMapping, key: str) -> str | None:
    for path in mapping.label_fields(key):
        name = name_of(doc, path)
        if name:
            return name
    return None


def event_of(doc: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """An archived Kubernetes Event in the API's own shape, or None. kubernetes-event-exporter and Fluent Bit's
    kubernetes_events input store the Event object itself (core/v1 ``involvedObject`` or events.k8s.io/v1
    ``regarding``); Metricbeat and Elastic Agent store it snake_case under ``kubernetes.event``, which is read
    back into the API's field names."""
    regarding = doc.get("involvedObject") or doc.get("regarding")
    if _is_mapping(regarding) and "reason" in doc:
        return doc
    event = get_path(doc, "kubernetes.event")
    if not _is_mapping(event) or not _is_mapping(event.get("involved_object")) or "reason" not in event:
        return None
    return _api_event(doc, event)


def _mapping_at(doc: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = doc.get(key)
    return value if _is_mapping(value) else {}


def _api_event(doc: Mapping[str, Any], event: Mapping[str, Any]) -> dict[str, Any]:
    """Metricbeat's ``kubernetes.event`` (beats ``metricbeat/module/kubernetes/event/event.go``) as core/v1."""
    involved = event["involved_object"]
    meta = _mapping_at(event, "metadata")
    namespace = (
        name_of(meta, "namespace")
        or name_of(doc, "kubernetes.namespace.name")  # Elastic Agent's pipeline renames it
        or name_of(doc, "kubernetes.namespace")
    )
    obj: dict[str, Any] = {
        "kind": involved.get("kind"),
        "name": involved.get("name"),
        "namespace": namespace,
        "uid": involved.get("uid"),
        "apiVersion": involved.get("api_version"),
    }
    source = _mapping_at(event, "source")
    return {
        "metadata": {
            "name": meta.get("name"),
            "namespace": namespace,
            "uid": meta.get("uid"),
            "creationTimestamp": get_path(meta, "timestamp.created"),
        },
        "involvedObject": {k: v for k, v in obj.items() if v is not None},
        "reason": event.get("reason"),
        "message": event.get("message"),
        "type": event.get("type"),
        "count": event.get("count"),
        "source": {"component": source.get("component"), "host": source.get("host") or None},
        "firstTimestamp": get_path(event, "timestamp.first_occurrence"),
        "lastTimestamp": get_path(event, "timestamp.last_occurrence"),
    }


def shorten(value: str, limit: int = 300) -> str:
    """One line for a summary or an attribute: first line only, at most ``limit`` characters."""
    line = value.strip().split("\n", 1)[0].strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"
