"""PromQL text: anchored alternations, quoting, metric-name tagging, ``or`` lists split under the servers'
limits, and label matchers for the scope's GPUs, nodes and pods. Pure string building, no I/O."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType

METRIC = "__metric"  # the series' metric name, which functions and comparisons would drop
OLD = "__old"  # marks the values just before CHANGE edges, answered with the edges themselves
# dcgm-exporter's node labels, then the ones relabelling adds (the GPU Operator's documented relabelling writes the
# node's name into instance); the first that names the scope's nodes is used
DCGM_NODE_LABELS = ("Hostname", "hostname", "node", "kubernetes_node", "nodename", "nodeName", "instance")
MAX_QUERY_CHARS = 15_000  # VictoriaMetrics refuses queries over 16 KiB by default


def regex_union(values: Iterable[str]) -> str:
    """An alternation (PromQL anchors it), with the common prefix factored out to keep the query short."""
    names = sorted(set(values))
    if not names:
        return "$^"  # matches nothing
    prefix = _common_prefix(names)
    rest = [escape(n[len(prefix) :]) for n in names]
    if len(rest) == 1:
        return escape(prefix) + rest[0]
    return f"{escape(prefix)}(?:{'|'.join(rest)})"


SHORT_MATCHER = 2_000  # longer alternations may be replaced by a shorter superset (a names' prefix, nodes)


def names_matcher(label: str, values: Iterable[str], wide: bool = False) -> str:
    """``label=~`` these values; ``wide``: a long list by its common prefix instead (a superset the caller
    filters): Prometheus tries a factored alternation on every value of the label, a second of a three-second
    query at 4,096 nodes, and a prefix for free."""
    names = sorted(set(values))
    exact = f"{label}=~{quote(regex_union(names))}"
    if wide and len(exact) > SHORT_MATCHER and len(prefix := _common_prefix(names)) >= 8:
        return f"{label}=~{quote(escape(prefix) + '.+')}"
    return exact


def escape(text: str) -> str:
    """RE2-safe escaping that leaves '-' alone (it needs none outside a class, and shorter is better here)."""
    return re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", text)


def _common_prefix(names: Sequence[str]) -> str:
    """The characters every name begins with, as the log queries find it (names, not paths)."""
    return os.path.commonprefix(list(names))  # noqa: RUF071


def quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def named(expr: str, metric: str | None = None) -> str:
    """Copy the metric name into ``__metric`` (or set a given one) so it survives functions and matching."""
    if metric is None:
        return f'label_replace({expr}, "{METRIC}", "$1", "__name__", "(.+)")'
    return f'label_replace({expr}, "{METRIC}", "{metric}", "__name__", ".*")'


def chunked_or(parts: Sequence[str], limit: int = MAX_QUERY_CHARS, pieces: int = 1) -> list[str]:
    """``a or b or c`` as at least ``pieces`` queries (so the server can work on them at once), each under
    ``limit`` characters."""
    groups: list[list[str]] = [[] for _ in range(max(1, min(pieces, len(parts))))]
    for index, part in enumerate(parts):
        groups[index % len(groups)].append(part)
    queries: list[str] = []
    for group in groups:
        current: list[str] = []
        for part in group:
            if current and len(" or ".join([*current, part])) > limit:
                queries.append(" or ".join(current))
                current = []
            current.append(part)
        if current:
            queries.append(" or ".join(current))
    return queries


@dataclass(frozen=True)
class Spelling:
    """How this server's series spell what the queries select by (the answers are read back in the canonical
    spelling, ``model.canonical_labels``): dcgm-exporter's node label; the workload's namespace and pod on
    kube-state-metrics series (``exported_*`` when a ServiceMonitor scrapes it without honorLabels, the
    standalone chart's default); the GPU's UUID label (``uuid`` under dcgm-exporter's --use-old-namespace); and
    dcgm-exporter's metric names (its 1.x-compatibility names, canonical name -> this server's); and, where the
    exporter writes its own pod's name into its node label (an older GPU Operator, not relabelled), the name it
    gives each node (``hosts``: node -> exporter pod, found through kube-state-metrics)."""

    node_label: str = "Hostname"
    workload: tuple[str, str] = ("namespace", "pod")
    uuid: str = "UUID"
    names: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    hosts: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), hash=False)

    def name(self, metric: str) -> str:
        return self.names.get(metric, metric)

    def hosts_of(self, nodes: Iterable[str]) -> list[str]:
        """What the exporter's node label says for these nodes."""
        return [self.hosts.get(node, node) for node in nodes]

    @cached_property
    def nodes_by_host(self) -> Mapping[str, str]:
        """The inverse of ``hosts``: exporter pod -> node (made once, read for every answer)."""
        return MappingProxyType({host: node for node, host in self.hosts.items()})

    def on_node_label(self, label: str) -> Spelling:
        return replace(self, node_label=label)

    @property
    def pod_by(self) -> str:
        """The workload's labels as a ``by (...)`` list."""
        return ", ".join(self.workload)


def placed(labels: Mapping[str, str], nodes_by_host: Mapping[str, str]) -> Mapping[str, str]:
    """Labels whose node label holds an exporter's pod name (an older GPU Operator, not relabelled) with the name
    of the node that pod runs on (``nodes_by_host``); the same mapping when none does."""
    if not nodes_by_host:
        return labels
    moved = {k: nodes_by_host[v] for k, v in labels.items() if k in DCGM_NODE_LABELS and v in nodes_by_host}
    return MappingProxyType({**labels, **moved}) if moved else labels


CANONICAL = Spelling()
EXPORTED_WORKLOAD = ("exported_namespace", "exported_pod")


@dataclass(frozen=True)
class Selectors:
    """Label matchers: dcgm series by node label (or flagged UUIDs), pod series by namespace+pod, node series by
    node, each in this server's spelling."""

    nodes: tuple[str, ...]
    pods: tuple[tuple[str, str], ...]
    spelling: Spelling = CANONICAL
    uuids: tuple[str, ...] = ()
    wide: bool = False  # many nodes matched by their names' prefix: answers must be filtered by node

    @property
    def node_label(self) -> str:
        return self.spelling.node_label

    def gpu(self, names: str, extra: str = "", by_uuid: bool = False) -> str:
        """``names``: one canonical metric name (spelt as this exporter names it) or a regex of names."""
        where = (
            f"{self.spelling.uuid}=~{quote(regex_union(self.uuids))}"
            if by_uuid
            else names_matcher(self.node_label, self.spelling.hosts_of(self.nodes), self.wide)
        )
        names = self.spelling.name(names)
        return "{" + ",".join(p for p in (f'__name__=~"{names}"', where, extra) if p) + "}"

    def pod(self, names: str, extra: str = "") -> str:
        namespace, pod = self.spelling.workload
        namespaces = quote(regex_union(ns for ns, _ in self.pods))
        pods = quote(regex_union(name for _, name in self.pods))
        return (
            "{"
            + ",".join(p for p in (f'__name__=~"{names}"', f"{namespace}=~{namespaces}", f"{pod}=~{pods}", extra) if p)
            + "}"
        )

    def node(self, names: str, extra: str = "") -> str:
        return (
            "{"
            + ",".join(p for p in (f'__name__=~"{names}"', names_matcher("node", self.nodes, self.wide), extra) if p)
            + "}"
        )
