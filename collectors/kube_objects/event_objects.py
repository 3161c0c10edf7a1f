"""A core/v1 Warning Event as whathappened writes one (the exporter's maintenance notices on a Node, the watch's verdicts
on a training job): named by the server from ``generateName``, counted once, stamped with the component that
reports it. The message is capped at 1 kB: events.k8s.io/v1 refuses a longer note and core/v1 shares its
storage."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from whathappened.timeutils import isoformat

MAX_MESSAGE = 1024


def event_object(
    involved: Mapping[str, str],
    namespace: str,
    reason: str,
    message: str,
    at: datetime,
    component: str,
    instance: str,
    host: str | None = None,  # the node it happened on, when it is about one (source.host)
) -> dict[str, Any]:
    stamp = isoformat(at)
    source = {"component": component} if host is None else {"component": component, "host": host}
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"{involved['name']}.", "namespace": namespace},
        "involvedObject": dict(involved),
        "reason": reason,
        "message": message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 1] + "…",
        "type": "Warning",
        "source": source,
        "reportingComponent": component,
        "reportingInstance": instance,
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }
