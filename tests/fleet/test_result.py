"""What the fleet's answer says of its own evidence: how much of the window the history covers (overlapping
recordings counted once), and no history at all is no evidence, never a quiet fleet."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from whathappened.fleet.result import FleetResult
from whathappened.fleet.rollup import rollup
from whathappened.model import Window
from whathappened.render.fleet import headline

T0 = datetime(2026, 11, 1, tzinfo=UTC)
MONTH = Window(T0, T0 + timedelta(days=30))


def days(first: float, last: float) -> Window:
    return Window(T0 + timedelta(days=first), T0 + timedelta(days=last))


def result(*covered: Window) -> FleetResult:
    return FleetResult(MONTH, rollup([], 3), (), {"prometheus": "ok"}, 3, covered)


def test_overlapping_spans_count_once_and_spans_outside_the_window_not_at_all() -> None:
    overlapping = result(days(5, 15), days(0, 10), days(-5, 1), days(40, 50))
    assert overlapping.history == (days(0, 15),) and overlapping.coverage == 0.5
    assert overlapping.as_dict()["history"]["covered"] == [
        {"start": "2026-11-01T00:00:00Z", "end": "2026-11-16T00:00:00Z"}
    ]
    assert result(days(29, 40)).coverage == 1 / 30


def test_the_headline_names_a_few_gaps_and_counts_the_rest() -> None:
    scattered = result(*(days(d, d + 0.5) for d in range(10)))
    line = headline(scattered)
    assert "covers only 17% of the window (11-01 00:00 to 11-01 12:00, 11-02 00:00 to 11-02 12:00, " in line
    assert line.endswith("and 7 more spans UTC): deaths outside it are not counted.")
    assert "covers only" not in headline(result(days(0, 29.9)))  # a missed scrape or two is not a gap


def test_no_history_is_no_evidence_and_a_covered_quiet_month_no_failure() -> None:
    assert (result().outcome, result().coverage) == ("no-evidence", 0.0)
    assert result(days(0, 30)).outcome == "no-failure"
