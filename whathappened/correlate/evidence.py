"""One pod's death set against the whole timeline: which events are about it, its node or its GPU, and when.

Sources disagree on the clock by up to ``SKEW`` (kubelet, Prometheus scrapes, log shippers), so every time
window is widened by it and no ordering decision rests on a difference smaller than it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any, Protocol

from whathappened.correlate.fates import BURST, TERMINAL, Fate, is_about
from whathappened.correlate.index import TimelineIndex
from whathappened.kinds import Kind
from whathappened.model import TimelineEvent

SKEW = timedelta(minutes=2)
# Reports naming one GPU (by UUID) this close to a node-wide one tell whose GPU it was: a GPU changes hands only
# when pods end, and a fallen-off GPU is reported missing within a few scrapes.
SAME_GPU_WITHIN = timedelta(minutes=10)

POD = "pod"  # about the pod itself
NODE = "node"  # about the pod's node (and no other pod)
GPU = "gpu"  # about one of the pod's GPUs, or its node when the GPU is not known
HOST = "host"  # about the pod or its node
ELSEWHERE = "elsewhere"  # about the node of another rank of the experiment that is still running
JOB = "job"  # about the pod's job or namespace, no pod named

Predicate = Callable[[TimelineEvent], bool]
ENDINGS: frozenset[str] = TERMINAL | {Kind.POD_PHASE}
# What tells a pod to stop from outside: whatever it logs after this is a consequence of being stopped.
DELIBERATE_POD_STOPS: frozenset[str] = frozenset({Kind.EVICTION_API, Kind.POD_DELETED})
DRAINS: frozenset[str] = frozenset({Kind.DRAIN})
STOPS: frozenset[str] = frozenset(
    {Kind.KILLING, Kind.POD_DELETED, Kind.EVICTION_API, Kind.DISRUPTION_TARGET, Kind.SIGTERM_RECEIVED}
)


@dataclass(frozen=True)
class Finding:
    """What a rule concluded about one death, with the events that show it."""

    cause: str
    confidence: float
    evidence: tuple[int, ...]
    onset: datetime  # when the failure began, as the evidence tells it
    trigger: int | None  # the event that decided it (None: decided from the pod's status alone)
    rule: str
    summary: str  # the template that says it (templates.py)
    facts: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


class RuleLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def cause(self) -> str: ...
    @property
    def confidence(self) -> float: ...
    @property
    def summary(self) -> str: ...


@dataclass(frozen=True)
class Case:
    fate: Fate
    index: TimelineIndex
    # nodes of the experiment's pods that did not end (an MPI job's workers, say): a fault there shows up only
    # as the reactions of the pods that did
    elsewhere: frozenset[str] = frozenset()
    cache: dict[str, dict[str, list[int]]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def timeline(self) -> Sequence[TimelineEvent]:
        return self.index.timeline

    def event(self, index: int) -> TimelineEvent:
        return self.index.timeline[index]

    def _candidates(self, on: str, kinds: frozenset[str]) -> list[int]:
        """The only events that can be about the subject (the pod's, its node's, the job's, the other nodes'),
        of the kinds asked for."""
        if on in (JOB, ELSEWHERE):  # the same for every death of the run: sorted by kind once, on the index
            shared = (on, self.elsewhere if on == ELSEWHERE else frozenset())
            by_kind = self.index.shared.get(shared)
            if by_kind is None:
                by_kind = self.index.shared[shared] = self._by_kind(on)
        else:
            by_kind = self.cache.get(on)
            if by_kind is None:
                by_kind = self.cache[on] = self._by_kind(on)
        return [i for kind in kinds for i in by_kind.get(kind, ())]

    def _by_kind(self, on: str) -> dict[str, list[int]]:
        by_kind: dict[str, list[int]] = {}
        for i in self._gather(on):
            by_kind.setdefault(self.index.timeline[i].kind, []).append(i)
        return by_kind

    def _gather(self, on: str) -> tuple[int, ...]:
        fate, index = self.fate, self.index
        if on == POD:
            return fate.events
        if on == JOB:
            return index.podless
        if on == ELSEWHERE:
            return tuple(dict.fromkeys(i for node in sorted(self.elsewhere) for i in index.on_node(node)))
        if on == NODE:
            return index.on_node(fate.node)
        return tuple(dict.fromkeys((*fate.events, *index.on_node(fate.node))))

    def about(self, event: TimelineEvent, on: str) -> bool:
        fate = self.fate
        if on == POD:
            return is_about(event, fate.pod)
        if on == JOB:
            return event.subject.pod is None and event.subject.namespace in (None, fate.pod.namespace)
        if on == ELSEWHERE:
            return event.subject.node in self.elsewhere and event.subject.node != fate.node
        on_node = fate.node is not None and event.subject.node == fate.node and event.subject.pod in (None, fate.name)
        if on == NODE:
            return on_node
        if is_about(event, fate.pod):
            return True
        if on == HOST:
            return on_node
        gpu = event.subject.gpu
        if gpu is None:
            return on_node and not self._claimed_elsewhere(event)
        return on_node and (not fate.gpus or gpu in fate.gpus)

    def _claimed_elsewhere(self, event: TimelineEvent) -> bool:
        """A node-wide GPU report (a kernel log Xid names a PCI address, not a pod) whose twin from another
        source, seen within the skew, names another pod or a GPU this pod does not hold; or another report about
        the same GPU (its UUID) around that time does, as when the GPU fell off the bus and dcgm-exporter, which
        never saw the Xid, reports the GPU missing."""
        if not event.kind.startswith("gpu-") or event.subject.node is None:
            return False
        value, verdicts = _fault_value(event), []
        uuid = event.attrs.get("uuid")
        for i in self.index.on_node(event.subject.node):
            twin = self.timeline[i]
            same_gpu = bool(uuid) and twin.attrs.get("uuid") == uuid and abs(twin.at - event.at) <= SAME_GPU_WITHIN
            same_fault = twin.kind == event.kind and _fault_value(twin) == value and abs(twin.at - event.at) <= SKEW
            if twin is event or not (same_gpu or same_fault):
                continue
            if twin.subject.pod is not None:
                verdicts.append(twin.subject.pod != self.fate.name)
            elif twin.subject.gpu is not None and self.fate.gpus:
                verdicts.append(twin.subject.gpu not in self.fate.gpus)
        return bool(verdicts) and all(verdicts)

    def find(
        self,
        kinds: Iterable[str],
        on: str = POD,
        before: timedelta = timedelta(minutes=10),
        after: timedelta = SKEW,
        where: Predicate | None = None,
        since_start: bool = False,
    ) -> tuple[int, ...]:
        """Indexes of the events of these kinds about the subject within [death - before, death + after]."""
        wanted = frozenset(kinds)
        low, high = self.fate.ended - before, self.fate.ended + after
        if since_start and self.fate.started is not None:
            low = max(low, self.fate.started)
        timeline = self.timeline
        return tuple(
            i
            for i in sorted(self._candidates(on, wanted))
            if (e := timeline[i]).kind in wanted
            and low <= e.at <= high
            and self.about(e, on)
            and (where is None or where(e))
        )

    def death(self) -> tuple[int, ...]:
        """The events that record how the pod ended (exit, phase, kill), in the burst of its death."""
        low, high = self.fate.ended - SKEW, self.fate.ended + BURST
        return tuple(
            i for i in self.fate.events if self.timeline[i].kind in ENDINGS and low <= self.timeline[i].at <= high
        )

    def first_stop(self) -> datetime | None:
        """When the pod was told to stop (kill, deletion, eviction, SIGTERM), in the burst that ended it."""
        stops = self.find(STOPS, POD, BURST, SKEW)
        return min((self.timeline[i].at for i in stops), default=None)

    def first_deliberate_stop(self) -> datetime | None:
        """When someone chose to stop the pod: its node drained, or the pod evicted or deleted, in the burst that
        ended it."""
        stops = self.find(DELIBERATE_POD_STOPS, POD, BURST, SKEW) + self.find(DRAINS, NODE, BURST, SKEW)
        return min((self.timeline[i].at for i in stops), default=None)

    def stale(self, index: int) -> bool:
        """A GPU fault value already there before the pod started: the GPU was bad before, not this pod's doing."""
        started = self.fate.started
        event = self.timeline[index]
        if started is None:
            return False
        if event.at < started:
            return True
        value = _fault_value(event)
        same_place = self.index.on_node(event.subject.node) if event.subject.node else self.index.podless
        return any(
            other.at < started
            and other.kind == event.kind
            and other.subject.node == event.subject.node
            and other.subject.gpu == event.subject.gpu
            and _fault_value(other) == value
            for other in (self.timeline[i] for i in same_place)
        )


def _fault_value(event: TimelineEvent) -> object:
    return event.attrs.get("xid") if event.kind == Kind.GPU_XID else event.kind


def text_of(event: TimelineEvent) -> str:
    """Everything a rule may read words from: the summary and the string attributes, lowercased."""
    parts = [event.summary] + [str(v) for v in event.attrs.values() if isinstance(v, str | int)]
    return " ".join(parts).lower()


def xid_of(event: TimelineEvent) -> int | None:
    """The Xid that says what happened: a 45 "caused by previous Xid N" is a sympathetic report of N."""
    value = event.attrs.get("caused_by_xid") or event.attrs.get("xid")
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def earliest(timeline: Sequence[TimelineEvent], indexes: Iterable[int]) -> int:
    return min(indexes, key=lambda i: (timeline[i].at, i))


def in_time_order(timeline: Sequence[TimelineEvent], indexes: Iterable[int]) -> tuple[int, ...]:
    return tuple(sorted(set(indexes), key=lambda i: (timeline[i].at, i)))


def found(case: Case, rule: RuleLike, hits: Iterable[int], support: Iterable[int] = ()) -> Finding:
    """A finding from its deciding events (hits) and corroboration; more sources and kinds agreeing, more confidence."""
    hits = tuple(hits)
    trigger = earliest(case.timeline, hits)
    telling = set(hits) | set(support)
    sources = {case.event(i).source for i in telling}
    kinds = {case.event(i).kind for i in telling}
    bonus = 0.03 * (len(sources) - 1) + 0.02 * (len(kinds) - 1)
    return Finding(
        cause=rule.cause,
        confidence=round(min(0.99, rule.confidence + bonus), 2),
        evidence=in_time_order(case.timeline, telling | set(case.death())),
        onset=min(min(case.event(i).at for i in telling), case.fate.ended),
        trigger=trigger,
        rule=rule.name,
        summary=rule.summary,
    )
