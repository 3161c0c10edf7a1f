"""Google Compute Engine metadata: host maintenance events, preemption, and upcoming maintenance windows.

All reads carry ``Metadata-Flavor: Google``. ``instance/maintenance-event`` is ``NONE`` until 60 seconds before a
host event, then ``MIGRATE_ON_HOST_MAINTENANCE`` or ``TERMINATE_ON_HOST_MAINTENANCE`` (GPU VMs), then ``NONE``
again; it is read as a hanging GET (``wait_for_change`` with the last ETag) so a change arrives at once instead of
a poll interval later. ``instance/preempted`` turns ``TRUE`` when a spot/preemptible VM is reclaimed.
``instance/upcoming-maintenance`` (where the VM family has it; 404 otherwise) gives the scheduled window days
ahead, which is what a launch preflight needs: 60 seconds is no warning for a training job.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import httpx
from whathappened.exporters._metadata_http import DEFAULT_BASE_URL, MetadataFormatError, decode_json, request
from whathappened.exporters.notices import Clock, Notice

from whathappened.timeutils import parse_timestamp

PROVIDER = "gcp"
HEADERS = {"Metadata-Flavor": "Google"}
INSTANCE_PATH = "/computeMetadata/v1/instance/"
MAINTENANCE_EVENT = "maintenance-event"
PREEMPTED = "preempted"
UPCOMING = "upcoming-maintenance"
NO_EVENT = "NONE"
# Per Compute Engine's docs the value changes 60 seconds before the event starts.
EVENT_LEAD = timedelta(seconds=60)
UPCOMING_EVENT_TYPE = "upcoming-maintenance"
PREEMPTED_EVENT_TYPE = "preempted"


def _short(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def parse_maintenance_event(value: str, etag: str, first_seen: datetime) -> Notice | None:
    value = value.strip()
    if not value or value == NO_EVENT:
        return None
    return Notice(
        provider=PROVIDER,
        event_id=f"maintenance-event-{etag or _short(value)}",
        event_type=value,
        status="pending",
        not_before=first_seen + EVENT_LEAD,
        description=f"host maintenance event {value}",
        raw={"maintenance-event": value, "etag": etag},
    )


def parse_preempted(value: str, first_seen: datetime) -> Notice | None:
    if value.strip().upper() != "TRUE":
        return None
    return Notice(
        provider=PROVIDER,
        event_id=f"preempted-{int(first_seen.timestamp())}",
        event_type=PREEMPTED_EVENT_TYPE,
        status="preempted",
        not_before=first_seen,
        description="spot/preemptible VM is being reclaimed",
        raw={"preempted": value.strip()},
    )


def _field(payload: Mapping[str, Any], snake: str, camel: str) -> Any:
    # The metadata server writes snake_case; the Compute REST API (UpcomingMaintenance) writes camelCase.
    return payload.get(snake, payload.get(camel))


def parse_upcoming(payload: Any) -> Notice | None:
    """An upcoming maintenance window; None for an empty answer."""
    if payload in (None, "", {}):
        return None
    if not isinstance(payload, dict):
        raise MetadataFormatError("upcoming-maintenance is not a JSON object")
    start = parse_timestamp(_field(payload, "window_start_time", "windowStartTime"))
    kind = str(_field(payload, "type", "type") or "SCHEDULED")
    status = str(_field(payload, "maintenance_status", "maintenanceStatus") or "PENDING")
    reasons = _field(payload, "maintenance_reasons", "maintenanceReasons") or []
    return Notice(
        provider=PROVIDER,
        event_id=f"upcoming-{_short(str(start or '') + kind)}",
        event_type=UPCOMING_EVENT_TYPE,
        status=status,
        not_before=start,
        not_after=parse_timestamp(_field(payload, "window_end_time", "windowEndTime")),
        description=f"{kind} maintenance" + (f" ({', '.join(map(str, reasons))})" if reasons else ""),
        raw=dict(payload),
    )


class GcpPoller:
    """Polls the three keys; the maintenance-event read waits for a change for up to ``wait_seconds``."""

    provider = PROVIDER

    def __init__(
        self, client: httpx.Client, clock: Clock, base_url: str = DEFAULT_BASE_URL, *, wait_seconds: int = 0
    ) -> None:
        self._client = client
        self._clock = clock
        self._base = base_url.rstrip("/")
        self._wait = int(wait_seconds)
        self._etag = ""
        self._first_seen: dict[str, datetime] = {}

    def poll(self) -> tuple[Notice, ...]:
        value, etag = self._maintenance_event()
        preempted = self._text(PREEMPTED) or "FALSE"
        upcoming = self._json(UPCOMING)
        found = (
            parse_maintenance_event(value, etag, self._seen(f"m:{value}:{etag}")),
            parse_preempted(preempted, self._seen(f"p:{preempted}")),
            parse_upcoming(upcoming),
        )
        self._forget(value, etag, preempted)
        return tuple(n for n in found if n is not None)

    def _maintenance_event(self) -> tuple[str, str]:
        params: dict[str, str] = {}
        timeout = None
        if self._wait > 0 and self._etag:
            params = {"wait_for_change": "true", "last_etag": self._etag, "timeout_sec": str(self._wait)}
            timeout = self._wait + 5.0  # the server holds the request up to timeout_sec by design
        response = request(
            self._client, "GET", self._url(MAINTENANCE_EVENT), headers=HEADERS, params=params, timeout=timeout
        )
        assert response is not None
        self._etag = response.headers.get("ETag", "")
        return response.text.strip(), self._etag

    def _text(self, key: str) -> str | None:
        response = request(self._client, "GET", self._url(key), headers=HEADERS, missing_ok=True)
        return None if response is None else response.text.strip()

    def _json(self, key: str) -> Any:
        response = request(self._client, "GET", self._url(key), headers=HEADERS, missing_ok=True)
        if response is None or not response.content.strip():
            return None
        return decode_json(response)

    def _url(self, key: str) -> str:
        return f"{self._base}{INSTANCE_PATH}{key}"

    def _seen(self, key: str) -> datetime:
        return self._first_seen.setdefault(key, self._clock())

    def _forget(self, value: str, etag: str, preempted: str) -> None:
        keep = {f"m:{value}:{etag}", f"p:{preempted}"}
        self._first_seen = {k: v for k, v in self._first_seen.items() if k in keep}
