"""Small pure readers shared by the Kubernetes parsers: field access, times, and facts inside messages.

Maintenance notices carry their facts in free text ("Reboot Scheduled for Fri, 20 Nov 2026 07:16:00 GMT",
"system-reboot will occur between 21 Jan 2019 09:00:43 GMT and ...", "Spot ITN received. Instance will be
interrupted at 2020-04-24T17:11:44Z"), so the time, event id and event type are pulled out here, once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any

from whathappened.timeutils import parse_timestamp

_DATES = (
    re.compile(r"[A-Z][a-z]{2}, \d{1,2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT"),  # RFC 1123 (Azure, AKS NPD)
    re.compile(r"\d{1,2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT"),  # AWS IMDS scheduled events
    re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})"),  # RFC 3339
)
_EVENT_ID = re.compile(r"(?:EventId:\s{0,16}([0-9A-Za-z-]{1,128}))|(instance-event-[0-9a-f]{1,64})")
_AZURE_TYPE = re.compile(r"\b(Reboot|Redeploy|Freeze|Preempt|Terminate)\s{1,16}Scheduled\b", re.IGNORECASE)
_AWS_CODE = re.compile(r"\b(instance-reboot|system-reboot|system-maintenance|instance-retirement|instance-stop)\b")
_CONTAINER_PATH = re.compile(r"spec\.(?:initContainers|containers|ephemeralContainers)\{([^}]{1,256})\}")
_RESOURCE = re.compile(r"(?:low on resource|reclaim|had condition):?\s{0,16}\[?([A-Za-z-]{1,64})")
_XID = re.compile(r"NVRM: Xid \(PCI:([0-9a-fA-F:.]{1,32})\): (\d{1,5})")
_OOM_PROCESS = re.compile(r"Killed process (\d{1,10}) \(([^)\n]{1,256})\)")  # bounded: linear
_PROBE = re.compile(r"\b(Liveness|Readiness|Startup) probe\b", re.IGNORECASE)


def dig(obj: Any, *path: str) -> Any:
    """obj[a][b]... or None where any step is missing or not a mapping."""
    for step in path:
        if not isinstance(obj, dict) and not isinstance(obj, Mapping):  # dict first: the ABC check is slow
            return None
        obj = obj.get(step)
    return obj


def text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def when(value: Any) -> datetime | None:
    if value is None or value == "":
        return None
    return _text_time(value) if isinstance(value, str) else parse_timestamp(value)


@lru_cache(maxsize=1 << 15)
def _text_time(value: str) -> datetime | None:
    """An event's eventTime, first and last timestamps and creationTimestamp are often the same text."""
    return parse_timestamp(value)


def first_time(*values: Any) -> datetime | None:
    for value in values:
        at = when(value)
        if at is not None:
            return at
    return None


def not_before(message: str) -> datetime | None:
    """The first absolute time a maintenance or interruption message names."""
    for pattern in _DATES:
        match = pattern.search(message)
        if match:
            return parse_timestamp(match.group(0))
    return None


def event_id(message: str) -> str | None:
    match = _EVENT_ID.search(message)
    if not match:
        return None
    return match.group(1) or match.group(2)


def event_type(message: str) -> str | None:
    """Azure's EventType (Reboot, Freeze, ...) or AWS's scheduled-event code (system-reboot, ...)."""
    match = _AZURE_TYPE.search(message)
    if match:
        return match.group(1).capitalize()
    match = _AWS_CODE.search(message)
    return match.group(1) if match else None


def container_of(field_path: Any) -> str | None:
    match = _CONTAINER_PATH.search(text(field_path))
    return match.group(1) if match else None


def resource_of(message: str) -> str | None:
    """memory/disk/pid/ephemeral-storage named by an eviction or pressure message."""
    lowered = message.lower()
    if "ephemeral" in lowered:
        return "ephemeral-storage"
    match = _RESOURCE.search(lowered)
    if not match:
        return None
    word = match.group(1)
    for known in ("memory", "pid", "disk", "nodefs", "imagefs"):
        if word.startswith(known) or known in word:
            return "disk" if known in ("nodefs", "imagefs") else known
    return word


def probe_of(message: str) -> str | None:
    match = _PROBE.search(message)
    return match.group(1).lower() if match else None


def xid_of(message: str) -> tuple[int, str] | None:
    match = _XID.search(message)
    return (int(match.group(2)), match.group(1)) if match else None


def oom_process(message: str) -> dict[str, Any]:
    match = _OOM_PROCESS.search(message)
    return {"pid": int(match.group(1)), "process": match.group(2)} if match else {}


def one_line(message: str, limit: int = 300) -> str:
    flat = " ".join(message.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
