"""The containers' own logs as the API serves them (``kubectl logs --timestamps``, ``--previous`` for a container
that restarted): which container instances to read, and their lines as timeline events."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from whathappened.kinds import Kind, severity_of
from whathappened.model import Subject, TimelineEvent
from whathappened.timeutils import parse_timestamp


def failed_containers(obj: Mapping[str, Any]) -> Iterable[tuple[str, bool]]:
    """(container, previous) for every container instance of this pod that ended with a non-zero exit."""
    status_block = obj.get("status") or {}
    for status in [*(status_block.get("initContainerStatuses") or []), *(status_block.get("containerStatuses") or [])]:
        current = (status.get("state") or {}).get("terminated") or {}
        last = (status.get("lastState") or {}).get("terminated") or {}
        if current.get("exitCode"):
            yield status["name"], False
        if last.get("exitCode"):
            yield status["name"], True


def log_events(raw: bytes, subject: Subject, previous: bool, source: str) -> list[TimelineEvent]:
    """Lines of ``kubectl logs --timestamps`` as LOG_LINE events (the log collector owns their meaning)."""
    found = []
    # Split on LF only: str.splitlines would also cut at each \r of a redrawn progress bar, and the frames after
    # the first carry no timestamp, so a line printed over a bar was dropped. The last frame is what the
    # terminal showed.
    for seq, line in enumerate(raw.decode("utf-8", errors="replace").split("\n")):
        stamp, _, message = line.rstrip("\r").partition(" ")
        if "\r" in message:
            frames = [frame for frame in message.split("\r") if frame.strip()]
            message = frames[-1] if frames else ""
        at = parse_timestamp(stamp)
        if at is None or not message.strip():
            continue
        found.append(
            TimelineEvent(
                at=at,
                source=source,
                kind=Kind.LOG_LINE,
                severity=severity_of(Kind.LOG_LINE),
                summary=message[:500],
                subject=subject,
                # seq: the line's place in the log; lines written at once share a stamp, and the timeline orders
                # ties by their text
                attrs={"previous": previous, "line": message, "seq": seq},
            )
        )
    return found


def finished_at(obj: Mapping[str, Any], container: str, previous: bool) -> str:
    """When that container instance ended, as RFC 3339 text (sorts as time); unknown sorts last."""
    block_of = obj.get("status") or {}
    for status in [*(block_of.get("initContainerStatuses") or []), *(block_of.get("containerStatuses") or [])]:
        if status.get("name") == container:
            block = (status.get("lastState") if previous else status.get("state")) or {}
            return str((block.get("terminated") or {}).get("finishedAt") or "9999")
    return "9999"
