"""The log collector: container logs, node kernel logs and archived Kubernetes events from Elasticsearch or
OpenSearch, through the official ``elasticsearch`` client (``client`` owns it).

It asks the server for little, in few round trips: each search is bounded by the window and filtered on the
server by pod names, node names or the experiment label and by the failure signatures' phrases, paged with
``search_after``, capped per pod; the last lines of ended containers come from one ``top_hits`` aggregation.
Independent searches go out together in one ``_msearch`` (``search.run``): discovery is field caps plus
one round, collection one round; more only for further pages, containers whose pod's newest lines are not their
own, pods seen on several nodes, or "did you mean" candidates. What it fetched goes through
``log_parse.events_from_documents``, the function the snapshot collector runs over a recorded
``logs.ndjson``, so a live store and its snapshot give the same timeline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from whathappened.collectors.kube_objects import parse as kube_parse
from whathappened.collectors.logs import parse as log_parse
from whathappened.collectors.logs.elasticsearch import query as log_query
from whathappened.collectors.logs.elasticsearch.client import (
    Elasticsearch,
    OpenSearchNode,
    PlainJsonNode,
    Requests,
    client_options,
    detect_flavor,
    make_client,
    where_of,
)
from whathappened.collectors.logs.elasticsearch.search import (
    Ask,
    Batch,
    Buckets,
    DocKey,
    Hit,
    Pages,
    Search,
    TailPlan,
    Tails,
    exact_tail,
    run,
)
from whathappened.collectors.logs.elasticsearch.snapshot import write_bulk
from whathappened.collectors.logs.fields import FieldMapping, Reading, host_of, message_of, name_of, set_path
from whathappened.collectors.logs.parse import Limits
from whathappened.collectors.logs.shapes import (
    ARCHIVER_DEFAULT_INDICES,
    SHIPPER_DEFAULT_INDICES,
    UNMAPPED,
    Shape,
    asked_fields,
    shapes,
    with_defaults,
)

from whathappened.config import ElasticsearchSettings, Settings
from whathappened.model import TimelineEvent
from whathappened.scope import Discovery, Query, Scope

__all__ = [
    "LogCollector",
    "OpenSearchNode",
    "PlainJsonNode",
    "client_options",
    "detect_flavor",
    "make_client",
]

PAGE = 10_000  # signature lines a page (the most a search may ask): most experiments need one, as each page re-runs
# the signature filter; the three attempts of 4,096 ranks match 35,000 lines
TOP_HITS_MAX = 100  # Elasticsearch's index.max_inner_result_window: more last lines take a search each
EXACT_FIELDS_SUFFIX = ".keyword"
EVENT_SORT: list[Any] = [
    {"@timestamp": {"order": "asc", "unmapped_type": "date", "missing": "_last"}},
    {"_doc": {"order": "asc"}},
]


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
        settings = settings or ElasticsearchSettings()
        self.settings = settings
        self.reading = Reading(mapping) if mapping is not None else log_parse.reading_for(settings.preset)
        self.limits = limits or Limits(per_pod=settings.max_docs_per_pod)
        self.page_size = page_size
        self.detail = ""
        self.documents = 0  # documents transferred, every search together
        self.archived_events = 0  # archived Events found (an API that left event pages to the archive asks)
        self._requests = Requests(client, where_of(settings))
        self._fetched: dict[DocKey, tuple[str, Mapping[str, Any]]] = {}
        self._shapes: tuple[Shape, ...] | None = None  # which shipper wrote which indices (field caps)
        self._keyword: dict[str, str] | None = None  # field -> an aggregatable field for it (field caps)
        self._exact: dict[str, str] = {}  # field -> its exact-match field where every index agrees

    @property
    def log_index(self) -> str:
        return with_defaults(self.settings.log_index, ElasticsearchSettings.log_index, SHIPPER_DEFAULT_INDICES)

    @property
    def requests(self) -> int:
        return self._requests.count

    @requests.setter
    def requests(self, value: int) -> None:
        self._requests.count = value

    @property
    def request_log(self) -> list[str]:
        return self._requests.log

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
                collector._requests.counted()
                chosen = detect_flavor(probe)
            return make_client(settings, flavor=chosen, verify_tls=verify_tls, timeout_s=timeout_s)

        collector = cls(connect, settings)
        return collector

    # -- protocol --

    def discover(self, query: Query) -> Discovery:
        shapes = self._resolve(query.label_keys)
        events, pods = Batch(), [(shape, self._pods_search(shape, query)) for shape in shapes]
        labelled = log_query.labelled_events(query.window, query.label_keys, query.experiment, query.namespace)
        searches: list[Search] = [buckets for _, buckets in pods if buckets is not None]
        run(self._requests, [*searches, self._events(labelled, events)])
        self._merge(events)
        self.archived_events += len(events.docs)
        docs = [doc for shape, buckets in pods for doc in self._representatives(shape, buckets, query)]
        docs += list(events.docs.values())
        found = log_parse.discover_from_documents(docs, query, self.reading)
        if found.pods:
            return found
        values = list(self._label_values(shapes, query))
        candidates = log_parse.discover_from_documents(values + docs, query, self.reading)
        return Discovery(candidates=candidates.candidates)

    def collect(self, scope: Scope) -> list[TimelineEvent]:
        before = self.documents
        shapes = self._resolve(scope.query.label_keys)
        lines, tails, events = Batch(), Batch(), Batch()
        searches: list[Search] = [self._signature_pages(shape, scope, lines) for shape in shapes]
        for shape in shapes:
            searches += self._tails(shape, scope, tails)
        run(self._requests, [*searches, *self._archived(scope, events)])
        for batch in (lines, tails, events):
            self._merge(batch)
        self.archived_events += len(events.docs)
        events_found = log_parse.events_from_documents(self._fetched.values(), scope, self.reading, self.limits)
        self.detail = (
            f"{len(scope.pods)} pods, {len(events_found)} events from {self.documents - before} documents"
            f" in {self.requests} requests"
        )
        if len(shapes) > 1 or self.reading.fixed is None:
            self.detail += "; " + ", ".join(sorted({s.mapping.name for s in shapes})) + " fields"
        return events_found

    def export_snapshot(self, folder: Path) -> Path:
        """Write what was fetched as bulk NDJSON (``logs.ndjson``), the snapshot format ``--snapshot`` reads."""
        return write_bulk(folder, self._fetched.values())

    # -- collection --

    def _signature_pages(self, shape: Shape, scope: Scope, batch: Batch) -> Pages:
        """Signature lines of the scope's pods and nodes, oldest first. A pod (node) leaves the query once it
        has its cap of lines that really match a signature, so what is kept is its earliest ``cap``."""
        pods, nodes = set(scope.pod_names), set(scope.node_names)
        counts: dict[tuple[bool, str], int] = {}
        mapping = shape.mapping

        def count(hits: Sequence[Hit]) -> None:
            for hit in hits:
                source = hit["_source"]
                pod = name_of(source, mapping.pod)
                owner = (True, pod) if pod is not None else (False, host_of(source, mapping, nodes) or "")
                if log_parse.match_line(message_of(source, mapping)) is not None:
                    counts[owner] = counts.get(owner, 0) + 1
                    if counts[owner] == self.limits.per_pod:
                        (pods if owner[0] else nodes).discard(owner[1])

        def query() -> dict[str, Any] | None:
            return log_query.signature_lines(mapping, scope.window, pods, scope.namespaces, nodes, self._exact)

        source = log_query.log_source(mapping, scope.query.label_keys)
        sort = log_query.sort_by_time(mapping)
        return Pages(shape.index_for(scope.window), query, sort, self.page_size, batch, source, count)

    def _tails(self, shape: Shape, scope: Scope, batch: Batch) -> list[Search]:
        """The last lines of the ended containers: one aggregation where the pod and namespace fields are
        exact-match in every index (and the size is one ``top_hits`` allows), else a search each."""
        targets = log_parse.ended_targets(scope, self.limits)
        if not targets:
            return []
        mapping = shape.mapping
        plan = TailPlan(mapping, scope.window, self.limits.last_lines, self._exact, scope.query.label_keys)
        exact = mapping.pod in self._exact and mapping.namespace in self._exact
        if exact and self.limits.last_lines <= TOP_HITS_MAX:
            return [Tails(shape.index_for(scope.window), plan, targets, batch)]
        return [exact_tail(shape.index_for(scope.window), plan, target, batch) for target in targets]

    def _archived(self, scope: Scope, batch: Batch) -> list[Search]:
        names = kube_parse.event_names(scope)
        if not names:
            return []
        return [
            self._events(log_query.archived_events(scope.window, names, (scope.pod_names, scope.node_names)), batch)
        ]

    def _events(self, query: dict[str, Any], batch: Batch) -> Pages:
        return Pages(self.event_index, lambda: query, EVENT_SORT, self.page_size, batch)

    @property
    def event_index(self) -> str:
        return with_defaults(self.settings.event_index, ElasticsearchSettings.event_index, ARCHIVER_DEFAULT_INDICES)

    def _merge(self, batch: Batch) -> None:
        self.documents += batch.transferred
        for key, doc in batch.docs.items():
            self._fetched.setdefault(key, doc)

    # -- discovery --

    def _pods_search(self, shape: Shape, query: Query) -> Buckets | None:
        """A composite aggregation over the experiment's lines: one bucket per (namespace, pod, node,
        container), the pod list without fetching a single log line. The first label key with buckets wins;
        keys no index has a field for cost no request."""
        keyword, mapping = self._keyword or {}, shape.mapping
        if mapping.pod not in keyword or mapping.namespace not in keyword:
            return None
        keys = [k for k in query.label_keys if any(f in keyword for f in mapping.label_fields(k))]
        return Buckets(
            shape.index_for(query.window),
            keys,
            lambda key, after: self._pods_body(shape, query, key, after),
            log_query.BUCKETS,
        )

    def _pods_body(self, shape: Shape, query: Query, key: str, after: Mapping[str, Any] | None) -> dict[str, Any]:
        m = shape.mapping
        lines = log_query.labelled_lines(m, query.window, key, query.experiment, query.namespace, self._exact)
        aggs = log_query.pods_aggregation(m, self._keyword or {}, after, query.namespace)
        return {"size": 0, "track_total_hits": False, "query": lines, "aggs": aggs}

    def _representatives(
        self, shape: Shape, pods: Buckets | None, query: Query
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """One small synthetic document per bucket, as a log line of that pod would look. Its time only says
        which node a pod seen on several nodes was on last (asked only for such pods)."""
        if pods is None or pods.key is None:
            return
        mapping = shape.mapping
        keyed = [
            (str(b.get("key", {}).get("namespace") or query.namespace or ""), b.get("key", {})) for b in pods.found
        ]
        last = self._nodes_last_seen(shape, pods.key, query, keyed)
        for namespace, parts in keyed:
            doc: dict[str, Any] = {}
            for value, field in (
                (namespace, mapping.namespace),
                (parts.get("pod"), mapping.pod),
                (parts.get("node"), mapping.node),
                (parts.get("container"), mapping.container),
            ):
                if value:
                    set_path(doc, field, value)
            at = last.get((namespace, str(parts.get("pod")), str(parts.get("node"))), query.window.start.isoformat())
            set_path(doc, mapping.timestamp[0], at)
            set_path(doc, mapping.label_fields(pods.key)[0], query.experiment)
            yield "logs", doc

    def _nodes_last_seen(
        self, shape: Shape, key: str, query: Query, keyed: Sequence[tuple[str, Mapping[str, Any]]]
    ) -> dict[tuple[str, str, str], Any]:
        """(namespace, pod, node) -> the last time the pod logged there, for pods seen on several nodes."""
        nodes: dict[tuple[str, str], set[str]] = {}
        for namespace, parts in keyed:
            if parts.get("node"):
                nodes.setdefault((namespace, str(parts.get("pod"))), set()).add(str(parts["node"]))
        moved = sorted(pod for pod, seen in nodes.items() if len(seen) > 1)
        if not moved:
            return {}
        lines = self._pods_body(shape, query, key, None)["query"]
        names = log_query.exact(shape.mapping.pod, [pod for _, pod in moved], self._exact)
        body = {
            "size": 0,
            "track_total_hits": False,
            "query": {"bool": {"filter": [lines, names]}},
            "aggs": log_query.nodes_last_seen(shape.mapping, self._keyword or {}, moved),
        }
        found: dict[tuple[str, str, str], Any] = {}
        answer = self._requests.search(shape.index_for(query.window), body)
        for ns in answer.get("aggregations", {}).get("namespaces", {}).get("buckets", []):
            for pod in ns.get("pods", {}).get("buckets", []):
                for node in pod.get("nodes", {}).get("buckets", []):
                    seen = node.get("last", {})
                    at = seen.get("value_as_string") or seen.get("value")
                    if at is not None:
                        found[(str(ns.get("key")), str(pod.get("key")), str(node.get("key")))] = at
        return found

    def _label_values(self, shapes: Sequence[Shape], query: Query) -> Iterator[tuple[str, dict[str, Any]]]:
        """Experiment names the label fields hold in the window, for "did you mean" (no pods matched): one
        terms aggregation per label field an index has, all in one round."""
        keyword = self._keyword or {}
        asks: list[tuple[Shape, str, Ask]] = []
        for shape in shapes:
            for key in query.label_keys:
                lines = log_query.labelled_lines(shape.mapping, query.window, key, None, query.namespace, self._exact)
                for field in shape.mapping.label_fields(key):
                    if field in keyword:
                        aggs = {"values": {"terms": {"field": keyword[field], "size": 50}}}
                        body = {"size": 0, "track_total_hits": False, "query": lines, "aggs": aggs}
                        asks.append((shape, field, Ask(shape.index_for(query.window), body)))
        run(self._requests, [ask for _, _, ask in asks])
        for shape, field, ask in asks:
            for bucket in ask.answer.get("aggregations", {}).get("values", {}).get("buckets", []):
                doc: dict[str, Any] = {}
                set_path(doc, field, bucket.get("key"))
                # the shipper's pod and namespace fields tell the reader the document's shape
                set_path(doc, shape.mapping.pod, "")
                set_path(doc, shape.mapping.namespace, query.namespace or "")
                set_path(doc, shape.mapping.timestamp[0], query.window.start.isoformat())
                yield "logs", doc

    def _resolve(self, label_keys: Sequence[str]) -> tuple[Shape, ...]:
        """Which shipper wrote which index, and the exact-match fields, from one field caps request (asked once;
        discovery usually asked already)."""
        if self._shapes is None:
            caps, indices = self._requests.field_caps(self.log_index, asked_fields(self.reading))
            self._shapes = shapes(caps, indices, self.reading, self.log_index)
            self._keyword_fields(caps, label_keys)
        return self._shapes

    def _keyword_fields(self, caps: Mapping[str, Any], label_keys: Sequence[str]) -> None:
        """field -> the aggregatable field for it (itself when keyword, else its ``.keyword`` sub-field)."""
        wanted: list[str] = []
        for shape in self._shapes or ():
            m = shape.mapping
            wanted += [m.pod, m.namespace, m.node, m.container, *m.host]
            wanted += [f for key in label_keys for f in m.label_fields(key)]
        found: dict[str, str] = {}
        self._exact = {}
        for field in dict.fromkeys(wanted):
            for candidate in (field, field + EXACT_FIELDS_SUFFIX):
                types = _mapped_types(caps, candidate)
                if any(t.get("aggregatable") for t in types):
                    found[field] = candidate
                    # filters use it alone only when every index agrees; a mixed mapping keeps both fields
                    if all(t.get("aggregatable") for t in types) and (
                        candidate == field or not any(t.get("aggregatable") for t in _mapped_types(caps, field))
                    ):
                        self._exact[field] = candidate
                    break
        self._keyword = found


def _mapped_types(caps: Mapping[str, Any], field: str) -> list[Mapping[str, Any]]:
    """A field's capabilities per type, where an index maps it (``include_unmapped`` adds an ``unmapped`` one)."""
    types = caps.get(field, {})
    if not isinstance(types, Mapping):
        return []
    return [t for name, t in types.items() if name != UNMAPPED and isinstance(t, Mapping)]


def create_collector(settings: Settings, utilization: bool = True) -> LogCollector:
    """The collector for these settings (the source registry's factory; ``utilization`` is Prometheus's)."""
    return LogCollector.from_settings(
        settings.elasticsearch, verify_tls=settings.verify_tls, timeout_s=settings.deadline_s
    )
