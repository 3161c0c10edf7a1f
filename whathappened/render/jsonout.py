"""The ``whathappened/v1`` JSON document (CONTRACT.md section 2) and its JSON Schema file.

Layout: the document's top-level keys one per line, and every record of its arrays (sources, pods, nodes,
timeline events, verdicts) on a line of its own. That reads and diffs like indented JSON, greps one event per
line, and is a third of the size of ``indent=2`` on a large run (a 512-pod report went from 6.4 MB to about
3.6 MB): each line is written by the C encoder, which Python uses only when no indent is asked for.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from whathappened.correlate.causes import CAUSES
from whathappened.correlate.hang import sentence
from whathappened.model import Attempt, Hang, LostWork, NodeInfo, PodInfo, Report, SourceReport, TimelineEvent, Verdict
from whathappened.render.answer import retryable
from whathappened.timeutils import isoformat

SCHEMA_ID = "whathappened/v1"


SCHEMA_FILE = "schema/whathappened-v1.schema.json"


def schema() -> dict[str, Any]:
    """The JSON Schema of the document: the shipped file, its cause and category enums from the cause table, the
    one place a cause is declared (tests/correlate/test_causes.py keeps the shipped file equal to this; ``make schema``
    writes it)."""
    text = resources.files("whathappened").joinpath(SCHEMA_FILE).read_text()
    return with_causes(json.loads(text))


def with_causes(document: dict[str, Any]) -> dict[str, Any]:
    """The schema with its cause enum (``$defs.cause``) and its category enum set from the cause table, in the
    table's order."""
    categories = list(dict.fromkeys(row.category for row in CAUSES.values()))

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "infrastructure" in (node.get("enum") or ()):
                return {**node, "enum": categories}
            return {key: walk(value) for key, value in node.items()}
        if isinstance(node, list):
            return [walk(value) for value in node]
        return node

    walked: dict[str, Any] = walk(document)
    walked["$defs"] = {**walked["$defs"], "cause": {**walked["$defs"]["cause"], "enum": list(CAUSES)}}
    return walked


def write_schema(folder: str = "whathappened") -> None:
    """Write the shipped schema file with the table's enums (``make schema``)."""
    path = Path(folder) / SCHEMA_FILE
    path.write_text(json.dumps(with_causes(json.loads(path.read_text())), indent=2) + "\n")


def to_document(report: Report, debug: bool = False) -> dict[str, Any]:
    root = report.root_cause
    return {
        "schema": SCHEMA_ID,
        "experiment": report.experiment,
        "namespace": report.namespace,
        "window": {"start": isoformat(report.window.start), "end": isoformat(report.window.end)},
        "sources": [_source(s) for s in report.sources],
        "pods": [_pod(p) for p in report.pods],
        "nodes": [_node(n) for n in report.nodes],
        "timeline": [_event(e, debug) for e in report.timeline],
        "verdicts": [_verdict(v) for v in report.verdicts],
        "root_cause": None
        if root is None
        else {
            "pod": root.pod,
            "namespace": root.namespace,
            "node": root.node,
            "gpu": root.gpu,
            "cause": root.cause,
            "category": root.category,
            "retryable": root.retryable,
            "summary": root.summary,
            "chain": list(report.chain),
        },
        "outcome": report.outcome.value,
        "next_step": report.next_step or None,
        "retryable": retryable(report),
        "lost_work": _lost_work(report.lost_work),
        "hang": _hang(report.hang),
        "attempts": [_attempt(a) for a in report.attempts],
    }


def _attempt(attempt: Attempt) -> dict[str, Any]:
    root = attempt.root_cause
    return {
        "attempt": attempt.number,
        "start": isoformat(attempt.start) if attempt.start else None,
        "end": isoformat(attempt.end) if attempt.end else None,
        "pods": [p.name for p in attempt.pods],
        "root_cause": None
        if root is None
        else {"pod": root.pod, "node": root.node, "cause": root.cause, "summary": root.summary},
    }


def render_json(report: Report, debug: bool = False) -> str:
    lines = [f"  {_dump(key)}: {_member(value)}" for key, value in to_document(report, debug).items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _member(value: Any) -> str:
    """A top-level value: an array of records one record per line, anything else on one line."""
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        return "[\n" + ",\n".join(f"    {_dump(item)}" for item in value) + "\n  ]"
    return _dump(value)


def _dump(value: Any) -> str:
    """One line of JSON. Attributes go to the encoder as they are (times and unknown objects through
    ``_default``); only a value the fast path refuses (NaN, a key JSON cannot have) goes through jsonable()."""
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError):
        return json.dumps(jsonable(value), ensure_ascii=False)


def _default(value: Any) -> Any:
    """What the encoder cannot write itself, as jsonable() would write it."""
    if isinstance(value, datetime):
        return isoformat(value)
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return list(value)
    return str(value)


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=_default)


def _source(source: SourceReport) -> dict[str, Any]:
    return {
        "name": source.name,
        "status": source.status.value,
        "detail": source.detail,
        "requests": source.requests,
        "elapsed_s": source.elapsed_s,
    }


def _time(value: datetime | None) -> str | None:
    return None if value is None else isoformat(value)


def _pod(pod: PodInfo) -> dict[str, Any]:
    return {
        "name": pod.name,
        "namespace": pod.namespace,
        "node": pod.node,
        "phase": pod.phase,
        "reason": pod.reason,
        "owner": f"{pod.owner_kind}/{pod.owner_name}" if pod.owner_kind and pod.owner_name else None,
        "gpus": pod.gpus_requested,
        "created": _time(pod.created),
        "started": _time(pod.started),
        "ended": _time(pod.ended),
        "sources": sorted(pod.sources),
        "containers": [
            {
                "name": c.name,
                "state": c.state,
                "reason": c.reason,
                "exit_code": c.exit_code,
                "restarts": c.restarts,
                "finished": _time(c.finished),
            }
            for c in pod.containers
        ],
    }


def _node(node: NodeInfo) -> dict[str, Any]:
    return {
        "name": node.name,
        "provider": node.provider,
        "instance_type": node.instance_type,
        "gpu_product": node.gpu_product,
        "gpu_count": node.gpu_count,
        "unschedulable": node.unschedulable,
        "ready": node.ready,
        "taints": list(node.taints),
    }


def _event(event: TimelineEvent, debug: bool) -> dict[str, Any]:
    subject = event.subject
    document: dict[str, Any] = {
        "time": isoformat(event.at),
        "source": event.source,
        "kind": event.kind,
        "namespace": subject.namespace,
        "pod": subject.pod,
        "container": subject.container,
        "node": subject.node,
        "gpu": subject.gpu,
        "severity": event.severity.value,
        "message": event.summary,
        "attrs": dict(event.attrs),  # the values are encoded by _dump(), times through _default()
    }
    if debug and event.raw is not None:
        document["raw"] = jsonable(event.raw)
    return document


def _verdict(verdict: Verdict) -> dict[str, Any]:
    return {
        "pod": verdict.pod,
        "namespace": verdict.namespace,
        "node": verdict.node,
        "gpu": verdict.gpu,
        "cause": verdict.cause,
        "category": verdict.category,
        "retryable": verdict.retryable,
        "root": verdict.root,
        "caused_by": verdict.caused_by,
        "confidence": round(verdict.confidence, 2),
        "summary": verdict.summary,
        "next_step": verdict.next_step or None,
        "ended": _time(verdict.ended),
        "facts": jsonable(dict(verdict.facts)),
        "evidence": list(verdict.evidence),
    }


def _lost_work(lost: LostWork | None) -> dict[str, Any] | None:
    if lost is None:
        return None
    return {
        "gpu_hours": round(lost.gpu_hours, 2),
        "since": isoformat(lost.since),
        "until": isoformat(lost.until),
        "basis": lost.basis,
        "collateral_gpu_hours": round(lost.collateral_gpu_hours, 2),
        "checkpoint_step": lost.checkpoint_step,
    }


def _hang(hang: Hang | None) -> dict[str, Any] | None:
    if hang is None:
        return None
    return {
        "op": hang.op,
        "seq": hang.seq,
        "timeout_s": hang.timeout_s,
        "froze_at": _time(hang.froze_at),
        "reported_ranks": list(hang.reported),
        "silent_ranks": list(hang.silent),
        "behind_ranks": list(hang.behind),
        "world_size": hang.world_size,
        "last_progress": hang.last_progress,
        "last_progress_at": _time(hang.last_progress_at),
        "summary": sentence(hang),
        "next_steps": list(hang.next_steps),
    }


def jsonable(value: Any) -> Any:
    """Attributes and raw payloads as JSON: times as RFC 3339, unknown objects as text."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
    if isinstance(value, datetime):
        return isoformat(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    return str(value)
