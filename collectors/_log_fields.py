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

from collections.abc import Mapping
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
        host=("host.name",),
    ),
    "fluent-bit": FieldMapping(
        name="fluent-bit",
        timestamp=("@timestamp", "time"),
        message=("log", "message"),
        pod="kubernetes.pod_name",
        namespace="kubernetes.namespace_name",
        node="kubernetes.host",
        container="kubernetes.container_name",
        labels="kubernetes.labels",
        host=("hostname", "host", "host.name", "_HOSTNAME"),  # record_modifier, syslog parser, ECS, systemd
    ),
}


def mapping_for(preset: str, overrides: Mapping[str, Any] | None = None) -> FieldMapping:
    """A preset by name (``ecs``, ``fluent-bit``), with any fields replaced (``{"pod": "k8s.pod"}``)."""
    base = PRESETS.get(preset.strip().lower().replace("_", "-")) if isinstance(preset, str) else None
    if base is None:
        raise ConfigError(f"unknown log field preset {preset!r}; use one of {', '.join(PRESETS)}")
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


def host_of(doc: Mapping[str, Any], mapping: FieldMapping) -> str | None:
    for path in mapping.host:
        name = name_of(doc, path)
        if name:
            return name
    return None


def label_value(doc: Mapping[str, Any], mapping: FieldMapping, key: str) -> str | None:
    for path in mapping.label_fields(key):
        name = name_of(doc, path)
        if name:
            return name
    return None


def is_event_document(doc: Mapping[str, Any]) -> bool:
    """An archived Kubernetes Event (kubernetes-event-exporter writes the event object as the document)."""
    regarding = doc.get("involvedObject") or doc.get("regarding")
    return isinstance(regarding, Mapping) and "reason" in doc


def shorten(value: str, limit: int = 300) -> str:
    """One line for a summary or an attribute: first line only, at most ``limit`` characters."""
    line = value.strip().split("\n", 1)[0].strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"
