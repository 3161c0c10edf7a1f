"""From an experiment name to a Report: gather every source, correlate, assemble.

This is the library entry the CLI, the demo and the tests call; the CLI only parses options and renders.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from whathappened.correlate import correlate
from whathappened.errors import ExperimentNotFound
from whathappened.gather import DEFAULT_DEADLINE_S, Gathered, gather
from whathappened.model import Report, SourceReport
from whathappened.scope import Collector, Query


def explain(
    collectors: Sequence[Collector],
    query: Query,
    deadline_s: float = DEFAULT_DEADLINE_S,
    not_configured: Iterable[SourceReport] = (),
) -> Report:
    """Raises ExperimentNotFound (exit 4) when no source that answered knows the experiment."""
    gathered = gather(collectors, query, deadline_s, not_configured)
    if not gathered.found and any(s.status.value == "ok" for s in gathered.sources):
        raise ExperimentNotFound(query.experiment, closest(query.experiment, gathered.candidates))
    return assemble(gathered)


def assemble(gathered: Gathered) -> Report:
    scope = gathered.scope
    correlation = correlate(scope, gathered.timeline)
    return Report(
        experiment=scope.query.experiment,
        namespace=scope.query.namespace,
        window=scope.window,
        sources=gathered.sources,
        pods=scope.pods,
        nodes=scope.nodes,
        timeline=gathered.timeline,
        verdicts=correlation.verdicts,
        root_cause=correlation.root_cause,
        next_step=correlation.next_step,
        lost_work=correlation.lost_work,
        hang=correlation.hang,
        chain=correlation.chain,
    )


def closest(name: str, candidates: Iterable[str], limit: int = 3) -> tuple[str, ...]:
    """The experiment names most like the one asked for; prefix matches first, then similar spellings."""
    pool = sorted(set(candidates))
    prefix = [c for c in pool if c.startswith(name) or name.startswith(c)]
    similar = difflib.get_close_matches(name, pool, n=limit, cutoff=0.5)
    ordered = list(dict.fromkeys(prefix + similar))
    return tuple(ordered[:limit])
