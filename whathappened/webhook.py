"""``whathappened watch --webhook URL``: each new verdict POSTed as JSON (with a Slack-compatible ``text``) through a
RetryQueue (whathappened/retrying.py), so a slow or hanging receiver never holds the watch or the next explanation:
each POST has a timeout, a failure is retried with backoff, then counted; a dead receiver costs bounded memory.
The URL is a secret (a Slack or Teams webhook URL is its own credential): it is registered with ``scrub`` and never
printed.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

from whathappened.errors import remember_secret
from whathappened.retrying import BACKOFF_S, MAX_PENDING, RetryQueue
from whathappened.watch_verdict import in_words

__all__ = ["BACKOFF_S", "MAX_PENDING", "TIMEOUT_S", "Webhook", "slack_text"]

TIMEOUT_S = 10.0


def slack_text(line: Mapping[str, Any]) -> str:
    """One message a chat channel can show: the experiment, the root cause in words, what to do."""
    return f"whathappened: {in_words(line)}"


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
        self._post = post or _post
        self.deliveries = RetryQueue("webhook", sleep)

    @property
    def sent(self) -> int:
        return self.deliveries.sent

    @property
    def failed(self) -> int:
        return self.deliveries.failed

    @property
    def dropped(self) -> int:
        return self.deliveries.dropped

    def send(self, line: Mapping[str, Any]) -> None:
        body = json.dumps({**line, "text": slack_text(line)}).encode()
        self.deliveries.submit(lambda: self._post(self._url, body, TIMEOUT_S))

    def close(self, timeout_s: float = 30.0) -> None:
        self.deliveries.close(timeout_s)


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
