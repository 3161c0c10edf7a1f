"""WATCH as the API server serves it: a chunked stream of ``{"type", "object"}`` lines from a resourceVersion on.

- No resourceVersion (or "0"): an ADDED for every object that matches now, then the changes after it.
- resourceVersion N: the changes after N; N older than the last compaction is a 410 (an ERROR event carrying an
  ``Expired`` Status, as the server sends it once the stream is open), after which the client lists again.
- ``allowWatchBookmarks=true``: a BOOKMARK (only ``metadata.resourceVersion``) whenever the test asks for one
  (``KubeDouble.bookmark``), as the server sends one about every minute; the client resumes from it.
- ``timeoutSeconds``: the stream ends then, as the server ends every watch after a while.
- ``KubeDouble.drop_watches`` ends every open stream mid-way (a restarted API server, a proxy's idle timeout).

Changes come from the test: ``KubeDouble.change(type, resource, object)`` applies ADDED, MODIFIED or DELETED to the
store with a new resourceVersion and wakes the streams. No sleeps: a test waits for ``wait_watching``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Matches = Callable[[Mapping[str, Any]], bool]


@dataclass(frozen=True)
class Change:
    version: int
    type: str  # ADDED, MODIFIED, DELETED
    resource: str
    obj: Mapping[str, Any]


@dataclass
class ChangeLog:
    """The store's changes since it was built, and what the open streams are waiting for."""

    changes: list[Change] = field(default_factory=list)
    compacted: int = 0  # watches from a resourceVersion before this get 410
    bookmarks: int = 0  # how many bookmarks were asked for
    drops: int = 0  # how many times every open stream was dropped
    watching: int = 0  # open streams
    opened: int = 0  # streams opened since the double started
    ended: int = 0  # streams ended since the double started
    open_at_drop: int = 0  # streams opened before the last drop_watches: all of them end
    closed: bool = False
    cond: threading.Condition = field(default_factory=threading.Condition)

    def wait_watching(self, count: int = 1, timeout_s: float = 10.0) -> bool:
        """Whether ``count`` streams are open within the timeout (the readiness check of a watching client)."""
        with self.cond:
            return self.cond.wait_for(lambda: self.watching >= count, timeout_s)

    def wait_for(self, predicate: Callable[[list[Change]], bool], timeout_s: float = 10.0) -> bool:
        """Whether the changes so far satisfy ``predicate`` within the timeout (a client's writes arriving)."""
        with self.cond:
            return self.cond.wait_for(lambda: predicate(self.changes), timeout_s)

    def wait_idle(self, timeout_s: float = 10.0) -> bool:
        """Whether every stream open at the last ``drop_watches`` has ended within the timeout (a client may have
        opened its next one already: counting the open streams would miss the moment none was)."""
        with self.cond:
            return self.cond.wait_for(lambda: self.ended >= self.open_at_drop, timeout_s)


def expired(version: str, oldest: int) -> dict[str, Any]:
    return {
        "type": "ERROR",
        "object": {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": f"too old resource version: {version} ({oldest})",
            "reason": "Expired",
            "code": 410,
        },
    }


def stream(
    log: ChangeLog,
    write: Callable[[bytes], None],
    current: Callable[[], tuple[int, list[Mapping[str, Any]]]],
    resource: str,
    matches: Matches,
    params: Mapping[str, str],
    kind: str,
) -> None:
    """Write the watch's events through ``write`` (one chunk each) until its timeout, a drop or the double stops.
    ``current`` gives the store's resourceVersion and the objects that match now, read under the log's lock."""
    since = params.get("resourceVersion") or "0"
    bookmarks = params.get("allowWatchBookmarks") in ("true", "1")
    deadline = time.monotonic() + float(params.get("timeoutSeconds") or 1800)
    with log.cond:
        if since != "0" and int(since) < log.compacted:
            first: list[dict[str, Any]] = [expired(since, log.compacted)]
            cursor, ended = int(since), True
        else:
            version, objects = current()
            first = [{"type": "ADDED", "object": o} for o in objects] if since == "0" else []
            cursor, ended = (version if since == "0" else int(since)), False
        asked, drops = log.bookmarks, log.drops
        log.watching += 1
        log.opened += 1
        log.cond.notify_all()
    try:
        for event in first:
            write(_line(event))
        while not ended:
            with log.cond:

                def ready(asked: int = asked, cursor: int = cursor) -> bool:
                    return (
                        log.closed
                        or log.drops != drops
                        or (bookmarks and log.bookmarks != asked)
                        or bool(log.changes and log.changes[-1].version > cursor)
                        or time.monotonic() >= deadline
                    )

                log.cond.wait_for(ready, timeout=max(0.0, deadline - time.monotonic()))
                pending = [c for c in log.changes if c.version > cursor]
                mark = bookmarks and log.bookmarks != asked
                asked = log.bookmarks
                ended = log.closed or log.drops != drops or time.monotonic() >= deadline
                latest = max([cursor, *(c.version for c in log.changes)])
            for change in pending:
                if change.resource == resource and matches(change.obj):
                    write(_line({"type": change.type, "object": change.obj}))
            cursor = max([cursor, *(c.version for c in pending)])
            if mark:
                bookmark = {"kind": kind, "apiVersion": "v1", "metadata": {"resourceVersion": str(latest)}}
                write(_line({"type": "BOOKMARK", "object": bookmark}))
    finally:
        with log.cond:
            log.watching -= 1
            log.ended += 1
            log.cond.notify_all()


def _line(event: Mapping[str, Any]) -> bytes:
    return json.dumps(event).encode() + b"\n"
