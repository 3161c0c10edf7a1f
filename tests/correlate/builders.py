"""Hand-built timelines for correlator tests: events in the kinds vocabulary, as the collectors emit them."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from whathappened.correlate import Correlation, correlate
from whathappened.kinds import Kind, severity_of
from whathappened.model import ContainerInfo, NodeInfo, PodInfo, Subject, TimelineEvent, Verdict, Window
from whathappened.scope import Query, Scope
from whathappened.timeline import merge_timeline

T0 = datetime(2026, 11, 20, 6, 0, tzinfo=UTC)
NS = "ml"
START = T0 + timedelta(minutes=2)


def at(minutes: float, seconds: float = 0) -> datetime:
    return T0 + timedelta(minutes=minutes, seconds=seconds)


def ev(
    kind: Kind,
    when: datetime,
    pod: str | None = None,
    node: str | None = None,
    gpu: str | None = None,
    source: str = "kubernetes",
    summary: str | None = None,
    **attrs: Any,
) -> TimelineEvent:
    return TimelineEvent(
        at=when,
        source=source,
        kind=str(kind),
        severity=severity_of(kind),
        summary=summary or f"{kind} {pod or node or ''}".strip(),
        subject=Subject(namespace=NS if pod else None, pod=pod, node=node, gpu=gpu),
        attrs=attrs,
    )


def pod(
    name: str,
    node: str | None = "node-a",
    phase: str | None = "Failed",
    started: datetime | None = START,
    gpus: int = 8,
    owner: str | None = None,
    containers: tuple[ContainerInfo, ...] = (),
) -> PodInfo:
    return PodInfo(
        name=name,
        namespace=NS,
        node=node,
        phase=phase,
        created=(started - timedelta(seconds=5)) if started else T0,
        started=started,
        gpus_requested=gpus,
        owner_name=owner,
        containers=containers,
    )


def ran(name: str, node: str, gpus: int = 8, owner: str | None = None) -> tuple[PodInfo, list[TimelineEvent]]:
    """A pod that started on a node, with the start events every source reports."""
    return pod(name, node, gpus=gpus, owner=owner), [
        ev(Kind.POD_SCHEDULED, START, name, node),
        ev(Kind.CONTAINER_STARTED, START + timedelta(seconds=20), name, node),
    ]


def exited(name: str, node: str, when: datetime, code: int, reason: str = "Error") -> TimelineEvent:
    return ev(Kind.CONTAINER_TERMINATED, when, name, node, exit_code=code, reason=reason, previous=False)


def scope_of(pods: Iterable[PodInfo], nodes: Iterable[NodeInfo] = ()) -> Scope:
    query = Query("exp", NS, Window(T0, T0 + timedelta(hours=2)))
    return Scope(query=query, pods=tuple(pods), nodes=tuple(nodes))


def run(pods: Iterable[PodInfo], events: Iterable[TimelineEvent], nodes: Iterable[NodeInfo] = ()) -> Correlation:
    timeline = merge_timeline(events)
    return correlate(scope_of(pods, nodes), timeline)


def timeline_of(events: Iterable[TimelineEvent]) -> tuple[TimelineEvent, ...]:
    return merge_timeline(events)


def verdict(result: Correlation, name: str) -> Verdict:
    found = [v for v in result.verdicts if v.pod == name]
    assert len(found) == 1, f"{name}: {[v.pod for v in result.verdicts]}"
    return found[0]
