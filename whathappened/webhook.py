"""``whathappened watch --webhook URL``: each new verdict POSTed as JSON (with a Slack-compatible ``text``), in its
own thread so a slow or hanging receiver never holds the watch or the next explanation.

Each POST has a timeout; a failure (no answer, a 5xx, a 429) is retried with backoff a few times, then counted and
dropped; a 4xx other than 429 is not retried (the receiver will not change its mind). At most ``MAX_PENDING``
POSTs wait; more are dropped and counted, so a dead receiver costs bounded memory. The URL is a secret (a Slack
or Teams webhook URL is its own credential): it is registered with ``scrub`` and never printed.
"""

from __future__ import annotations

import json
import queue
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

from whathappened.errors import remember_secret

TIMEOUT_S = 10.0
BACKOFF_S = (1.0, 4.0, 15.0)  # waits before the retries
MAX_PENDING = 100


def slack_text(line: Mapping[str, Any]) -> str:
    """One message a chat channel can show: the experiment, the root cause in words, what to do."""
    root = line.get("root_cause") or {}
    where = f"{line.get('experiment')} in {line.get('namespace')}"
    if not root:
        return (
            f"whathappened: {where}: {line.get('deaths')} pod(s) ended; no root cause decided ({line.get('outcome')})"
        )
    return f"whathappened: {where}: {root.get('summary')} Next: {root.get('next_step')}"


class Webhook:
    """``send(payload)`` queues one POST; ``sent``, ``failed`` and ``dropped`` count what became of them."""

    def __init__(
        self,
        url: str,
        sleep: Callable[[float], None],
        post: Callable[[str, bytes, float], int] | None = None,
    ) -> None:
        remember_secret(url)
        self._url = url
        self._sleep = sleep
        self._post = post or _post
        self._pending: queue.Queue[bytes | None] = queue.Queue(MAX_PENDING)
        self.sent = self.failed = self.dropped = 0
        self._thread = threading.Thread(target=self._run, name="webhook", daemon=True)
        self._thread.start()

    def send(self, line: Mapping[str, Any]) -> None:
        body = json.dumps({**line, "text": slack_text(line)}).encode()
        try:
            self._pending.put_nowait(body)
        except queue.Full:
            self.dropped += 1

    def close(self, timeout_s: float = 30.0) -> None:
        """Send what is queued (within the timeout), then stop."""
        try:
            self._pending.put(None, timeout=timeout_s)
        except queue.Full:
            return
        self._thread.join(timeout_s)

    def _run(self) -> None:
        while (body := self._pending.get()) is not None:
            for attempt in range(len(BACKOFF_S) + 1):
                status = self._post(self._url, body, TIMEOUT_S)
                if 200 <= status < 300:
                    self.sent += 1
                    break
                if (400 <= status < 500 and status != 429) or attempt == len(BACKOFF_S):
                    self.failed += 1
                    break
                self._sleep(BACKOFF_S[attempt])


def _post(url: str, body: bytes, timeout_s: float) -> int:
    """The receiver's status, 0 when there was no answer."""
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except (urllib.error.URLError, TimeoutError, OSError, ValueError):
        return 0
