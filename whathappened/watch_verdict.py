"""What ``whathappened watch`` says about one explained incident, once, for every place it writes: the JSON line
(its log, the webhook's body, the owner's ``whathappened.io/verdict`` annotation) and the same in words (the Event's
message, the chat text). A verdict without a root cause says so and names the outcome: an incident the sources could
not explain must never read like good news."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from whathappened.timeutils import isoformat

if TYPE_CHECKING:
    from whathappened.model import Report
    from whathappened.watcher import Incident


def verdict_line(incident: Incident, report: Report) -> dict[str, Any]:
    root = report.root_cause
    return {
        "experiment": incident.experiment,
        "namespace": incident.namespace,
        "deaths": incident.deaths,
        "first_death": isoformat(incident.first),
        "outcome": report.outcome.value,
        "root_cause": None
        if root is None
        else {"pod": root.pod, "cause": root.cause, "summary": root.summary, "next_step": root.next_step},
        "sources": {s.name: s.status.value for s in report.sources},
    }


def in_words(line: Mapping[str, Any]) -> str:
    """The experiment, the root cause in words and what to do, or that no root cause was decided; and the sources
    that failed to answer, named (a verdict from fewer sources than configured must say so)."""
    root = line.get("root_cause") or {}
    where = f"{line.get('experiment')} in {line.get('namespace')}"
    failed = sorted(f"{n} ({s})" for n, s in (line.get("sources") or {}).items() if s not in ("ok", "not_configured"))
    unread = f" Not read: {', '.join(failed)}." if failed else ""
    if not root:
        return f"{where}: {line.get('deaths')} pod(s) ended; no root cause decided ({line.get('outcome')}).{unread}"
    return f"{where}: {root.get('summary')} Next: {root.get('next_step')}{unread}"
