"""Upload the dashboards to Grafana through its HTTP API, idempotent by uid.

For each dashboard: ``GET /api/dashboards/uid/<uid>``; when Grafana already holds the same content the upload is
skipped (no new version), otherwise ``POST /api/dashboards/db`` with ``overwrite: true`` replaces it in place.
The token travels only in the Authorization header; errors name the HTTP status and Grafana's message, never it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import httpx
from whathappened.dashboards.grafana import Json

from whathappened.errors import WhathappenedError, scrub

# Fields Grafana manages itself: they differ between what we send and what it stores, and never count as a change.
_MANAGED = ("id", "version")


class GrafanaError(WhathappenedError):
    """Grafana refused or failed a request; the message is safe to print."""


@dataclass(frozen=True, slots=True)
class Installed:
    uid: str
    title: str
    outcome: str  # "created" | "updated" | "unchanged"
    url: str = ""
    version: int | None = None


def client_for(grafana_url: str, token: str, timeout: float = 30.0) -> httpx.Client:
    return httpx.Client(
        base_url=grafana_url.rstrip("/"),
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
        timeout=timeout,
    )


def install(
    client: httpx.Client, dashboards: Iterable[Json], folder_uid: str | None = None, message: str = ""
) -> list[Installed]:
    return [install_one(client, board, folder_uid, message) for board in dashboards]


def install_one(client: httpx.Client, board: Json, folder_uid: str | None, message: str) -> Installed:
    uid, title = str(board["uid"]), str(board.get("title", ""))
    existing = _existing(client, uid)
    if existing is not None and _same(existing, board, folder_uid):
        return Installed(uid, title, "unchanged", version=existing["dashboard"].get("version"))
    body: dict[str, Any] = {"dashboard": {**board, "id": None}, "overwrite": True, "message": message}
    if folder_uid:
        body["folderUid"] = folder_uid
    answer = _checked(_send(client, "POST", "/api/dashboards/db", json=body), "upload", uid)
    return Installed(
        uid, title, "created" if existing is None else "updated", str(answer.get("url", "")), answer.get("version")
    )


def _existing(client: httpx.Client, uid: str) -> Json | None:
    """Grafana's answer for this uid (``dashboard`` and ``meta``), or None when it has no such dashboard."""
    response = _send(client, "GET", f"/api/dashboards/uid/{uid}")
    if response.status_code == 404:
        return None
    answer = _checked(response, "read", uid)
    return answer if isinstance(answer.get("dashboard"), dict) else None


def _same(existing: Json, ours: Json, folder_uid: str | None) -> bool:
    meta = existing.get("meta") if isinstance(existing.get("meta"), dict) else {}
    moved = folder_uid is not None and meta.get("folderUid") != folder_uid
    return not moved and _content(existing["dashboard"]) == _content(ours)


def _content(board: Json) -> Json:
    return {key: value for key, value in board.items() if key not in _MANAGED}


def _send(client: httpx.Client, method: str, path: str, **kwargs: Any) -> httpx.Response:
    try:
        return client.request(method, path, **kwargs)
    except httpx.TimeoutException as exc:
        raise GrafanaError(f"Grafana at {client.base_url} timed out ({type(exc).__name__})") from None
    except httpx.HTTPError as exc:
        raise GrafanaError(f"Grafana at {client.base_url} unreachable: {scrub(str(exc))}") from None


_HINTS = {
    401: "the token was refused; set a valid service-account token in WHATHAPPENED_GRAFANA_TOKEN",
    403: "the token may not write dashboards (it needs the Editor role or dashboards:write)",
    404: "no such folder, or the URL is not Grafana's",
    412: "Grafana refused the overwrite (version-mismatch or name-exists)",
}


def _checked(response: httpx.Response, action: str, uid: str) -> Json:
    if response.status_code < 300:
        try:
            body = response.json()
        except ValueError:
            raise GrafanaError(f"Grafana answered the {action} of {uid} with a body that is not JSON") from None
        return body if isinstance(body, dict) else {}
    detail = _message(response)
    hint = _HINTS.get(response.status_code, "Grafana failed; try again later" if response.status_code >= 500 else "")
    text = f"Grafana refused the {action} of {uid}: HTTP {response.status_code}"
    text += f" ({detail})" if detail else ""
    text += f"; {hint}" if hint else ""
    raise GrafanaError(scrub(text))


def _message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:200]
    if isinstance(body, dict):
        return " ".join(str(body[k]) for k in ("status", "message") if body.get(k))
    return ""
