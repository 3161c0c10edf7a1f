"""``whathappened watch``'s loop: pod changes in, one explanation per incident out, the watch never blocked.

A reader thread moves the pod watch's changes into a bounded queue; this loop hands each to the Watcher and, when an
incident's settle is over, gives it to one explaining thread (explanations run one at a time: a storm of incidents
queues, it does not fan out into a storm of requests). Waiting is on the queue, until the next incident is due:
no polling, no fixed sleep. The clock is passed in.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from whathappened.watcher import Incident, Watcher

_DUE: tuple[str, dict] = ("", {})  # no change came before an incident fell due
MAX_QUEUED = 10_000  # changes waiting for the loop; the reader waits when the loop falls this far behind


class WatchLoop:
    def __init__(
        self,
        watcher: Watcher,
        explain: Callable[[Incident], None],
        clock: Callable[[], datetime],
    ) -> None:
        self._watcher = watcher
        self._explain = explain
        self._clock = clock
        self._changes: queue.Queue[tuple[str, dict] | None] = queue.Queue(MAX_QUEUED)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="explain")
        self._stopped = threading.Event()
        self.explained = 0

    def read(self, changes: Iterable[tuple[str, dict]]) -> threading.Thread:
        """Start the reader thread over the watch's changes; the loop stops when they end."""

        def run() -> None:
            try:
                for change in changes:
                    if self._stopped.is_set():
                        return
                    self._changes.put(change)
            finally:
                self._changes.put(None)

        reader = threading.Thread(target=run, name="pod-watch", daemon=True)
        reader.start()
        return reader

    def run(self) -> None:
        """Until the changes end or ``stop()``; due incidents go to the explaining thread."""
        try:
            while not self._stopped.is_set():
                due = self._watcher.next_due()
                wait = None if due is None else max(0.0, (due - self._clock()).total_seconds())
                try:
                    change = self._changes.get(timeout=wait)
                except queue.Empty:
                    change = _DUE
                if change is None:
                    break
                if change is not _DUE:
                    kind, pod = change
                    self._watcher.seen(kind, pod, self._clock())
                for incident in self._watcher.due(self._clock()):
                    self._pool.submit(self._explain, incident)
                    self.explained += 1
        finally:
            for incident in self._watcher.due(datetime.max.replace(tzinfo=self._clock().tzinfo)):
                self._pool.submit(self._explain, incident)  # what was waiting when the watch ended
                self.explained += 1
            self._pool.shutdown(wait=True)

    def stop(self) -> None:
        self._stopped.set()
        with contextlib.suppress(queue.Full):
            self._changes.put_nowait(None)
