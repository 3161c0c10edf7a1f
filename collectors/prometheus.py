"""The Prometheus source: dcgm-exporter GPU signals, kube-state-metrics history and the exporter's notices.

Speaks the Prometheus HTTP query API through prometheus-api-client, so Prometheus, Thanos, Mimir and
VictoriaMetrics all work. The server does the work: a handful of queries limited to the experiment's nodes, GPUs
and pods return only edges (see _prom_queries), never every sample of every GPU. The answers become sparse
series and go through the same analysis as a snapshot (_prom_series), so live and offline runs agree.

Failures are data: unreachable, timeout, HTTP errors with the server's own error text, bad JSON. Each is a
SourceError with the contract's status; partial-response warnings go into the detail. No message carries a
secret or a header; URLs are shown without credentials.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import requests
from prometheus_api_client import PrometheusApiClientException, PrometheusConnect
from urllib3.util.retry import Retry
from whathappened.collectors import _prom_queries as pq
from whathappened.collectors import _prom_util as pu
from whathappened.collectors._openmetrics import write_openmetrics
from whathappened.collectors._prom_model import Series
from whathappened.collectors._prom_series import discover_from_series, events_from_series

from whathappened.config import PrometheusSettings
from whathappened.errors import SourceError, SourceForbidden, SourceTimeout, SourceUnreachable
from whathappened.model import TimelineEvent, Window
from whathappened.scope import Discovery, Query, Scope
from whathappened.timeutils import from_unix

DEFAULT_TIMEOUT_S = 15.0


@dataclass
class _Traffic:
    """What the session's response hook saw: requests, bytes, warnings, and each thread's last response."""

    count: int = 0
    bytes: int = 0
    warnings: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    last: threading.local = field(default_factory=threading.local)

    def hook(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        with self.lock:
            self.count += 1
            self.bytes += len(response.content)
            # for --debug: method, path and outcome only (queries can be long; credentials never travel here)
            method = response.request.method if response.request is not None else "?"
            self.log.append(
                f"{method} {urlsplit(response.url).path}: {response.status_code}, {len(response.content)} bytes, "
                f"{response.elapsed.total_seconds():.2f} s"
            )
        self.last.response = response
        if response.status_code == 200 and b'"warnings"' in response.content[:4096]:
            try:
                found = response.json().get("warnings") or []
            except ValueError:
                found = []
            with self.lock:
                self.warnings.extend(str(w) for w in found if str(w) not in self.warnings)


def make_client(
    settings: PrometheusSettings,
    verify_tls: bool = True,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    session: requests.Session | None = None,
) -> tuple[PrometheusConnect, _Traffic]:
    """A client with auth, CA, extra headers and a response hook that counts traffic; secrets stay in the session."""
    if not settings.url:
        raise SourceError("no Prometheus URL configured", status="not_configured")
    session = session or requests.Session()  # a caller's session: its adapters, proxies and certificates
    if verify_tls and settings.ca_file:
        ca_file = Path(settings.ca_file).expanduser()
        if not ca_file.is_file():
            raise SourceError(f"the CA file {ca_file} does not exist")
        session.verify = str(ca_file)  # the cluster's own CA, for an in-cluster or private Prometheus
    else:
        session.verify = verify_tls
    headers = dict(settings.headers)
    token = settings.bearer_token.reveal() if settings.bearer_token else None
    if settings.bearer_token_file:
        try:
            token = Path(settings.bearer_token_file).expanduser().read_text().strip()
        except OSError as exc:
            raise SourceError(f"cannot read the bearer token file ({exc.strerror})") from None
    if token:
        headers["Authorization"] = f"Bearer {token}"
    traffic = _Traffic()
    session.hooks["response"].append(traffic.hook)
    url, user, password = _split_credentials(settings.url)
    auth = (settings.username, settings.password.reveal() if settings.password else "") if settings.username else None
    if auth is None and user and not token:
        auth = (user, password)  # credentials written into the URL, as curl would take them
    # Queries are reads: retrying a POST once on a gateway error is safe.
    retry = Retry(
        total=1,
        connect=1,
        read=False,  # a read timeout is the answer: report it, do not wait twice
        status=1,
        backoff_factor=0.2,
        status_forcelist=(502, 503, 504),
        allowed_methods=frozenset({"GET", "POST"}),
        raise_on_status=False,
    )
    client = PrometheusConnect(
        url=url,
        headers=headers,
        disable_ssl=not verify_tls,
        retry=retry,
        auth=auth,
        session=session,
        timeout=timeout_s,
        method="POST",
    )
    return client, traffic


def _split_credentials(url: str) -> tuple[str, str, str]:
    """The URL without user:password, and those (URL-decoded): no request or message carries them in the URL."""
    parts = urlsplit(url.rstrip("/"))
    bare = public_url(url).rstrip("/") + (f"?{parts.query}" if parts.query else "")
    return bare, unquote(parts.username or ""), unquote(parts.password or "")


def public_url(url: str) -> str:
    """The URL without user:password, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class PrometheusCollector:
    name = "prometheus"

    def __init__(
        self,
        settings: PrometheusSettings,
        *,
        verify_tls: bool = True,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        session: requests.Session | None = None,
    ) -> None:
        self.settings = settings
        self.requests = 0
        self.bytes = 0
        self.detail = ""
        self.fetched: list[Series] = []
        self._dcgm_nodes = self._flagged = 0
        self._checked: dict[Window, tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str]]]] = {}
        self._url = public_url(settings.url or "")
        self._client, self._traffic = make_client(settings, verify_tls, timeout_s, session)
        self._pool_size = max(1, settings.max_concurrency)

    # --- the collector protocol -----------------------------------------------------------------------------

    def discover(self, query: Query) -> Discovery:
        window, step = _duration(query.window.seconds), pq.pick_step(query.window.seconds)
        end = query.window.end
        match = pq.PodMatch(query.experiment, query.namespace, query.label_keys, window)
        wider = _duration(query.window.seconds + pq.LOOKBACK_S)
        found, info, alive, active = self._parallel(
            [partial(self._instant, q, end) for q in (match.labels(), match.info(), match.alive(), match.active(wider))]
        )
        pods = sorted({_pod_key(r["metric"]) for r in (*found, *info)})
        if not pods:
            names = self._instant(pq.candidates_query(query.namespace, query.label_keys, window), end)
            candidates = {v for r in names for k, v in r["metric"].items() if k.startswith("label_") and v}
            self._sync()
            self.detail = "experiment not found in kube-state-metrics history"
            return Discovery(candidates=tuple(sorted(candidates))[:50])
        last = {_pod_key(r["metric"]): float(r["value"][1]) for r in alive}
        vanished = [p for p in pods if p not in last]
        moving = sorted({_pod_key(r["metric"]) for r in active})
        self._checked[query.window] = (frozenset(pods), frozenset(moving))
        work: list[Callable[[], list[dict[str, Any]]]] = []
        if vanished:
            selector = pq.Selectors((), tuple(vanished)).pod("kube_pod_info")
            work.append(partial(self._range, pq.last_seen_query(selector, "namespace, pod"), query, pq.PRESENCE_STEP_S))
        if moving:
            work.append(partial(self._range, pq.phase_rise_query(moving, step), query, step))
        answers = self._parallel(work)
        builder = pq.SeriesBuilder()
        if vanished:
            last.update({_pod_key(r["metric"]): max(v for _, v in pq.points(r)) for r in answers[0] if pq.points(r)})
        if moving:
            builder.add_edges(answers[-1], step, None)
        for name, items in (("kube_pod_info", info), ("kube_pod_labels", found)):
            for item in items:
                builder.add(name, item["metric"], last.get(_pod_key(item["metric"]), end.timestamp()), 1.0)
        discovery = discover_from_series(builder.series(), query)
        self._sync()
        self.detail = f"{len(discovery.pods)} pods found in kube-state-metrics history"
        return discovery

    def collect(self, scope: Scope) -> Iterable[TimelineEvent]:
        series = self.fetch(scope)
        events = events_from_series(series, scope)
        self._describe(scope, series, events)
        return events

    # --- fetching -------------------------------------------------------------------------------------------

    def fetch(self, scope: Scope) -> list[Series]:
        """The sparse series holding every edge in the scope (what export_snapshot writes)."""
        step = pq.pick_step(scope.window.seconds)
        window = _duration(scope.window.seconds + pq.LOOKBACK_S)
        end = scope.window.end
        nodes, pods = scope.node_names, tuple(p.key for p in scope.pods)
        builder = pq.SeriesBuilder()
        sel = pq.Selectors(nodes, pods)
        present, node_refs, utilization = self._parallel(
            [
                lambda: self._families(sel, scope),
                lambda: self._instant(pq.nodes_last_seen_query(nodes), end),
                lambda: self._utilization(pods, scope),
            ]
        )
        builder.add_last_seen(node_refs)
        label = next((k for r in node_refs for k in pq.DCGM_NODE_LABELS if k in r["metric"]), "Hostname")
        models = tuple(sorted({r["metric"].get("modelName", "") for r in node_refs} - {""}))
        sel = pq.Selectors(nodes, pods, label)
        first: list[Callable[[], list[dict[str, Any]]]] = [
            partial(self._instant, q, end)
            for q in pq.chunked_or(pq.flag_parts(sel, present, window, models), pieces=self._pool_size)
        ]
        first.append(
            lambda: (
                self._instant(pq.gpus_vanished_query(sel, _duration(scope.window.seconds)), end) if node_refs else []
            )
        )
        # Discovery already asked which of its pods changed over this window; ask only about the others.
        known = self._checked.get(scope.window, (frozenset(), frozenset()))
        unknown = tuple(p for p in pods if p not in known[0])
        whole = _duration(scope.window.seconds)
        first.append(lambda: self._instant(pq.pods_active_query(unknown, window, whole), end) if unknown else [])
        answers = self._parallel(first)
        flags = pq.Flags.of(item for answer in answers[:-2] for item in answer)
        vanished = sorted({r["metric"].get("UUID", "") for r in answers[-2]} - {""})
        active = tuple(sorted({_pod_key(r["metric"]) for r in answers[-1]} | (known[1] & set(pods))))
        edges_sel = pq.Selectors(flags.nodes, active, label, flags.uuids)
        self._edges(builder, edges_sel, present, models, step, scope, vanished)
        self._dcgm_nodes = len(
            {_node_of(r["metric"]) for r in node_refs} | {_node_of(r["metric"]) for r in answers[-2]}
        )
        self._flagged = len(flags.uuids)
        self.fetched = builder.series() + utilization
        self._sync()
        return self.fetched

    def _utilization(self, pods: Sequence[tuple[str, str]], scope: Scope) -> list[Series]:
        """Each pod's GPU utilization at about 120 points: one range query (more only for very long pod lists)."""
        step = pu.util_step(scope.window.seconds)
        first, last = pu.grid(scope.window, step)
        if not pods or first > last:
            return []
        work = [partial(self._grid_range, expr, first, last, step) for expr in _util_queries(tuple(sorted(pods)), step)]
        return [s for answer in self._parallel(work) for s in pu.series_of_answer(answer)]

    def _families(self, sel: pq.Selectors, scope: Scope) -> list[str]:
        params = {
            "match[]": pq.families_match(sel),
            "start": scope.window.start.timestamp(),
            "end": scope.window.end.timestamp(),
        }
        found = self._call(lambda: self._client.get_label_values("__name__", params=params))
        return [str(name) for name in found]

    def _edges(
        self,
        builder: pq.SeriesBuilder,
        sel: pq.Selectors,
        present: Sequence[str],
        models: Sequence[str],
        step: int,
        scope: Scope,
        vanished: Sequence[str],
    ) -> None:
        changes = pq.change_queries(sel, present, step)
        rises = pq.rise_queries(sel, present, step, models)
        work: list[Callable[[], list[dict[str, Any]]]] = []
        for new, old in changes:
            work += [partial(self._range, new, scope.query, step), partial(self._range, old, scope.query, step)]
        work += [partial(self._range, q, scope.query, step) for q in rises]
        if vanished:
            gone = pq.Selectors(sel.nodes, (), sel.node_label, tuple(vanished)).gpu(pq.PRESENCE_METRIC, by_uuid=True)
            by = f"{sel.node_label}, gpu, UUID, pod, namespace"
            work.append(lambda: self._range(pq.last_seen_query(gone, by), scope.query, pq.PRESENCE_STEP_S))
        answers = self._parallel(work)
        for index in range(len(changes)):
            builder.add_edges(answers[2 * index], step, answers[2 * index + 1])
        for answer in answers[2 * len(changes) : 2 * len(changes) + len(rises)]:
            builder.add_edges(answer, step, None)
        if vanished:
            builder.add_last_seen(answers[-1])

    def export_snapshot(self, folder: Path) -> Path:
        """prometheus.om.gz (OpenMetrics, second timestamps, # EOF) of what the last collect fetched."""
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "prometheus.om.gz"
        path.write_bytes(gzip.compress(write_openmetrics(self.fetched).encode("utf-8")))
        return path

    # --- requests -------------------------------------------------------------------------------------------

    def _instant(self, expr: str, at: datetime) -> list[dict[str, Any]]:
        return self._call(lambda: self._client.custom_query(expr, params={"time": at.timestamp()}))

    def _range(self, expr: str, query: Query, step: int) -> list[dict[str, Any]]:
        """From the first grid point after the window start to exactly its end (last samples are never missed)."""
        end = query.window.end.timestamp()
        start = end - (query.window.seconds // step) * step
        start = start if start > query.window.start.timestamp() else start + step
        params = {"start": start, "end": end, "step": f"{step}s"}
        return self._call(
            lambda: self._client.custom_query_range(
                expr, query.window.start, query.window.end, f"{step}s", params=params
            )
        )

    def _grid_range(self, expr: str, first: int, last: int, step: int) -> list[dict[str, Any]]:
        """Exactly these grid points (multiples of the step), so every server evaluates the same ones."""
        params = {"start": first, "end": last, "step": f"{step}s"}
        return self._call(
            lambda: self._client.custom_query_range(expr, from_unix(first), from_unix(last), f"{step}s", params=params)
        )

    def _call(self, request: Callable[[], Any]) -> list[dict[str, Any]]:
        try:
            result = request()
        except requests.exceptions.Timeout:
            raise SourceTimeout(f"Prometheus at {self._url} did not answer in time") from None
        except requests.exceptions.SSLError:
            raise SourceUnreachable(f"TLS handshake with {self._url} failed (certificate not trusted?)") from None
        except requests.exceptions.ConnectionError:
            raise SourceUnreachable(f"cannot connect to Prometheus at {self._url}") from None
        except PrometheusApiClientException:
            raise self._http_error() from None
        except (ValueError, KeyError, TypeError):
            raise SourceError(f"Prometheus at {self._url} sent an answer that is not the query API's JSON") from None
        if not isinstance(result, list):
            raise SourceError(f"Prometheus at {self._url} sent an unexpected result type")
        return result

    def _http_error(self) -> SourceError:
        response: requests.Response | None = getattr(self._traffic.last, "response", None)
        status = response.status_code if response is not None else 0
        text = _error_text(response)
        message = f"Prometheus at {self._url} answered HTTP {status}" + (f": {text}" if text else "")
        if status in (401, 403):
            return SourceForbidden(message)
        if status in (408, 504):
            return SourceTimeout(message)
        return SourceError(message)

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


def _error_text(response: requests.Response | None) -> str:
    """The server's own error text (Prometheus' ``error`` field, or the start of a plain body)."""
    if response is None:
        return ""
    try:
        body = response.json()
        if isinstance(body, Mapping):
            kind, error = body.get("errorType"), body.get("error")
            return f"{kind}: {error}" if kind and error else str(error or "")[:300]
    except ValueError:
        pass
    return response.text.strip()[:300]


def _util_queries(pods: tuple[tuple[str, str], ...], step: int) -> list[str]:
    """One query for the pods, halved until each is short enough for every server."""
    sel = pq.Selectors((), pods)
    namespaces = pq.quote(pq.regex_union(ns for ns, _ in sel.pods))
    names = pq.quote(pq.regex_union(name for _, name in sel.pods))
    expr = pu.pod_util_query(namespaces, names, step)
    if len(expr) <= pq.MAX_QUERY_CHARS or len(pods) == 1:
        return [expr]
    half = len(pods) // 2
    return _util_queries(pods[:half], step) + _util_queries(pods[half:], step)


def _pod_key(labels: Mapping[str, str]) -> tuple[str, str]:
    return (labels.get("namespace", ""), labels.get("pod", ""))


def _node_of(labels: Mapping[str, str]) -> str:
    return next((labels[k] for k in pq.DCGM_NODE_LABELS if labels.get(k)), "")
