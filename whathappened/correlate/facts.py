"""The facts a verdict's sentence and next step are filled with, read from a finding and its deciding event."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from whathappened.correlate import templates
from whathappened.correlate.evidence import Finding, xid_of
from whathappened.correlate.fates import Fate, evicted_by_api
from whathappened.model import NodeInfo, TimelineEvent
from whathappened.textclip import clip

PROVIDERS = {"azure": "Azure", "aws": "AWS", "gcp": "Google Cloud"}
SHORT = 140  # a quoted message longer than this is cut: the sentence must stay one sentence


def clock(at: datetime) -> str:
    return at.strftime("%H:%M:%S UTC")


def gpu_of(fate: Fate, finding: Finding, timeline: Sequence[TimelineEvent]) -> str | None:
    if finding.trigger is not None and timeline[finding.trigger].subject.gpu is not None:
        return timeline[finding.trigger].subject.gpu
    for i in finding.evidence:
        if timeline[i].subject.gpu is not None and timeline[i].subject.node in (None, fate.node):
            return timeline[i].subject.gpu
    return next(iter(fate.gpus)) if len(fate.gpus) == 1 else None


def facts(
    fate: Fate, finding: Finding, timeline: Sequence[TimelineEvent], nodes: Mapping[str, NodeInfo]
) -> dict[str, Any]:
    trigger = timeline[finding.trigger] if finding.trigger is not None else None
    attrs: Mapping[str, Any] = trigger.attrs if trigger is not None else {}
    node = fate.node or (trigger.subject.node if trigger is not None else None)
    gpu = gpu_of(fate, finding, timeline)
    file_line = templates.place(attrs.get("file"), attrs.get("line"))
    return {
        "pod": fate.name,
        "node": node or "its node",
        "fault_node": (trigger.subject.node if trigger is not None else None) or node or "its node",
        "gpu": f"GPU {gpu}" if gpu is not None else "a GPU",
        "at": clock(trigger.at if trigger is not None else finding.onset),
        "died": clock(fate.ended),
        # a pod drained away after the fault was evicted, not crashed
        "ended": "was evicted" if any(evicted_by_api(timeline[i]) for i in fate.events) else "crashed",
        "began": clock(finding.onset),
        "what": _what(trigger),
        "resource": attrs.get("resource") or _resource(trigger) or "memory",
        "provider": _provider(attrs, nodes.get(node or "")),
        "event": attrs.get("event_type") or "maintenance",
        "exception": _exception(attrs, trigger),
        "location": f" at {file_line}" if file_line else "",
        "fix": file_line or "the code",
        "status": _status(fate),
    }


def _exception(attrs: Mapping[str, Any], trigger: TimelineEvent | None) -> str:
    name, message = attrs.get("exception"), attrs.get("message")
    if name and message:
        return _short(f"{name}: {message}")
    return _short(str(name or (trigger.summary if trigger is not None else "an error")))


def _what(event: TimelineEvent | None) -> str:
    if event is None:
        return "no event recorded"
    xid = xid_of(event)
    text = str(event.attrs.get("text") or event.attrs.get("message") or event.attrs.get("detail") or "")
    if xid is not None:
        return f"Xid {xid}" + (f": {_short(text)}" if text else "")
    return _short(text or event.summary)


def _resource(event: TimelineEvent | None) -> str | None:
    if event is None:
        return None
    text = event.summary.lower()
    for resource in ("memory", "ephemeral-storage", "disk", "pid", "nodefs", "imagefs"):
        if resource in text:
            return resource
    return None


def _provider(attrs: Mapping[str, Any], node: NodeInfo | None) -> str:
    name = str(attrs.get("provider") or (node.provider if node is not None else "") or "")
    return PROVIDERS.get(name.lower(), name or "the cloud provider")


def _status(fate: Fate) -> str:
    pod = fate.pod
    parts = [pod.phase or "", pod.reason or ""]
    for c in pod.containers:
        if c.reason or c.exit_code is not None:
            parts.append(f"{c.name} {c.reason or 'exited'} (exit {c.exit_code})")
    said = ", ".join(p for p in parts if p)
    return said or "nothing more"


def _short(text: str) -> str:
    """Cut at a word boundary, never mid-word, and say so with an ellipsis."""
    return clip(text, SHORT)
