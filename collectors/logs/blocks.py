"""A log text of several lines, in the pieces that each say one thing: its lines, a Python traceback as one.

A document may hold several lines (a shipper's multiline rule, a paste, a termination message) and lines read one
by one may belong together (a traceback the API served line by line). Either way a traceback's frames name the
failing code only with its exception line, and the other lines each tell their own happening: a rank's own error,
then its launcher tearing the others down, then the launcher's summary.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

TRACEBACK = "Traceback (most recent call last):"
# What Python prints right before a traceback of an exception it ignores (a finalizer's, an exit handler's), and
# what a library logs before the traceback of one it caught (Comet's streaming thread, xformers' probe for
# Triton, gRPC's server failing one call): the traceback is read with it
_LEADS = (
    "Exception ignored ",
    "Error in atexit._run_exitfuncs:",
    "COMET ERROR: Streaming error",
    "A matching Triton is not available",
    "Exception calling application:",
    "Exception in thread ",
    "Exception iterating responses:",
)
# threading's excepthook's header ("Exception in thread Thread-1:"): printed once before the whole chain of the
# thread's exceptions
_THREAD = "Exception in thread "
# A traceback's last line: the exception's (dotted) class name, alone or before its message ("KeyError: 'image'",
# "torch.OutOfMemoryError: CUDA out of memory.", "KeyboardInterrupt")
_EXCEPTION_LINE = re.compile(r"[A-Za-z_][\w.]{0,200}(?::|\s*$)")


def pieces(lines: Sequence[str]) -> Iterator[tuple[int, str]]:
    """(index of the piece's last line, its text): each line, a Python traceback joined from its header to its
    exception line. Every line of a traceback may carry the same prefix (torchrun's ``[rank3]:``, a launcher's tag):
    it is the text before "Traceback" and is taken off the joined lines. A traceback cut off, or broken into by a
    line that is neither a frame nor its exception (another rank's line, a launcher's), is left as lines. A chained
    traceback ("During handling of the above exception ...") is a piece of its own, and the exception (its
    traceback or line) that Python chained to it is joined to the words that say so: not the program's last. A
    thread's chain has threading's header once, before its first traceback: the later ones are read with it."""
    recent: list[tuple[int, str]] = []  # the last pieces, until it is known whether the next one chains them
    tags: list[str] = []  # the rank tag each of them was printed under (a traceback's is taken off its text)
    thread = ""  # threading's header line of a chain just joined: the tracebacks chained after it are the thread's
    cause = ""  # the exception line a chain just joined names as the direct cause of the next traceback's
    for index, text, prefix in _pieces(lines):
        if (thread or cause) and TRACEBACK in text and not text.startswith(_THREAD):
            # the traceback right after the words only (a later one is another's: the main program's, after a thread's)
            text = "\n".join(line for line in (thread, cause, text) if line)
            thread = cause = ""
        elif not _blank(text):
            thread = cause = ""
        at = next((text.find(words) for words in _CHAINED if words in text), -1)
        if at >= 0:
            # Python's blank line before its words (with the prefix every line of the traceback carries)
            blank = len(recent)
            while blank > 0 and len(recent) - blank < 2 and recent[blank - 1][1].strip() == text[:at].strip():
                blank -= 1
            if blank > 0:
                # the exception's message may run on over lines of its own (httpx's "For more information check:
                # ..."): the chained exception is the last piece before the words that begins like one
                # (each line's own prefix, a rank's "[rank0]: " as the words carry it, taken off: another rank's
                # exception line is no line of this one's)
                lead = text[:at]
                own = _tag(lead)
                begins = [
                    k
                    for k in range(blank)
                    if _begins_an_exception(recent[k][1].removeprefix(lead)) and tags[k] in ("", own)
                ]
                start = begins[-1] if begins else blank - 1
                yield from recent[:start]
                # another rank's traceback printed between them is its own piece
                yield from (
                    piece for piece, tag in zip(recent[start:], tags[start:], strict=True) if tag not in ("", own)
                )
                first = recent[start][1]
                joined = [line for (_, line), tag in zip(recent[start:], tags[start:], strict=True) if tag in ("", own)]
                yield index, "\n".join([*joined, text])
                thread = first.split("\n", 1)[0] if first.startswith(_THREAD) else ""
                cause = _cause_line(joined, lead) if _DIRECT_CAUSE in text else ""
                recent, tags = [], []
                continue
        recent.append((index, text))
        tags.append(_tag(prefix))
        if len(recent) > 3:
            tags.pop(0)
            yield recent.pop(0)
    yield from recent


def _begins_an_exception(text: str) -> bool:
    return TRACEBACK in text or _EXCEPTION_LINE.match(text.lstrip()) is not None


# Python's words between two chained exceptions' tracebacks
_DIRECT_CAUSE = "The above exception was the direct cause of the following exception:"
_CHAINED = ("During handling of the above exception, another exception occurred:", _DIRECT_CAUSE)


# A rank's tag in a line's prefix (torchrun's "[rank3]:", its --tee "[default3]:", Open MPI's "[1,3]<stderr>:")
_RANK_TAG = re.compile(r"\[(?:rank|default)\d{1,6}\]|\[\d{1,6},\d{1,6}\]<std")


def _tag(prefix: str) -> str:
    found = _RANK_TAG.search(prefix)
    return found.group(0) if found else ""


def _cause_line(joined: Sequence[str], lead: str) -> str:
    """The exception line of the pieces Python names as the direct cause of the next ("raise ... from e"): the
    next traceback is read with it, as the later exception only wraps it (DataLoader's "exited unexpectedly" over
    its worker's "is killed by signal: Killed."). The last line that reads as one: the hint lines torch prints
    after a CUDA error's do not. (Each line's prefix, the words', taken off.)"""
    lines = [line.removeprefix(lead).strip() for piece in joined for line in piece.split("\n")]
    return next((line for line in reversed(lines) if _EXCEPTION_LINE.match(line) and ":" in line), "")


# A piece that is blank but for the tag its lines carry ("[rank0]: ", "[default0]:[rank0]: ")
_TAGS_ONLY = re.compile(r"\s*(?:\[[^\]\n]{1,40}\]:?\s*){0,3}")


def _blank(text: str) -> bool:
    return _TAGS_ONLY.fullmatch(text) is not None


def _pieces(lines: Sequence[str]) -> Iterator[tuple[int, str, str]]:
    """(index, text, the prefix taken off a traceback's lines: "" for a line, which keeps its own)."""
    block: list[tuple[int, str]] = []
    prefix = ""
    lead: tuple[int, str] | None = None  # a line announcing an ignored exception, waiting for its traceback
    for index, text in enumerate(lines):
        if lead is not None:
            held, lead = lead, None
            start = text.find(TRACEBACK)
            if start >= 0 and lines[held[0]].startswith(text[:start]):
                prefix = text[:start]
                block = [(held[0], lines[held[0]][len(prefix) :]), (index, text[start:])]
                continue
            yield (*held, "")
        if block:
            rest = text[len(prefix) :] if text.startswith(prefix) else None
            if rest is not None and _inside(rest):
                block.append((index, rest))
                continue
            if rest is not None and _EXCEPTION_LINE.match(rest):
                block.append((index, rest))
                yield index, "\n".join(line for _, line in block), prefix
                block = []
                continue
            yield from ((at, prefix + line, "") for at, line in block)
            block = []
        start = text.find(TRACEBACK)
        if start >= 0:
            prefix = text[:start]
            block = [(index, text[start:])]
            continue
        if any(word in text for word in _LEADS):
            lead = (index, text)
            continue
        yield index, text, ""
    if lead is not None:
        yield (*lead, "")
    yield from ((at, prefix + line, "") for at, line in block)


def _inside(rest: str) -> bool:
    """A traceback's line before its exception: a frame or its code (indented), a blank."""
    return not rest.strip() or rest[:1].isspace()
