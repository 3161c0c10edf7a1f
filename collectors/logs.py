"""The log collector: container logs, node kernel logs and archived Kubernetes events from Elasticsearch or
OpenSearch, through the official ``elasticsearch`` client (the one module that imports it).

It asks the server for little: each search is bounded by the window and filtered on the server by pod names,
node names or the experiment label and by the failure signatures' phrases, paged with ``search_after``,
capped per pod; the few last lines of ended containers come from one ``_msearch`` of small newest-first
searches. What it fetched goes through ``_log_parse.events_from_documents``, the function the snapshot
collector runs over a recorded ``logs.ndjson``, so a live store and its snapshot give the same timeline.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from elastic_transport import ConnectionError as TransportConnectionError
from elastic_transport import ConnectionTimeout, HttpHeaders, TlsError, TransportError, Urllib3HttpNode
from elastic_transport._node import NodeApiResponse
from elastic_transport.client_utils import DEFAULT, DefaultType
from elasticsearch import ApiError, Elasticsearch, UnsupportedProductError
from whathappened.collectors import _log_parse, _log_query
from whathappened.collectors._log_fields import FieldMapping, host_of, message_of, name_of, set_path
from whathappened.collectors._log_parse import Limits, Target

from whathappened.config import ElasticsearchSettings
from whathappened.errors import SourceError, SourceForbidden, SourceTimeout, SourceUnreachable
from whathappened.model import TimelineEvent
from whathappened.scope import Discovery, Query, Scope

DocKey = tuple[str, str]
PAGE = 1000
EXACT_FIELDS_SUFFIX = ".keyword"

# --- the client ---------------------------------------------------------------------------------------------

_PLAIN = {
    "application/vnd.elasticsearch+json": "application/json",
    "application/vnd.elasticsearch+x-ndjson": "application/x-ndjson",
}


def _plain_mimetype(value: str) -> str:
    base = value.split(";", 1)[0].strip()
    return _PLAIN.get(base, value)


class PlainJsonNode(Urllib3HttpNode):
    """Sends plain ``application/json``: the client's ``compatible-with=N`` media type makes OpenSearch-API
    servers answer 406, and Elasticsearch 7, 8 and 9 all accept plain JSON."""

    def perform_request(
        self,
        method: str,
        target: str,
        body: bytes | None = None,
        headers: HttpHeaders | None = None,
        request_timeout: DefaultType | float | None = DEFAULT,
    ) -> NodeApiResponse:
        plain = HttpHeaders(headers or {})
        for name in ("content-type", "accept"):
            if name in plain:
                plain[name] = _plain_mimetype(plain[name])
        return super().perform_request(method, target, body, plain, request_timeout)


class OpenSearchNode(PlainJsonNode):
    """For OpenSearch only: it never sends ``X-Elastic-Product``, so the client's product check would refuse
    every answer. The header is added to responses of a server we already identified as OpenSearch."""

    def perform_request(
        self,
        method: str,
        target: str,
        body: bytes | None = None,
        headers: HttpHeaders | None = None,
        request_timeout: DefaultType | float | None = DEFAULT,
    ) -> NodeApiResponse:
        response = super().perform_request(method, target, body, headers, request_timeout)
        if "x-elastic-product" not in response.meta.headers:
            response.meta.headers = response.meta.headers.copy()
            response.meta.headers["x-elastic-product"] = "Elasticsearch"
        return response


def client_options(
    settings: ElasticsearchSettings, *, verify_tls: bool = True, timeout_s: float = 10.0
) -> dict[str, Any]:
    """Keyword arguments for ``Elasticsearch(...)`` from the settings: auth, CA, TLS verification (on by
    default), no silent retries (requests stay countable; a 429 is reported, not hammered)."""
    options: dict[str, Any] = {
        "request_timeout": timeout_s,
        "max_retries": 0,
        "retry_on_status": (),
        "verify_certs": verify_tls,
    }
    if settings.cloud_id:
        options["cloud_id"] = settings.cloud_id
    elif settings.url:
        options["hosts"] = [settings.url]
    else:
        raise SourceError("no Elasticsearch/OpenSearch URL or cloud id configured", status="not_configured")
    if settings.api_key:
        options["api_key"] = settings.api_key.reveal()
    elif settings.bearer_token:
        options["bearer_auth"] = settings.bearer_token.reveal()
    elif settings.username:
        options["basic_auth"] = (settings.username, settings.password.reveal() if settings.password else "")
    if settings.ca_file:
        options["ca_certs"] = settings.ca_file
    if not verify_tls:
        options["ssl_show_warn"] = False
    return options


def make_client(
    settings: ElasticsearchSettings, *, flavor: str, verify_tls: bool = True, timeout_s: float = 10.0
) -> Elasticsearch:
    """A client for ``flavor`` ``elasticsearch`` or ``opensearch`` (see ``detect_flavor``)."""
    node_class = OpenSearchNode if flavor == "opensearch" else PlainJsonNode
    return Elasticsearch(node_class=node_class, **client_options(settings, verify_tls=verify_tls, timeout_s=timeout_s))


def detect_flavor(client: Elasticsearch) -> str:
    """``opensearch`` or ``elasticsearch`` from ``GET /``, asked below the client's product check."""
    response = client.transport.perform_request("GET", "/", headers={"accept": "application/json"})
    body: Mapping[str, Any] = response.body if isinstance(response.body, Mapping) else {}
    version = body.get("version")
    version = version if isinstance(version, Mapping) else {}
    distribution = str(version.get("distribution", "")).lower()
    return (
        "opensearch"
        if distribution == "opensearch" or "opensearch" in str(body.get("tagline", "")).lower()
        else "elasticsearch"
    )


# --- errors -------------------------------------------------------------------------------------------------

_STATUS_TEXT = {
    401: ("authentication failed (HTTP 401): check the API key, user or token", SourceForbidden),
    403: ("access denied (HTTP 403): the credentials may not read these indices", SourceForbidden),
    406: ("the server refused the request's content type (HTTP 406)", SourceError),
    429: ("the server is rate limiting requests (HTTP 429)", SourceError),
}


def _status_error(status: int, where: str) -> SourceError:
    text, cls = _STATUS_TEXT.get(status, (f"the server answered HTTP {status}", SourceError))
    return cls(f"{where}: {text}")


def _source_error(exc: Exception, where: str) -> SourceError:
    """One scrubbed line per failure; messages are ours, so no URL credentials or keys can leak."""
    if isinstance(exc, UnsupportedProductError):
        return SourceError(f"{where} is neither Elasticsearch nor OpenSearch")
    if isinstance(exc, ApiError):
        return _status_error(exc.meta.status, where)
    if isinstance(exc, ConnectionTimeout):
        return SourceTimeout(f"{where} did not answer in time")
    if isinstance(exc, TlsError):
        return SourceUnreachable(f"{where}: TLS handshake or certificate verification failed")
    if isinstance(exc, TransportConnectionError):
        return SourceUnreachable(f"cannot connect to {where}")
    return SourceError(f"{where}: {type(exc).__name__}")


def _where(settings: ElasticsearchSettings) -> str:
    if settings.cloud_id:
        return "Elastic Cloud deployment"
    from urllib.parse import urlsplit

    parts = urlsplit(settings.url or "")
    return f"{parts.scheme}://{parts.hostname}:{parts.port}" if parts.port else f"{parts.scheme}://{parts.hostname}"


# --- the collector ------------------------------------------------------------------------------------------


class LogCollector:
    name = "logs"

    def __init__(
        self,
        client: Elasticsearch | Callable[[], Elasticsearch],
        settings: ElasticsearchSettings | None = None,
        *,
        mapping: FieldMapping | None = None,
        limits: Limits | None = None,
        page_size: int = PAGE,
    ) -> None:
        self._client_or_factory = client
        self._client: Elasticsearch | None = client if isinstance(client, Elasticsearch) else None
        settings = settings or ElasticsearchSettings()
        self.settings = settings
        self.mapping = mapping or _log_parse.mapping_for(settings.preset)
        self.limits = limits or Limits(per_pod=settings.max_docs_per_pod)
        self.page_size = page_size
        self.requests = 0
        self.request_log: list[str] = []
        self.detail = ""
        self.documents = 0  # documents transferred, every search together
        self._fetched: dict[DocKey, tuple[str, Mapping[str, Any]]] = {}
        self._exact: dict[str, str] | None = None  # field -> its exact-match field where every index agrees
        self._where = _where(settings) if settings.url or settings.cloud_id else "the log store"

    @classmethod
    def from_settings(
        cls, settings: ElasticsearchSettings, *, verify_tls: bool = True, timeout_s: float = 10.0, flavor: str = "auto"
    ) -> LogCollector:
        """A collector whose client is built on first use (``flavor`` ``auto`` asks the server what it is)."""
        collector: LogCollector

        def connect() -> Elasticsearch:
            chosen = flavor
            if chosen == "auto":
                probe = make_client(settings, flavor="elasticsearch", verify_tls=verify_tls, timeout_s=timeout_s)
                collector.requests += 1
                chosen = detect_flavor(probe)
            return make_client(settings, flavor=chosen, verify_tls=verify_tls, timeout_s=timeout_s)

        collector = cls(connect, settings)
        return collector

    # -- protocol --

    def discover(self, query: Query) -> Discovery:
        keyword = self._keyword_fields(query.label_keys)
        docs: list[tuple[str, Mapping[str, Any]]] = list(self._pod_representatives(query, keyword))
        docs.extend(
            self._paged(
                self.settings.event_index,
                _log_query.labelled_events(query.window, query.label_keys, query.experiment, query.namespace),
                self._event_sort(),
            )
        )
        found = _log_parse.discover_from_documents(docs, query, self.mapping)
        if found.pods:
            return found
        values = list(self._label_values(query, keyword))
        candidates = _log_parse.discover_from_documents(values + docs, query, self.mapping)
        return Discovery(candidates=candidates.candidates)

    def collect(self, scope: Scope) -> list[TimelineEvent]:
        before = self.documents
        self._collect_container_lines(scope)
        self._collect_node_lines(scope)
        self._collect_tails(scope)
        self._collect_events(scope)
        events = _log_parse.events_from_documents(self._fetched.values(), scope, self.mapping, self.limits)
        self.detail = f"{len(scope.pods)} pods, {len(events)} events from {self.documents - before} documents in {self.requests} requests"
        return events

    def export_snapshot(self, folder: Path) -> Path:
        """Write what was fetched as bulk NDJSON (``logs.ndjson``), the snapshot format ``--snapshot`` reads."""
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "logs.ndjson"
        with path.open("w", encoding="utf-8") as out:
            for index, doc in self._fetched.values():
                out.write(json.dumps({"create": {"_index": index}}) + "\n")
                out.write(json.dumps(doc, default=str) + "\n")
        return path

    # -- collection steps --

    def _collect_container_lines(self, scope: Scope) -> None:
        pods = scope.pod_names
        if not pods:
            return
        self._capped(
            pods,
            lambda skip: _log_query.container_lines(
                self.mapping, scope.window, pods, scope.namespaces, skip, self._resolved(scope)
            ),
            self.mapping.pod,
        )

    def _collect_node_lines(self, scope: Scope) -> None:
        nodes = scope.node_names
        if not nodes:
            return
        self._capped(
            nodes,
            lambda skip: _log_query.node_lines(self.mapping, scope.window, nodes, skip, self._resolved(scope)),
            None,
        )

    def _capped(
        self, names: Sequence[str], build: Callable[[Sequence[str]], dict[str, Any]], field: str | None
    ) -> None:
        """Page through signature lines, dropping a pod (node) from the query once it reached its cap of lines
        that really match a signature: the pages come oldest first, so what is kept is the earliest ``cap``."""
        counts: dict[str, int] = {}
        full: list[str] = []
        after: list[Any] | None = None
        while True:
            hits, after = self._page(self.settings.log_index, build(full), self._time_sort(), after)
            for hit in hits:
                owner = self._owner(hit["_source"], field)
                if _log_parse.match_line(message_of(hit["_source"], self.mapping)) is not None:
                    counts[owner] = counts.get(owner, 0) + 1
                    if counts[owner] == self.limits.per_pod:
                        full.append(owner)
            if after is None or len(full) == len(names):
                return

    def _resolved(self, scope: Scope) -> Mapping[str, str]:
        """Exact-match fields from field caps (asked once; discovery usually asked already)."""
        if self._exact is None:
            self._keyword_fields(scope.query.label_keys)
        return self._exact or {}

    def _owner(self, source: Mapping[str, Any], field: str | None) -> str:
        if field is not None:
            return name_of(source, field) or ""
        return host_of(source, self.mapping) or ""

    def _collect_tails(self, scope: Scope) -> None:
        targets = _log_parse.ended_targets(scope, self.limits)
        if not targets:
            return
        searches: list[dict[str, Any]] = []
        for target in targets:
            searches.append({"index": self.settings.log_index, "ignore_unavailable": True, "allow_no_indices": True})
            searches.append(self._tail_body(scope, target))
        for response in self._msearch(searches):
            self._keep(response.get("hits", {}).get("hits", []))

    def _tail_body(self, scope: Scope, target: Target) -> dict[str, Any]:
        return {
            "size": self.limits.last_lines,
            "query": _log_query.tail_lines(self.mapping, scope.window, target, self._resolved(scope)),
            "sort": _log_query.sort_by_time(self.mapping, "desc"),
            "track_total_hits": False,
            "_source": _log_query.log_source(self.mapping),
        }

    def _collect_events(self, scope: Scope) -> None:
        names = set(scope.pod_names) | set(scope.node_names) | {p.owner_name for p in scope.pods if p.owner_name}
        if names:
            self._paged(self.settings.event_index, _log_query.archived_events(scope.window, names), self._event_sort())

    # -- discovery steps --

    def _pod_representatives(self, query: Query, keyword: Mapping[str, str]) -> Iterator[tuple[str, dict[str, Any]]]:
        """One small synthetic document per (namespace, pod, node, container) the label selects, from a
        composite aggregation: the pod list without fetching a single log line. First label key wins; keys
        no index has a field for cost no request."""
        if self.mapping.pod not in keyword or self.mapping.namespace not in keyword:
            return
        for key in query.label_keys:
            if not any(field in keyword for field in self.mapping.label_fields(key)):
                continue
            buckets = list(self._buckets(query, key, keyword))
            for bucket in buckets:
                yield "logs", self._representative(bucket, key, query.experiment)
            if buckets:
                return

    def _buckets(self, query: Query, key: str, keyword: Mapping[str, str]) -> Iterator[Mapping[str, Any]]:
        after: Mapping[str, Any] | None = None
        while True:
            body = {
                "size": 0,
                "query": _log_query.labelled_lines(
                    self.mapping, query.window, key, query.experiment, query.namespace, self._exact or {}
                ),
                "aggs": _log_query.pods_aggregation(self.mapping, keyword, after),
            }
            agg = self._search(self.settings.log_index, body).get("aggregations", {}).get("pods", {})
            yield from agg.get("buckets", [])
            after = agg.get("after_key")
            if not after or len(agg.get("buckets", [])) == 0:
                return

    def _representative(self, bucket: Mapping[str, Any], key: str, experiment: str) -> dict[str, Any]:
        doc: dict[str, Any] = {}
        parts = bucket.get("key", {})
        for name, field in (
            ("namespace", self.mapping.namespace),
            ("pod", self.mapping.pod),
            ("node", self.mapping.node),
            ("container", self.mapping.container),
        ):
            if parts.get(name):
                set_path(doc, field, parts[name])
        last = bucket.get("last", {})
        set_path(doc, self.mapping.timestamp[0], last.get("value_as_string") or last.get("value"))
        set_path(doc, self.mapping.label_fields(key)[0], experiment)
        return doc

    def _label_values(self, query: Query, keyword: Mapping[str, str]) -> Iterator[tuple[str, dict[str, Any]]]:
        """Experiment names the label fields hold in the window, for "did you mean" (no pods matched)."""
        for key in query.label_keys:
            for field in self.mapping.label_fields(key):
                if field not in keyword:
                    continue
                body = {
                    "size": 0,
                    "query": _log_query.labelled_lines(
                        self.mapping, query.window, key, None, query.namespace, self._exact or {}
                    ),
                    "aggs": {"values": {"terms": {"field": keyword[field], "size": 50}}},
                }
                for bucket in (
                    self._search(self.settings.log_index, body)
                    .get("aggregations", {})
                    .get("values", {})
                    .get("buckets", [])
                ):
                    doc: dict[str, Any] = {}
                    set_path(doc, field, bucket.get("key"))
                    if query.namespace is not None:
                        set_path(doc, self.mapping.namespace, query.namespace)
                    set_path(doc, self.mapping.timestamp[0], query.window.start.isoformat())
                    yield "logs", doc

    def _keyword_fields(self, label_keys: Sequence[str]) -> dict[str, str]:
        """field -> the aggregatable field for it (itself when keyword, else its ``.keyword`` sub-field)."""
        wanted = [
            self.mapping.pod,
            self.mapping.namespace,
            self.mapping.node,
            self.mapping.container,
            *self.mapping.host,
        ]
        wanted += [f for key in label_keys for f in self.mapping.label_fields(key)]
        # GET with the field list as a parameter: some OpenSearch-API servers read a POST's (empty) body instead.
        caps = self._call(
            lambda c: c.perform_request(
                "GET",
                f"/{self.settings.log_index}/_field_caps",
                params={
                    "fields": ",".join(wanted + [f + EXACT_FIELDS_SUFFIX for f in wanted]),
                    "ignore_unavailable": "true",
                    "allow_no_indices": "true",
                },
                headers={"accept": "application/json"},
            )
        ).get("fields", {})
        found, self._exact = {}, {}
        for field in wanted:
            for candidate in (field, field + EXACT_FIELDS_SUFFIX):
                types = caps.get(candidate, {}).values()
                if any(t.get("aggregatable") for t in types):
                    found[field] = candidate
                    # filters use it alone only when every index agrees; a mixed mapping keeps both fields
                    if all(t.get("aggregatable") for t in types) and (
                        candidate == field or not any(t.get("aggregatable") for t in caps.get(field, {}).values())
                    ):
                        self._exact[field] = candidate
                    break
        return found

    # -- requests --

    def _time_sort(self) -> list[Any]:
        return _log_query.sort_by_time(self.mapping)

    def _event_sort(self) -> list[Any]:
        return [
            {"@timestamp": {"order": "asc", "unmapped_type": "date", "missing": "_last"}},
            {"_doc": {"order": "asc"}},
        ]

    def _paged(self, index: str, query: dict[str, Any], sort: list[Any]) -> list[tuple[str, Mapping[str, Any]]]:
        docs: list[tuple[str, Mapping[str, Any]]] = []
        after: list[Any] | None = None
        while True:
            hits, after = self._page(index, query, sort, after)
            docs.extend((hit["_index"], hit["_source"]) for hit in hits)
            if after is None:
                return docs

    def _page(
        self, index: str, query: dict[str, Any], sort: list[Any], after: list[Any] | None
    ) -> tuple[list[dict[str, Any]], list[Any] | None]:
        """One page, oldest first. The next page restarts AT the last timestamp (not after the last hit)
        because ``_doc`` is not unique across shards: re-sent hits are dropped by id, and only a page that is
        all one timestamp falls back to plain ``search_after`` so that paging always moves on."""
        body: dict[str, Any] = {"size": self.page_size, "query": query, "sort": sort, "track_total_hits": False}
        if index == self.settings.log_index:
            body["_source"] = _log_query.log_source(self.mapping)
        if after is not None:
            body["search_after"] = after
        hits = self._search(index, body).get("hits", {}).get("hits", [])
        fresh = self._keep(hits)
        if len(hits) < self.page_size:
            return fresh, None
        first, last = hits[0].get("sort", []), hits[-1].get("sort", [])
        if not last:
            return fresh, None
        return fresh, ([last[0], -1] if first and first[0] != last[0] else list(last))

    def _keep(self, hits: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        fresh = []
        self.documents += len(hits)
        for hit in hits:
            key = (str(hit.get("_index")), str(hit.get("_id")))
            if key in self._fetched or not isinstance(hit.get("_source"), Mapping):
                continue
            self._fetched[key] = (key[0], hit["_source"])
            fresh.append(dict(hit))
        return fresh

    def _search(self, index: str, body: dict[str, Any]) -> Mapping[str, Any]:
        params = dict(body)
        if "_source" in params:
            params["source"] = params.pop("_source")
        return self._call(lambda c: c.search(index=index, ignore_unavailable=True, allow_no_indices=True, **params))

    def _msearch(self, searches: list[dict[str, Any]]) -> list[Mapping[str, Any]]:
        responses = self._call(lambda c: c.msearch(searches=searches)).get("responses", [])
        for response in responses:
            if "error" in response:
                raise _status_error(int(response.get("status") or 500), self._where)
        return list(responses)

    def _call(self, request: Callable[[Elasticsearch], Any]) -> Any:
        try:
            client = self._connect()
            self.requests += 1
            response = request(client)
        except (ApiError, TransportError) as exc:
            self.request_log.append(f"request {self.requests}: {type(exc).__name__}")
            raise _source_error(exc, self._where) from None
        meta = getattr(response, "meta", None)
        if meta is not None:  # for --debug: the outcome only; the query and the credentials stay out
            self.request_log.append(f"request {self.requests}: {meta.status} in {meta.duration:.2f} s")
        return response.body if hasattr(response, "body") else response

    def _connect(self) -> Elasticsearch:
        if self._client is None:
            factory = self._client_or_factory
            assert callable(factory)
            self._client = factory()
        return self._client
