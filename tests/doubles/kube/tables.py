"""Server-side printing (``Accept: application/json;as=Table;g=meta.k8s.io;v=v1``) as kubectl asks for it.

The columns follow kube-apiserver's printers for pods, events, nodes and namespaces, so ``kubectl get`` against
the double shows STATUS, RESTARTS, REASON and MESSAGE as it would against a cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

Row = list[Any]


def _age(stamp: str | None, now: datetime) -> str:
    if not stamp:
        return "<unknown>"
    then = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    seconds = max(int((now - then).total_seconds()), 0)
    for suffix, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= 2 * size:  # kubectl's HumanDuration switches units at twice the unit
            return f"{seconds // size}{suffix}"
    return f"{seconds}s"


def _pod_status(pod: Mapping[str, Any]) -> str:
    status = pod.get("status") or {}
    reason = status.get("reason") or status.get("phase") or "Unknown"
    for container in reversed(status.get("containerStatuses") or []):
        state = container.get("state") or {}
        if (state.get("waiting") or {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif (state.get("terminated") or {}).get("reason"):
            reason = state["terminated"]["reason"]
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return str(reason)


def _pod(pod: Mapping[str, Any], now: datetime) -> Row:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    ready = sum(1 for s in statuses if s.get("ready"))
    total = len((pod.get("spec") or {}).get("containers") or [])
    restarts = sum(int(s.get("restartCount") or 0) for s in statuses)
    meta = pod.get("metadata") or {}
    ip = (pod.get("status") or {}).get("podIP") or "<none>"
    node = (pod.get("spec") or {}).get("nodeName") or "<none>"
    return [
        meta.get("name"),
        f"{ready}/{total}",
        _pod_status(pod),
        restarts,
        _age(meta.get("creationTimestamp"), now),
        ip,
        node,
    ]


def _event(event: Mapping[str, Any], now: datetime) -> Row:
    involved = event.get("involvedObject") or event.get("regarding") or {}
    last = (
        event.get("lastTimestamp") or event.get("eventTime") or (event.get("metadata") or {}).get("creationTimestamp")
    )
    target = f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}"
    message = event.get("message") or event.get("note") or ""
    return [_age(last, now), event.get("type"), event.get("reason"), target, message]


def _node(node: Mapping[str, Any], now: datetime) -> Row:
    ready = next((c for c in (node.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), {})
    status = "Ready" if ready.get("status") == "True" else "NotReady"
    if (node.get("spec") or {}).get("unschedulable"):
        status += ",SchedulingDisabled"
    meta = node.get("metadata") or {}
    version = ((node.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", "")
    return [meta.get("name"), status, "<none>", _age(meta.get("creationTimestamp"), now), version]


def _namespace(namespace: Mapping[str, Any], now: datetime) -> Row:
    meta = namespace.get("metadata") or {}
    return [meta.get("name"), (namespace.get("status") or {}).get("phase"), _age(meta.get("creationTimestamp"), now)]


_COLUMNS: dict[str, tuple[list[tuple[str, str, int]], Callable[[Mapping[str, Any], datetime], Row]]] = {
    "PodList": (
        [
            ("Name", "name", 0),
            ("Ready", "", 0),
            ("Status", "", 0),
            ("Restarts", "", 0),
            ("Age", "", 0),
            ("IP", "", 1),
            ("Node", "", 1),
        ],
        _pod,
    ),
    "EventList": (
        [("Last Seen", "", 0), ("Type", "", 0), ("Reason", "", 0), ("Object", "", 0), ("Message", "", 0)],
        _event,
    ),
    "NodeList": ([("Name", "name", 0), ("Status", "", 0), ("Roles", "", 0), ("Age", "", 0), ("Version", "", 0)], _node),
    "NamespaceList": ([("Name", "name", 0), ("Status", "", 0), ("Age", "", 0)], _namespace),
}


def as_table(listing: Mapping[str, Any], now: datetime | None = None) -> dict[str, Any] | None:
    """The list as a meta.k8s.io/v1 Table, or None for kinds without a printer here."""
    known = _COLUMNS.get(str(listing.get("kind")))
    if known is None:
        return None
    columns, row = known
    moment = now or datetime.now(UTC)
    definitions = [
        {"name": name, "type": "string", "format": fmt, "description": "", "priority": priority}
        for name, fmt, priority in columns
    ]
    rows = [
        {
            "cells": row(item, moment),
            "object": {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": item.get("metadata", {}),
            },
        }
        for item in listing["items"]
    ]
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": listing["metadata"],
        "columnDefinitions": definitions,
        "rows": rows,
    }
