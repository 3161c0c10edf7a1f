"""Property tests of the timeline merge: sorted, duplicates dropped, idempotent, order of sources irrelevant."""

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from whathappened.kinds import Kind
from whathappened.model import Severity, Subject, TimelineEvent
from whathappened.timeline import merge_timeline

T0 = datetime(2026, 11, 20, 6, tzinfo=UTC)

events = st.builds(
    TimelineEvent,
    at=st.integers(0, 7200).map(lambda s: T0 + timedelta(seconds=s)),
    source=st.sampled_from(["kubernetes", "prometheus", "logs"]),
    kind=st.sampled_from(list(Kind)),
    severity=st.sampled_from(list(Severity)),
    summary=st.text(max_size=20),
    subject=st.builds(
        Subject,
        pod=st.sampled_from([None, "p-0", "p-1"]),
        node=st.sampled_from([None, "n-0"]),
        gpu=st.sampled_from([None, "0", "5"]),
    ),
)


@settings(max_examples=80, deadline=None)
@given(st.lists(events, max_size=25), st.lists(events, max_size=25))
def test_merge_is_sorted_unique_idempotent_and_symmetric(first, second):
    merged = merge_timeline(first, second)
    assert [e.at for e in merged] == sorted(e.at for e in merged)
    assert len({e.identity for e in merged}) == len(merged)
    assert {e.identity for e in merged} == {e.identity for e in first + second}
    assert merge_timeline(merged) == merged
    assert merge_timeline(second, first) == merged
    assert merge_timeline(merged, merged, first) == merged
