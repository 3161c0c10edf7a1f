"""Run every source concurrently under its own deadline; turn every failure into a SourceReport.

One source failing, hanging or lying never stops the others: each runs in a daemon thread, and when its
deadline passes we stop waiting for it and report ``timeout``. The deadline covers discovery and collection
together, so the whole run ends within the deadline plus the time it takes to merge and render.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from whathappened.errors import SourceError, WhathappenedError, scrub
from whathappened.model import SourceReport, SourceStatus, TimelineEvent
from whathappened.scope import Collector, Discovery, Query, Scope, merge_nodes, merge_pods
from whathappened.timeline import merge_timeline

_T = TypeVar("_T")
DEFAULT_DEADLINE_S = 20.0


@dataclass(frozen=True)
class Gathered:
    scope: Scope
    timeline: tuple[TimelineEvent, ...]
    sources: tuple[SourceReport, ...]
    candidates: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        return bool(self.scope.pods)


@dataclass
class _Outcome:
    value: object = None
    error: BaseException | None = None
    done: bool = False


def gather(
    collectors: Sequence[Collector],
    query: Query,
    deadline_s: float = DEFAULT_DEADLINE_S,
    not_configured: Iterable[SourceReport] = (),
    clock: Callable[[], float] = time.monotonic,
) -> Gathered:
    """Discover with every source, merge the scope, then collect with every source that discovered fine."""
    started = clock()
    discoveries = _run_all(collectors, lambda c: c.discover(query), {c.name: deadline_s for c in collectors})
    reports: dict[str, SourceReport] = {}
    usable: list[Collector] = []
    found: list[Discovery] = []
    for collector, outcome in zip(collectors, discoveries, strict=True):
        failure = _failure(collector, outcome, clock() - started)
        if failure is not None:
            reports[collector.name] = failure
            continue
        assert isinstance(outcome.value, Discovery)
        found.append(outcome.value)
        usable.append(collector)
    scope = Scope(
        query=query,
        pods=merge_pods(d.pods for d in found),
        nodes=merge_nodes(d.nodes for d in found),
    )
    candidates = tuple(sorted({name for d in found for name in d.candidates}))
    events: list[Iterable[TimelineEvent]] = []
    if scope.pods:
        spent = clock() - started
        budgets = {c.name: max(0.05, deadline_s - spent) for c in usable}
        outcomes = _run_all(usable, lambda c: list(c.collect(scope)), budgets)
        for collector, outcome in zip(usable, outcomes, strict=True):
            failure = _failure(collector, outcome, clock() - started)
            if failure is not None:
                reports[collector.name] = failure
                continue
            assert isinstance(outcome.value, list)
            events.append(outcome.value)
            reports[collector.name] = _ok(collector, outcome.value, scope, clock() - started)
    else:
        for collector in usable:
            reports[collector.name] = SourceReport(
                collector.name,
                SourceStatus.OK,
                "experiment not found here",
                collector.requests,
                round(clock() - started, 3),
            )
    for report in not_configured:
        reports.setdefault(report.name, report)
    ordered = tuple(reports[name] for name in _source_order(reports))
    return Gathered(scope=scope, timeline=merge_timeline(*events), sources=ordered, candidates=candidates)


def _source_order(reports: dict[str, SourceReport]) -> list[str]:
    preferred = ["kubernetes", "prometheus", "logs"]
    return [n for n in preferred if n in reports] + sorted(n for n in reports if n not in preferred)


def _run_all(
    collectors: Sequence[Collector], work: Callable[[Collector], _T], budgets: dict[str, float]
) -> list[_Outcome]:
    outcomes = [_Outcome() for _ in collectors]
    threads = []
    for collector, outcome in zip(collectors, outcomes, strict=True):
        thread = threading.Thread(
            target=_capture, args=(work, collector, outcome), name=f"source-{collector.name}", daemon=True
        )
        thread.start()
        threads.append(thread)
    started = time.monotonic()
    for collector, thread in zip(collectors, threads, strict=True):
        remaining = budgets[collector.name] - (time.monotonic() - started)
        thread.join(max(0.0, remaining))
    return outcomes


def _capture(work: Callable[[Collector], object], collector: Collector, outcome: _Outcome) -> None:
    try:
        outcome.value = work(collector)
    except BaseException as exc:
        outcome.error = exc
    finally:
        outcome.done = True


def _failure(collector: Collector, outcome: _Outcome, elapsed: float) -> SourceReport | None:
    elapsed = round(elapsed, 3)
    if not outcome.done:
        return SourceReport(
            collector.name, SourceStatus.TIMEOUT, "no answer within the deadline", collector.requests, elapsed
        )
    error = outcome.error
    if error is None:
        return None
    if isinstance(error, SourceError):
        return SourceReport(collector.name, SourceStatus(error.status), scrub(str(error)), collector.requests, elapsed)
    if isinstance(error, WhathappenedError):
        return SourceReport(collector.name, SourceStatus.FAILED, scrub(str(error)), collector.requests, elapsed)
    # An unexpected error inside a collector is a bug of ours; report it by type only, since its text may
    # carry a URL or header from the failing request.
    return SourceReport(
        collector.name,
        SourceStatus.FAILED,
        f"internal error ({type(error).__name__})",
        collector.requests,
        elapsed,
    )


def _ok(collector: Collector, events: list[TimelineEvent], scope: Scope, elapsed: float) -> SourceReport:
    """A source that answered. One that answered only in part (bad lines in a file, a query that failed
    among several) lists ``problems``: then its events are kept and its status says ``failed``."""
    detail = getattr(collector, "detail", None)
    if not isinstance(detail, str) or not detail:
        pods = {e.subject.pod for e in events if e.subject.pod}
        detail = f"{len(events)} events, {len(pods)} pods"
    problems = [str(p) for p in getattr(collector, "problems", None) or ()]
    if problems:
        shown = "; ".join(problems[:5]) + (f"; {len(problems) - 5} more problems" if len(problems) > 5 else "")
        return SourceReport(
            collector.name, SourceStatus.FAILED, f"{shown} ({detail})", collector.requests, round(elapsed, 3)
        )
    return SourceReport(collector.name, SourceStatus.OK, detail, collector.requests, round(elapsed, 3))
