"""Deliveries that must never hold the caller: the watch's opt-in writes (webhook POSTs, Events, annotations).

``submit(attempt)`` queues one delivery and returns at once; a thread runs ``attempt()`` (it returns the HTTP status,
0 when there was no answer) until it succeeds, retrying after ``BACKOFF_S`` on no answer, 429 or 5xx; any other 4xx
is final (the receiver will not change its mind). At most ``MAX_PENDING`` deliveries wait; more are dropped. What
became of each is counted in ``sent``, ``failed`` and ``dropped``, so a dead receiver costs bounded memory and
shows in the metrics. The sleep is passed in: tests run the backoff without waiting.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

BACKOFF_S = (1.0, 4.0, 15.0)  # waits before the retries
MAX_PENDING = 100

Attempt = Callable[[], int]


def final(status: int) -> bool:
    """Whether a status ends the delivery: a success, or a refusal that a retry will not change."""
    return 200 <= status < 300 or (400 <= status < 500 and status != 429)


class RetryQueue:
    def __init__(self, name: str, sleep: Callable[[float], None]) -> None:
        self._sleep = sleep
        self._pending: queue.Queue[Attempt | None] = queue.Queue(MAX_PENDING)
        self.sent = self.failed = self.dropped = 0
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, attempt: Attempt) -> None:
        try:
            self._pending.put_nowait(attempt)
        except queue.Full:
            self.dropped += 1

    def close(self, timeout_s: float = 30.0) -> None:
        """Deliver what is queued (within the timeout), then stop."""
        try:
            self._pending.put(None, timeout=timeout_s)
        except queue.Full:
            return
        self._thread.join(timeout_s)

    def _run(self) -> None:
        while (attempt := self._pending.get()) is not None:
            for retry in range(len(BACKOFF_S) + 1):
                status = attempt()
                if final(status) or retry == len(BACKOFF_S):
                    if 200 <= status < 300:
                        self.sent += 1
                    else:
                        self.failed += 1
                    break
                self._sleep(BACKOFF_S[retry])
