"""The watch's webhook: retried with backoff on no answer, 5xx and 429, not on another 4xx; a hanging receiver is
bounded by the timeout; a dead one by the queue; the URL never printed. The sleeps are recorded, not slept."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler

from tests.support import http_server
from whathappened import webhook
from whathappened.errors import scrub
from whathappened.webhook import BACKOFF_S, MAX_PENDING, Webhook, slack_text

LINE = {
    "experiment": "llama",
    "namespace": "ml",
    "deaths": 3,
    "outcome": "explained",
    "root_cause": {
        "pod": "w-0",
        "cause": "gpu-fallen-off-bus",
        "summary": "GPU 6 fell off the bus.",
        "next_step": "cordon it",
    },
}


def sent_with(statuses: list[int]) -> tuple[Webhook, list[float], list[bytes]]:
    answers, sleeps, bodies = iter(statuses), [], []

    def post(url: str, body: bytes, timeout_s: float) -> int:
        bodies.append(body)
        return next(answers)

    hook = Webhook("https://hooks.example.invalid/T000/B000/secret-token-value", sleeps.append, post)
    hook.send(LINE)
    hook.close()
    return hook, sleeps, bodies


def test_a_failure_is_retried_with_backoff_until_it_is_taken() -> None:
    hook, sleeps, bodies = sent_with([0, 503, 429, 200])
    assert (hook.sent, hook.failed, sleeps, len(bodies)) == (1, 0, list(BACKOFF_S), 4)


def test_a_refusal_is_not_retried_and_giving_up_is_counted() -> None:
    refused, sleeps, _ = sent_with([400])
    assert (refused.sent, refused.failed, sleeps) == (0, 1, [])
    down, sleeps, bodies = sent_with([500] * (len(BACKOFF_S) + 1))
    assert (down.failed, len(bodies), sleeps) == (1, len(BACKOFF_S) + 1, list(BACKOFF_S))


def test_the_text_says_the_root_and_what_to_do_and_the_url_is_a_secret() -> None:
    assert slack_text(LINE) == "whathappened: llama in ml: GPU 6 fell off the bus. Next: cordon it"
    assert "no root cause decided" in slack_text({**LINE, "root_cause": None})
    partial = {**LINE, "root_cause": None, "sources": {"prometheus": "unreachable", "logs": "not_configured"}}
    assert slack_text(partial).endswith("no root cause decided (explained). Not read: prometheus (unreachable).")
    sent_with([200])
    assert "secret-token-value" not in scrub("POST https://hooks.example.invalid/T000/B000/secret-token-value failed")


def test_a_hanging_receiver_costs_the_timeout_and_no_more(monkeypatch) -> None:
    release = threading.Event()

    class Hang(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            release.wait(30)

        def log_message(self, *args: object) -> None:
            pass

    monkeypatch.setattr(webhook, "TIMEOUT_S", 0.3)
    with http_server(Hang) as url:
        began = time.monotonic()
        assert webhook._post(url + "/hook", b"{}", 0.3) == 0
        assert time.monotonic() - began < 5
        release.set()


def test_a_dead_receiver_holds_at_most_the_queue() -> None:
    gate = threading.Event()

    def post(url: str, body: bytes, timeout_s: float) -> int:
        gate.wait(10)
        return 200

    hook = Webhook("http://127.0.0.1:9/hook", lambda s: None, post)
    for _ in range(MAX_PENDING + 50):
        hook.send(LINE)
    assert hook.dropped >= 49  # one POST in flight, MAX_PENDING waiting, the rest dropped and counted
    gate.set()
    hook.close()
    assert hook.sent + hook.dropped == MAX_PENDING + 50
