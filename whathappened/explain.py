"""From an experiment name to a Report: gather every source, correlate, assemble.

This is the library entry the CLI, the demo and the tests call; the CLI only parses options and renders.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Sequence

from whathappened.correlate import correlate_attempts
from whathappened.correlate.engine import Correlation
from whathappened.errors import ExperimentNotFound
from whathappened.gather import DEFAULT_DEADLINE_S, Gathered, gather
from whathappened.model import Outcome, Report, SourceReport
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
        elsewhere = other_namespaces(collectors, query, deadline_s) if query.namespace else ()
        raise ExperimentNotFound(query.experiment, closest(query.experiment, gathered.candidates), elsewhere)
    return assemble(gathered)


def other_namespaces(collectors: Sequence[Collector], query: Query, deadline_s: float) -> tuple[str, ...]:
    """Where else the experiment lives, asked only once it was not found where the user said (a mistyped or
    forgotten namespace is the commonest reason). Every source asks across namespaces within the deadline; a
    source that fails or is slow here just adds no hint."""
    from concurrent.futures import ThreadPoolExecutor, wait

    anywhere = dataclasses.replace(query, namespace=None)
    pool = ThreadPoolExecutor(max_workers=max(1, len(collectors)))
    futures = [pool.submit(c.discover, anywhere) for c in collectors]
    done, _ = wait(futures, timeout=deadline_s)
    pool.shutdown(wait=False, cancel_futures=True)
    found: set[str] = set()
    for future in done:
        if future.exception() is None:
            found.update(p.namespace for p in future.result().pods if p.namespace)
    return tuple(sorted(found - {query.namespace}))


# With nothing read, the correlator's "nothing failed" would be the most harmful thing to tell a researcher.
NO_EVIDENCE_STEP = "no source could tell anything: fix the sources named in the report (URL, credentials, network) or widen the window, then ask again"


def assemble(gathered: Gathered) -> Report:
    correlation, attempts = correlate_attempts(gathered.scope, gathered.timeline)
    report = dataclasses.replace(_report(gathered, correlation), attempts=attempts)
    if report.outcome is Outcome.NO_EVIDENCE:
        return dataclasses.replace(report, next_step=NO_EVIDENCE_STEP)
    return report


def _report(gathered: Gathered, correlation: Correlation) -> Report:
    scope = gathered.scope
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
