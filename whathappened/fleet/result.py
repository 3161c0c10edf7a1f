"""What ``whathappened fleet`` answers, as plain data every output form renders: the window, the outcome (so a
fleet survey that found nothing, or could read nothing, never reads as a healthy fleet), the rolled-up tables and
each incident."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from whathappened.fleet.rollup import Rollup
from whathappened.fleet.survey import Case
from whathappened.model import Outcome, Window
from whathappened.timeutils import isoformat

SCHEMA = "whathappened-fleet/v1"
TABLES = ("cause", "node", "gpu", "experiment")  # --by


@dataclass(frozen=True)
class FleetResult:
    window: Window
    rollup: Rollup
    cases: tuple[Case, ...]
    sources: dict[str, str]  # the death finder's source and its status
    threshold: int
    covered: tuple[Window, ...]  # the spans of the window the history covers, as found (recordings may overlap)

    @cached_property
    def history(self) -> tuple[Window, ...]:
        """``covered`` inside the window, in order, overlapping and touching spans merged."""
        merged: list[list[datetime]] = []
        for span in sorted(self.covered, key=lambda w: w.start):
            start, end = max(span.start, self.window.start), min(span.end, self.window.end)
            if end <= start:
                continue
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        return tuple(Window(start, end) for start, end in merged)

    @property
    def coverage(self) -> float:
        """The share of the window the history covers: a death outside it cannot be seen."""
        return sum(w.seconds for w in self.history) / self.window.seconds

    @property
    def outcome(self) -> str:
        if not self.history:  # no history at all: no death seen is not no death
            return Outcome.NO_EVIDENCE.value
        if not self.cases:
            return Outcome.NO_FAILURE.value
        if all(c.outcome == Outcome.NO_EVIDENCE.value for c in self.cases):
            return Outcome.NO_EVIDENCE.value
        return Outcome.EXPLAINED.value if any(c.cause != "unknown" for c in self.cases) else Outcome.UNDECIDED.value

    def table(self, by: str) -> list[dict[str, Any]]:
        return {
            "cause": self.rollup.by_cause,
            "node": self.rollup.by_node,
            "gpu": self.rollup.by_gpu,
            "experiment": self.rollup.by_experiment,
        }[by]

    def as_dict(self) -> dict[str, Any]:
        explained_by = Counter(status for c in self.cases for _, status in c.sources)
        return {
            "schema": SCHEMA,
            "window": {"start": isoformat(self.window.start), "end": isoformat(self.window.end)},
            "outcome": self.outcome,
            "history": {
                "coverage": round(self.coverage, 4),
                "covered": [{"start": isoformat(w.start), "end": isoformat(w.end)} for w in self.history],
            },
            "totals": self.rollup.totals,
            "lemon_threshold": self.threshold,
            "by_cause": self.rollup.by_cause,
            "by_node": self.rollup.by_node,
            "by_gpu": self.rollup.by_gpu,
            "by_experiment": self.rollup.by_experiment,
            "weekly": self.rollup.weekly,
            "incidents": [_incident(c) for c in self.cases],
            "sources": self.sources,
            "explanations_by_source_status": dict(sorted(explained_by.items())),
        }


def _incident(case: Case) -> dict[str, Any]:
    incident = case.incident
    return {
        "namespace": incident.namespace,
        "experiment": incident.experiment,
        "first_death": isoformat(incident.first),
        "last_death": isoformat(incident.last),
        "pod_deaths": case.deaths,
        "pods": sorted(incident.pods),
        "cause": case.cause,
        "category": case.category,
        "retryable": case.retryable,
        "outcome": case.outcome,
        "root_pod": case.root_pod,
        "node": case.node,
        "gpu": case.gpu,
        "gpu_hours_lost": round(case.gpu_hours_lost, 2),
        "summary": case.summary,
        "sources": dict(case.sources),
    }
