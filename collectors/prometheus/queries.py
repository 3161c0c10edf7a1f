"""PromQL for discovery and for round 1 of collection: which of the scope's series could hold an edge at all.

Pure: no I/O. Every query is limited to the scope's nodes, GPUs and pods, and kept under 15 KB (VictoriaMetrics
refuses queries over 16 KiB by default): long ``or`` lists are split into several queries.

Collection works in cheap rounds, so a quiet GPU costs nothing however long the window:
1. whole-window instant queries at the window's end (``changes()``, ``max_over_time()``, ``min_over_time()``),
   one tagged part per signal, name the GPUs and nodes that could hold an edge of *that* signal (``Targets``):
   a GPU whose utilization collapsed is not also searched for Xid edges;
2. the edges themselves, coarse to fine (``edges``);
3. last-seen times of GPUs that stopped reporting: the GPUs seen in the window come from the label-values API
   (the index, no samples read), those still there from an instant query; the others' last samples from
   ``timestamp()`` at a 5-minute step (exact: any step under the lookback sees a series' last sample).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from whathappened.collectors.prometheus.edges import Targets, pod_matcher
from whathappened.collectors.prometheus.placement import EXPORTER_POD
from whathappened.collectors.prometheus.promql import (
    CANONICAL,
    DCGM_NODE_LABELS,
    EXPORTED_WORKLOAD,
    MAX_QUERY_CHARS,
    METRIC,
    Selectors,
    Spelling,
    escape,
    named,
    names_matcher,
    quote,
    regex_union,
)
from whathappened.collectors.prometheus.series import GPU_REQUESTS, GPU_RESOURCE, sanitize_label
from whathappened.collectors.prometheus.signals import (
    EXPORTER_XIDS,
    FB_NEAR_FULL,
    LOOKBACK_S,
    PRESENCE_METRIC,
    SIGNALS,
    UTIL_COLLAPSE,
    UTIL_LOW,
    Mode,
    Where,
    fb_threshold_mib,
)
from whathappened.collectors.prometheus.util import pod_util_queries
from whathappened.collectors.prometheus.vocab import canonical_metric, every_name

from whathappened.model import Window
from whathappened.timeutils import to_unix

MIN_STEP_S = 15
# Every label a dcgm-exporter series may name its pod with (see placement.dcgm_pod): kept by aggregations.
DCGM_POD_LABELS = "pod, namespace, pod_name, pod_namespace, exported_pod, exported_namespace"
# The presence metric in every name dcgm-exporter gives it (current, 1.x-compatibility)
PRESENCE_NAMES = every_name(PRESENCE_METRIC)
PRESENCE_STEP_S = 300  # the lookback: any step up to it sees every series' last sample
MAX_POINTS = 10_000  # Prometheus refuses range queries over 11,000 points per series

__all__ = ["LOOKBACK_S", "pick_step"]


def pick_step(window_seconds: float) -> int:
    """15 s (no longer than common scrape intervals, so edges keep their sample times) or longer for long windows."""
    return max(MIN_STEP_S, math.ceil(window_seconds / MAX_POINTS / MIN_STEP_S) * MIN_STEP_S)


# --- discovery ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PodMatch:
    """The experiment's pods as PromQL: by label value (any of the keys) or by the owner's name. The keys'
    order is applied afterwards (``discover_from_series``), so these queries return every candidate's labels."""

    experiment: str
    namespace: str | None
    label_keys: tuple[str, ...]
    window: str

    def selectors(self, metric: str, extra: str = "") -> list[str]:
        """In a namespace, one selector per spelling of the workload's namespace label (``exported_namespace``
        when kube-state-metrics is scraped without honorLabels); without one, a single selector finds both."""
        spellings = (CANONICAL.workload[0], EXPORTED_WORKLOAD[0]) if self.namespace else ("",)
        return [
            "{"
            + ",".join(p for p in (f'__name__="{metric}"', ns and f"{ns}={quote(self.namespace or '')}", extra) if p)
            + "}"
            for ns in spellings
        ]

    def found(self) -> str:
        """The candidates in one query: kube_pod_labels where a key holds the experiment's name, kube_pod_info
        where the owner is named like it, each tagged with its metric in ``__metric``. Reads only their series."""
        value = quote(self.experiment)
        parts = [
            named(f"last_over_time({selector}[{self.window}])", "kube_pod_labels")
            for k in self.label_keys
            for selector in self.selectors("kube_pod_labels", f"{sanitize_label(k)}={value}")
        ]
        parts += [
            named(f"last_over_time({selector}[{self.window}])", "kube_pod_info")
            for selector in self.selectors("kube_pod_info", f"created_by_name={value}")
        ]
        return " or ".join(parts)

    def candidates(self) -> str:
        """The experiment names the pods in scope carry, when none is the one asked for."""
        by = ",".join(sanitize_label(k) for k in self.label_keys)
        found = " or ".join(f"last_over_time({s}[{self.window}])" for s in self.selectors("kube_pod_labels"))
        return f"count by ({by}) ({found})"


def _pods_selector(metric: str, pods: Sequence[tuple[str, str]], spelling: Spelling) -> str:
    return "{" + f'__name__="{metric}",{pod_matcher(pods, spelling)}' + "}"


def pods_series_query(metric: str, pods: Sequence[tuple[str, str]], window: str, spelling: Spelling = CANONICAL) -> str:
    """Each of these pods' series of a kube-state-metrics family over the window (a superset for many pods)."""
    return f"last_over_time({_pods_selector(metric, pods, spelling)}[{window}])"


def pods_info_query(pods: Sequence[tuple[str, str]], window: str, spelling: Spelling = CANONICAL) -> str:
    """kube_pod_info of these pods over the window, and in the same answer their containers' GPU requests (what
    the lost GPU-hours are counted in when the pods are gone from the API), told apart by the ``resource`` label
    that kube_pod_info lacks."""
    names = f'__name__=~"kube_pod_info|{GPU_REQUESTS}"'
    return f'last_over_time({{{names},{pod_matcher(pods, spelling)},resource=~"|{GPU_RESOURCE}"}}[{window}])'


def pods_alive_query(pods: Sequence[tuple[str, str]], spelling: Spelling = CANONICAL) -> str:
    """At the window's end: the last kube_pod_info sample of each pod still there (exact: a plain selector)."""
    return f"timestamp({_pods_selector('kube_pod_info', pods, spelling)})"


def pods_active_query(pods: Sequence[tuple[str, str]], wider: str, window: str, spelling: Spelling = CANONICAL) -> str:
    """Pods whose phase or restart count changed, or that appeared, in the window: only these get edge queries.
    Many pods are matched by their names' common prefix (a superset; pods outside the scope are dropped later)."""
    matcher = pod_matcher(pods, spelling)

    def selector(name: str, extra: str = "") -> str:
        return "{" + ",".join(p for p in (f'__name__="{name}"', matcher, extra) if p) + "}"

    return _active(selector, wider, window, spelling.pod_by)


def exporter_pods_query(nodes: Sequence[str], window: str, spelling: Spelling) -> str:
    """The dcgm-exporter pods on these nodes as kube-state-metrics saw them: where an exporter that writes its own
    pod's name into its node label runs."""
    _, pod = spelling.workload
    selector = f'{{__name__="kube_pod_info",node=~{quote(regex_union(nodes))},{pod}=~".*{EXPORTER_POD}.*"}}'
    return f"last_over_time({selector}[{window}])"


def workload_spelling_query(pods: Sequence[tuple[str, str]], window: str) -> str:
    """Whether kube-state-metrics reaches this server without honorLabels (its pod series then name the workload
    ``exported_pod``): asked only when discovery found no pod series to tell."""
    exported = Spelling(workload=EXPORTED_WORKLOAD)
    return f"group(last_over_time({_pods_selector('kube_pod_info', pods, exported)}[{window}]))"


# Every phase change moves one of these (Pending alone is covered by the pod appearing): 3 of 5 series to read.
RUN_PHASES = 'phase=~"Running|Succeeded|Failed"'


def _active(selector: Callable[..., str], wider: str, window: str, by: str) -> str:
    """``wider`` reaches one lookback before the window (a change at its first sample); ``window`` back from the
    end is the window's start, where a pod that was already there has a sample."""
    info = selector("kube_pod_info")
    return (
        f"group by ({by}) (changes({selector('kube_pod_status_phase', RUN_PHASES)}[{wider}]) > 0)"
        f" or group by ({by}) (changes({selector('kube_pod_container_status_restarts_total')}[{wider}]) > 0)"
        f" or group by ({by}) (last_over_time({info}[{window}]) unless last_over_time({info}[{LOOKBACK_S:g}s] offset {window}))"
    )


def last_seen_query(selector: str, by: str) -> str:
    """Range query at PRESENCE_STEP_S: the max of the returned values per series is its last sample time."""
    return f"max by ({by}) (timestamp({selector}))"


# --- discovery: the GPUs and metric families the scope has ------------------------------------------------------


def families_match(sel: Selectors) -> list[str]:
    """``match[]`` selectors for the label-values API: which watched metrics exist for these nodes and pods."""
    nodes, hosts = quote(regex_union(sel.nodes)), quote(regex_union(sel.spelling.hosts_of(sel.nodes)))
    out = [f'{{__name__=~"DCGM_.+|dcgm_.+",{label}=~{hosts}}}' for label in DCGM_NODE_LABELS]
    out.append(f'{{__name__=~"kube_node_.+|whathappened_node_.+",node=~{nodes}}}')
    if sel.pods:
        out.append(Selectors((), sel.pods, sel.spelling).pod("kube_pod_.+"))
    return out


def gpus_last_seen_query(nodes: Sequence[str]) -> str:
    """At the window's end: each GPU's latest dcgm sample (those still reporting), with its node and model; one
    part per node-label spelling, which also tells which node label and UUID label this exporter uses."""
    return " or ".join(
        f"max by ({label}, modelName, UUID, uuid) "
        f"(timestamp({Selectors(tuple(nodes), (), CANONICAL.on_node_label(label)).gpu(PRESENCE_NAMES)}))"
        for label in DCGM_NODE_LABELS
    )


def spelling_of(gpus: Iterable[Mapping[str, Any]], present: Iterable[str], spelling: Spelling) -> Spelling:
    """``spelling`` with the exporter's node label, UUID label and metric names as its series show them (the
    raw answers of ``gpus_last_seen_query`` and the names present)."""
    labels = [item.get("metric", {}) for item in gpus]
    node_label = next((k for lab in labels for k in DCGM_NODE_LABELS if k in lab), "Hostname")
    uuid = "uuid" if any("uuid" in lab and "UUID" not in lab for lab in labels) else "UUID"
    names = {canonical_metric(n): n for n in present if canonical_metric(n) != n}
    return replace(spelling, node_label=node_label, uuid=uuid, names=MappingProxyType(names))


def nodes_last_seen(gpus: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per node (and model): the latest of its GPUs' last samples, what a vanished GPU is compared with."""
    latest: dict[tuple[tuple[str, str], ...], float] = {}
    for item in gpus:
        labels = {k: v for k, v in item.get("metric", {}).items() if k != "UUID"}
        key = tuple(sorted(labels.items()))
        latest[key] = max(latest.get(key, float("-inf")), float(item["value"][1]))
    return [{"metric": dict(key), "value": [at, str(at)]} for key, at in latest.items()]


# Up to this many nodes, which GPUs and metric families a scope has is read from the series API, above it from
# the label-values API: on a month of 512 nodes, for two nodes, 2-5 ms of Prometheus CPU against 20-30 ms (the
# label-values API looks at every value of the label in the store), with answers of a few KB; at 512 nodes the
# series API's answer would be every series' labels (tens of MB).
SERIES_API_NODES = 16


def gpus_seen_match(nodes: Sequence[str]) -> list[str]:
    """``match[]`` for the label-values API: the GPUs (UUID) that reported on these nodes, in any label spelling."""
    return [
        Selectors(tuple(nodes), (), CANONICAL.on_node_label(label)).gpu(PRESENCE_NAMES) for label in DCGM_NODE_LABELS
    ]


# --- collection: round 1, flags ------------------------------------------------------------------------------------


# The project's exporter makes each per-code Xid counter at that code's first Xid, so a series first sampled in the
# window was made there: one that was there in the hour before the window was not.
EXPORTER_HISTORY_S = 3600.0


def exporter_xids_flag_query(nodes: Sequence[str], window_seconds: float) -> str:
    """The project's exporter's Xid counters on these nodes (by their common prefix when they are many: the
    analysis keeps the scope's) that changed over the window and the hour before it, or appeared in the window;
    an instant query at the window's end. Counters of long-past Xids, on most GPUs of a fleet, are not asked for."""
    sel = f"{EXPORTER_XIDS}{{{names_matcher('node', nodes, wide=True)}}}"
    window, reach = round(window_seconds), exporter_reach(window_seconds)
    history = round(EXPORTER_HISTORY_S)
    return (
        f"changes({sel}[{reach}s]) > 0"
        f" or (last_over_time({sel}[{window}s]) unless last_over_time({sel}[{history}s] offset {window}s))"
    )


def exporter_xids_query(uuids: Sequence[str], window_seconds: float) -> str:
    """Every raw sample of the flagged GPUs' Xid counters over the window and the hour before it."""
    return f"{EXPORTER_XIDS}{{uuid=~{quote(regex_union(uuids))}}}[{exporter_reach(window_seconds)}s]"


def exporter_reach(window_seconds: float) -> int:
    return round(window_seconds + LOOKBACK_S + EXPORTER_HISTORY_S)


XID_GAUGE = "DCGM_FI_DEV_XID_ERRORS"


def flag_parts(sel: Selectors, present: Iterable[str], window: str, models: Iterable[str]) -> list[str]:
    """Instant-query parts naming, per signal (in ``__metric``), the GPUs (UUID and node) and nodes that could
    hold an edge of it at all."""
    have = set(present)
    sel = replace(sel, wide=True)  # round 1 reads every sample of the watched metrics: no regex per label value
    gpu_by = f"{sel.spelling.uuid}, {sel.node_label}"
    parts: list[str] = []
    for signal in SIGNALS:
        if signal.metric not in have or signal.where is Where.POD:
            continue
        if signal.where is Where.GPU:
            selector, by = sel.gpu(escape(signal.metric)), gpu_by
        else:
            selector, by = sel.node(escape(signal.metric), signal.match), "node"
        if signal.mode is Mode.RISE and signal.where is Where.GPU:
            parts.append(
                named(f"group by ({by}) (max_over_time({selector}[{window}]) > {signal.threshold:g})", signal.metric)
            )
            continue
        if signal.metric == XID_GAUGE:
            # the last Xid, per GPU and pod: the GPU's value goes on in another series when its pod dies (often
            # before the exporter's next scrape), and dcgm-exporter may label it with err_code (each new value a
            # new, constant series): any non-zero value, whichever series holds it
            found = [f"group by ({by}) (max_over_time({selector}[{window}]) > 0)"]
        else:
            found = [f"group by ({by}) (changes({selector}[{window}]) > 0)"]
        if signal.mode is Mode.RISE:
            found.append(
                f"group by ({by}) (last_over_time({selector}[{window}]) unless last_over_time({selector}[{LOOKBACK_S:g}s] offset {window}))"
            )
        parts.append(named(" or ".join(found), signal.metric))
    if "DCGM_FI_DEV_GPU_UTIL" in have:
        # A collapse needs an idle sample while one of the pods held the GPU (util_drop reports nothing else);
        # the busy half is left to the edge queries (a second pass costs as much).
        for pod_label in ("pod", "pod_name"):
            util = sel.gpu("DCGM_FI_DEV_GPU_UTIL", f'{pod_label}!=""')
            parts.append(named(f"group by ({gpu_by}) (min_over_time({util}[{window}]) <= {UTIL_LOW:g})", UTIL_COLLAPSE))
    if "DCGM_FI_DEV_FB_USED" in have:
        for model in sorted(set(models)):
            threshold = fb_threshold_mib(model)
            if threshold is not None:
                fb = sel.gpu("DCGM_FI_DEV_FB_USED", f"modelName={quote(model)}")
                parts.append(
                    named(f"group by ({gpu_by}) (max_over_time({fb}[{window}]) >= {threshold:g})", FB_NEAR_FULL)
                )
    return parts


def targets_of(
    results: Iterable[Mapping[str, Any]],
    sel: Selectors,
    pods: Sequence[tuple[str, str]],
    present: Iterable[str],
) -> Targets:
    """Round 1's answers as Targets, on ``sel``'s nodes only (its flags match many nodes by a prefix); every
    present pod signal is a target for the pods that changed at all."""
    gpus: dict[str, set[str]] = {}
    nodes: dict[str, set[str]] = {}
    where_node: dict[str, str] = {}
    node_label, ours = sel.node_label, set(sel.nodes)
    hosts = ours | set(sel.spelling.hosts_of(sel.nodes))  # read back in the exporter's spelling or placed
    for item in results:
        labels = item.get("metric", {})
        metric = labels.get(METRIC, "")
        if labels.get("UUID"):
            if labels.get(node_label, "") not in hosts:
                continue
            gpus.setdefault(metric, set()).add(labels["UUID"])
            where_node[labels["UUID"]] = labels.get(node_label, "")
        elif labels.get("node") in ours:
            nodes.setdefault(metric, set()).add(labels["node"])
    have = set(present)
    pod_signals = [s.metric for s in SIGNALS if s.where is Where.POD and s.metric in have] if pods else []
    return Targets(
        MappingProxyType({m: frozenset(k) for m, k in gpus.items()}),
        MappingProxyType({m: frozenset(k) for m, k in nodes.items()}),
        MappingProxyType({m: frozenset(pods) for m in pod_signals}),
        MappingProxyType(where_node),
    )


def last_seen_queries(uuids: tuple[str, ...], nodes: Sequence[str], spelling: Spelling) -> list[str]:
    """The last sample times of GPUs that stopped reporting, halved until each query is short enough for every
    server (a node pool scaled away after the job can leave thousands)."""
    if not uuids:
        return []
    gone = Selectors(tuple(nodes), (), spelling, uuids).gpu(PRESENCE_METRIC, by_uuid=True)
    query = last_seen_query(gone, f"{spelling.node_label}, gpu, {spelling.uuid}, {DCGM_POD_LABELS}")
    if len(query) <= MAX_QUERY_CHARS or len(uuids) == 1:
        return [query]
    half = len(uuids) // 2
    return last_seen_queries(uuids[:half], nodes, spelling) + last_seen_queries(uuids[half:], nodes, spelling)


def util_queries(pods: tuple[tuple[str, str], ...], step: int) -> list[str]:
    """One query for the pods, halved until each is short enough for every server."""
    namespaces = quote(regex_union(ns for ns, _ in pods))
    names = quote(regex_union(name for _, name in pods))
    exprs = pod_util_queries(namespaces, names, step)
    if max(len(e) for e in exprs) <= MAX_QUERY_CHARS or len(pods) == 1:
        return exprs
    half = len(pods) // 2
    return util_queries(pods[:half], step) + util_queries(pods[half:], step)


def window_grid(window: Window, step: int) -> tuple[float, float]:
    """The first and last point of the window's grid: back from its end by whole steps, after its start."""
    last = to_unix(window.end)
    first = last - (window.seconds // step) * step
    return (first if first > to_unix(window.start) else first + step), last
