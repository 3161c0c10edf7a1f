"""The two writes the double takes when started writable (``KubeDouble(store, writable=True)``), as the API server
validates them: creating a core/v1 Event, and a JSON merge patch (RFC 7386) of a training job. Everything else
stays read-only (405), so a test still catches a client that writes what it should not."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from tests.doubles.kube.api import ApiError, Route, get_object
from tests.doubles.kube.store import OWNERS, Store

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
BUILT_IN_GROUPS = {"", "batch", "apps"}  # strategic merge is for built-in kinds only
_NAME_LETTERS = "bcdfghjklmnpqrstvwxz2456789"  # the apiserver's generateName alphabet


def body_of(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw or b"null")
    except ValueError as exc:
        raise ApiError(400, f"the body of the request could not be decoded: {exc}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the body of the request must be a JSON object")
    return body


def new_event(store: Store, r: Route, event: Mapping[str, Any]) -> dict[str, Any]:
    """The Event to store for ``POST /api/v1/namespaces/NS/events``, or the server's refusal."""
    if r.group or r.resource != "events" or r.name is not None or r.namespace is None:
        raise ApiError(405, "the test double takes writes only as events it may create and owners it may patch")
    meta = dict(event.get("metadata") or {})
    if meta.get("namespace") not in (None, "", r.namespace):
        raise ApiError(400, "the namespace of the provided object does not match the namespace sent on the request")
    involved = (event.get("involvedObject") or {}).get("namespace")
    if involved not in (None, "", r.namespace):
        raise ApiError(422, f'Event "{meta.get("name", "")}" is invalid: involvedObject.namespace: Invalid value: '
                       f'"{involved}": does not match event.namespace')  # fmt: skip
    if not meta.get("name"):
        if not meta.get("generateName"):
            raise ApiError(422, "Event is invalid: metadata.name: Required value: name or generateName is required")
        meta["name"] = f"{meta['generateName']}{_suffix(store.resource_version)}"
    if any(e["metadata"].get("name") == meta["name"] for e in store.objects("events") if _in(e, r.namespace)):
        raise ApiError(409, f'events "{meta["name"]}" already exists')
    digest = hashlib.sha1(f"{r.namespace}/{meta['name']}".encode()).hexdigest()
    meta.update(
        namespace=r.namespace, uid=f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"
    )
    meta.setdefault("creationTimestamp", event.get("firstTimestamp") or event.get("eventTime"))
    return {**event, "apiVersion": "v1", "kind": "Event", "metadata": meta}


def patched(store: Store, r: Route, content_type: str, patch: Mapping[str, Any]) -> dict[str, Any]:
    """The owner after ``PATCH``, or the server's refusal."""
    if r.plural not in OWNERS or r.name is None or r.subresource is not None:
        raise ApiError(405, "the test double takes writes only as events it may create and owners it may patch")
    kind = content_type.split(";")[0].strip()
    if kind == STRATEGIC_PATCH and r.group in BUILT_IN_GROUPS:
        kind = MERGE_PATCH  # the same for what a client patches here (maps in metadata)
    if kind != MERGE_PATCH:
        accepted = "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        raise ApiError(
            415, f"the body of the request was in an unknown format - accepted media types include: {accepted}"
        )
    return merge(get_object(store, r), patch)


def merge(target: Any, patch: Any) -> Any:
    """RFC 7386: a patch object's members replace the target's, null removes one, anything else replaces all."""
    if not isinstance(patch, Mapping):
        return patch
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge(result.get(key), value)
    return result


def _suffix(seed: str) -> str:
    number = int(hashlib.sha1(seed.encode()).hexdigest(), 16)
    return "".join(_NAME_LETTERS[(number >> (5 * i)) % len(_NAME_LETTERS)] for i in range(5))


def _in(obj: Mapping[str, Any], namespace: str | None) -> bool:
    return (obj.get("metadata") or {}).get("namespace") == namespace
