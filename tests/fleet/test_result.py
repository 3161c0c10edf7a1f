"""What the fleet's answer says of its own evidence: how much of the window the history covers (overlapping
recordings counted once), and no history at all is no evidence, never a quiet fleet."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from whathappened.fleet.result import FleetResult
from whathappened.fleet.rollup import rollup
from whathappened.model import Window

T0 = datetime(2026, 11, 1, tzinfo=UTC)
MONTH = Window(T0, T0 + timedelta(days=30))


def days(first: float, last: float) -> Window:
    return Window(T0 + timedelta(days=first), T0 + timedelta(days=last))


def result(*covered: Window) -> FleetResult:
    return FleetResult(MONTH, rollup([], 3), (), {"prometheus": "ok"}, 3, covered)


def test_overlapping_spans_count_once_and_spans_outside_the_window_not_at_all() -> None:
    assert result(days(0, 10), days(5, 15), days(-5, 1)).coverage == 0.5
    assert result(days(29, 40)).coverage == 1 / 30


def test_no_history_is_no_evidence_and_a_covered_quiet_month_no_failure() -> None:
    assert (result().outcome, result().coverage) == ("no-evidence", 0.0)
    assert result(days(0, 30)).outcome == "no-failure"
