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
import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests
from prometheus_api_client import PrometheusApiClientException, PrometheusConnect
from urllib3.util.retry import Retry
from whathappened.collectors import _prom_queries as pq
from whathappened.collectors._openmetrics import write_openmetrics
from whathappened.collectors._prom_model import Series
from whathappened.collectors._prom_series import discover_from_series, events_from_series

from whathappened.config import PrometheusSettings
from whathappened.errors import SourceError, SourceForbidden, SourceTimeout, SourceUnreachable
from whathappened.model import TimelineEvent
from whathappened.scope import Discovery, Query, Scope

DEFAULT_TIMEOUT_S = 15.0


@dataclass
class _Traffic:
    """What the session's response hook saw: requests, bytes, warnings, and each thread's last response."""

    count: int = 0
    bytes: int = 0
    warnings: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    last: threading.local = field(default_factory=threading.local)

    def hook(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        with self.lock:
            self.count += 1
            self.bytes += len(response.content)
        self.last.response = response
        if response.status_code == 200 and b'"warnings"' in response.content[:4096]:
            try:
                found = response.json().get("warnings") or []
            except ValueError:
                found = []
            with self.lock:
                self.warnings.extend(str(w) for w in found if str(w) not in self.warnings)


def make_client(
    settings: PrometheusSettings, verify_tls: bool = True, timeout_s: float = DEFAULT_TIMEOUT_S
) -> tuple[PrometheusConnect, _Traffic]:
    """A client with auth, CA, extra headers and a response hook that counts traffic; secrets stay in the session."""
    if not settings.url:
        raise SourceError("no Prometheus URL configured", status="not_configured")
    session = requests.Session()
    session.verify = settings.ca_file if (verify_tls and settings.ca_file) else verify_tls
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
    auth = (settings.username, settings.password.reveal() if settings.password else "") if settings.username else None
    retry = Retry(
        total=1,
        connect=1,
        read=0,
        status=1,
        backoff_factor=0.2,
        status_forcelist=(502, 503, 504),
        raise_on_status=False,
    )
    client = PrometheusConnect(
        url=settings.url.rstrip("/"),
        headers=headers,
        disable_ssl=not verify_tls,
        retry=retry,
        auth=auth,
        session=session,
        timeout=timeout_s,
        method="POST",
    )
    return client, traffic


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
        client: PrometheusConnect | None = None,
    ) -> None:
        self.settings = settings
        self.requests = 0
        self.bytes = 0
        self.detail = ""
        self.fetched: list[Series] = []
        self._url = public_url(settings.url or "")
        if client is None:
            self._client, self._traffic = make_client(settings, verify_tls, timeout_s)
        else:
            self._client, self._traffic = client, _Traffic()
            session = getattr(client, "_session", None)
            if isinstance(session, requests.Session):
                session.hooks["response"].append(self._traffic.hook)
        self._pool_size = max(1, settings.max_concurrency)

    # --- the collector protocol -----------------------------------------------------------------------------

    def discover(self, query: Query) -> Discovery:
        window, step = _duration(query.window.seconds), pq.pick_step(query.window.seconds)
        end = query.window.end
        found = self._instant(pq.pod_labels_query(query.experiment, query.namespace, query.label_keys, window), end)
        keys = sorted({(r["metric"].get("namespace", ""), r["metric"].get("pod", "")) for r in found})
        first_q = pq.pod_info_query(keys, query.experiment, query.namespace, window, step, last=False)
        last_q = pq.pod_info_query(keys, query.experiment, query.namespace, window, step, last=True)
        first, last = self._parallel([lambda: self._instant(first_q, end), lambda: self._instant(last_q, end)])
        series = _pod_series(found, first, last)
        pods = sorted({(s.labels.get("namespace", ""), s.labels.get("pod", "")) for s in series})
        if pods:
            builder = pq.SeriesBuilder()
            sel = pq.Selectors((), tuple(pods))
            phase = f"{sel.pod('kube_pod_status_phase')} > 0.5 unless {sel.pod('kube_pod_status_phase', offset=f' offset {step}s')} > 0.5"
            builder.add_edges(self._range(pq._named(phase), query, step), step, None)
            series.extend(builder.series())
        discovery = discover_from_series(series, query)
        if not discovery.pods:
            names = self._instant(pq.candidates_query(query.namespace, query.label_keys, window), end)
            candidates = {v for r in names for k, v in r["metric"].items() if k.startswith("label_") and v}
            discovery = Discovery(candidates=tuple(sorted(candidates))[:50])
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
        window, step = _duration(scope.window.seconds + pq.LOOKBACK_S), pq.pick_step(scope.window.seconds)
        whole = _duration(scope.window.seconds)
        end = scope.window.end
        sel = pq.Selectors(scope.node_names, tuple(p.key for p in scope.pods))
        builder = pq.SeriesBuilder()
        presence, last_values = self._parallel(
            [
                lambda: self._instant(pq.presence_query(sel, whole, step), end),
                lambda: self._instant(pq.last_value_query(sel, whole), end),
            ]
        )
        sel = pq.Selectors(sel.nodes, sel.pods, _node_labels(presence, sel.nodes) or pq.DCGM_NODE_LABELS[:1])
        models = tuple(sorted({r["metric"].get("modelName", "") for r in presence} - {""}))
        flagged = pq.Flagged({})
        if presence:
            flagged = pq.flagged_from(self._instant(pq.gpu_prefilter_query(sel, window, models), end))
            flagged = pq.Flagged({**flagged.by_metric, "models": models})
        self._edges(builder, sel, flagged, step, scope)
        _add_presence(builder, presence, last_values)
        self.fetched = builder.series()
        self._sync()
        return self.fetched

    def _edges(
        self, builder: pq.SeriesBuilder, sel: pq.Selectors, flagged: pq.Flagged, step: int, scope: Scope
    ) -> None:
        changes = pq.change_queries(sel, flagged, step)
        rise = pq.rise_query(sel, flagged, step)
        work: list[Callable[[], list[dict[str, Any]]]] = []
        if changes is not None:
            work += [
                lambda: self._range(changes[0], scope.query, step),
                lambda: self._range(changes[1], scope.query, step),
            ]
        if rise is not None:
            work.append(lambda: self._range(rise, scope.query, step))
        answers = self._parallel(work)
        if changes is not None:
            builder.add_edges(answers[0], step, answers[1])
        if rise is not None:
            builder.add_edges(answers[-1], step, None)

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
        start = query.window.start.timestamp() + step
        params = {"start": start, "end": query.window.end.timestamp(), "step": f"{step}s"}
        return self._call(
            lambda: self._client.custom_query_range(
                expr, query.window.start, query.window.end, f"{step}s", params=params
            )
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

    def _parallel(self, work: Sequence[Callable[[], list[dict[str, Any]]]]) -> list[list[dict[str, Any]]]:
        if len(work) <= 1 or self._pool_size == 1:
            return [w() for w in work]
        with ThreadPoolExecutor(max_workers=min(self._pool_size, len(work))) as pool:
            futures = [pool.submit(w) for w in work]
            return [f.result() for f in futures]

    def _sync(self) -> None:
        self.requests = self._traffic.count
        self.bytes = self._traffic.bytes

    def _describe(self, scope: Scope, series: list[Series], events: list[TimelineEvent]) -> None:
        gpus = {(s.label("Hostname", "hostname", "node"), s.label("gpu")) for s in series if s.name.startswith("DCGM")}
        parts = [
            f"{len(events)} events",
            f"{len(gpus)} GPUs on {len(scope.node_names)} nodes",
            f"{self.requests} queries",
        ]
        if not gpus:
            parts.append("no dcgm-exporter series for these nodes")
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


def _node_labels(presence: Sequence[Mapping[str, Any]], nodes: Sequence[str]) -> tuple[str, ...]:
    """Which node label this dcgm-exporter uses (Hostname before 2026, hostname after, or a relabelled node)."""
    wanted = set(nodes)
    used = {label for r in presence for label in pq.DCGM_NODE_LABELS if r["metric"].get(label) in wanted}
    return tuple(label for label in pq.DCGM_NODE_LABELS if label in used)


def _key(labels: Mapping[str, str]) -> str:
    return json.dumps({k: v for k, v in labels.items() if k not in ("__name__", pq.METRIC)}, sort_keys=True)


def _add_presence(
    builder: pq.SeriesBuilder, presence: Sequence[Mapping[str, Any]], last_values: Sequence[Mapping[str, Any]]
) -> None:
    values = {_key(r["metric"]): r["value"][1] for r in last_values}
    for item in presence:
        key = _key(item["metric"])
        try:
            at, value = float(item["value"][1]), float(values.get(key, "nan"))
        except (TypeError, ValueError):
            continue
        if value == value:  # not NaN
            builder.add(pq.PRESENCE_METRIC, item["metric"], at, value)


def _pod_series(
    found: Sequence[Mapping[str, Any]], first: Sequence[Mapping[str, Any]], last: Sequence[Mapping[str, Any]]
) -> list[Series]:
    """kube_pod_labels / kube_pod_info as two-sample series: first and last time seen in the window."""
    builder = pq.SeriesBuilder()
    seen: dict[tuple[str, str], list[float]] = {}
    for item in (*first, *last):
        labels = item["metric"]
        at = float(item["value"][1])
        builder.add("kube_pod_info", labels, at, 1.0)
        seen.setdefault((labels.get("namespace", ""), labels.get("pod", "")), []).append(at)
    for item in found:
        labels = item["metric"]
        for at in seen.get((labels.get("namespace", ""), labels.get("pod", "")), []):
            builder.add("kube_pod_labels", labels, at, 1.0)
    return builder.series()
