"""The log collector's searches as small state machines, and the driver that sends every pending one's next
request in a single ``_msearch``: independent searches cost one round trip together and the server runs them in
parallel, and a search that needs another page (or a follow-up) just takes part in the next round.

- ``Pages``: one query read oldest first with ``search_after``; its query may change between pages (the
  per-pod caps drop pods that have enough lines).
- ``Buckets``: a composite aggregation read page by page.
- ``Tails``: the last lines of ended containers from one ``top_hits`` aggregation, with exact follow-up searches
  for the few containers whose pod's newest lines are not all their own.
- ``One``: a single search whose hits are kept; ``Ask``: a single search whose answer is kept.

Each search keeps what it fetched in a ``Batch``; the collector merges batches in a fixed order, so the
documents (and the timeline's tie-breaks) do not depend on which answer came first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from whathappened.collectors.logs.elasticsearch import query as log_query
from whathappened.collectors.logs.elasticsearch.client import Requests
from whathappened.collectors.logs.fields import FieldMapping, name_of, time_of
from whathappened.collectors.logs.parse import END_SLACK, Target

from whathappened.model import Window

DocKey = tuple[str, str]
Hit = Mapping[str, Any]
Body = dict[str, Any]


@dataclass
class Batch:
    """Documents one step fetched, each once (by index and id), in the order they came."""

    docs: dict[DocKey, tuple[str, Mapping[str, Any]]] = field(default_factory=dict)
    transferred: int = 0  # every hit sent, re-sent ones included

    def keep(self, hits: Sequence[Hit]) -> list[Hit]:
        fresh = []
        self.transferred += len(hits)
        for hit in hits:
            key = (str(hit.get("_index")), str(hit.get("_id")))
            if key in self.docs or not isinstance(hit.get("_source"), Mapping):
                continue
            self.docs[key] = (key[0], hit["_source"])
            fresh.append(hit)
        return fresh


class Search(Protocol):
    index: str

    def body(self) -> Body | None:
        """The next request's body; None when this search is finished."""

    def take(self, response: Mapping[str, Any]) -> Sequence[Search]:
        """Read one answer; returns follow-up searches to run as well."""


def run(requests: Requests, searches: Iterable[Search]) -> None:
    """Round after round, the next request of every unfinished search, together (one ``_msearch``, or a plain
    search when only one is left), until all are finished."""
    pending = list(searches)
    while True:
        round_ = [(s, b) for s in pending if (b := s.body()) is not None]
        if not round_:
            return
        if len(round_) == 1:
            ((search, body),) = round_
            answers: list[Mapping[str, Any]] = [requests.search(search.index, body)]
        else:
            lines: list[Mapping[str, Any]] = []
            for search, body in round_:
                lines += [{"index": search.index, "ignore_unavailable": True, "allow_no_indices": True}, body]
            answers = requests.msearch(lines)
        pending = [s for s, _ in round_]
        for (search, _body), answer in zip(round_, answers, strict=True):
            pending.extend(search.take(answer))


def _hits(response: Mapping[str, Any]) -> list[Hit]:
    hits = response.get("hits")
    listed = hits.get("hits") if isinstance(hits, Mapping) else None
    return [hit for hit in listed if isinstance(hit, Mapping)] if isinstance(listed, list) else []


class Pages:
    """A query read oldest first. The next page restarts AT the last timestamp (not after the last hit) because
    ``_doc`` is not unique across shards: re-sent hits are dropped by id, and only a page that is all one
    timestamp falls back to plain ``search_after`` so that paging always moves on. ``on_page`` sees each page's
    new hits; ``query`` is asked again before each page and ends the search by returning None."""

    def __init__(
        self,
        index: str,
        query: Callable[[], Body | None],
        sort: list[Any],
        size: int,
        batch: Batch,
        source: Mapping[str, Any] | None = None,
        on_page: Callable[[Sequence[Hit]], None] | None = None,
    ) -> None:
        self.index = index
        self._query, self._sort, self._size, self._source = query, sort, size, source
        self._batch, self._on_page = batch, on_page
        self._after: list[Any] | None = None
        self._done = False

    def body(self) -> Body | None:
        query = None if self._done else self._query()
        if query is None:
            return None
        body: Body = {"size": self._size, "query": query, "sort": self._sort, "track_total_hits": False}
        if self._source is not None:
            body["_source"] = dict(self._source)
        if self._after is not None:
            body["search_after"] = self._after
        return body

    def take(self, response: Mapping[str, Any]) -> Sequence[Search]:
        hits = _hits(response)
        fresh = self._batch.keep(hits)
        if self._on_page is not None:
            self._on_page(fresh)
        first, last = (hits[0].get("sort", []), hits[-1].get("sort", [])) if hits else ([], [])
        if len(hits) < self._size or not last:
            self._done = True
        else:
            self._after = [last[0], -1] if first and first[0] != last[0] else list(last)
        return ()


class Buckets:
    """A composite aggregation (named ``pods``, ``page`` buckets a page) read to its last page, a short one,
    for the first of ``keys`` whose first page has any bucket (``key`` names it)."""

    def __init__(
        self, index: str, keys: Sequence[str], body: Callable[[str, Mapping[str, Any] | None], Body], page: int
    ) -> None:
        self.index = index
        self.key: str | None = None
        self.found: list[Mapping[str, Any]] = []
        self._keys, self._body, self._page = list(keys), body, page
        self._after: Mapping[str, Any] | None = None

    def body(self) -> Body | None:
        return self._body(self._keys[0], self._after) if self._keys else None

    def take(self, response: Mapping[str, Any]) -> Sequence[Search]:
        agg = response.get("aggregations", {}).get("pods", {})
        buckets = agg.get("buckets", [])
        if not buckets and not self.found:  # nothing under this key: the next one
            self._keys.pop(0)
            return ()
        self.key = self._keys[0]
        self.found.extend(buckets)
        self._after = agg.get("after_key")
        if not self._after or len(buckets) < self._page:
            self._keys = []
        return ()


class One:
    """One search; its hits go to the batch."""

    def __init__(self, index: str, body: Body, batch: Batch) -> None:
        self.index, self._batch = index, batch
        self._body: Body | None = body

    def body(self) -> Body | None:
        body, self._body = self._body, None
        return body

    def take(self, response: Mapping[str, Any]) -> Sequence[Search]:
        self._batch.keep(_hits(response))
        return ()


class Ask:
    """One search whose whole answer is kept (aggregations)."""

    def __init__(self, index: str, body: Body) -> None:
        self.index = index
        self.answer: Mapping[str, Any] = {}
        self._body: Body | None = body

    def body(self) -> Body | None:
        body, self._body = self._body, None
        return body

    def take(self, response: Mapping[str, Any]) -> Sequence[Search]:
        self.answer = response
        return ()


@dataclass(frozen=True)
class TailPlan:
    mapping: FieldMapping
    window: Window
    size: int  # lines per container
    resolved: Mapping[str, str]  # exact-match fields (aggregatable where every index agrees)
    label_keys: Sequence[str]


def exact_tail(index: str, plan: TailPlan, target: Target, batch: Batch) -> One:
    """The last lines of one container, exactly: its own lines up to its end, newest first."""
    body = {
        "size": plan.size,
        "query": log_query.tail_lines(plan.mapping, plan.window, target, plan.resolved),
        "sort": log_query.sort_by_time(plan.mapping, "desc"),
        "track_total_hits": False,
        "_source": log_query.log_source(plan.mapping, plan.label_keys),
    }
    return One(index, body, batch)


class Tails:
    """The last lines of every target from one aggregation; exact follow-ups where a pod's newest lines include
    lines that are not the target's (another container's, or after a restarted container's end)."""

    def __init__(self, index: str, plan: TailPlan, targets: Sequence[Target], batch: Batch) -> None:
        self.index, self._plan, self._targets, self._batch = index, plan, targets, batch
        self._asked = False

    def body(self) -> Body | None:
        if self._asked:
            return None
        self._asked = True
        plan = self._plan
        return log_query.tails_search(
            plan.mapping, plan.window, self._targets, plan.size, plan.resolved, plan.label_keys
        )

    def take(self, response: Mapping[str, Any]) -> Sequence[Search]:
        newest: dict[tuple[str, str], tuple[list[Hit], int]] = {}
        for ns in response.get("aggregations", {}).get("namespaces", {}).get("buckets", []):
            for pod in ns.get("pods", {}).get("buckets", []):
                hits = _hits(pod.get("newest", {}))
                newest[(str(ns.get("key")), str(pod.get("key")))] = (hits, int(pod.get("doc_count") or 0))
                self._batch.keep(hits)
        return [
            exact_tail(self.index, self._plan, t, self._batch)
            for t in self._targets
            if not self._complete(t, *newest.get((t.namespace, t.pod), ([], 0)))
        ]

    def _complete(self, target: Target, hits: Sequence[Hit], count: int) -> bool:
        """Whether these newest lines of the pod hold the target's last lines: every line the pod has, or only
        lines of the target (its container, up to its end), which are then its newest."""
        if len(hits) >= count:
            return True
        mapping = self._plan.mapping
        for hit in hits:
            source = hit.get("_source")
            at = time_of(source, mapping) if isinstance(source, Mapping) else None
            if at is None or at > target.end + END_SLACK:
                return False
            if target.container and name_of(source, mapping.container) != target.container:
                return False
        return True
