"""``whathappened watch``'s core: from pod changes to one explanation per incident.

- A death is a change that ends a run of an experiment pod: its phase turning Failed, a container restarted after a
  non-zero exit (its restart count moved and ``lastState.terminated`` says why), a container ending non-zero, or a
  DisruptionTarget condition (an eviction, a preemption, a drain). A pod deleted without one is a user's stop.
- Deaths of one experiment (namespace and label value) join one incident while it waits ``settle`` for the logs,
  metrics and events to arrive: a storm of 500 ranks dying within the settle is one explanation.
- After the explanation, an incident whose root (pod and cause) is the one last reported for its experiment is a
  repeat (the collateral ranks that die later of the same fault): counted, not reported again.

Pure: the clock is passed in; nothing here reads the wall clock, sleeps or does I/O.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from whathappened.collectors.kube_objects.owners import Owner, owner_of, pod_itself
from whathappened.timeutils import parse_timestamp

MAX_PODS_NAMED = 64  # an incident names this many of its dead pods; a storm is counted, not held
MAX_EXPERIMENTS_REMEMBERED = 1_000  # the last root per experiment, least recently used forgotten first


@dataclass(frozen=True)
class Death:
    namespace: str
    pod: str
    experiment: str
    at: datetime  # when the run ended, as the pod says (else when the change was seen)
    how: str  # failed | restarted | container-failed | disrupted
    owner: Owner | None = None  # its training job (or the pod itself when bare): where a verdict is written


@dataclass
class Incident:
    namespace: str
    experiment: str
    first: datetime  # the earliest death
    due: datetime  # when it is explained: seen + settle
    last: datetime | None = None  # the latest death
    pods: list[str] = field(default_factory=list)
    deaths: int = 0
    owners: dict[str, Owner] = field(default_factory=dict)  # of the named pods

    def join(self, death: Death) -> None:
        self.deaths += 1
        self.first = min(self.first, death.at)
        self.last = max(self.last or death.at, death.at)
        if death.pod not in self.pods and len(self.pods) < MAX_PODS_NAMED:
            self.pods.append(death.pod)
            if death.owner is not None:
                self.owners[death.pod] = death.owner

    def owner(self, root_pod: str | None) -> Owner | None:
        """Where the verdict goes: the root pod's job when that pod died here, else the first death's."""
        found = self.owners.get(root_pod or "")
        return found or next(iter(self.owners.values()), None)


@dataclass(frozen=True)
class _Seen:
    phase: str
    restarts: int
    failed_containers: frozenset[str]
    disrupted: bool


class Watcher:
    """``seen(pod, now)`` for every change; ``due(now)`` gives the incidents to explain; ``explained(incident,
    root)`` says whether the explanation is news or a repeat of the experiment's last root."""

    def __init__(self, label_keys: Sequence[str], settle: timedelta) -> None:
        self._keys = tuple(label_keys)
        self._settle = settle
        self._pods: dict[tuple[str, str], _Seen] = {}
        self._pending: dict[tuple[str, str], Incident] = {}
        self._roots: OrderedDict[tuple[str, str], tuple[str, str]] = OrderedDict()
        self.deaths = 0
        self.repeats = 0

    def seen(self, change: str, pod: Mapping[str, Any], now: datetime) -> Death | None:
        """The death this change shows, if any, joined to its experiment's pending incident."""
        meta = pod.get("metadata") or {}
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        experiment = next((str(v) for k in self._keys if (v := (meta.get("labels") or {}).get(k))), None)
        if experiment is None:
            return None
        before = self._pods.get(key)
        state = _state(pod)
        if change == "DELETED":
            self._pods.pop(key, None)
        else:
            self._pods[key] = state
        how = _how(before, state)
        if how is None:
            return None
        death = Death(key[0], key[1], experiment, _ended(pod) or now, how, owner_of(pod) or pod_itself(pod))
        self.deaths += 1
        incident = self._pending.get((key[0], experiment))
        if incident is None:
            incident = self._pending[(key[0], experiment)] = Incident(key[0], experiment, death.at, now + self._settle)
        incident.join(death)
        return death

    def next_due(self) -> datetime | None:
        return min((i.due for i in self._pending.values()), default=None)

    def due(self, now: datetime) -> list[Incident]:
        """The incidents whose settle is over, oldest first; they leave the pending set."""
        ready = sorted((i for i in self._pending.values() if i.due <= now), key=lambda i: i.due)
        for incident in ready:
            del self._pending[(incident.namespace, incident.experiment)]
        return ready

    def explained(self, incident: Incident, root: tuple[str, str] | None) -> bool:
        """Whether this incident's root (pod, cause) is news for its experiment; None (no root) always is."""
        key = (incident.namespace, incident.experiment)
        if root is not None and self._roots.get(key) == root:
            self._roots.move_to_end(key)
            self.repeats += 1
            return False
        if root is not None:
            self._roots[key] = root
            self._roots.move_to_end(key)
            while len(self._roots) > MAX_EXPERIMENTS_REMEMBERED:
                self._roots.popitem(last=False)
        return True


def _state(pod: Mapping[str, Any]) -> _Seen:
    status = pod.get("status") or {}
    containers = [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]
    failed = frozenset(
        str(c.get("name"))
        for c in containers
        if ((c.get("state") or {}).get("terminated") or {}).get("exitCode") not in (None, 0)
    )
    disrupted = any(
        c.get("type") == "DisruptionTarget" and c.get("status") == "True" for c in status.get("conditions") or []
    )
    # restarts after a failure only (restartPolicy Always also restarts a container that exited 0)
    restarts = sum(
        int(c.get("restartCount") or 0)
        for c in containers
        if ((c.get("lastState") or {}).get("terminated") or {}).get("exitCode") not in (None, 0)
    )
    return _Seen(str(status.get("phase") or ""), restarts, failed, disrupted or status.get("reason") == "Evicted")


def _how(before: _Seen | None, now: _Seen) -> str | None:
    """What ended, comparing the pod with how it was last seen (a pod first seen already dead is not news:
    the watch's LIST gives every pod as it is)."""
    if before is None:
        return None
    if now.disrupted and not before.disrupted:
        return "disrupted"
    if now.phase == "Failed" and before.phase != "Failed":
        return "failed"
    if now.restarts > before.restarts:
        return "restarted"
    if now.failed_containers - before.failed_containers:
        return "container-failed"
    return None


def _ended(pod: Mapping[str, Any]) -> datetime | None:
    """The latest end a container of the pod reports (its current or last state), else None."""
    status = pod.get("status") or {}
    times = []
    for c in [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]:
        for state in ((c.get("state") or {}).get("terminated"), (c.get("lastState") or {}).get("terminated")):
            at = parse_timestamp(str((state or {}).get("finishedAt") or ""))
            if at is not None:
                times.append(at)
    return max(times, default=None)
