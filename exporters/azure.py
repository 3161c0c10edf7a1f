"""Azure Instance Metadata Scheduled Events: the poller and the pure parser of its documents.

``GET /metadata/scheduledevents?api-version=2020-07-01`` with ``Metadata: true`` answers
``{"DocumentIncarnation": N, "Events": [...]}``; an event lists the VMs it concerns in ``Resources`` (a scale set
shares one document), so events are kept only when they name this VM, whose name comes from the instance compute
metadata. ``NotBefore`` is RFC 1123 and goes blank once the event has started; the last time seen is kept then.
Approval (``StartRequests``) lets Azure start early, so it is off unless asked for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx
from whathappened.exporters._metadata_http import (
    DEFAULT_BASE_URL,
    MetadataFormatError,
    decode_json,
    request,
)
from whathappened.exporters.notices import Clock, Notice

from whathappened.timeutils import parse_timestamp

PROVIDER = "azure"
HEADERS = {"Metadata": "true"}
EVENTS_PATH = "/metadata/scheduledevents"
EVENTS_API_VERSION = "2020-07-01"
COMPUTE_PATH = "/metadata/instance/compute"
COMPUTE_API_VERSION = "2021-02-01"
EVENT_TYPES = ("Freeze", "Reboot", "Redeploy", "Preempt", "Terminate")


@dataclass(frozen=True, slots=True)
class ScheduledEvents:
    incarnation: int
    notices: tuple[Notice, ...]


def concerns(event: Mapping[str, Any], vm_name: str | None) -> bool:
    """An event concerns this VM when it names it; with no name or no Resources, keep it (err on the safe side)."""
    resources = event.get("Resources") or []
    if vm_name is None or not resources:
        return True
    return vm_name.casefold() in {str(r).casefold() for r in resources}


def parse_event(event: Mapping[str, Any], remembered: Mapping[str, datetime], now: datetime) -> Notice:
    event_id = str(event.get("EventId") or "")
    if not event_id:
        raise MetadataFormatError("scheduled event without EventId")
    not_before = parse_timestamp(event.get("NotBefore")) or remembered.get(event_id)
    status = str(event.get("EventStatus") or "Scheduled")
    if not_before is None and status == "Started":
        not_before = now  # started before we ever saw its time: it is due now
    return Notice(
        provider=PROVIDER,
        event_id=event_id,
        event_type=str(event.get("EventType") or "Unknown"),
        status=status,
        not_before=not_before,
        description=str(event.get("Description") or ""),
        raw=dict(event),
    )


def parse_scheduled_events(
    document: Any, vm_name: str | None, remembered: Mapping[str, datetime], now: datetime
) -> ScheduledEvents:
    """The notices for this VM in one Scheduled Events document."""
    if not isinstance(document, dict) or not isinstance(document.get("Events", []), list):
        raise MetadataFormatError("scheduled events document is not {DocumentIncarnation, Events: [...]}")
    events = [e for e in document.get("Events") or [] if isinstance(e, dict) and concerns(e, vm_name)]
    try:
        incarnation = int(document.get("DocumentIncarnation") or 0)
    except (TypeError, ValueError) as exc:
        raise MetadataFormatError("DocumentIncarnation is not a number") from exc
    return ScheduledEvents(incarnation, tuple(parse_event(e, remembered, now) for e in events))


def approval_body(event_ids: Sequence[str]) -> dict[str, list[dict[str, str]]]:
    return {"StartRequests": [{"EventId": event_id} for event_id in event_ids]}


class AzurePoller:
    """Polls Scheduled Events for this VM; remembers NotBefore per event and, if asked, approves new events."""

    provider = PROVIDER

    def __init__(
        self,
        client: httpx.Client,
        clock: Clock,
        base_url: str = DEFAULT_BASE_URL,
        *,
        vm_name: str | None = None,
        acknowledge: bool = False,
    ) -> None:
        self._client = client
        self._clock = clock
        self._base = base_url.rstrip("/")
        self._vm_name = vm_name
        self._acknowledge = acknowledge
        self._not_before: dict[str, datetime] = {}
        self._approved: set[str] = set()
        self.incarnation: int | None = None

    def poll(self) -> tuple[Notice, ...]:
        vm_name = self._vm_name or self._fetch_vm_name()
        response = request(
            self._client,
            "GET",
            f"{self._base}{EVENTS_PATH}",
            headers=HEADERS,
            params={"api-version": EVENTS_API_VERSION},
        )
        assert response is not None
        parsed = parse_scheduled_events(decode_json(response), vm_name, self._not_before, self._clock())
        self.incarnation = parsed.incarnation
        self._remember(parsed.notices)
        if self._acknowledge:
            self._approve([n.event_id for n in parsed.notices if n.status == "Scheduled"])
        return parsed.notices

    def _fetch_vm_name(self) -> str:
        response = request(
            self._client,
            "GET",
            f"{self._base}{COMPUTE_PATH}",
            headers=HEADERS,
            params={"api-version": COMPUTE_API_VERSION, "format": "json"},
        )
        assert response is not None
        compute = decode_json(response)
        name = compute.get("name") if isinstance(compute, dict) else None
        if not name:
            raise MetadataFormatError("instance compute metadata has no name")
        self._vm_name = str(name)
        return self._vm_name

    def _remember(self, notices: Sequence[Notice]) -> None:
        # Only current events are kept, so the memory stays as small as the document.
        self._not_before = {n.event_id: n.not_before for n in notices if n.not_before is not None}
        self._approved &= {n.event_id for n in notices}

    def _approve(self, event_ids: Sequence[str]) -> None:
        new = [e for e in event_ids if e not in self._approved]
        if not new:
            return
        request(
            self._client,
            "POST",
            f"{self._base}{EVENTS_PATH}",
            headers=HEADERS,
            params={"api-version": EVENTS_API_VERSION},
            body=approval_body(new),
        )
        self._approved.update(new)
