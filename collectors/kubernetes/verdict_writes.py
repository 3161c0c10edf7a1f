"""``whathappened watch --write-events`` and ``--annotate``: the verdict written where researchers look, on the
failed pod's training job (CONTRACT.md section 3a).

- An Event on the owner: reason ``WhatHappened``, type ``Warning``, message the verdict in words, so
  ``kubectl describe jobset NAME`` and every event exporter show it beside the controller's own events.
- The annotation ``whathappened.io/verdict`` on the owner: the verdict JSON, set by a JSON merge patch (custom
  resources take no strategic merge), so ``kubectl get pytorchjob NAME -o yaml`` and the job's UI can read it.

Each write goes through its own RetryQueue: retried with backoff, never blocking the watch, counted. A bare pod (no
owner) gets the Event on itself and no annotation: the write variant of the RBAC grants patch on training jobs
only, not on pods.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from whathappened.collectors.kube_objects.event_objects import event_object
from whathappened.collectors.kube_objects.owners import RESOURCES, Owner
from whathappened.collectors.kubernetes.access import Permission
from whathappened.collectors.kubernetes.api import KubeWrites

from whathappened.retrying import RetryQueue

EVENT_REASON = "WhatHappened"
VERDICT_ANNOTATION = "whathappened.io/verdict"
COMPONENT = "whathappened-watch"

# What the writes need (deploy/writes/ grants exactly these to the watch; tests/test_deploy.py holds them together):
# create Events, patch the training jobs of every kind owners.RESOURCES knows.
WRITE_PERMISSIONS: tuple[Permission, ...] = (
    Permission("", "events", ("create",)),
    *(Permission(g, plural, ("patch",)) for g, plural in sorted({(g, r) for (g, _), r in RESOURCES.items()})),
)


def verdict_event(owner: Owner, message: str, at: datetime, instance: str) -> dict[str, Any]:
    return event_object(owner.reference(), owner.namespace, EVENT_REASON, message, at, COMPONENT, instance)


def verdict_patch(verdict: Mapping[str, Any]) -> dict[str, Any]:
    return {"metadata": {"annotations": {VERDICT_ANNOTATION: json.dumps(verdict, separators=(",", ":"))}}}


class VerdictWriter:
    """``write(owner, verdict, message, at)`` queues the Event and/or the annotation; ``events`` and
    ``annotations`` count what became of them (None when not asked for)."""

    def __init__(
        self,
        writes: KubeWrites,
        sleep: Callable[[float], None],
        instance: str,
        *,
        events: bool,
        annotations: bool,
    ) -> None:
        self._writes = writes
        self._instance = instance
        self.events = RetryQueue("write-events", sleep) if events else None
        self.annotations = RetryQueue("annotate", sleep) if annotations else None

    def write(self, owner: Owner, verdict: Mapping[str, Any], message: str, at: datetime) -> None:
        if self.events is not None:
            event = verdict_event(owner, message, at, self._instance)
            self.events.submit(lambda: self._writes.create_event(owner.namespace, event))
        if self.annotations is not None and owner.kind != "Pod":
            patch = verdict_patch(verdict)
            self.annotations.submit(lambda: self._writes.merge_patch(owner.path, patch))

    def counts(self) -> dict[str, tuple[int, int, int]]:
        """(sent, failed, dropped) by write kind, for the metrics."""
        queues = {"event": self.events, "annotation": self.annotations}
        return {kind: (q.sent, q.failed, q.dropped) for kind, q in queues.items() if q is not None}

    def close(self, timeout_s: float = 30.0) -> None:
        for q in (self.events, self.annotations):
            if q is not None:
                q.close(timeout_s)
