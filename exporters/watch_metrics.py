"""The metrics of ``whathappened watch`` (CONTRACT.md section 3a), in the module family that owns prometheus_client:
``whathappened_pod_failures_total{namespace, cause, category, retryable, root}`` (each verdict of an explained
incident's pods), ``whathappened_explain_seconds`` (how long each explanation took), and the watch's own state:
its LISTs, streams, 410s and failures, the incidents explained and the repeats left unreported, each source's
health in the last explanation."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import partial

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.registry import CollectorRegistry
from whathappened.exporters import catalog

from whathappened.model import Report

EXPLAIN_BUCKETS = (0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300)


class WatchMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        failures, explaining = catalog.WATCH_FAILURES, catalog.WATCH_EXPLAIN_SECONDS
        self.failures = Counter(
            failures.name.removesuffix("_total"), failures.help, list(failures.labels), registry=registry
        )
        self.explain_seconds = Histogram(
            explaining.name, explaining.help, list(explaining.labels), buckets=EXPLAIN_BUCKETS, registry=registry
        )
        self.incidents = Counter(
            "whathappened_watch_incidents",
            "Incidents explained, by whether they were news.",
            ["news"],
            registry=registry,
        )
        self.watch_requests = Gauge(
            "whathappened_watch_requests", "Requests of the pod watch so far, by kind.", ["kind"], registry=registry
        )
        self.writes = Gauge(
            "whathappened_watch_writes",
            "Opt-in writes of verdicts so far, by kind (webhook, event, annotation) and result (sent, failed, dropped).",
            ["kind", "result"],
            registry=registry,
        )
        self.source_up = Gauge(
            "whathappened_watch_source_up",
            "1 when the source answered in the last explanation, 0 when it failed.",
            ["source"],
            registry=registry,
        )

    def explained(self, report: Report, seconds: float, news: bool, since: datetime) -> None:
        """``since``: the incident's first death (less the clock skew); earlier deaths were counted before."""
        self.explain_seconds.observe(seconds)
        self.incidents.labels(news=str(news).lower()).inc()
        for source in report.sources:
            if source.status.value != "not_configured":
                self.source_up.labels(source=source.name).set(0 if source.failed else 1)
        if not news:
            return
        for verdict in report.verdicts:
            if verdict.ended is not None and verdict.ended < since:
                continue
            self.failures.labels(
                namespace=verdict.namespace or "",
                cause=verdict.cause,
                category=verdict.category,
                retryable=str(verdict.retryable).lower(),
                root=str(bool(verdict.root)).lower(),
            ).inc()

    def watched(self, lists: int, watches: int, expired: int, failures: int) -> None:
        for kind, count in (("list", lists), ("watch", watches), ("expired", expired), ("failure", failures)):
            self.watch_requests.labels(kind=kind).set(count)

    def writes_of(self, kind: str, counts: Callable[[], tuple[int, int, int]]) -> None:
        """Serve a write kind's (sent, failed, dropped) as they are at each scrape: writes finish in the
        background, after the explanation that queued them."""
        for index, result in enumerate(("sent", "failed", "dropped")):
            self.writes.labels(kind=kind, result=result).set_function(partial(_nth, counts, index))


def _nth(counts: Callable[[], tuple[int, int, int]], index: int) -> float:
    return float(counts()[index])
