"""Which pods ended, were evicted or never started, and when: the deaths the rules explain.

A pod's fate is read from what every source said about it: its PodInfo (phase, container states) where the
Kubernetes API still had it, and the timeline's lifecycle events otherwise (kube-state-metrics history, archived
events, the last log lines). A pod still running at the end of the window, with no death since it last started,
gets no verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from whathappened.correlate.index import TimelineIndex
from whathappened.kinds import Kind
from whathappened.model import PodInfo, TimelineEvent
from whathappened.scope import Scope

ENDED = "ended"
NEVER_STARTED = "never-started"

# Lifecycle events that mean the pod (or its last container run) is over.
TERMINAL: frozenset[str] = frozenset(
    {
        Kind.CONTAINER_TERMINATED,
        Kind.POD_FAILED,
        Kind.POD_SUCCEEDED,
        Kind.POD_DELETED,
        Kind.KILLING,
        Kind.DISRUPTION_TARGET,
        Kind.EVICTED,
        Kind.EVICTION_API,
        Kind.PREEMPTED,
        Kind.TAINT_EVICTION,
        Kind.OOM_KILLED,
        Kind.DEADLINE_EXCEEDED,
        Kind.JOB_COMPLETED,
    }
)
# Log lines a process writes as it dies: a death where nothing else recorded one (pods long deleted).
DYING_WORDS: frozenset[str] = frozenset(
    {
        Kind.NCCL_TIMEOUT,
        Kind.NCCL_ERROR,
        Kind.CUDA_ERROR,
        Kind.CUDA_OOM,
        Kind.APP_EXCEPTION,
        Kind.SIGTERM_RECEIVED,
        Kind.LAUNCHER_TEARDOWN,
    }
)
STARTS: frozenset[str] = frozenset({Kind.CONTAINER_STARTED, Kind.CONTAINER_RESTARTED})
NOT_STARTED_YET: frozenset[str] = frozenset(
    {Kind.FAILED_SCHEDULING, Kind.IMAGE_PULL_FAILED, Kind.CONFIG_ERROR, Kind.BACK_OFF}
)
# The events of one death arrive over a short burst (kill, exit, phase change, the next scrape).
BURST = timedelta(minutes=10)
# A pod pending this long without a node was not scheduled (not merely created at the end of the window).
LONG_PENDING = timedelta(minutes=5)
API = "kubernetes"  # the source name of the Kubernetes API collector


@dataclass(frozen=True)
class Fate:
    pod: PodInfo
    outcome: str  # ENDED | NEVER_STARTED
    node: str | None
    gpus: frozenset[str]  # GPU indexes on its node, where a source could tell
    started: datetime | None
    ended: datetime  # when it died; for a pod that never started, when it was last seen waiting
    events: tuple[int, ...]  # timeline indexes of the events about this pod, in time order

    @property
    def name(self) -> str:
        return self.pod.name


def evicted_by_api(event: TimelineEvent) -> bool:
    """A pod taken away through the Eviction API (a drain: kubectl, a node-health remediator, a cloud's
    maintenance handler), as the API or kube-state-metrics recorded it."""
    return event.kind == Kind.EVICTION_API or (
        event.kind == Kind.DISRUPTION_TARGET and event.attrs.get("reason") == "EvictionByEvictionAPI"
    )


def is_about(event: TimelineEvent, pod: PodInfo) -> bool:
    subject = event.subject
    return subject.pod == pod.name and (subject.namespace is None or subject.namespace == pod.namespace)


def fates(scope: Scope, index: TimelineIndex) -> tuple[Fate, ...]:
    """The fate of every pod in scope that ended or never started, ordered by when it ended."""
    found = []
    # Where the API answered for the experiment, a pod it no longer lists (known only from logs) was deleted.
    api_listed = any(API in pod.sources for pod in scope.pods)
    per_node = Counter(pod.node for pod in scope.pods if pod.node)  # counted once: a per-pod scan is quadratic
    for pod in scope.pods:
        fate = _fate(pod, index.about_pod(pod), index.timeline, scope, per_node, api_listed)
        if fate is not None:
            found.append(fate)
    return tuple(sorted(found, key=lambda f: (f.ended, f.name)))


def _fate(
    pod: PodInfo,
    own: tuple[int, ...],
    timeline: Sequence[TimelineEvent],
    scope: Scope,
    per_node: Mapping[str, int],
    api_listed: bool = False,
) -> Fate | None:
    events = [timeline[i] for i in own]
    node = pod.node or _node_from(events)
    gpus = _gpus(node, events, scope, per_node)
    started = _started(pod, events)
    if started is None and _waiting(pod, node, events, scope.window.end):
        seen = max((e.at for e in events), default=scope.window.end)
        return Fate(pod, NEVER_STARTED, node, gpus, None, seen, own)
    ended = _ended(pod, events)
    if ended is None and api_listed and pod.phase is None and API not in pod.sources and events:
        ended = max(e.at for e in events)  # vanished from the API with no word on how: last seen alive
    if ended is None:
        return None
    return Fate(pod, ENDED, node, gpus, started, ended, own)


def _node_from(events: Sequence[TimelineEvent]) -> str | None:
    for event in events:
        if event.subject.node:
            return event.subject.node
        node = event.attrs.get("node")
        if isinstance(node, str) and node:
            return node
    return None


def _gpus(
    node: str | None, events: Sequence[TimelineEvent], scope: Scope, per_node: Mapping[str, int]
) -> frozenset[str]:
    own = frozenset(e.subject.gpu for e in events if e.subject.gpu is not None)
    if own:
        return own
    # The scope's per-node GPUs belong to this pod only when no other pod of the experiment shared the node.
    if node and per_node.get(node, 0) <= 1:
        return frozenset(scope.gpus.get(node, ()))
    return frozenset()


def _started(pod: PodInfo, events: Sequence[TimelineEvent]) -> datetime | None:
    times = [c.started for c in pod.containers if c.started is not None]
    times += [e.at for e in events if e.kind in STARTS or e.kind == Kind.POD_SUCCEEDED]
    times += [e.at for e in events if e.kind == Kind.POD_PHASE and e.attrs.get("phase") in ("Running", "Succeeded")]
    times += [e.at for e in events if e.kind in DYING_WORDS or e.kind == Kind.CHECKPOINT_SAVED]
    if pod.phase in ("Running", "Succeeded", "Failed") and pod.started is not None:
        times.append(pod.started)
    return min(times) if times else None


def from_log(event: TimelineEvent) -> bool:
    """A log line's event (matched by a signature), not a Kubernetes object's or a metric's."""
    return "signature" in event.attrs


def _waiting(pod: PodInfo, node: str | None, events: Sequence[TimelineEvent], end: datetime) -> bool:
    if pod.phase not in (None, "Pending"):
        return False
    if any(e.kind in NOT_STARTED_YET and not from_log(e) for e in events):  # a log line says it ran
        return True
    created = pod.created or min((e.at for e in events), default=None)
    return pod.phase == "Pending" and node is None and created is not None and end - created >= LONG_PENDING


def _ended(pod: PodInfo, events: Sequence[TimelineEvent]) -> datetime | None:
    terminal = [e for e in events if _is_terminal(e)]
    gone = pod.deleted is not None or pod.ended is not None  # its series or its object vanished
    if pod.phase == "Running" and not gone and not _down_at_the_end(events, terminal):
        return None  # it died and came back (or never died): still running at the end
    finished = _container_end(pod)
    if terminal:
        last = max(e.at for e in terminal)
        first = min(e.at for e in terminal if e.at >= last - BURST)
        return min(first, finished) if finished is not None and finished >= last - BURST else first
    if finished is not None and pod.phase in ("Failed", "Succeeded"):
        return finished
    if pod.phase == "Running" and not gone:
        return None
    if pod.phase == "Unknown":  # its node stopped answering and nothing has evicted it yet
        unknown = [e.at for e in events if e.kind == Kind.POD_PHASE and e.attrs.get("phase") == "Unknown"]
        if unknown:
            return max(unknown)
    fallback = [t for t in (pod.ended, pod.deleted) if t is not None]
    if fallback:
        return min(fallback)
    dying = [e.at for e in events if e.kind in DYING_WORDS or (e.kind in TERMINAL and from_log(e))]
    return max(dying) if dying else None


def _down_at_the_end(events: Sequence[TimelineEvent], terminal: Sequence[TimelineEvent]) -> bool:
    """A pod the API calls Running is still down when its last death came after its last start, or it is
    crash-looping (backing off since its last start)."""
    last_start = max((e.at for e in events if e.kind == Kind.CONTAINER_STARTED), default=None)
    if any(e.kind == Kind.BACK_OFF and (last_start is None or e.at > last_start) for e in events):
        return True
    current = [e.at for e in terminal if not e.attrs.get("previous")]
    return bool(current) and (last_start is None or max(current) > last_start)


def _is_terminal(event: TimelineEvent) -> bool:
    if from_log(event):
        # a line saying the run finished, was killed or timed out ("`Trainer.fit` stopped", a scheduler's or a
        # launcher's words about a task) tells why a pod ended, never that it did: Lightning's tuner prints the
        # first at the start of a run that goes on; the API's status and events say when a pod ended
        return False
    if event.kind == Kind.POD_PHASE:
        return event.attrs.get("phase") in ("Failed", "Succeeded")
    return event.kind in TERMINAL


def _container_end(pod: PodInfo) -> datetime | None:
    finished = [c.finished for c in pod.containers if not c.init and c.state == "terminated" and c.finished]
    return min(finished) if finished else None


def by_name(found: Sequence[Fate]) -> Mapping[str, Fate]:
    return {f.name: f for f in found}
