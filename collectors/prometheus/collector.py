"""The Prometheus source: dcgm-exporter GPU signals, kube-state-metrics history and the exporter's notices.

Speaks the Prometheus HTTP query API through prometheus-api-client (client), so Prometheus, Thanos, Mimir
and VictoriaMetrics all work. The server does the work: a handful of queries limited to the experiment's nodes,
GPUs and pods return only edges (queries for discovery and flags, edges for the edges, coarse to
fine), never every sample of every GPU. The answers become sparse series and go through the same analysis as a
snapshot (series), so live and offline runs agree.

Failures are data: unreachable, timeout, HTTP errors with the server's own error text, bad JSON. Each is a
SourceError with the contract's status; partial-response warnings go into the detail. No message carries a
secret or a header; URLs are shown without credentials.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Any

import requests
from whathappened.collectors.prometheus import edges as pe
from whathappened.collectors.prometheus import fleet as pf
from whathappened.collectors.prometheus import queries as pq
from whathappened.collectors.prometheus import util as pu
from whathappened.collectors.prometheus.answers import SeriesBuilder, clean, points
from whathappened.collectors.prometheus.client import DEFAULT_TIMEOUT_S, answered, make_client, public_url
from whathappened.collectors.prometheus.model import Series, canonical_answer
from whathappened.collectors.prometheus.promql import (
    CANONICAL,
    DCGM_NODE_LABELS,
    EXPORTED_WORKLOAD,
    Selectors,
    Spelling,
    chunked_or,
)
from whathappened.collectors.prometheus.series import GPU_REQUESTS, discover_from_series, events_from_series
from whathappened.collectors.prometheus.signals import EXPORTER_XIDS
from whathappened.collectors.prometheus.snapshot import write_series

from whathappened.config import PrometheusSettings, Settings
from whathappened.model import FoundEnds, TimelineEvent, Window
from whathappened.scope import Discovery, Query, Scope
from whathappened.timeutils import from_unix

__all__ = ["DEFAULT_TIMEOUT_S", "PrometheusCollector", "public_url"]

PHASE = "kube_pod_status_phase"


class PrometheusCollector:
    name = "prometheus"

    def __init__(
        self,
        settings: PrometheusSettings,
        *,
        verify_tls: bool = True,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        session: requests.Session | None = None,
        utilization: bool = True,
        direct_limit: int = pe.DIRECT_LIMIT,
    ) -> None:
        self.settings = settings
        self.requests = 0
        self.bytes = 0
        self.detail = ""
        self.fetched: list[Series] = []
        self._discovered: list[Series] = []  # discovery's pod series (info, labels, GPU requests): recorded too
        self._utilization = utilization  # the per-pod strip only the HTML report draws: one costly range query
        self._direct_limit = direct_limit  # edge queries over the whole window up to this many series x steps
        self._dcgm_nodes = self._flagged = 0
        self._checked: dict[Window, tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str]]]] = {}
        self._phase_edges: dict[Window, tuple[frozenset[tuple[str, str]], list[dict[str, Any]]]] = {}
        # How this server spells the workload on kube-state-metrics series, the GPU's UUID and dcgm-exporter's
        # names: read from the first answers (discovery's, the GPUs'), the queries after them use it.
        self._spelling = CANONICAL
        self._workload_known = False
        self._url = public_url(settings.url or "")
        self._client, self._traffic = make_client(settings, verify_tls, timeout_s, session)
        self._pool_size = max(1, settings.max_concurrency)

    # --- the collector protocol -----------------------------------------------------------------------------

    def discover(self, query: Query) -> Discovery:
        window, step = _duration(query.window.seconds), pq.pick_step(query.window.seconds)
        end = query.window.end
        match = pq.PodMatch(query.experiment, query.namespace, query.label_keys, window)
        wider = _duration(query.window.seconds + pq.LOOKBACK_S)
        raw = self._instant(match.found(), end, raw=True)
        if raw:
            self._learn_workload(any("exported_pod" in r["metric"] for r in raw))
        candidates_found = canonical_answer(raw)
        pods = sorted({_pod_key(r["metric"]) for r in candidates_found})
        if not pods:
            names = self._instant(match.candidates(), end)
            candidates = {v for r in names for k, v in r["metric"].items() if k.startswith("label_") and v}
            self._sync()
            self.detail = "experiment not found in kube-state-metrics history"
            return Discovery(candidates=tuple(sorted(candidates))[:50])
        # The candidates' other series; many pods are matched by a name prefix, so answers are kept to them.
        found = [r for r in candidates_found if r["metric"].get("__metric") == "kube_pod_labels"]
        unlabelled = sorted(set(pods) - {_pod_key(r["metric"]) for r in found})
        spelling = self._spelling
        work = [
            partial(self._instant, pq.pods_info_query(pods, window, spelling), end),
            partial(self._instant, pq.pods_alive_query(pods, spelling), end),
            partial(self._instant, pq.pods_active_query(pods, wider, window, spelling), end),
        ]
        if unlabelled:
            query_ = pq.pods_series_query("kube_pod_labels", unlabelled, window, spelling)
            work.append(partial(self._instant, query_, end))
        ours = set(pods)
        info, alive, active, *labels = [[r for r in a if _pod_key(r["metric"]) in ours] for a in self._parallel(work)]
        found += [r for answer in labels for r in answer]
        last = {_pod_key(r["metric"]): float(r["value"][1]) for r in alive}
        vanished = [p for p in pods if p not in last]
        moving = sorted({_pod_key(r["metric"]) for r in active})
        self._checked[query.window] = (frozenset(pods), frozenset(moving))
        besides: list[Callable[[], list[dict[str, Any]]]] = []
        if vanished:
            selector = Selectors((), tuple(vanished), spelling).pod("kube_pod_info")
            query_ = pq.last_seen_query(selector, spelling.pod_by)
            besides.append(partial(self._range, query_, query, pq.PRESENCE_STEP_S))
        phases = pe.Targets(pods=MappingProxyType({PHASE: frozenset(moving)})) if moving else pe.Targets()
        seen, edges = self._edge_answers(phases, spelling, (), query.window, besides)
        self._phase_edges[query.window] = (frozenset(moving), edges)  # collect needs them too
        builder = SeriesBuilder()
        for answer in seen:
            last.update({_pod_key(r["metric"]): max(v for _, v in points(r)) for r in answer if points(r)})
        builder.add_edges(edges, step)
        for name, items in (("kube_pod_info", info), ("kube_pod_labels", found)):
            for item in items:  # a GPU request came in kube_pod_info's answer
                metric, value = (GPU_REQUESTS, float(item["value"][1])) if "resource" in item["metric"] else (name, 1.0)
                builder.add(metric, item["metric"], last.get(_pod_key(item["metric"]), end.timestamp()), value)
        discovered = builder.series()
        # recorded with the rest: a snapshot must name the pods the API no longer has (an earlier attempt's) as
        # this discovery did; the phase edges are added by fetch (once)
        self._discovered = [one for one in discovered if one.name != PHASE]
        discovery = discover_from_series(discovered, query)
        self._sync()
        self.detail = f"{len(discovery.pods)} pods found in kube-state-metrics history"
        return discovery

    def collect(self, scope: Scope) -> Iterable[TimelineEvent]:
        series = self.fetch(scope)
        events = events_from_series(series, scope, utilization=self._utilization, raw=False)
        self._describe(scope, series, events)
        return events

    # --- fetching -------------------------------------------------------------------------------------------

    def fetch(self, scope: Scope) -> list[Series]:
        """The sparse series holding every edge in the scope (what export_snapshot writes)."""
        window = _duration(scope.window.seconds + pq.LOOKBACK_S)
        end = scope.window.end
        nodes, pods = scope.node_names, tuple(p.key for p in scope.pods)
        builder = SeriesBuilder()
        if pods and not self._workload_known:
            answer = self._instant(pq.workload_spelling_query(pods, window), end)
            self._learn_workload(bool(answer))
        sel = Selectors(nodes, pods, self._spelling)
        present, raw_gpus, utilization, exporter_xids = self._parallel(
            [
                lambda: self._families(sel, scope),
                lambda: self._instant(pq.gpus_last_seen_query(sel.spelling.hosts_of(nodes)), end, raw=True),
                lambda: self._utilization_strip(pods, scope) if self._utilization else [],
                lambda: self._exporter_xids(nodes, scope) if nodes else [],
            ]
        )
        if nodes and not raw_gpus and not self._spelling.hosts and self._learn_hosts(nodes, window, end):
            sel = Selectors(nodes, pods, self._spelling)  # the exporter names each node by its own pod
            present, raw_gpus = self._parallel(
                [
                    lambda: self._families(sel, scope),
                    lambda: self._instant(pq.gpus_last_seen_query(sel.spelling.hosts_of(nodes)), end, raw=True),
                ]
            )
        self._spelling = spelling = pq.spelling_of(raw_gpus, present, self._spelling)
        present = sorted({pq.canonical_metric(name) for name in present})
        gpu_refs = canonical_answer(raw_gpus, spelling)
        node_refs = pq.nodes_last_seen(gpu_refs)
        builder.add_last_seen(node_refs)
        models = tuple(sorted({r["metric"].get("modelName", "") for r in node_refs} - {""}))
        sel = Selectors(nodes, pods, spelling)
        first: list[Callable[[], list[Any]]] = [
            partial(self._instant, q, end)
            for q in chunked_or(pq.flag_parts(sel, present, window, models), pieces=self._pool_size)
        ]
        first.append(lambda: self._gpus_seen(spelling.hosts_of(nodes), scope) if nodes else [])
        # Discovery already asked which of its pods changed over this window; ask only about the others.
        known = self._checked.get(scope.window, (frozenset(), frozenset()))
        unknown = tuple(p for p in pods if p not in known[0])
        whole = _duration(scope.window.seconds)
        first.append(
            lambda: self._instant(pq.pods_active_query(unknown, window, whole, spelling), end) if unknown else []
        )
        *answers, seen, active_answer = self._parallel(first)
        answers.append(active_answer)
        vanished = sorted(set(seen) - {r["metric"].get("UUID", "") for r in gpu_refs} - {""})
        active = tuple(sorted({_pod_key(r["metric"]) for r in answers[-1]} | (known[1] & set(pods))))
        targets = pq.targets_of((i for a in answers[:-1] for i in a), sel, active, present)
        # Discovery found the phase edges of the pods it saw change; only the others' are asked again.
        phased, phase_edges = self._phase_edges.get(scope.window, (frozenset(), []))
        if PHASE in targets.pods:
            targets = targets.without(PHASE, phased)
            builder.add_edges(phase_edges, pq.pick_step(scope.window.seconds))
        self._edges(builder, targets, spelling, models, scope, vanished)
        self._dcgm_nodes = len({_node_of(r["metric"]) for r in node_refs})
        self._flagged = len(targets.uuids)
        self.fetched = builder.series() + utilization + exporter_xids + self._discovered
        self._sync()
        return self.fetched

    def _edges(
        self,
        builder: SeriesBuilder,
        targets: pe.Targets,
        spelling: Spelling,
        models: Sequence[str],
        scope: Scope,
        vanished: Sequence[str],
    ) -> None:
        """The targets' edges, and the last-seen times of GPUs that stopped reporting (asked alongside)."""
        step = pq.pick_step(scope.window.seconds)
        besides = [
            partial(self._range, query, scope.query, pq.PRESENCE_STEP_S)
            for query in pq.last_seen_queries(tuple(vanished), scope.node_names, spelling)
        ]
        seen, answers = self._edge_answers(targets, spelling, models, scope.window, besides)
        for answer in seen:
            builder.add_last_seen(answer)
        builder.add_edges(answers, step)

    def _edge_answers(
        self,
        targets: pe.Targets,
        spelling: Spelling,
        models: Sequence[str],
        window: Window,
        besides: Sequence[Callable[[], list[dict[str, Any]]]] = (),
    ) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
        """Edge points of the targets: over the whole window when they are few, else located coarsely first and
        then exact over the located spans. ``besides`` runs with the first round; its answers come back first."""
        step = pq.pick_step(window.seconds)
        first, last = pq.window_grid(window, step)
        spans: list[tuple[pe.Targets, float, float]] = []
        other: list[list[dict[str, Any]]] = []
        if targets and pe.fine_cost(targets, int((last - first) // step) + 1) <= self._direct_limit:
            spans.append((targets, first, last))
        elif targets:
            coarse = pe.coarse_step(step)
            c_first, c_last = pq.window_grid(window, coarse)
            work = [
                partial(self._grid_range, q, c_first, c_last, coarse)
                for q in pe.locate_queries(targets, spelling, models, step, pieces=self._pool_size)
            ]
            answers = self._parallel([*besides, *work])
            other, besides = answers[: len(besides)], ()
            found = pe.located(i for a in answers[len(other) :] for i in a)
            for a, b in pe.spans(found, coarse):
                spans.append((targets.only(pe.hits_within(found, a, b)), max(first, a - coarse + step), b))
        work = [
            partial(self._grid_range, q, a, b, step)
            for subset, a, b in spans
            if subset and a <= b
            for q in pe.edge_queries(subset, spelling, models, step, pieces=1)
        ]
        answers = self._parallel([*besides, *work])
        other += answers[: len(besides)]
        return other, [i for a in answers[len(besides) :] for i in a]

    def _exporter_xids(self, nodes: Sequence[str], scope: Scope) -> list[Series]:
        """The project's exporter's Xid counters (NVML sees every Xid, dcgm-exporter's gauge the last one) that
        moved or appeared around the window, with every raw sample: their first sample is an Xid too (signals:
        COUNT). Two small queries: which counters, then their samples."""
        seconds, end = scope.window.seconds, scope.window.end
        flagged = [item.get("metric", {}) for item in self._instant(pq.exporter_xids_flag_query(nodes, seconds), end)]
        uuids = sorted({labels.get("UUID", "") for labels in flagged} - {""})
        if not uuids:
            return []
        wanted = {clean(labels) for labels in flagged}  # the flag's functions dropped the name; clean() drops it too
        raw = self._instant(pq.exporter_xids_query(uuids, seconds), end)
        builder = SeriesBuilder()
        builder.add_samples([item for item in raw if clean(item.get("metric", {})) in wanted], EXPORTER_XIDS)
        return builder.series()

    def _gpus_seen(self, nodes: Sequence[str], scope: Scope) -> list[str]:
        """Every GPU (UUID) that reported on these nodes in the window, from the index alone (no samples)."""
        return self._label_values(self._spelling.uuid, pq.gpus_seen_match(nodes), scope.window, len(nodes))

    def _utilization_strip(self, pods: Sequence[tuple[str, str]], scope: Scope) -> list[Series]:
        """Each pod's GPU utilization at about 120 points: a range query per pod-label spelling (more only for very
        long pod lists)."""
        step = pu.util_step(scope.window.seconds)
        first, last = pu.grid(scope.window, step)
        if not pods or first > last:
            return []
        work = [
            partial(self._grid_range, expr, first, last, step) for expr in pq.util_queries(tuple(sorted(pods)), step)
        ]
        return pu.series_of_answer([item for answer in self._parallel(work) for item in answer])

    def _families(self, sel: Selectors, scope: Scope) -> list[str]:
        return self._label_values("__name__", pq.families_match(sel), scope.window, len(sel.nodes))

    def _label_values(self, label: str, match: list[str], window: Window, nodes: int) -> list[str]:
        """``label``'s values on the series ``match`` selects in the window. The series API answers in proportion
        to the series matched, the label-values API to the label's values in the whole store (every GPU of the
        cluster): for a few nodes the first, for many the second, whose answer stays small."""
        params = {"match[]": match, "start": window.start.timestamp(), "end": window.end.timestamp()}
        if nodes <= pq.SERIES_API_NODES:
            found = self._call(lambda: self._client.get_series(window.start, window.end, params=params))
            return sorted({str(one[label]) for one in found if isinstance(one, dict) and one.get(label)})
        return [str(v) for v in self._call(lambda: self._client.get_label_values(label, params=params))]

    def export_snapshot(self, folder: Path) -> Path:
        """prometheus.om.gz (OpenMetrics, second timestamps, # EOF) of what the last collect fetched."""
        return write_series(folder, self.fetched)

    def pod_ends(self, window: Window, label_keys: Sequence[str], namespace: str | None = None) -> FoundEnds:
        """``whathappened fleet``: every end of an experiment pod in the window, from kube-state-metrics history."""
        step = pf.fleet_step(window.seconds)
        ends = pf.end_queries(step)
        members, placements = (self._instant(q, window.end) for q in pf.roster_queries(label_keys, window))
        first, last = pq.window_grid(window, step)
        ranges = self._parallel([partial(self._grid_range, q, first, last, step) for q in ends.values()])
        answers = dict(zip(ends, ranges, strict=True))
        self._sync()
        found = pf.pod_ends(answers, members, placements, label_keys, step, namespace)
        return FoundEnds(tuple(found), pf.covered(answers, step, window))

    # --- requests -------------------------------------------------------------------------------------------

    def _learn_hosts(self, nodes: Sequence[str], window: str, end: datetime) -> bool:
        """When no dcgm series names these nodes: whether the exporter names them by its own pods (found on their
        nodes through kube-state-metrics); remembered in the spelling."""
        found = self._instant(pq.exporter_pods_query(nodes, window, self._spelling), end)
        hosts = {r["metric"]["node"]: r["metric"]["pod"] for r in found if r["metric"].get("pod")}
        self._spelling = replace(self._spelling, hosts=MappingProxyType(hosts))
        return bool(hosts)

    def _learn_workload(self, exported: bool) -> None:
        """kube-state-metrics' pod series name the workload exported_* (scraped without honorLabels) or not."""
        self._workload_known = True
        workload = EXPORTED_WORKLOAD if exported else CANONICAL.workload
        self._spelling = replace(self._spelling, workload=workload)

    def _instant(self, expr: str, at: datetime, raw: bool = False) -> list[dict[str, Any]]:
        """The answer in the canonical spelling (``raw``: as the server spelt it)."""
        answer = self._call(lambda: self._client.custom_query(expr, params={"time": at.timestamp()}))
        return answer if raw else canonical_answer(answer, self._spelling)

    def _range(self, expr: str, query: Query, step: int) -> list[dict[str, Any]]:
        """From the first grid point after the window start to exactly its end (last samples are never missed)."""
        first, last = pq.window_grid(query.window, step)
        return self._grid_range(expr, first, last, step)

    def _grid_range(self, expr: str, first: float, last: float, step: int) -> list[dict[str, Any]]:
        """Exactly these grid points, so every server evaluates the same ones."""
        params = {"start": first, "end": last, "step": f"{step}s"}
        client, start, end = self._client, from_unix(first), from_unix(last)
        answer = self._call(lambda: client.custom_query_range(expr, start, end, f"{step}s", params=params))
        return canonical_answer(answer, self._spelling)

    def _call(self, request: Callable[[], Any]) -> list[dict[str, Any]]:
        return answered(request, self._url, self._traffic)

    def _parallel(self, work: Sequence[Callable[[], Any]]) -> list[Any]:
        if len(work) <= 1 or self._pool_size == 1:
            return [w() for w in work]
        with ThreadPoolExecutor(max_workers=min(self._pool_size, len(work))) as pool:
            futures = [pool.submit(w) for w in work]
            return [f.result() for f in futures]

    def _sync(self) -> None:
        self.requests = self._traffic.count
        self.bytes = self._traffic.bytes

    @property
    def request_log(self) -> list[str]:
        """Every request as "POST /api/v1/query: 200, 1234 bytes, 0.05 s", for --debug."""
        return list(self._traffic.log)

    def _describe(self, scope: Scope, series: list[Series], events: list[TimelineEvent]) -> None:
        nodes = len(scope.node_names)
        parts = [f"{len(events)} events", f"dcgm-exporter on {self._dcgm_nodes} of {nodes} nodes"]
        parts += [f"{self._flagged} GPUs with changes", f"{self.requests} queries, {self.bytes / 1e6:.2f} MB"]
        if not self._dcgm_nodes:
            parts[1] = "no dcgm-exporter series for these nodes"
        if self._traffic.warnings:
            parts.append("partial response: " + "; ".join(self._traffic.warnings[:3]))
        self.detail = ", ".join(parts)


def _duration(seconds: float) -> str:
    return f"{round(seconds)}s"


def _pod_key(labels: Mapping[str, str]) -> tuple[str, str]:
    return (labels.get("namespace", ""), labels.get("pod", ""))


def _node_of(labels: Mapping[str, str]) -> str:
    return next((labels[k] for k in DCGM_NODE_LABELS if labels.get(k)), "")


def create_collector(settings: Settings, utilization: bool = True) -> PrometheusCollector:
    """The collector for these settings (the source registry's factory); ``utilization``: whether it fetches each
    pod's GPU utilization strip, a costly range query only the HTML report draws."""
    return PrometheusCollector(
        settings.prometheus, verify_tls=settings.verify_tls, timeout_s=settings.deadline_s, utilization=utilization
    )
