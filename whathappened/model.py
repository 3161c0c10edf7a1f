"""Frozen value types shared by every layer: what happened, to whom, and what we conclude.

No third-party imports here. Times are timezone-aware UTC everywhere; collectors normalize at the edge.
The original payload of an event travels in ``raw`` for ``--debug`` and the HTML report only: it takes no
part in equality, hashing or de-duplication.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from functools import cache
from types import MappingProxyType
from typing import Any

EMPTY: Mapping[str, Any] = MappingProxyType({})


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2, Severity.CRITICAL: 3}


class Outcome(StrEnum):
    """Which kind of answer a report is (CONTRACT.md section 2), so that missing evidence never reads as good news."""

    EXPLAINED = "explained"  # a root cause was named
    UNDECIDED = "undecided"  # pods failed; the evidence does not decide where it began
    NO_FAILURE = "no-failure"  # the sources answered and nothing failed
    NO_EVIDENCE = "no-evidence"  # no configured source answered, or none knew anything of the window


# Verdicts that are not failures: a report holding only these has nothing to explain.
_NOT_FAILURES = frozenset({"completed"})
_UNEXPLAINED = frozenset({"completed", "unknown"})


class SourceStatus(StrEnum):
    """The contract's per-source outcome (CONTRACT.md section 2)."""

    OK = "ok"
    NOT_CONFIGURED = "not_configured"
    UNREACHABLE = "unreachable"
    FORBIDDEN = "forbidden"
    TIMEOUT = "timeout"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class PodEnd:
    """An experiment pod's run ending, as ``whathappened fleet`` first finds it (collectors/prometheus/fleet.py),
    before any explanation."""

    namespace: str
    pod: str
    experiment: str
    at: datetime  # the start of the step it was seen in
    how: str  # failed | restarted | evicted | gone
    node: str | None = None


@dataclass(frozen=True, slots=True)
class Window:
    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        if self.start.tzinfo is None or self.end.tzinfo is None:
            raise ValueError("window bounds must be timezone-aware")
        if self.end <= self.start:
            raise ValueError("window end must be after its start")

    def contains(self, at: datetime) -> bool:
        return self.start <= at <= self.end

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()


@dataclass(frozen=True, slots=True)
class FoundEnds:
    """``whathappened fleet``'s first pass: the pod ends found, and the spans of the window its history covers
    (when kube-state-metrics answered): a death outside them cannot be seen, so the answer must say so."""

    ends: tuple[PodEnd, ...]
    covered: tuple[Window, ...]


@dataclass(frozen=True, slots=True)
class Subject:
    """What an event is about. Any field may be unknown (None)."""

    namespace: str | None = None
    pod: str | None = None
    container: str | None = None
    node: str | None = None
    gpu: str | None = None  # the GPU index on its node as dcgm-exporter labels it ("5"); UUID goes in attrs


@dataclass(frozen=True)
class TimelineEvent:
    at: datetime
    source: str  # "kubernetes" | "prometheus" | "logs" (snapshots report the source the payload came from)
    kind: str  # a value of whathappened.kinds.Kind
    severity: Severity
    summary: str
    subject: Subject = Subject()
    attrs: Mapping[str, Any] = field(default_factory=lambda: EMPTY, compare=False, hash=False)
    raw: Any = field(default=None, compare=False, hash=False, repr=False)

    @property
    def identity(self) -> tuple[Any, ...]:
        """What makes two reports the same happening: used for de-duplication across and within sources."""
        return (self.at, self.source, self.kind, self.subject, self.summary)


@dataclass(frozen=True, slots=True)
class ContainerInfo:
    name: str
    restarts: int = 0
    state: str | None = None  # "running" | "waiting" | "terminated"
    reason: str | None = None
    exit_code: int | None = None
    signal: int | None = None
    message: str | None = None
    started: datetime | None = None
    finished: datetime | None = None
    last_reason: str | None = None
    last_exit_code: int | None = None
    last_finished: datetime | None = None
    init: bool = False


@dataclass(frozen=True, slots=True)
class PodInfo:
    name: str
    namespace: str
    node: str | None = None
    uid: str | None = None
    labels: Mapping[str, str] = field(default_factory=lambda: EMPTY, compare=False, hash=False)
    owner_kind: str | None = None
    owner_name: str | None = None
    owner_uid: str | None = None  # the controller's UID: a resubmission under the same name has a new one
    phase: str | None = None
    reason: str | None = None
    message: str | None = None
    created: datetime | None = None
    started: datetime | None = None
    ended: datetime | None = None
    deleted: datetime | None = None
    gpus_requested: int = 0
    containers: tuple[ContainerInfo, ...] = ()
    sources: frozenset[str] = frozenset()

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    def label(self, key: str) -> str:
        """A Kubernetes label as any source spells its key: the API's, a log shipper's de-dotted one
        (``jobset_sigs_k8s_io/restart-attempt``), or kube-state-metrics' ``label_`` name without the prefix
        (``jobset_sigs_k8s_io_restart_attempt``, when its allowlist exports the label); "" when none has it."""
        for variant in _spellings(key):
            value = self.labels.get(variant)
            if value:
                return value
        return ""


NOT_IN_LABEL_NAME = re.compile(r"[^a-zA-Z0-9_]")  # what kube-state-metrics writes as "_" in a label's name


@cache  # a few keys, asked of every pod (the attempts of 12,288 pods)
def _spellings(key: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys((key, key.replace(".", "_"), NOT_IN_LABEL_NAME.sub("_", key))))


@dataclass(frozen=True, slots=True)
class NodeInfo:
    name: str
    provider: str | None = None  # "azure" | "aws" | "gcp" | None, from spec.providerID
    instance_type: str | None = None
    gpu_product: str | None = None
    gpu_count: int = 0
    unschedulable: bool = False
    ready: bool | None = None
    labels: Mapping[str, str] = field(default_factory=lambda: EMPTY, compare=False, hash=False)
    taints: tuple[str, ...] = ()  # "key=value:Effect"
    sources: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class SourceReport:
    name: str
    status: SourceStatus
    detail: str = ""
    requests: int = 0
    elapsed_s: float = 0.0

    @property
    def failed(self) -> bool:
        return self.status not in (SourceStatus.OK, SourceStatus.NOT_CONFIGURED)


@dataclass(frozen=True, slots=True)
class Verdict:
    pod: str
    namespace: str
    node: str | None
    cause: str
    category: str
    retryable: bool
    root: bool | None
    caused_by: str | None
    confidence: float
    summary: str
    evidence: tuple[int, ...] = ()
    next_step: str = ""
    gpu: str | None = None
    ended: datetime | None = None
    # what the evidence tells beyond the cause (rank, GPU identity, frames, memory, checkpoint): correlate.facts_run
    facts: Mapping[str, Any] = field(default_factory=lambda: EMPTY, compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class LostWork:
    gpu_hours: float
    since: datetime
    until: datetime
    basis: str  # "checkpoint" | "job start"
    # GPU-hours the surviving ranks spent hung in a collective after the failure, until the watchdog ended them
    collateral_gpu_hours: float = 0.0
    checkpoint_step: int | None = None


@dataclass(frozen=True, slots=True)
class Hang:
    """Every rank that reported timed out waiting in a collective: where the job froze and what to run next."""

    op: str | None  # the collective (OpType) the ranks waited in
    seq: int | None  # its SeqNum; None when the ranks disagree (see ``seqs``)
    timeout_s: float | None
    froze_at: datetime | None  # the first report minus the watchdog timeout
    reported: tuple[int, ...]  # the global ranks that reported the timeout
    silent: tuple[int, ...]  # ranks that did not: the likely culprits, empty when the logs cannot tell
    behind: tuple[int, ...]  # ranks that timed out on an earlier SeqNum than the others
    world_size: int | None
    last_progress: str | None
    last_progress_at: datetime | None
    next_steps: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Attempt:
    """One run of an experiment restarted or resubmitted under the same name (whathappened.attempts)."""

    number: int  # 1 for the first
    pods: tuple[PodInfo, ...]
    root_cause: Verdict | None = None
    # an attempt of containers restarted in place shares its pods with the others: its own span, given
    began: datetime | None = None
    finished: datetime | None = None

    @property
    def start(self) -> datetime | None:
        if self.began is not None:
            return self.began
        return min((p.created for p in self.pods if p.created), default=None)

    @property
    def end(self) -> datetime | None:
        """When its last pod ended; None while any of its pods is still running (or was never seen ending)."""
        if self.finished is not None:
            return self.finished
        ends = [p.ended or p.deleted for p in self.pods]
        return None if any(e is None for e in ends) else max(e for e in ends if e is not None)


@dataclass(frozen=True)
class Report:
    experiment: str
    namespace: str | None
    window: Window
    sources: tuple[SourceReport, ...]
    pods: tuple[PodInfo, ...]
    nodes: tuple[NodeInfo, ...]
    timeline: tuple[TimelineEvent, ...]
    verdicts: tuple[Verdict, ...] = ()
    root_cause: Verdict | None = None
    next_step: str = ""
    lost_work: LostWork | None = None
    chain: tuple[int, ...] = ()  # timeline indexes of the root cause's chain, in order
    hang: Hang | None = None
    attempts: tuple[Attempt, ...] = ()  # oldest first; one when the experiment ran once

    @property
    def outcome(self) -> Outcome:
        """Decided once here so every form says the same: no source answered, or no source knew anything of the
        window (not one event in it), is no evidence, whatever the correlator made of the silence."""
        answered = any(s.status is SourceStatus.OK for s in self.sources)
        if not answered or not self.timeline:
            return Outcome.NO_EVIDENCE
        if self.root_cause is not None and self.root_cause.cause not in _UNEXPLAINED:
            return Outcome.EXPLAINED
        if any(v.cause not in _NOT_FAILURES for v in self.verdicts):
            return Outcome.UNDECIDED
        return Outcome.NO_FAILURE
