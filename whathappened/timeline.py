"""Merging events from every source into one time-sorted, de-duplicated timeline."""

from __future__ import annotations

from collections.abc import Iterable

from whathappened.model import TimelineEvent


def _order(event: TimelineEvent) -> tuple[object, ...]:
    s = event.subject
    return (
        event.at,
        -event.severity.rank,
        event.source,
        event.kind,
        s.node or "",
        s.pod or "",
        s.gpu or "",
        event.summary,
    )


def merge_timeline(*streams: Iterable[TimelineEvent]) -> tuple[TimelineEvent, ...]:
    """Sorted by time (ties broken deterministically); the same happening reported twice is kept once.

    Idempotent: merging a merged timeline again changes nothing.
    """
    seen: set[tuple[object, ...]] = set()
    unique: list[TimelineEvent] = []
    for stream in streams:
        for event in stream:
            identity = event.identity
            if identity in seen:
                continue
            seen.add(identity)
            unique.append(event)
    unique.sort(key=_order)
    return tuple(unique)
