"""Stage 0 of the correlator: which deaths belong together. An experiment's attempts: the runs it was restarted or resubmitted as under the same name (CONTRACT.md
section 2, ``attempts``). Each attempt is explained on its own, and the experiment's root cause is the latest
attempt's.

Which attempt a pod belongs to, in the order the sources can tell:
- JobSet writes the restart count on every pod it recreates (label ``jobset.sigs.k8s.io/restart-attempt``);
- a resubmission recreates the owner under the same name with a new UID: pods of one owner name whose owner UIDs
  differ are generations, oldest first; one resubmitted under another name is an owner of the same kind whose
  pods were all created after every pod of the failed owners before it had ended;
- a batch Job replaces its failed pods up to its backoffLimit: a replacement is the next attempt of its completion
  index (label ``batch.kubernetes.io/job-completion-index``), or, for a Job without indexes, the attempt after
  every wave of its pods' ends that came before it was created;
- otherwise the experiment ran once, unless its containers were restarted in place (``restartPolicy: OnFailure``, a
  PyTorchJob's or Job's in-place restarts) or its pods were created again under their names (a Volcano
  RestartJob, a PyTorchJob's ExitCode policy): each wave of restarts then ends an attempt of the same pods
  (``restart_waves``), each explained on the events of its own span with the pods as they stood at its end.
Pods a source knew without the label or the owner's UID (a deleted pod known only from metrics or logs) join the
latest attempt that had begun when they were created; those that had ended before any began are earlier attempts,
one per wave of pods created together after every pod of the wave before had ended (a JobSet restarted twice
before the API's pods were created: its first two attempts' pods are known only from metrics).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from whathappened.correlate.fates import TERMINAL
from whathappened.kinds import Kind
from whathappened.model import PodInfo, TimelineEvent
from whathappened.scope import Scope

RESTART_LABEL = "jobset.sigs.k8s.io/restart-attempt"
INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
WAVE_GAP = timedelta(minutes=2)  # pods of one Job that end within this of each other failed together
RESTART_GAP = timedelta(minutes=5)  # containers restarted within this of each other restarted together


@dataclass(frozen=True)
class Incident:
    """One attempt as the later stages see it: its pods (as they stood at its end) and the events of its span."""

    scope: Scope
    timeline: Sequence[TimelineEvent]  # the whole timeline, or an in-place attempt's span of it
    offset: int = 0  # the span's first event's index in the whole timeline
    began: datetime | None = None  # an in-place attempt's bounds: the waves of restarts around it
    finished: datetime | None = None
    in_place: bool = False


def incidents(scope: Scope, timeline: Sequence[TimelineEvent]) -> tuple[Incident, ...]:
    """The experiment's attempts, oldest first: pod groups (restart label, owner generation, a Job's retries), or
    the spans between waves of in-place restarts, or the one run."""
    groups = attempts_of(scope.pods)
    if len(groups) > 1:
        return tuple(Incident(replace(scope, pods=group), timeline) for group in groups)
    waves = restart_waves(scope.pods, timeline)
    if not waves:
        return (Incident(scope, timeline),)
    return in_place(scope, timeline, waves)


def in_place(scope: Scope, timeline: Sequence[TimelineEvent], waves: Sequence[datetime]) -> tuple[Incident, ...]:
    """Containers restarted in place: each attempt is the span up to a wave of restarts, with each pod as it stood
    at the span's end (dead if one of its containers ended in it); the latest attempt is the pods as they are,
    begun when their containers last started."""
    times = [e.at for e in timeline]  # in time order (merge_timeline)
    bounds = [None, *waves, None]
    found = []
    for k in range(len(waves) + 1):
        lo, hi = bounds[k], bounds[k + 1]
        # a death stamped at the restart that followed it (a counter scraped then) is the earlier attempt's
        first = bisect_right(times, lo) if lo is not None else 0
        last = bisect_right(times, hi) if hi is not None else len(times)
        span = timeline[first:last]
        dead = _died_in(span)
        pods = tuple(replace(p, started=None) if hi is None else _as_it_stood(p, dead, hi) for p in scope.pods)
        found.append(Incident(replace(scope, pods=pods), span, first, lo, hi, in_place=True))
    return tuple(found)


def attempts_of(pods: Sequence[PodInfo]) -> tuple[tuple[PodInfo, ...], ...]:
    """The pods grouped by attempt, oldest attempt first; one group when the experiment ran once."""
    runs = _restart_labels(pods) or _owner_generations(pods) or _successive_owners(pods)
    keys = _within(runs, _job_retries(pods)) if runs else _job_retries(pods)
    if not keys:
        return (tuple(pods),) if pods else ()
    starts: dict[int, datetime] = {}
    for pod in pods:
        if pod.key in keys and pod.created is not None:
            key = keys[pod.key]
            starts[key] = min(starts.get(key, pod.created), pod.created)
    first = min(keys.values())
    earlier = _earlier_waves([p for p in pods if p.key not in keys], min(starts.values(), default=None), first)
    groups: dict[int, list[PodInfo]] = defaultdict(list)
    for pod in pods:
        attempt = keys.get(pod.key)
        if attempt is None:
            attempt = earlier.get(pod.key)
        groups[attempt if attempt is not None else _begun_before(pod, starts, first)].append(pod)
    return tuple(tuple(groups[k]) for k in sorted(groups))


def _earlier_waves(unkeyed: Sequence[PodInfo], began: datetime | None, first: int) -> dict[tuple[str, str], int]:
    """Pods without a key that had ended before any keyed attempt began, numbered as the attempts before ``first``:
    a new attempt at each pod created more than WAVE_GAP after the one before and once every pod of the current
    attempt had ended (a restart or resubmission recreates every pod after the last one's end). A pod whose
    creation no source saw (it was there before the window) is of the earliest."""
    if began is None:
        return {}
    unseen = datetime.min.replace(tzinfo=began.tzinfo)  # created before the window: first
    early = sorted(
        (
            (p.created or unseen, over, p)
            for p in unkeyed
            if (over := p.ended or p.deleted) is not None and over <= began
        ),
        key=lambda item: (item[0], item[2].name),
    )
    waves: list[list[PodInfo]] = []
    wave_end = previous = unseen
    for created, over, pod in early:
        if not waves or (created >= wave_end and created - previous > WAVE_GAP):
            waves.append([])
            wave_end = over
        waves[-1].append(pod)
        wave_end, previous = max(wave_end, over), created
    return {pod.key: first - len(waves) + i for i, wave in enumerate(waves) for pod in wave}


def _within(runs: dict[tuple[str, str], int], retries: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
    """The runs, each split by its Jobs' retries: a Job that replaced its pods within one run (a JobSet's child Job
    under its own backoffLimit, or suspended by Kueue to make room and resumed later: the same restart-attempt
    label, new pods) ran that run more than once."""
    order = {run: rank for rank, run in enumerate(sorted({(k, retries.get(pod, 0)) for pod, k in runs.items()}))}
    return {pod: order[(k, retries.get(pod, 0))] for pod, k in runs.items()}


def _restart_labels(pods: Iterable[PodInfo]) -> dict[tuple[str, str], int]:
    return {p.key: int(v) for p in pods if (v := p.label(RESTART_LABEL)).isdigit()}


def _owner_generations(pods: Sequence[PodInfo]) -> dict[tuple[str, str], int]:
    """Per owner name, its UIDs in the order their first pods were created: a pod's generation."""
    first: dict[tuple[str | None, str], datetime] = {}
    for pod in pods:
        if pod.owner_uid and pod.created is not None:
            key = (pod.owner_name, pod.owner_uid)
            first[key] = min(first.get(key, pod.created), pod.created)
    by_name: dict[str | None, list[tuple[datetime, str]]] = defaultdict(list)
    for (name, uid), at in first.items():
        by_name[name].append((at, uid))
    generation = {uid: i for seen in by_name.values() for i, (_, uid) in enumerate(sorted(seen))}
    if not any(len(seen) > 1 for seen in by_name.values()):
        return {}
    return {p.key: generation[p.owner_uid] for p in pods if p.owner_uid in generation}


def _successive_owners(pods: Sequence[PodInfo]) -> dict[tuple[str, str], int]:
    """Owners of one kind under other names, one after another: an owner whose first pod was created after every
    pod of the owners before it had ended, not all of them successfully, is a resubmission (a launcher or a
    pipeline names each submission anew: ``train-0412``, then ``train-0412-retry``). Owners that overlap in time
    (a JobSet's replicated Jobs, a driver started after its workers) are one run, and so are a preparation Job that
    succeeded before training began and a Job of another kind (an evaluation after a failed PyTorchJob)."""
    owners: dict[tuple[str | None, str], list[PodInfo]] = defaultdict(list)
    for pod in pods:
        if pod.owner_name:
            owners[(pod.owner_kind, pod.owner_name)].append(pod)
    unseen = datetime.min.replace(tzinfo=UTC)  # created before the window: first
    runs = [
        ((min(p.created or unseen for p in group), kind or "", name), kind, group)
        for (kind, name), group in owners.items()
    ]
    runs.sort(key=lambda run: run[0])
    keys: dict[tuple[str, str], int] = {}
    attempt, over, failed, kind_of = -1, None, False, None  # the current attempt: its end so far, kind, a failure
    for (first, _, _), kind, group in runs:
        ends = [p.ended or p.deleted for p in group]
        last = None if None in ends else max(e for e in ends if e is not None)
        if attempt < 0 or (over is not None and first > over and failed and kind == kind_of):
            attempt, over, failed, kind_of = attempt + 1, last, False, kind
        else:
            over = None if over is None or last is None else max(over, last)
        failed = failed or any(p.phase != "Succeeded" for p in group)
        keys.update((p.key, attempt) for p in group)
    return keys if attempt > 0 else {}


def _job_retries(pods: Sequence[PodInfo]) -> dict[tuple[str, str], int]:
    """Per batch Job, each pod's retry count: how many waves of ends of its completion index's pods (of the Job's
    pods, without indexes) came before it was created, ends close together counted once."""
    groups: dict[tuple[str, str | None, str | None], list[PodInfo]] = defaultdict(list)
    for pod in pods:
        if pod.owner_kind == "Job" and pod.created is not None:
            groups[(pod.namespace, pod.owner_uid or pod.owner_name, pod.label(INDEX_LABEL) or None)].append(pod)
    keys: dict[tuple[str, str], int] = {}
    for members in groups.values():
        waves = _wave_starts(sorted(end for q in members if (end := q.ended or q.deleted) is not None))
        for pod in members:
            assert pod.created is not None
            keys[pod.key] = bisect_right(waves, pod.created)
    return keys if any(keys.values()) else {}


def _wave_starts(ends: Sequence[datetime]) -> list[datetime]:
    """The first end of each wave: ends within WAVE_GAP of the one before failed together."""
    return [end for i, end in enumerate(ends) if i == 0 or end - ends[i - 1] > WAVE_GAP]


def _begun_before(pod: PodInfo, starts: dict[int, datetime], first: int) -> int:
    """The latest attempt that had begun when ``pod`` was created. A pod created before every known attempt began
    is an earlier attempt's only when it had also ended by then (the pods of a restarted JobSet's first attempt are
    gone from the API, and the sources that still know them may not know their labels); one created a moment
    before its siblings is theirs."""
    if pod.created is None or not starts:
        return max(starts, default=first)
    begun = [k for k, start in starts.items() if start <= pod.created]
    if begun:
        return max(begun)
    over = pod.ended or pod.deleted
    return first - 1 if over is not None and over <= min(starts.values()) else first


def restart_waves(pods: Sequence[PodInfo], timeline: Sequence[TimelineEvent]) -> tuple[datetime, ...]:
    """When the pods were restarted under the same names: their containers in place, as the sources saw each
    restart (kube-state-metrics' restart counter at every increment, the API at the last), or the pods themselves
    deleted or failed and created again by their controller (a Volcano job's RestartJob, a PyTorchJob's ExitCode
    policy, an MPIJob: the same pod names, new pods). The first restart of each wave, restarts within RESTART_GAP
    of each other taken as one wave (a gang restarts together, a crash loop backs off)."""
    keys = {p.key for p in pods}
    ours = [e for e in timeline if (e.subject.namespace or "", e.subject.pod or "") in keys]
    times = sorted(e.at for e in ours if e.kind == Kind.CONTAINER_RESTARTED)
    waves = _waves(times)
    # a counter that moved at the last death of a container left backing off began no attempt: none started after
    if waves and not any(e.kind == Kind.CONTAINER_STARTED and e.at >= waves[-1] for e in ours):
        waves.pop()
    return tuple(_waves(sorted({*waves, *_recreations(ours)})))


def _waves(times: Sequence[datetime]) -> list[datetime]:
    return [t for i, t in enumerate(times) if i == 0 or t - times[i - 1] > RESTART_GAP]


_POD_ENDS = frozenset({Kind.POD_FAILED, Kind.POD_SUCCEEDED, Kind.POD_DELETED})
_ENDED_PHASES = frozenset({"Failed", "Succeeded"})
_BEGUN_PHASES = frozenset({"Pending"})


def _recreations(ours: Sequence[TimelineEvent]) -> list[datetime]:
    """When a pod was created again under its name after it had ended (failed, succeeded or deleted): the API's
    creation time of the new pod, kube-state-metrics' first phase of its series."""
    ended: dict[tuple[str, str], datetime] = {}
    found: list[datetime] = []
    for event in ours:  # in time order (merge_timeline)
        key = (event.subject.namespace or "", event.subject.pod or "")
        phase = event.attrs.get("phase") if event.kind == Kind.POD_PHASE else None
        if event.kind in _POD_ENDS or phase in _ENDED_PHASES:
            ended.setdefault(key, event.at)
        elif (event.kind == Kind.POD_CREATED or phase in _BEGUN_PHASES) and key in ended and event.at > ended[key]:
            found.append(event.at)
            del ended[key]
    return found


def _died_in(span: Sequence[TimelineEvent]) -> frozenset[tuple[str | None, str]]:
    """(namespace or None, pod) of every pod a container of which ended in the span, gathered in one pass."""
    return frozenset((e.subject.namespace, e.subject.pod) for e in span if e.kind in TERMINAL and e.subject.pod)


def _as_it_stood(pod: PodInfo, dead: frozenset[tuple[str | None, str]], end: datetime) -> PodInfo:
    """The pod at the end of an earlier attempt: failed when one of its containers ended in the span, else
    running; what the API says of it now belongs to the latest attempt (its creation too, when a pod of that name
    was created again after the span)."""
    died = (pod.namespace, pod.name) in dead or (None, pod.name) in dead  # as fates.is_about matches a subject
    created = pod.created if pod.created is None or pod.created < end else None
    return replace(
        pod,
        phase="Failed" if died else "Running",
        created=created,
        started=None,
        ended=None,
        deleted=None,
        containers=(),
    )
