"""OpenMetrics text, both ways: our own parser (the snapshot side) and writer (``whathappened collect``).

The parser is built for recorded history rather than one scrape: the same series appears on thousands of lines,
one per timestamp. Label sets are parsed once per distinct ``name{...}`` text and cached, so a file costs one
split per line plus one label parse per series. Timestamps are seconds (OpenMetrics); a 13-digit integer is
taken as milliseconds, which the Prometheus text format uses. Bad lines are skipped and named ("line N: what");
everything else is kept. Files end with ``# EOF``; text after it is reported, not parsed.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from whathappened.collectors.prometheus.model import Series

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")
# only ever .match()ed at a label's position, never searched: linear in the labels' length
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|\Z)')
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}
_ESCAPED = re.compile(r"\\[\\\"n]")
_MAX_PROBLEMS = 50


class _Bad(ValueError):
    """A line we cannot use; the message says why."""


def parse_openmetrics(text: str) -> tuple[list[Series], list[str]]:
    """Series (samples in time order) and problems as ``"line N: what"``; bad lines are skipped."""
    keys: dict[str, tuple[str, Mapping[str, str]] | None] = {}
    samples: dict[str, list[tuple[float, float]]] = {}
    problems: list[str] = []
    eof = False
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if not line or line.startswith("#"):
            if line.startswith("# EOF"):
                eof = True
                break
            continue
        try:
            key, value, at = _split(line)
            if key not in keys:
                keys[key] = _identity(key)
                samples[key] = []
            samples[key].append((at, value))
        except _Bad as exc:
            _note(problems, f"line {number}: {exc}")
    if not eof and text.strip():
        _note(problems, f"line {len(lines) + 1}: no # EOF at the end (file cut short?)")
    return [_series(keys[k], samples[k]) for k in keys if keys[k] is not None], problems


def _note(problems: list[str], what: str) -> None:
    if len(problems) < _MAX_PROBLEMS:
        problems.append(what)
    elif len(problems) == _MAX_PROBLEMS:
        problems.append("... more problems not listed")


def _split(line: str) -> tuple[str, float, float]:
    """``name{labels} value timestamp [# exemplar]`` -> the series text, the value and the time (seconds)."""
    brace = line.find("{")
    if brace >= 0:
        cut = line.rfind("} ") if " # " not in line else _labels_end(line, brace)
        if cut < 0:
            raise _Bad("labels are not closed")
        key, tail = line[: cut + 1], line[cut + 2 :]
    else:
        key, _, tail = line.partition(" ")
    rest = tail.split(" # ", 1)[0].split()  # an exemplar may follow the value
    if len(rest) != 2:
        raise _Bad("expected a value and a timestamp" if len(rest) == 1 else "cannot split name, value and time")
    try:
        value = float(rest[0])
        at = float(rest[1])
    except ValueError as exc:
        raise _Bad(f"not a number: {exc.args[0].split(': ')[-1]}") from exc
    if not math.isfinite(at):
        raise _Bad("timestamp is not finite")
    if at > 1e11 and "." not in rest[1]:
        at /= 1000.0  # Prometheus text format: integer milliseconds
    return key, value, at


def _labels_end(line: str, start: int) -> int:
    """The index of the brace closing the label set, skipping quoted values (which may hold braces and #)."""
    quoted = escaped = False
    for index in range(start + 1, len(line)):
        char = line[index]
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == "}" and not quoted:
            return index
    return -1


def _identity(key: str) -> tuple[str, Mapping[str, str]]:
    brace = key.find("{")
    if brace < 0:
        if not _NAME.match(key):
            raise _Bad(f"invalid metric name {key[:60]!r}")
        return key, MappingProxyType({})
    name = key[:brace]
    if not _NAME.match(name) or not key.endswith("}"):
        raise _Bad(f"invalid series {key[:60]!r}")
    return name, MappingProxyType(_labels(key[brace + 1 : -1]))


def _labels(body: str) -> dict[str, str]:
    labels: dict[str, str] = {}
    position = 0
    while position < len(body):
        match = _LABEL.match(body, position)
        if match is None:
            raise _Bad(f"invalid labels near {body[position : position + 40]!r}")
        name, raw = match.group(1), match.group(2)
        if name in labels:
            raise _Bad(f"label {name} given twice")
        labels[name] = _ESCAPED.sub(lambda m: _UNESCAPE[m.group(0)], raw) if "\\" in raw else raw
        position = match.end()
    return labels


def _series(identity: tuple[str, Mapping[str, str]] | None, samples: list[tuple[float, float]]) -> Series:
    assert identity is not None
    if any(b[0] < a[0] for a, b in itertools.pairwise(samples)):
        samples.sort(key=lambda s: s[0])
    return Series(identity[0], identity[1], tuple(samples))


# --- writing -------------------------------------------------------------------------------------------------


def write_openmetrics(series: Iterable[Series], types: Mapping[str, str] | None = None) -> str:
    """OpenMetrics text with second timestamps and ``# EOF``: one ``# TYPE`` per family, samples in time order."""
    by_name: dict[str, list[Series]] = {}
    for one in series:
        by_name.setdefault(one.name, []).append(one)
    out: list[str] = []
    for name in sorted(by_name):
        out.append(f"# TYPE {name} {(types or {}).get(name, 'gauge')}")
        for one in sorted(by_name[name], key=lambda s: sorted(s.labels.items())):
            key = name + _format_labels(one.labels)
            out.extend(f"{key} {_format_number(v)} {_format_number(t)}" for t, v in one.samples)
    out.append("# EOF")
    return "\n".join(out) + "\n"


def _format_labels(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    body = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()))
    return "{" + body + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _format_number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)
