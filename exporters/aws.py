"""AWS EC2 instance metadata (IMDSv2): scheduled maintenance events, spot interruption and rebalance notices.

IMDSv2 first takes a session token (``PUT /latest/api/token``) and sends it with every read. Three reads:
``events/maintenance/scheduled`` (a JSON list; times in Go's ``2 Jan 2006 15:04:05 GMT``; ``completed`` and
``canceled`` events stay listed for a week and are not notices), ``spot/instance-action`` and
``events/recommendations/rebalance`` (404 while there is nothing to say). Event ids for the last two follow
aws-node-termination-handler's ``spot-itn-<hash>`` style, so the same notice keeps one id across polls.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import httpx
from whathappened.exporters._metadata_http import DEFAULT_BASE_URL, MetadataFormatError, decode_json, request
from whathappened.exporters.notices import Clock, Notice

from whathappened.errors import SourceForbidden
from whathappened.timeutils import parse_timestamp

PROVIDER = "aws"
TOKEN_PATH = "/latest/api/token"
TOKEN_TTL_HEADER = "X-aws-ec2-metadata-token-ttl-seconds"
TOKEN_HEADER = "X-aws-ec2-metadata-token"
TOKEN_TTL_SECONDS = 21600
SCHEDULED_PATH = "/latest/meta-data/events/maintenance/scheduled"
SPOT_PATH = "/latest/meta-data/spot/instance-action"
REBALANCE_PATH = "/latest/meta-data/events/recommendations/rebalance"
INACTIVE_STATES = frozenset({"completed", "canceled"})
SPOT_EVENT_TYPE = "spot-interruption"
REBALANCE_EVENT_TYPE = "rebalance-recommendation"


def _time(payload: Mapping[str, Any], key: str) -> datetime | None:
    value = payload.get(key)
    parsed = parse_timestamp(value)
    if value and parsed is None:
        raise MetadataFormatError(f"{key} {str(value)[:40]!r} is not a time")
    return parsed


def _digest(payload: Mapping[str, Any]) -> str:
    return hashlib.sha256(repr(sorted(payload.items())).encode()).hexdigest()[:10]


def parse_scheduled(payload: Any) -> tuple[Notice, ...]:
    """Active scheduled maintenance events (instance-reboot, system-reboot, system-maintenance, ...)."""
    if not isinstance(payload, list) or not all(isinstance(e, dict) for e in payload):
        raise MetadataFormatError("events/maintenance/scheduled is not a JSON list of events")
    return tuple(
        Notice(
            provider=PROVIDER,
            event_id=str(event.get("EventId") or f"scheduled-{_digest(event)}"),
            event_type=str(event.get("Code") or "scheduled-maintenance"),
            status=str(event.get("State") or "active"),
            not_before=_time(event, "NotBefore"),
            not_after=_time(event, "NotAfter"),
            description=str(event.get("Description") or ""),
            raw=dict(event),
        )
        for event in payload
        if str(event.get("State") or "").lower() not in INACTIVE_STATES
    )


def parse_spot_action(payload: Any) -> Notice:
    """``{"action": "terminate|stop|hibernate", "time": RFC 3339}``: the VM is reclaimed at ``time``."""
    if not isinstance(payload, dict) or "action" not in payload:
        raise MetadataFormatError("spot/instance-action is not {action, time}")
    return Notice(
        provider=PROVIDER,
        event_id=f"spot-itn-{_digest(payload)}",
        event_type=SPOT_EVENT_TYPE,
        status=str(payload["action"]),
        not_before=_time(payload, "time"),
        description=f"spot instance {payload['action']}",
        raw=dict(payload),
    )


def parse_rebalance(payload: Any) -> Notice:
    """``{"noticeTime": RFC 3339}``: elevated risk of a spot interruption, from that time on."""
    if not isinstance(payload, dict) or "noticeTime" not in payload:
        raise MetadataFormatError("events/recommendations/rebalance is not {noticeTime}")
    return Notice(
        provider=PROVIDER,
        event_id=f"rebalance-{_digest(payload)}",
        event_type=REBALANCE_EVENT_TYPE,
        status="recommended",
        not_before=_time(payload, "noticeTime"),
        description="EC2 rebalance recommendation: elevated risk of spot interruption",
        raw=dict(payload),
    )


class AwsPoller:
    """Polls IMDSv2; keeps its session token until shortly before it expires, and renews it on a 401."""

    provider = PROVIDER

    def __init__(self, client: httpx.Client, clock: Clock, base_url: str = DEFAULT_BASE_URL) -> None:
        self._client = client
        self._clock = clock
        self._base = base_url.rstrip("/")
        self._token: str | None = None
        self._token_expires: datetime | None = None

    def poll(self) -> tuple[Notice, ...]:
        notices = list(parse_scheduled(self._get_json(SCHEDULED_PATH) or []))
        spot = self._get_json(SPOT_PATH)
        if spot is not None:
            notices.append(parse_spot_action(spot))
        rebalance = self._get_json(REBALANCE_PATH)
        if rebalance is not None:
            notices.append(parse_rebalance(rebalance))
        return tuple(notices)

    def _get_json(self, path: str) -> Any:
        try:
            response = self._get(path)
        except SourceForbidden:
            self._token = None  # the token expired or the instance rebooted: one fresh try
            response = self._get(path)
        return None if response is None else decode_json(response)

    def _get(self, path: str) -> httpx.Response | None:
        headers = {TOKEN_HEADER: self._session_token()}
        return request(self._client, "GET", f"{self._base}{path}", headers=headers, missing_ok=True)

    def _session_token(self) -> str:
        now = self._clock()
        if self._token is not None and self._token_expires is not None and now < self._token_expires:
            return self._token
        response = request(
            self._client, "PUT", f"{self._base}{TOKEN_PATH}", headers={TOKEN_TTL_HEADER: str(TOKEN_TTL_SECONDS)}
        )
        assert response is not None
        token = response.text.strip()
        if not token:
            raise MetadataFormatError("IMDSv2 returned an empty session token")
        self._token = token
        self._token_expires = now + timedelta(seconds=TOKEN_TTL_SECONDS - 60)
        return token
