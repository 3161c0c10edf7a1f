"""One WATCH on the pods of experiments, kept open for ``whathappened watch``: every change of a pod that carries
one of the experiment label keys, in order, for as long as the process runs, at the cost of one LIST at the start.

- The stream resumes from the last resourceVersion it saw (an object's or a BOOKMARK's, which the watch asks for),
  so a stream the server or a proxy ends is picked up where it stopped, without a LIST.
- 410 Gone (the version was compacted away, as an HTTP status or as an ERROR event in the stream) is the only reason
  to LIST again: one LIST gives a version to watch from; what changed while it was gone comes back as the pods'
  state at that LIST (ADDED), so no death is missed.
- The label keys are alternatives (an experiment carries one of them) and a label selector can only AND its terms,
  so the watch takes the namespace's (or cluster's) pods and keeps those that carry a key: one stream instead of one
  per key.
- 429 waits as the server says; any other failure waits a short back-off and watches again. Nothing here sleeps on
  a fixed period: an idle namespace costs one open stream and no request (the server ends a stream after
  ``timeoutSeconds``; it is opened again from the same version).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from whathappened.collectors.kubernetes.access import (
    Call,
    Permission,
    retry_after,
    safe_server,
    status_error,
    transport_error,
)
from whathappened.collectors.kubernetes.api import KubeApi, Unanswered

from whathappened.errors import SourceError

# What the watch needs besides the collector's reads (deploy/ grants it to the watch's service account).
WATCH_PERMISSIONS: tuple[Permission, ...] = (Permission("", "pods", ("list", "watch")),)
STREAM_TIMEOUT_S = 300  # the server ends each stream after this; it is opened again from the same version
BACKOFF_S = (1.0, 2.0, 5.0, 10.0, 30.0)  # after failures in a row, then the last one each time


@dataclass(frozen=True)
class PodChange:
    type: str  # ADDED, MODIFIED, DELETED
    pod: Mapping[str, Any]


class Expired(Exception):
    """The version the watch resumed from is gone (410): LIST again."""


class PodWatch:
    """``changes()`` yields every change of an experiment pod until ``stop()``; counters say what it cost."""

    def __init__(
        self,
        api: KubeApi,
        namespace: str | None,
        label_keys: Sequence[str],
        sleep: Callable[[float], None],
        timeout_s: int = STREAM_TIMEOUT_S,
    ) -> None:
        self._api = api
        self._namespace = namespace  # None: every namespace
        self._keys = tuple(label_keys)
        self._sleep = sleep  # passed in: tests wait on nothing
        self._timeout_s = timeout_s
        self._stopped = False
        self.version: str | None = None
        self.lists = 0
        self.watches = 0
        self.expired = 0
        self.failures = 0

    def stop(self) -> None:
        """The loop ends at the next line or the end of the current stream."""
        self._stopped = True

    def changes(self) -> Iterator[PodChange]:
        failed_in_a_row = 0
        while not self._stopped:
            try:
                if self.version is None:
                    yield from self._list()
                yield from self._watch()
                failed_in_a_row = 0
            except Expired:
                self.expired += 1
                self.version = None
            except _Throttled as throttled:
                self._sleep(throttled.wait_s)
            except (SourceError, Unanswered):  # refused, reset mid-stream, a 5xx: watch again after a pause
                self.failures += 1
                self._sleep(BACKOFF_S[min(failed_in_a_row, len(BACKOFF_S) - 1)])
                failed_in_a_row += 1

    def _where(self) -> tuple[str, dict[str, str]]:
        return ("pods", {"namespace": self._namespace}) if self._namespace else ("all-pods", {})

    def _call(self, verb: str) -> Call:
        return Call(verb, "pods", self._namespace)

    def _list(self) -> Iterator[PodChange]:
        """One LIST (paged): the version to watch from, and the pods as they are now."""
        endpoint, where = self._where()
        token: str | None = None
        while True:
            self.lists += 1
            status, lines = self._get(self._call("list"), endpoint, where, [("limit", 500), ("continue", token)])
            body = json.loads(b"".join(lines) or b"{}")
            if status == 410 and token is not None:  # the continue token expired: the list from its start
                token = None
                continue
            self._check(status, self._call("list"))
            for pod in body.get("items") or []:
                if self._ours(pod):
                    yield PodChange("ADDED", pod)
            meta = body.get("metadata") or {}
            token = meta.get("continue") or None
            if token is None:
                self.version = str(meta.get("resourceVersion") or "0")
                return

    def _watch(self) -> Iterator[PodChange]:
        """One stream from ``version``, to its end; the version moves with every line."""
        endpoint, where = self._where()
        params = [
            ("watch", "true"),
            ("resourceVersion", self.version),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", self._timeout_s),
        ]
        self.watches += 1
        status, lines = self._get(self._call("watch"), endpoint, where, params)
        if status == 410:
            raise Expired()
        self._check(status, self._call("watch"))
        for line in lines:
            if self._stopped:
                return
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a broken line says nothing; the next one carries its own version
            kind, obj = event.get("type"), event.get("object") or {}
            if kind == "ERROR":
                if obj.get("code") == 410:
                    raise Expired()
                raise SourceError(f"the pod watch ended with an error: {str(obj.get('message'))[:200]}")
            version = (obj.get("metadata") or {}).get("resourceVersion")
            if version:
                self.version = str(version)
            if kind in ("ADDED", "MODIFIED", "DELETED") and self._ours(obj):
                yield PodChange(kind, obj)

    def _ours(self, pod: Mapping[str, Any]) -> bool:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        return any(labels.get(key) for key in self._keys)

    def _get(
        self, call: Call, endpoint: str, where: Mapping[str, str], params: Sequence[tuple[str, Any]]
    ) -> tuple[int, Iterator[bytes]]:
        try:
            status, headers, lines = self._api.lines(endpoint, where, params, timeout=(10.0, self._timeout_s + 30.0))
        except Unanswered as failure:
            raise transport_error(failure.kind, call, safe_server(self._api.host)) from None
        if status == 429:
            raise _Throttled(retry_after(headers))
        return status, lines

    def _check(self, status: int, call: Call) -> None:
        if not 200 <= status < 300:
            raise status_error(status, call)


class _Throttled(Exception):
    def __init__(self, wait_s: float) -> None:
        super().__init__(wait_s)
        self.wait_s = wait_s
