"""HTTP plumbing shared by the cloud pollers: the client they share, and every failure turned into a SourceError.

The metadata services live on a link-local address that no proxy can reach, so the client ignores proxy
environment variables (``trust_env=False``); ``--metadata-url`` is the way to go through a proxy on purpose.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

from whathappened.errors import SourceError, SourceForbidden, SourceTimeout, SourceUnreachable

DEFAULT_BASE_URL = "http://169.254.169.254"
# Metadata services answer in milliseconds; a slow one must not hold a poll (or a scrape) for long.
DEFAULT_TIMEOUT = httpx.Timeout(2.0, connect=1.0)


class MetadataFormatError(SourceError):
    """The metadata service answered, but not in the shape its API documents."""

    status = "failed"


def make_client(timeout: httpx.Timeout = DEFAULT_TIMEOUT, transport: httpx.BaseTransport | None = None) -> httpx.Client:
    return httpx.Client(timeout=timeout, trust_env=False, follow_redirects=False, transport=transport)


def request(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, str] | None = None,
    body: Any = None,
    missing_ok: bool = False,
    timeout: float | None = None,
) -> httpx.Response | None:
    """One request; None for a 404 when ``missing_ok`` (AWS and GCE answer 404 for "no such notice")."""
    what = f"{method} {_path(url)}"
    extra: dict[str, Any] = {} if timeout is None else {"timeout": httpx.Timeout(timeout, connect=1.0)}
    try:
        response = client.request(method, url, headers=dict(headers or {}), params=params, json=body, **extra)
    except httpx.TimeoutException as exc:
        raise SourceTimeout(f"{what}: metadata service timed out ({type(exc).__name__})") from exc
    except httpx.TransportError as exc:
        raise SourceUnreachable(f"{what}: metadata service unreachable ({type(exc).__name__})") from exc
    if response.status_code == 404 and missing_ok:
        return None
    if response.status_code in (401, 403):
        raise SourceForbidden(f"{what}: HTTP {response.status_code}")
    if response.status_code >= 400:
        raise SourceError(f"{what}: HTTP {response.status_code}")
    return response


def decode_json(response: httpx.Response) -> Any:
    try:
        return json.loads(response.content)
    except ValueError as exc:
        raise MetadataFormatError(f"{_path(str(response.url))}: malformed JSON ({exc.args[0][:80]})") from exc


def _path(url: str) -> str:
    """The path only: query strings and hosts stay out of messages (tokens never travel in them, but be sure)."""
    return httpx.URL(url).path
