from datetime import UTC, datetime, timedelta

import pytest

from whathappened.errors import UsageError
from whathappened.timeutils import isoformat, parse_duration, parse_time, parse_timestamp, relative


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90m", 5400), ("6h", 21600), ("2d", 172800), ("30s", 30), ("1h30m", 5400), ("1.5h", 5400), ("1w", 604800)],
)
def test_durations(text, seconds):
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "abc", "6 hours", "-5m", "0s", "5", "h6"])
def test_bad_durations_name_the_right_form(text):
    with pytest.raises(UsageError, match="90m, 6h or 2d"):
        parse_duration(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-20T06:00:00Z", datetime(2026, 11, 20, 6, tzinfo=UTC)),
        ("2026-11-20T07:00:00+01:00", datetime(2026, 11, 20, 6, tzinfo=UTC)),
        ("2026-11-20T06:00:00.123456789Z", datetime(2026, 11, 20, 6, 0, 0, 123456, tzinfo=UTC)),
        ("2026-11-20T06:00:00.5Z", datetime(2026, 11, 20, 6, 0, 0, 500000, tzinfo=UTC)),
    ],
)
def test_rfc3339(text, expected):
    assert parse_time(text) == expected


@pytest.mark.parametrize("text", ["yesterday", "2026-13-01T00:00:00Z", "20/11/2026", ""])
def test_bad_time_gives_example(text):
    with pytest.raises(UsageError, match="2026-11-20T06:00:00Z"):
        parse_time(text)


def test_lenient_timestamps():
    at = datetime(2026, 11, 20, 7, 16, tzinfo=UTC)
    assert parse_timestamp("Fri, 20 Nov 2026 07:16:00 GMT") == at
    assert parse_timestamp("20 Nov 2026 07:16:00 GMT") == at
    assert parse_timestamp(at.timestamp()) == at
    assert parse_timestamp(at.timestamp() * 1000) == at
    assert parse_timestamp("not a time") is None
    assert parse_timestamp(None) is None


def test_formatting():
    origin = datetime(2026, 11, 20, 7, 0, tzinfo=UTC)
    assert isoformat(origin) == "2026-11-20T07:00:00Z"
    assert relative(origin + timedelta(hours=1, minutes=2, seconds=3), origin) == "+1h02m03s"
    assert relative(origin - timedelta(seconds=45), origin) == "-45s"


def test_numbers_no_date_can_hold_are_no_timestamp() -> None:
    for value in (1e300, -1e300, float("inf"), float("nan"), 2**70, "99999999999999.5", True):
        assert parse_timestamp(value) is None, value
    assert parse_timestamp(1_795_157_760) == parse_timestamp(1_795_157_760_000)  # seconds or milliseconds
