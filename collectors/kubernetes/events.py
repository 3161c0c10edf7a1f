"""Which Events to list for a scope, and how: one page of each namespace, then by name (a field selector per object
the experiment's events can be about) when the namespace holds more than a page and the experiment few objects,
else page on, unless an event archive is read alongside (its search answers by name at any size: the pages left
are read only when it found nothing); node events from "default"; the newer events API where a role grants only
that."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from whathappened.collectors.kube_objects.parse import event_names, event_relevance
from whathappened.collectors.kubernetes.access import Call

from whathappened.errors import SourceForbidden
from whathappened.scope import Scope

# Up to this many objects an experiment's events can be about, a namespace with more events than one page is asked
# for them by name instead of being paged through (a 4-pod job in a namespace of 50,000 events: 1 + ~10 requests).
NAMED_EVENT_LISTS = 16
Keep = Callable[[Mapping[str, Any]], bool]


class Paged(Protocol):
    def __call__(
        self,
        call: Call,
        endpoint: str,
        where: Mapping[str, str] | None = None,
        params: Sequence[tuple[str, Any]] = (),
        accept: str = ...,
        keep: Keep | None = None,
        start: str | None = None,
        pages: int | None = None,
    ) -> tuple[list[Any], str | None]: ...


@dataclass(frozen=True, slots=True)
class LeftPages:
    """A namespace's event pages not read because an event archive is read alongside: where to go on from."""

    namespace: str
    fields: str | None  # the field selector of the list they belong to
    token: str  # its continue token


@dataclass(frozen=True, slots=True)
class Listed:
    events: list[Mapping[str, Any]]
    left: tuple[LeftPages, ...] = ()


def fetch_events(scope: Scope, paged: Paged, archive: bool = False) -> Listed:
    """The events about the scope, kept page by page: a namespace's 50,000 events are not all held at once.
    ``archive``: an event archive is read alongside, so a large experiment's further pages are left to it."""
    relevant = event_relevance(scope)
    names = sorted(event_names(scope))
    nodes = set(scope.node_names)
    found: list[Mapping[str, Any]] = []
    left: list[LeftPages] = []
    # node events are recorded in "default" (kubelet, node-problem-detector, node-termination-handler)
    lists: list[tuple[str, str | None, list[str]]] = [
        (namespace, None, names if namespace == "default" else [n for n in names if n not in nodes])
        for namespace in scope.namespaces
    ]
    if scope.node_names and "default" not in scope.namespaces:
        lists.append(("default", "involvedObject.kind=Node", sorted(nodes)))
    for namespace, kind, about in lists:
        events, token = _events(paged, namespace, kind, about, relevant, archive)
        found += events
        if token is not None:
            left.append(LeftPages(namespace, kind, token))
    return Listed(found, tuple(left))


def fetch_left(left: Sequence[LeftPages], scope: Scope, paged: Paged) -> list[Mapping[str, Any]]:
    """The pages ``fetch_events`` left to an archive that had nothing: read after all."""
    relevant = event_relevance(scope)
    return [e for pages in left for e in _list_events(paged, pages.namespace, pages.fields, relevant, pages.token)[0]]


def _events(
    paged: Paged, namespace: str, kind: str | None, names: Sequence[str], keep: Keep, archive: bool
) -> tuple[list[dict[str, Any]], str | None]:
    """One page of the namespace's events (of that ``kind`` selector); with more than a page and only a few
    objects the experiment's events can be about, then one field-selected LIST per object (pods, owners,
    workloads named like them, nodes), not the rest of the pages; a large experiment, whose objects make most
    of the list, pages on, or leaves the pages to an archive read alongside (their continue token returned)."""
    first, token = _list_events(paged, namespace, kind, keep, pages=1)
    if token is None:
        return first, None
    if len(names) > NAMED_EVENT_LISTS:
        if archive:
            return first, token
        return first + _list_events(paged, namespace, kind, keep, start=token)[0], None
    found = list(first)  # scope_event_objects keeps one of each event seen twice
    for name in names:
        named = f"involvedObject.name={name}"
        found += _list_events(paged, namespace, f"{kind},{named}" if kind else named, keep)[0]
    return found, None


def _list_events(
    paged: Paged,
    namespace: str,
    fields: str | None,
    keep: Keep,
    start: str | None = None,
    pages: int | None = None,
) -> tuple[list[dict[str, Any]], str | None]:
    call, where = Call("list", "events", namespace), {"namespace": namespace}
    try:
        return paged(call, "events", where, [("fieldSelector", fields)], keep=keep, start=start, pages=pages)
    except SourceForbidden as forbidden:
        # Some roles grant only the newer events API; it serves the same objects.
        new_fields = fields.replace("involvedObject.", "regarding.") if fields else None
        newer = Call("list", "events", namespace, "events.k8s.io")
        try:
            return paged(
                newer, "events-v1", where, [("fieldSelector", new_fields)], keep=keep, start=start, pages=pages
            )
        except SourceForbidden:
            raise forbidden from None
