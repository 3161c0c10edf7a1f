"""Query DSL for the log collector: bounded, server-filtered searches, built as plain dicts (pure, testable).

Every search is bounded by the window and by names (pods, nodes, the experiment label) and, for log lines,
by the failure signatures' phrases, so the server sends back the few lines that matter and never scans an
index for us. Exact-name filters ask both ``field`` and ``field.keyword``: ECS templates map names as
``keyword``, dynamic mappings (Fluent Bit, an OpenSearch without templates) as ``text`` with a ``.keyword``
sub-field, and a term on the analyzed ``text`` field never matches a whole name, so the pair is exact in both.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from whathappened.collectors.logs.fields import AGENT_NAMESPACES, FieldMapping
from whathappened.collectors.logs.parse import END_SLACK, Target
from whathappened.collectors.logs.signatures import SIGNATURES

from whathappened.model import EMPTY, Window
from whathappened.timeutils import isoformat

Query = dict[str, Any]
EVENT_TIME_FIELDS = (
    "eventTime",
    "series.lastObservedTime",
    "lastTimestamp",
    "firstTimestamp",
    "metadata.creationTimestamp",
    "@timestamp",
    # Metricbeat / Elastic Agent kubernetes.event
    "kubernetes.event.timestamp.last_occurrence",
    "kubernetes.event.timestamp.first_occurrence",
    "kubernetes.event.metadata.timestamp.created",
)
EVENT_NAME_FIELDS = ("involvedObject.name", "regarding.name", "kubernetes.event.involved_object.name")
EVENT_LABEL_PREFIXES = ("involvedObject.labels", "regarding.labels")
EVENT_SLACK = timedelta(minutes=2)
# composite buckets a page: (pod, node, container) of every attempt of 4,096 ranks in two pages (search.max_buckets
# is 65,535 on Elasticsearch and OpenSearch)
BUCKETS = 10_000
MANY_NAMES = 1_000  # longer name lists in a line search are asked by their common prefix (see ``exact``)


def exact(field: str, values: Iterable[str], resolved: Mapping[str, str] = EMPTY, wide: bool = False) -> Query:
    """Exact names on ``field``; on its exact-match field alone when field caps told us which it is. ``wide``:
    more than MANY_NAMES names sharing a prefix are asked by it instead, a superset whose other names' lines are
    dropped when read (a 4,096-rank job's pods and nodes are a megabyte of terms, sent again with every page)."""
    listed = sorted(set(values))
    # names, not paths: the characters they share are wanted, not path components
    prefix = os.path.commonprefix(listed) if wide and len(listed) > MANY_NAMES else ""  # noqa: RUF071
    if len(prefix) >= 8:
        if field in resolved:
            return {"prefix": {resolved[field]: prefix}}
        return any_of([{"prefix": {field: prefix}}, {"prefix": {f"{field}.keyword": prefix}}])
    if field in resolved:
        return {"terms": {resolved[field]: listed}}
    return {
        "bool": {
            "should": [{"terms": {field: listed}}, {"terms": {f"{field}.keyword": listed}}],
            "minimum_should_match": 1,
        }
    }


def any_of(clauses: Sequence[Query]) -> Query:
    return clauses[0] if len(clauses) == 1 else {"bool": {"should": list(clauses), "minimum_should_match": 1}}


def in_window(fields: Sequence[str], start: datetime, end: datetime) -> Query:
    ranges = [
        {"range": {f: {"gte": isoformat(start), "lte": isoformat(end), "format": "strict_date_optional_time"}}}
        for f in fields
    ]
    return any_of(ranges)


def signature_filter(mapping: FieldMapping) -> Query:
    """Lines any signature could match: one ``match_phrase`` per phrase, one ``regexp`` or ``wildcard`` per token
    pattern."""
    phrases = sorted({p for s in SIGNATURES for p in s.phrases})
    regexps = sorted({s.regexp for s in SIGNATURES if s.regexp})
    wildcards = sorted({w for s in SIGNATURES for w in s.wildcards})
    clauses: list[Query] = []
    for field in mapping.message:
        clauses.extend({"match_phrase": {field: phrase}} for phrase in phrases)
        clauses.extend({"regexp": {field: {"value": r, "flags": "NONE"}}} for r in regexps)
        clauses.extend({"wildcard": {field: {"value": w}}} for w in wildcards)
    return any_of(clauses)


def log_source(mapping: FieldMapping, label_keys: Sequence[str] | None = None) -> dict[str, list[str]]:
    """Only the fields the parser reads come back (shippers add kilobytes of agent metadata per line): with
    ``label_keys``, of the pod labels only those keys' fields (what a snapshot's discovery reads again)."""
    fields = [*mapping.timestamp, *mapping.message, mapping.pod, mapping.namespace, mapping.node, mapping.container]
    labels = [f"{mapping.labels}.*"] if label_keys is None else [f for k in label_keys for f in mapping.label_fields(k)]
    return {"includes": [*dict.fromkeys([*fields, *labels, *mapping.host])]}


def sort_by_time(mapping: FieldMapping, order: str = "asc") -> list[Any]:
    return [
        {mapping.timestamp[0]: {"order": order, "unmapped_type": "date", "missing": "_last"}},
        {"_doc": {"order": order}},
    ]


def _pod_part(
    mapping: FieldMapping, pods: Sequence[str], namespaces: Iterable[str], resolved: Mapping[str, str]
) -> Query:
    pod = exact(mapping.pod, pods, resolved, wide=True)
    return {"bool": {"filter": [pod, exact(mapping.namespace, namespaces, resolved)]}}


def _node_part(mapping: FieldMapping, nodes: Sequence[str], resolved: Mapping[str, str]) -> Query:
    """A node's own lines (kernel, syslog): its host matches and there is no pod field."""
    return {
        "bool": {
            "filter": [any_of([exact(field, nodes, resolved, wide=True) for field in mapping.host])],
            "must_not": [{"exists": {"field": mapping.pod}}],
        }
    }


def _agent_part(mapping: FieldMapping, nodes: Sequence[str], resolved: Mapping[str, str]) -> Query:
    """The node agents' container lines (``AGENT_NAMESPACES``) on these nodes."""
    return {
        "bool": {
            "filter": [
                exact(mapping.node, nodes, resolved, wide=True),
                exact(mapping.namespace, sorted(AGENT_NAMESPACES), resolved),
            ]
        }
    }


def signature_lines(
    mapping: FieldMapping,
    window: Window,
    pods: Iterable[str],
    namespaces: Iterable[str],
    nodes: Iterable[str] = (),
    resolved: Mapping[str, str] = EMPTY,
) -> Query | None:
    """Signature lines in the window of these pods' containers, of these nodes' own logs and of the node agents
    on them, in one search (the
    signature filter is the costly part: it is evaluated once); None when there is nobody left to ask about."""
    listed_pods, listed_nodes = sorted(set(pods)), sorted(set(nodes))
    parts = ([_pod_part(mapping, listed_pods, namespaces, resolved)] if listed_pods else []) + (
        [_node_part(mapping, listed_nodes, resolved), _agent_part(mapping, listed_nodes, resolved)]
        if listed_nodes
        else []
    )
    if not parts:
        return None
    return {
        "bool": {
            "filter": [in_window(mapping.timestamp, window.start, window.end), any_of(parts), signature_filter(mapping)]
        }
    }


def tail_lines(mapping: FieldMapping, window: Window, target: Target, resolved: Mapping[str, str] = EMPTY) -> Query:
    """Every line of one ended container up to its end (sorted newest first by the caller, a few kept)."""
    filters = [
        in_window(mapping.timestamp, window.start, min(window.end, target.end + END_SLACK)),
        exact(mapping.pod, [target.pod], resolved),
        exact(mapping.namespace, [target.namespace], resolved),
    ]
    if target.container:
        filters.append(exact(mapping.container, [target.container], resolved))
    return {"bool": {"filter": filters}}


def tails_search(
    mapping: FieldMapping,
    window: Window,
    targets: Sequence[Target],
    size: int,
    resolved: Mapping[str, str],
    label_keys: Sequence[str] | None = None,
) -> Query:
    """One search for the newest ``size`` lines of every target's pod up to the latest end: a ``top_hits`` per
    (namespace, pod) bucket, so one pass over the pods' lines instead of a search per container. ``resolved``
    must name aggregatable fields for the pod and the namespace. A bucket whose lines are all the target's own
    (its container, up to its end) holds exactly its last lines; the caller asks again for the others."""
    end = min(window.end, max(t.end for t in targets) + END_SLACK)
    pods, namespaces = sorted({t.pod for t in targets}), sorted({t.namespace for t in targets})
    newest = {
        "top_hits": {"size": size, "sort": sort_by_time(mapping, "desc"), "_source": log_source(mapping, label_keys)}
    }
    by_pod = {"terms": {"field": resolved[mapping.pod], "size": len(pods)}, "aggs": {"newest": newest}}
    return {
        "size": 0,
        "track_total_hits": False,
        "query": {
            "bool": {
                "filter": [
                    in_window(mapping.timestamp, window.start, end),
                    exact(mapping.pod, pods, resolved),
                    exact(mapping.namespace, namespaces, resolved),
                ]
            }
        },
        "aggs": {
            "namespaces": {
                "terms": {"field": resolved[mapping.namespace], "size": len(namespaces)},
                "aggs": {"pods": by_pod},
            }
        },
    }


def archived_events(window: Window, names: Iterable[str], families: Iterable[Iterable[str]] = ()) -> Query:
    """Archived Events about these objects (pods, their owners, nodes) stamped in the window. Each of ``families``
    (the pods, the nodes) of more than MANY_NAMES names is asked by their common prefix, as the log lines are:
    12,288 pods and 4,096 nodes by name were a 5.8 MB request; the other objects' Events that come with it are
    dropped when read (``scope_event_objects``)."""
    listed = set(names)
    by_name: list[Query] = []
    for family in filter(None, map(set, families)):
        by_name += [exact(field, family, wide=True) for field in EVENT_NAME_FIELDS]
        listed -= family
    by_name += [exact(field, listed) for field in EVENT_NAME_FIELDS] if listed else []
    return {
        "bool": {
            "filter": [
                in_window(EVENT_TIME_FIELDS, window.start - EVENT_SLACK, window.end + EVENT_SLACK),
                any_of(by_name),
            ]
        }
    }


def labelled_events(window: Window, label_keys: Sequence[str], experiment: str, namespace: str | None) -> Query:
    """Archived pod Events whose ``involvedObject.labels`` name the experiment (as-is or de-dotted keys)."""
    fields = [
        f"{prefix}.{variant}"
        for key in label_keys
        for variant in dict.fromkeys((key, key.replace(".", "_")))
        for prefix in EVENT_LABEL_PREFIXES
    ]
    filters = [
        in_window(EVENT_TIME_FIELDS, window.start - EVENT_SLACK, window.end + EVENT_SLACK),
        any_of([exact(field, [experiment]) for field in fields]),
    ]
    if namespace is not None:
        filters.append(any_of([exact(f, [namespace]) for f in ("involvedObject.namespace", "regarding.namespace")]))
    return {"bool": {"filter": filters}}


def labelled_lines(
    mapping: FieldMapping,
    window: Window,
    key: str,
    value: str | None,
    namespace: str | None,
    resolved: Mapping[str, str] = EMPTY,
) -> Query:
    """Log lines in the window whose pod label ``key`` is ``value`` (any value when None)."""
    fields = mapping.label_fields(key)
    if value is None:
        label = any_of([{"exists": {"field": f}} for f in fields])
    else:
        label = any_of([exact(f, [value], resolved) for f in fields])
    filters = [in_window(mapping.timestamp, window.start, window.end), label]
    if namespace is not None:
        filters.append(exact(mapping.namespace, [namespace], resolved))
    return {"bool": {"filter": filters}}


def pods_aggregation(
    mapping: FieldMapping, keyword: Mapping[str, str], after: Mapping[str, Any] | None, namespace: str | None = None
) -> Query:
    """One bucket per (namespace, pod, node, container): a pod list, not lines. With the query bound to one
    ``namespace`` the namespace is no bucket key (every line has it: one pass fewer)."""
    sources: list[Query] = []
    if namespace is None:
        sources.append({"namespace": {"terms": {"field": keyword[mapping.namespace]}}})
    sources.append({"pod": {"terms": {"field": keyword[mapping.pod]}}})
    for name, field in (("node", mapping.node), ("container", mapping.container)):
        if field in keyword:
            sources.append({name: {"terms": {"field": keyword[field], "missing_bucket": True}}})
    composite: Query = {"size": BUCKETS, "sources": sources}
    if after:
        composite["after"] = dict(after)
    return {"pods": {"composite": composite}}


def nodes_last_seen(mapping: FieldMapping, keyword: Mapping[str, str], pods: Sequence[tuple[str, str]]) -> Query:
    """For pods seen on more than one node: when each (namespace, pod) last logged on each node."""
    namespaces, names = sorted({ns for ns, _ in pods}), sorted({pod for _, pod in pods})
    nodes = {
        "terms": {"field": keyword[mapping.node], "size": 100},
        "aggs": {"last": {"max": {"field": mapping.timestamp[0]}}},
    }
    by_pod = {"terms": {"field": keyword[mapping.pod], "size": len(names)}, "aggs": {"nodes": nodes}}
    return {
        "namespaces": {
            "terms": {"field": keyword[mapping.namespace], "size": len(namespaces)},
            "aggs": {"pods": by_pod},
        }
    }
