"""What the log lines other sources read mean: the same signatures as the log store's lines, applied to

- the last lines the Kubernetes API served for an ended container (``kubectl logs --previous --timestamps``), and
- a failed container's termination message: ``terminationMessagePolicy: FallbackToLogsOnError`` puts the
  container's last log lines there (at most 80 lines, 2,048 bytes), and a program may write its own reason to
  ``/dev/termination-log``.

Without a log store these are the only words a dead rank left, and in a restarted pod the previous container's
are the only trace of an earlier attempt. With a log store they are mostly the same lines again, and a happening
the store already reported for the same container is not reported twice: a served line (stamped like the store's)
within ``SAME_LINE`` of it; a termination message's (not stamped: placed at the container's end) anywhere in the
life of the container instance that wrote it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from whathappened.collectors.logs.discover import SOURCE
from whathappened.collectors.logs.parse import LineMatch, match_document, signature_event

from whathappened.kinds import Kind
from whathappened.model import Subject, TimelineEvent

SAME_LINE = timedelta(minutes=1)  # a shipper may stamp a line when it read it rather than when it was written
MESSAGES = 64  # termination messages read, the earliest ended first (as the API's log tails: the first deaths)
_NOT_OF_A_FAILURE = frozenset({None, Kind.JOB_COMPLETED})
_TICK = timedelta(microseconds=1)  # a message's pieces in their order, just before the end they explain


@dataclass(frozen=True)
class _Read:
    """Lines of one container instance read by another source: its tail (stamped lines) or its message."""

    source: str
    subject: Subject
    previous: bool
    found: list[tuple[datetime, LineMatch, str]]
    began: datetime | None = None  # a message's container instance: its life, for the store's copies
    ended: datetime | None = None


def events_from_lines(timeline: Sequence[TimelineEvent]) -> list[TimelineEvent]:
    """The signature events of the lines other sources read, each with the source that read it, less what the log
    store (or a tail, for a message) already reported."""
    reported: dict[tuple[str | None, str | None, str], list[tuple[datetime, str | None]]] = defaultdict(list)
    for event in timeline:
        if event.source == SOURCE and "signature" in event.attrs:
            reported[_key(event.subject, event.kind)].append((event.at, event.subject.container))
    found: list[TimelineEvent] = []
    for read in [*_tails(timeline), *_messages(timeline)]:
        for at, hit, text in read.found:
            kind = str(hit.signature.kind)
            known = reported[_key(read.subject, kind)]
            if any(_same(read, at, seen, container) for seen, container in known):
                continue
            known.append((at, read.subject.container))
            attrs = {**hit.attrs, "signature": hit.signature.name}
            found.append(signature_event(at, hit.signature, attrs, read.subject, text, read.source))
    return found


def _key(subject: Subject, kind: str) -> tuple[str | None, str | None, str]:
    return subject.namespace, subject.pod, kind


def _same(read: _Read, at: datetime, seen: datetime, container: str | None) -> bool:
    """Whether a happening reported at ``seen`` (by ``container``; a store without container names: any) is the
    one this read says at ``at``."""
    if container is not None and read.subject.container is not None and container != read.subject.container:
        return False
    if read.ended is None:
        return abs(at - seen) <= SAME_LINE
    return (read.began is None or seen >= read.began - SAME_LINE) and seen <= read.ended + SAME_LINE


def _tails(timeline: Sequence[TimelineEvent]) -> Iterator[_Read]:
    """Each container instance's served lines in the order it wrote them, a traceback as one piece."""
    lines: dict[tuple[str, Subject, bool], list[tuple[datetime, int, str]]] = defaultdict(list)
    for event in timeline:
        line = event.attrs.get("line")
        if event.kind == Kind.LOG_LINE and event.source != SOURCE and isinstance(line, str):
            seq = event.attrs.get("seq")
            key = (event.source, event.subject, bool(event.attrs.get("previous")))
            lines[key].append((event.at, seq if isinstance(seq, int) else 0, line))
    for (source, subject, previous), written in lines.items():
        written.sort(key=lambda line: (line[0], line[1]))
        # read as the store reads a document of these lines, each piece at its own line's stamp
        hits = match_document("\n".join(text for _, _, text in written))
        found = [(written[index][0], hit, text) for index, hit, text in hits if hit.signature.kind is not None]
        yield _Read(source, subject, previous, found)


def _messages(timeline: Sequence[TimelineEvent]) -> Iterator[_Read]:
    """The termination messages of the containers that failed, the earliest ended first, at most MESSAGES."""
    starts: dict[tuple[Subject, bool], list[datetime]] = defaultdict(list)
    for event in timeline:
        if event.kind == Kind.CONTAINER_STARTED and event.source != SOURCE:
            starts[(event.subject, bool(event.attrs.get("previous")))].append(event.at)
    read = 0
    for event in timeline:  # in time order: the earliest ended first
        message = event.attrs.get("message")
        if event.kind != Kind.CONTAINER_TERMINATED or event.source == SOURCE or not isinstance(message, str):
            continue
        if not message.strip() or event.attrs.get("exit_code") == 0 or read >= MESSAGES:
            continue
        read += 1
        previous = bool(event.attrs.get("previous"))
        began = max((at for at in starts[(event.subject, previous)] if at <= event.at), default=None)
        # a finish line in a failed container's message (training done, then the save or the evaluation failed)
        # does not make the container's end a completion
        hits = [
            (index, hit, text)
            for index, hit, text in match_document(message)
            if hit.signature.kind not in _NOT_OF_A_FAILURE
        ]
        lines = message.count("\n") + 1
        found = [(event.at - _TICK * (lines - index), hit, text) for index, hit, text in hits]
        yield _Read(event.source, event.subject, previous, found, began, event.at)
