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

    Idempotent, and independent of the order of the streams: when two reports of one happening disagree on
    severity, the graver one is kept, so the merge does not depend on which source answered first.
    """
    kept: dict[tuple[object, ...], TimelineEvent] = {}
    for stream in streams:
        for event in stream:
            identity = event.identity
            known = kept.get(identity)
            if known is None or _weight(event) > _weight(known):
                kept[identity] = event
    return tuple(sorted(kept.values(), key=_order))


def _weight(event: TimelineEvent) -> tuple[int, int]:
    return (event.severity.rank, len(event.attrs))
