"""Parsing and formatting of times and durations; everything returned is timezone-aware UTC."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from whathappened.errors import UsageError

_DURATION = re.compile(r"^\s*(\d{1,18}(?:\.\d{1,18})?)\s*(ms|s|m|h|d|w)\s*$")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
# Go's time.RFC1123 as AWS IMDS and Azure "Fri, 20 Nov 2026 07:16:00 GMT" messages write it, and AWS's
# events/maintenance/scheduled form "2 Jan 2006 15:04:05 GMT".
_HTTP_DATE_FORMATS = ("%a, %d %b %Y %H:%M:%S GMT", "%d %b %Y %H:%M:%S GMT", "%a, %d %b %Y %H:%M:%S %Z")


def utc(at: datetime) -> datetime:
    """The same instant in UTC; a naive time is taken to be UTC already."""
    if at.tzinfo is None:
        return at.replace(tzinfo=UTC)
    return at.astimezone(UTC)


def now() -> datetime:
    return datetime.now(UTC)


def parse_duration(text: str) -> timedelta:
    """``90m``, ``6h``, ``2d``, ``1.5h``, ``30s``, or compound Go-style ``1h30m``."""
    if not text or not text.strip():
        raise UsageError("empty duration; use a form such as 90m, 6h or 2d")
    parts = re.findall(r"(?<![\d.])(\d{1,18}(?:\.\d{1,18})?)(ms|s|m|h|d|w)", text.strip())  # fenced: linear
    if not parts or "".join(n + u for n, u in parts) != text.strip():
        match = _DURATION.match(text)
        if not match:
            raise UsageError(f"invalid duration {text!r}; use a form such as 90m, 6h or 2d")
        parts = [(match.group(1), match.group(2))]
    seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    if seconds <= 0:
        raise UsageError(f"duration {text!r} must be positive; use a form such as 90m, 6h or 2d")
    return timedelta(seconds=seconds)


def parse_time(text: str) -> datetime:
    """An RFC 3339 time (``2026-11-20T06:00:00Z``, with offset or fractional seconds) as UTC."""
    value = parse_timestamp(text)
    if value is None:
        raise UsageError(f"invalid time {text!r}; use RFC 3339 such as 2026-11-20T06:00:00Z")
    return value


def parse_timestamp(value: object) -> datetime | None:
    """Lenient: RFC 3339 strings (any fraction length), Unix seconds or milliseconds, HTTP dates; else None."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return utc(value)
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return _from_number(float(value))
    if not isinstance(value, str):
        return None
    text = value.strip()
    if re.fullmatch(r"\d{9,13}(\.\d+)?", text):
        return _from_number(float(text))
    iso = _normalize_iso(text)
    if iso is not None:
        try:
            return utc(datetime.fromisoformat(iso))
        except ValueError:
            pass
    for fmt in _HTTP_DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _normalize_iso(text: str) -> str | None:
    match = re.fullmatch(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?\s*(Z|z|[+-]\d{2}:?\d{2})?", text)
    if not match:
        return None
    date, clock, fraction, zone = match.groups()
    fraction = f".{(fraction or '')[:6].ljust(6, '0')}" if fraction else ""
    if zone in (None, "Z", "z"):
        zone = "+00:00"
    elif ":" not in zone:
        zone = f"{zone[:3]}:{zone[3:]}"
    return f"{date}T{clock}{fraction}{zone}"


def _from_number(seconds: float) -> datetime | None:
    """A number from a payload: None where no date can hold it (inf, NaN, 1e300), as for any other bad value."""
    try:
        return from_unix(seconds)
    except (OverflowError, OSError, ValueError):
        return None


def from_unix(seconds: float) -> datetime:
    if seconds > 1e11:  # milliseconds
        seconds /= 1000.0
    return datetime.fromtimestamp(seconds, UTC)


def to_unix(at: datetime) -> float:
    return utc(at).timestamp()


def isoformat(at: datetime) -> str:
    """RFC 3339 with a Z, seconds precision unless the time carries a fraction."""
    at = utc(at)
    if at.microsecond:
        return at.strftime("%Y-%m-%dT%H:%M:%S.%f").rstrip("0") + "Z"
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def relative(at: datetime, origin: datetime) -> str:
    """``+1h02m03s`` / ``-45s`` relative to origin, for the timeline's left column."""
    delta = round((utc(at) - utc(origin)).total_seconds())
    sign = "-" if delta < 0 else "+"
    delta = abs(delta)
    hours, rest = divmod(delta, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{sign}{hours}h{minutes:02d}m{seconds:02d}s"
    if minutes:
        return f"{sign}{minutes}m{seconds:02d}s"
    return f"{sign}{seconds}s"


def humanize(delta: timedelta) -> str:
    seconds = int(abs(delta.total_seconds()))
    if seconds < 90:
        return f"{seconds}s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"
