"""Each fleet incident explained exactly as ``whathappened EXPERIMENT`` would explain it over the incident's own
narrow window (incidents.py), kept as one ``Case``: the root cause, where it was (node, GPU), what the incident
cost, the Xids seen. An incident the sources can no longer explain (its data expired) is a case too, of cause
``unknown`` with the outcome saying why: a taxonomy must not drop what it cannot explain."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

from whathappened.errors import WhathappenedError, scrub
from whathappened.explain import explain
from whathappened.fleet.incidents import FleetIncident
from whathappened.kinds import Kind
from whathappened.model import Outcome, Report, Window
from whathappened.scope import Query
from whathappened.sources import Sources

CONCURRENT = 4  # explanations at once: each is a few requests to each source


@dataclass(frozen=True, slots=True)
class XidSeen:
    node: str
    gpu: str  # the UUID when the event names it, else "GPU <index>"
    xid: int
    at: datetime  # two incidents' windows may both hold one Xid: it is counted once


@dataclass(frozen=True, slots=True)
class Case:
    incident: FleetIncident
    cause: str
    category: str
    retryable: bool
    outcome: str
    root_pod: str | None = None
    node: str | None = None
    gpu: str | None = None  # as XidSeen.gpu
    summary: str = ""
    gpu_hours_lost: float = 0.0
    xids: tuple[XidSeen, ...] = ()
    sources: tuple[tuple[str, str], ...] = ()  # (source, status)

    @property
    def deaths(self) -> int:
        return len(self.incident.ends)


def survey(
    incidents: Sequence[FleetIncident],
    sources: Callable[[FleetIncident], Sources],
    within: Window,
    label_keys: tuple[str, ...],
    deadline_s: float,
) -> list[Case]:
    """In the incidents' order. ``sources`` builds fresh collectors for each explanation (a collector keeps what it
    fetched for its run; a snapshot's are the incident's own recorded folder). A few explanations run at once: each
    mostly waits on the servers."""

    def one(incident: FleetIncident) -> Case:
        query = Query(incident.experiment, incident.namespace, incident.window(within), label_keys)
        built = sources(incident)
        try:
            report = explain(built.collectors, query, deadline_s, built.not_configured)
        except WhathappenedError as error:
            return Case(incident, "unknown", "unknown", False, Outcome.NO_EVIDENCE.value, summary=scrub(str(error)))
        return case_of(incident, report)

    with ThreadPoolExecutor(max_workers=CONCURRENT, thread_name_prefix="fleet") as pool:
        return list(pool.map(one, incidents))


def case_of(incident: FleetIncident, report: Report) -> Case:
    root = report.root_cause
    lost = report.lost_work
    xids = tuple(
        XidSeen(e.subject.node or "", _gpu(e.attrs.get("uuid"), e.subject.gpu), int(e.attrs.get("xid") or 0), e.at)
        for e in report.timeline
        if e.kind == Kind.GPU_XID.value and e.subject.node
    )
    sources = tuple((s.name, s.status.value) for s in report.sources)
    gpu_hours = (lost.gpu_hours + lost.collateral_gpu_hours) if lost is not None else 0.0
    if root is None:
        return Case(incident, "unknown", "unknown", False, report.outcome.value, gpu_hours_lost=gpu_hours, xids=xids,
                    sources=sources)  # fmt: skip
    gpu = _root_gpu(report, root.node, root.gpu)
    return Case(
        incident,
        root.cause,
        root.category,
        root.retryable,
        report.outcome.value,
        root.pod,
        root.node,
        gpu,
        root.summary,
        gpu_hours,
        xids,
        sources,
    )


def _root_gpu(report: Report, node: str | None, index: str | None) -> str | None:
    """The root's GPU by UUID where an event on its node names it, else by index. When the verdict names no GPU
    (its evidence was the pod's log line): the one GPU of the node that raised an Xid in the incident, if one did."""
    on_node = [
        e for e in report.timeline if e.subject.node == node and (e.subject.gpu is not None or e.attrs.get("uuid"))
    ]
    if index is not None:
        uuid = next((e.attrs.get("uuid") for e in on_node if e.subject.gpu == index and e.attrs.get("uuid")), None)
        return _gpu(uuid, index)
    raised = {_gpu(e.attrs.get("uuid"), e.subject.gpu) for e in on_node if e.kind == Kind.GPU_XID.value}
    return raised.pop() if len(raised) == 1 else None


def _gpu(uuid: object, index: str | None) -> str:
    return str(uuid) if uuid else f"GPU {index}" if index is not None else "GPU ?"
