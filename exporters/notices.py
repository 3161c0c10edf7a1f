"""Maintenance notices: the one normalized shape every cloud poller returns, and the preflight decision on them.

A ``Notice`` is one thing the cloud told this host it will do to it (reboot, freeze, migrate, terminate, reclaim
a spot VM). Pollers turn each provider's payload into notices at the edge; the metrics, the preflight check and
the optional Kubernetes Events all read notices only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from whathappened.exporters import catalog

from whathappened.timeutils import isoformat

Clock = Callable[[], datetime]

PROVIDERS = ("azure", "aws", "gcp")

# event_type values that mean the VM itself is being reclaimed (spot / preemptible): the catalog holds them.
SPOT_EVENT_TYPES = catalog.SPOT_EVENT_TYPES


@dataclass(frozen=True, slots=True)
class Notice:
    """One maintenance or interruption notice for this host. ``not_before`` None: the cloud gave no time."""

    provider: str
    event_id: str
    event_type: str
    status: str
    not_before: datetime | None
    description: str = ""
    not_after: datetime | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def due_by(self, deadline: datetime) -> bool:
        """Due when it may start before ``deadline``; a notice without a time is due now (it may start any moment)."""
        return self.not_before is None or self.not_before <= deadline

    def describe(self, now: datetime) -> str:
        """``Reboot (azure, event C706...) not before 2026-11-20T07:16:00Z, in 14 min``."""
        what = f"{self.event_type} ({self.provider}, event {self.event_id}, {self.status})"
        if self.not_before is None:
            return f"{what}: no start time given, may start at any moment"
        delta = self.not_before - now
        minutes = round(delta.total_seconds() / 60)
        when = f"in {minutes} min" if minutes > 0 else "now" if minutes == 0 else f"{-minutes} min ago"
        return f"{what} not before {isoformat(self.not_before)}, {when}"


@dataclass(frozen=True, slots=True)
class PreflightResult:
    """The launch guard's answer: ``due`` holds the notices starting within the window, earliest first."""

    window: timedelta
    now: datetime
    due: tuple[Notice, ...]

    @property
    def ok(self) -> bool:
        return not self.due

    def line(self) -> str:
        minutes = round(self.window.total_seconds() / 60)
        if self.ok:
            return f"preflight ok: no host maintenance due within {minutes} min"
        first = self.due[0]
        more = f" (+{len(self.due) - 1} more)" if len(self.due) > 1 else ""
        return f"host maintenance due within {minutes} min: {first.describe(self.now)}{more}"


def evaluate(notices: Iterable[Notice], now: datetime, window: timedelta) -> PreflightResult:
    """The 60-minute rule: refuse when any notice may start before ``now + window`` (past starts included)."""
    deadline = now + window
    due = [n for n in notices if n.due_by(deadline)]
    due.sort(key=lambda n: (n.not_before is not None, n.not_before.timestamp() if n.not_before else 0.0))
    return PreflightResult(window=window, now=now, due=tuple(due))


def sorted_notices(notices: Sequence[Notice]) -> tuple[Notice, ...]:
    return tuple(sorted(notices, key=lambda n: (n.provider, n.event_id)))
