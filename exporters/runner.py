"""The poll loop: poll, record the outcome, wait, and back off after failures, without ever dying of one.

A poller raises a ``SourceError`` for every failure it knows (unreachable, slow, HTTP errors, malformed JSON);
those become ``whathappened_poll_errors_total`` and a longer wait. The wait after a failure doubles up to
``max_backoff`` with jitter, so a fleet of exporters does not hammer a recovering metadata service in step.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from whathappened.exporters.metrics import ExporterState, PollState
from whathappened.exporters.notices import Clock, Notice

from whathappened.errors import SourceError

log = logging.getLogger("whathappened.exporter")


class Poller(Protocol):
    provider: str

    def poll(self) -> Sequence[Notice]: ...


NoticeSink = Callable[[Sequence[Notice]], None]


@dataclass(frozen=True, slots=True)
class Backoff:
    """Wait ``interval`` after a success; after the n-th failure in a row, ``interval * 2**(n-1)`` capped."""

    interval: timedelta
    max_backoff: timedelta = timedelta(minutes=5)

    def delay(self, failures: int, jitter: float = 1.0) -> float:
        base = self.interval.total_seconds()
        if failures <= 0:
            return base
        return min(base * 2 ** (failures - 1), self.max_backoff.total_seconds()) * jitter


class PollLoop:
    """Runs one poller until ``stop`` is set; ``poll_once`` is the unit tests drive with a fake clock."""

    def __init__(
        self,
        poller: Poller,
        state: ExporterState,
        clock: Clock,
        backoff: Backoff,
        *,
        sinks: Sequence[NoticeSink] = (),
        jitter: Callable[[], float] = lambda: random.uniform(0.8, 1.0),
    ) -> None:
        self._poller = poller
        self._state = state
        self._clock = clock
        self._backoff = backoff
        self._sinks = tuple(sinks)
        self._jitter = jitter
        self.failures = 0
        self.heartbeat = time.monotonic()

    def poll_once(self) -> PollState:
        try:
            notices = self._poller.poll()
        except SourceError as exc:
            self.failures += 1
            if self.failures == 1 or self.failures % 10 == 0:
                log.warning("%s metadata poll failed (%d in a row): %s", self._poller.provider, self.failures, exc)
            return self._state.record_failure(self._poller.provider, str(exc), self._clock())
        if self.failures:
            log.info("%s metadata poll recovered after %d failures", self._poller.provider, self.failures)
        self.failures = 0
        for sink in self._sinks:
            sink(notices)
        return self._state.record_success(self._poller.provider, notices, self._clock())

    def next_delay(self) -> float:
        return self._backoff.delay(self.failures, self._jitter() if self.failures else 1.0)

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            started = time.monotonic()
            self.poll_once()
            self.heartbeat = time.monotonic()
            # A poll that already waited (GCE's hanging GET) has used up part of the interval.
            elapsed = self.heartbeat - started
            stop.wait(max(0.0, self.next_delay() - (elapsed if not self.failures else 0.0)))

    def healthy(self, max_silence: float) -> bool:
        return time.monotonic() - self.heartbeat <= max_silence
