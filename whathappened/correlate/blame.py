"""Root versus collateral: in a distributed job, which pod's failure began it and which died because of it.

The rules first explain each death on its own. Then: a failure with its own cause (hardware, infrastructure,
scheduling, the application) is a root; among several, the earliest wins, and when two began within the clock
skew of each other the stronger evidence (infrastructure over application) wins, so skew cannot flip cause and
effect. Reactions (NCCL errors and timeouts, launcher teardown, unexplained exits, controllers deleting the rest
of a failed job) that came after the root are its collateral. With no root of its own, NCCL "remote process
exited" reports point at the rank that exited first; if nothing decides, root stays None rather than a guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from whathappened.correlate import templates
from whathappened.correlate.causes import NO_FAULT, cause
from whathappened.correlate.evidence import SKEW, Finding, text_of
from whathappened.correlate.fates import Fate
from whathappened.kinds import Kind
from whathappened.model import TimelineEvent

# How long after a root failure another rank's death still counts as its consequence. The NCCL watchdog alone
# waits 30 minutes by default before it gives up on a dead peer.
REACH = timedelta(hours=3)
# A controller deleting the rest of a failed job (JobSet, Kubeflow failure policies) does it within minutes.
TEARDOWN_REACH = timedelta(minutes=30)


@dataclass(frozen=True)
class Judged:
    fate: Fate
    finding: Finding
    root: bool | None = None
    caused_by: str | None = None
    blame: str = ""  # the clause naming what this pod reacted to, for its sentence


def judge(items: Sequence[tuple[Fate, Finding]], timeline: Sequence[TimelineEvent]) -> tuple[Judged, ...]:
    judged = [Judged(fate, finding) for fate, finding in items]
    root = _root(judged, timeline)
    if root is None:
        return tuple(_without_root(judged))
    return tuple(_around(j, root, timeline) for j in judged)


def root_of(judged: Sequence[Judged]) -> Judged | None:
    roots = [j for j in judged if j.root]
    return min(roots, key=_first) if roots else None


def _first(j: Judged) -> tuple[datetime, datetime, str]:
    return (j.finding.onset, j.fate.ended, j.fate.name)


def _is_failure(j: Judged) -> bool:
    code = j.finding.cause
    return code not in NO_FAULT and code != "unknown" and not cause(code).reaction


def _root(judged: Sequence[Judged], timeline: Sequence[TimelineEvent]) -> Judged | None:
    failures = [j for j in judged if _is_failure(j) and not _torn_down(j, timeline)] or [
        j for j in judged if _is_failure(j)
    ]
    if failures:
        earliest = min(failures, key=_first)
        close = [j for j in failures if j.finding.onset <= earliest.finding.onset + SKEW]
        return min(close, key=lambda j: (-cause(j.finding.cause).tier, *_first(j)))
    pointed = _pointed_at(judged, timeline)
    if pointed is not None:
        return pointed
    ended = [j for j in judged if j.finding.cause not in NO_FAULT]
    if len(ended) == 1 and ended[0].finding.cause == "unknown":
        return ended[0]  # a lone pod that died: nothing to weigh, the failure began there
    return None


def _pointed_at(judged: Sequence[Judged], timeline: Sequence[TimelineEvent]) -> Judged | None:
    """The rank that went down first without a fault of its own, when the others only reacted.

    NCCL's "remote process exited" on the survivors points at a rank that exited (within the skew of the first
    report). Timeouts and other reactions say less, so then the silent rank must have ended clearly before the
    first of them.
    """
    reactions = [j for j in judged if cause(j.finding.cause).reaction]
    remote = [timeline[i].at for j in reactions for i in j.finding.evidence if _remote_exit(timeline[i])]
    if remote:
        deadline = min(remote) + SKEW
    else:
        first = [j.finding.onset for j in reactions]
        if not first:
            return None
        deadline = min(first) - SKEW
    silent = [j for j in judged if not cause(j.finding.cause).reaction and j.finding.cause != "completed"]
    before = [j for j in silent if j.fate.ended <= deadline]
    return min(before, key=_first) if before else None


def _remote_exit(event: TimelineEvent) -> bool:
    if event.kind != Kind.NCCL_ERROR:
        return False
    return bool(event.attrs.get("remote")) or "remote process exited" in text_of(event)


def _torn_down(j: Judged, timeline: Sequence[TimelineEvent]) -> bool:
    """Stopped by its Job controller because the backoff limit (or a failure policy) was used up."""
    if j.finding.cause != "deadline-exceeded" or j.finding.trigger is None:
        return False
    reason = str(timeline[j.finding.trigger].attrs.get("reason") or "").lower()
    return reason in ("backofflimitexceeded", "podfailurepolicy")


def _around(j: Judged, root: Judged, timeline: Sequence[TimelineEvent]) -> Judged:
    if j is root:
        return replace(j, root=True)
    code = j.finding.cause
    after = root.finding.onset - SKEW <= j.fate.ended <= root.finding.onset + REACH
    soon_after = root.finding.onset - SKEW <= j.fate.ended <= root.finding.onset + TEARDOWN_REACH
    if _torn_down(j, timeline) and soon_after:
        # its controller stopped it because the root's failure used up the Job's backoff limit
        return _collateral(j, root, convert=True)
    if _is_failure(j):
        weaker = cause(code).tier < cause(root.finding.cause).tier
        if weaker and after and j.finding.onset > root.finding.onset - SKEW:
            # an error raised by the fallout of a stronger fault, or too close to it to say it came first
            return _collateral(j, root, convert=True)
        return replace(j, root=True)
    if code == "completed":
        return replace(j, root=False)
    if code == "deleted" and not soon_after:
        return j  # stopped long before or after the failure: not its teardown
    if not after:
        return j
    return _collateral(j, root, convert=not cause(code).reaction)


def _collateral(j: Judged, root: Judged, convert: bool) -> Judged:
    finding = j.finding
    if convert:
        finding = replace(
            finding, cause="peer-failure", summary=templates.PEER, confidence=round(min(finding.confidence, 0.6), 2)
        )
    began = root.finding.onset.strftime("%H:%M:%S UTC")
    blame = f", caused by {root.fate.name} going down at {began} ({cause(root.finding.cause).plain})"
    return replace(j, finding=finding, root=False, caused_by=root.fate.name, blame=blame)


def _without_root(judged: Sequence[Judged]) -> list[Judged]:
    """Nothing failed of its own: the first stopped pod is where it began; the rest were stopped alongside it."""
    stopped = sorted((j for j in judged if j.finding.cause == "deleted"), key=_first)
    first = stopped[0] if stopped else None
    out = []
    for j in judged:
        if j is first:
            out.append(replace(j, root=True))
        elif j.finding.cause in NO_FAULT:
            out.append(replace(j, root=False))  # ended with no fault: not where a failure began
        else:
            out.append(j)
    return out
