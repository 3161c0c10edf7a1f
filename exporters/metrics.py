"""The exporter's maintenance metrics, built from the catalog specs and read from one shared state at scrape time.

Pollers write a new frozen ``PollState`` after every poll; a scrape reads the latest one, so a scrape never waits
on the metadata service. ``whathappened_preflight_ok`` is computed at scrape time against the clock, so a notice
that moves into the window turns it to 0 without waiting for the next poll. While the metadata service has not
answered within ``stale_after`` (or there is none) the answer is unknown: ``whathappened_preflight_ok`` is absent
and ``whathappened_preflight_unknown`` is 1, so an alert on ``preflight_ok == 0`` means "maintenance due" only, and
never fires on every on-premises node.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY, Collector, CollectorRegistry
from whathappened.exporters import catalog
from whathappened.exporters.notices import Clock, Notice, evaluate


def family(spec: catalog.MetricSpec) -> GaugeMetricFamily | CounterMetricFamily:
    """An empty metric family with the spec's name, type, help and label names."""
    if spec.type == "counter":
        return CounterMetricFamily(spec.name, spec.help, labels=spec.labels)
    return GaugeMetricFamily(spec.name, spec.help, labels=spec.labels)


@dataclass(frozen=True, slots=True)
class PollState:
    provider: str
    notices: tuple[Notice, ...] = ()
    last_success: datetime | None = None
    last_attempt: datetime | None = None
    errors: int = 0
    last_error: str | None = None


class ExporterState:
    """The latest poll outcome, swapped whole under a lock (readers get a consistent frozen snapshot)."""

    def __init__(self, provider: str) -> None:
        self._lock = threading.Lock()
        self._state = PollState(provider=provider)

    def snapshot(self) -> PollState:
        with self._lock:
            return self._state

    def record_success(self, provider: str, notices: Sequence[Notice], at: datetime) -> PollState:
        with self._lock:
            self._state = replace(
                self._state, provider=provider, notices=tuple(notices), last_success=at, last_attempt=at
            )
            return self._state

    def record_failure(self, provider: str, message: str, at: datetime) -> PollState:
        with self._lock:
            state = self._state
            self._state = replace(
                state, provider=provider, errors=state.errors + 1, last_error=message, last_attempt=at
            )
            return self._state


class MaintenanceCollector(Collector):
    """Yields the contract's maintenance metrics and the poll-outcome metrics from an ``ExporterState``."""

    def __init__(
        self, state: ExporterState, node: str, clock: Clock, window: timedelta, stale_after: timedelta
    ) -> None:
        self._state = state
        self._node = node
        self._clock = clock
        self._window = window
        self._stale_after = stale_after

    def preflight_ok(self, snapshot: PollState, now: datetime) -> bool | None:
        """The preflight answer, None when it is unknown (no fresh answer from the metadata service)."""
        fresh = snapshot.last_success is not None and now - snapshot.last_success <= self._stale_after
        return evaluate(snapshot.notices, now, self._window).ok if fresh else None

    def collect(self) -> Iterable[Metric]:
        snapshot = self._state.snapshot()
        now = self._clock()
        scheduled = family(catalog.MAINTENANCE_SCHEDULED)
        not_before = family(catalog.MAINTENANCE_NOT_BEFORE)
        for notice in snapshot.notices:
            labels = [self._node, notice.provider, notice.event_id, notice.event_type]
            scheduled.add_metric(labels, 1.0)
            if notice.not_before is not None:
                not_before.add_metric(labels, notice.not_before.timestamp())
        answer = self.preflight_ok(snapshot, now)
        preflight = family(catalog.PREFLIGHT_OK)
        if answer is not None:
            preflight.add_metric([self._node], 1.0 if answer else 0.0)
        unknown = family(catalog.PREFLIGHT_UNKNOWN)
        unknown.add_metric([self._node], 1.0 if answer is None else 0.0)
        errors = family(catalog.POLL_ERRORS)
        errors.add_metric([snapshot.provider], float(snapshot.errors))
        yield from (scheduled, not_before, preflight, unknown, errors)
        if snapshot.last_success is not None:
            success = family(catalog.LAST_POLL_SUCCESS)
            success.add_metric([snapshot.provider], snapshot.last_success.timestamp())
            yield success


def register_maintenance(collector: MaintenanceCollector, registry: CollectorRegistry = REGISTRY) -> None:
    registry.register(collector)
