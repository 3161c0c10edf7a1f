"""Reading a log line in time linear in its length, whatever a program printed.

Three guards sit between a line and the signature table's regular expressions:

- ``normalize``: a line as a terminal would show it. A ``\\r``-redrawn progress bar keeps its last frame, ANSI
  colour and cursor codes and NUL bytes are removed, CRLF endings become LF. All are single C-speed passes.
- ``bounded``: a line longer than ``HEAD + TAIL`` characters is examined by its first ``HEAD`` and last ``TAIL``
  characters only (joined by a newline, so no match spans the cut). Failure messages live at a line's start (the
  program's prefix and the error) or its end (a traceback's final exception); the middle of a 1 MB line is a
  tensor, a hex dump or a base64 blob. This caps what any pattern can cost on one line.
- ``required_literals``: for each pattern, a set of strings one of which every match must contain, derived from
  the pattern itself (its parse tree), never written by hand, so the prefilter can never reject a line the
  pattern would match. A line without any of them is not searched at all: a substring scan decides.
"""

from __future__ import annotations

import re
from typing import Any

try:  # the parser moved in Python 3.11; both spellings are the standard library's own
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_parse  # type: ignore[no-redef,unused-ignore]

HEAD = 8192
TAIL = 8192

# ESC [ ... final byte (CSI: colours, cursor moves), ESC ] ... BEL/ST (OSC: titles, links), and two-byte escapes
_ANSI = re.compile(r"\x1b\[[0-?]{0,64}[ -/]{0,8}[@-~]|\x1b\][^\x07\x1b]{0,512}(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def normalize(text: str) -> str:
    """The line as a terminal would leave it: last frame of each ``\\r`` redraw, no ANSI codes, no NULs, LF."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    if "\r" in text:
        text = "\n".join(_last_frame(part) for part in text.replace("\r\n", "\n").split("\n"))
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    return text


def _last_frame(line: str) -> str:
    """tqdm and friends redraw a line with ``\\r``: what stays on screen is the last non-empty frame."""
    frames = [frame for frame in line.split("\r") if frame.strip()]
    return frames[-1] if frames else ""


def bounded(text: str) -> str:
    """At most ``HEAD + TAIL + 1`` characters: the line, or its head and tail around a newline."""
    if len(text) <= HEAD + TAIL:
        return text
    return text[:HEAD] + "\n" + text[-TAIL:]


def required_literals(pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    """Strings one of which every match of ``pattern`` contains, or None when no such set can be proved (then the
    pattern is searched on every line). Case-insensitive patterns get none: a literal would need case folding."""
    if pattern.flags & re.IGNORECASE:
        return None
    found = _required(sre_parse.parse(pattern.pattern, pattern.flags))
    return tuple(sorted(found)) if found else None


def _required(items: Any) -> frozenset[str] | None:
    """The best requirement of a sequence: its longest run of literal characters, or a required part's own set,
    whichever has the longest shortest member."""
    best: frozenset[str] | None = None
    run: list[str] = []

    def consider(candidate: frozenset[str] | None) -> None:
        nonlocal best
        if candidate and (best is None or min(map(len, candidate)) > min(map(len, best))):
            best = candidate

    for op, value in items:
        name = str(op)
        if name == "LITERAL":
            run.append(chr(value))
            continue
        if name in ("AT", "ASSERT", "ASSERT_NOT"):  # zero-width: the run goes on
            continue
        consider(frozenset({"".join(run)}) if run else None)
        run = []
        consider(_part(name, value))
    consider(frozenset({"".join(run)}) if run else None)
    return best


def _part(name: str, value: Any) -> frozenset[str] | None:
    if name == "SUBPATTERN":
        _group, add_flags, _del_flags, items = value
        # a (?i:...) group's literals match in any case: no literal of it is certain as written
        return None if add_flags & re.IGNORECASE else _required(items)
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, _high, item = value
        return _required(item) if low >= 1 else None
    if name == "BRANCH":
        options = [_required(branch) for branch in value[1]]
        if any(not option for option in options):
            return None
        return frozenset().union(*options)  # type: ignore[arg-type]
    if name == "ATOMIC_GROUP":
        return _required(value)
    return None  # a class, ANY, a category, a back reference: no literal is certain


def contains_any(text: str, literals: tuple[str, ...] | None) -> bool:
    return literals is None or any(literal in text for literal in literals)
