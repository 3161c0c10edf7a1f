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

from whathappened.errors import SourceError, WhathappenedError, scrub
from whathappened.kinds import Kind
from whathappened.model import SourceReport, SourceStatus, TimelineEvent
from whathappened.scope import Collector, Discovery, LeavesEvents, Query, Scope, merge_nodes, merge_pods
from whathappened.timeline import merge_timeline

DEFAULT_DEADLINE_S = 20.0
_READ_ELSEWHERE = frozenset({Kind.LOG_LINE, Kind.CONTAINER_TERMINATED})  # may hold log lines (a termination message)


@dataclass(frozen=True)
class Gathered:
    scope: Scope
    timeline: tuple[TimelineEvent, ...]
    sources: tuple[SourceReport, ...]
    candidates: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        return bool(self.scope.pods)


# Discovery of every source is awaited for at most this share of the deadline before the scope is merged:
# a source that is still discovering then (stalled, rate-limited) must not eat the others' collection time.
DISCOVERY_SHARE = 0.5


@dataclass
class _Outcome:
    value: object = None
    error: BaseException | None = None
    done: bool = False


class _Run:
    """One source's life in its own daemon thread: discover, wait for the merged scope, collect."""

    def __init__(self, collector: Collector, query: Query) -> None:
        self.collector = collector
        self.query = query
        self.discovery = _Outcome()
        self.collection = _Outcome()
        self.discovered = threading.Event()
        self.finished = threading.Event()
        self._scope: Scope | None = None
        self._scope_ready = threading.Event()
        self.took: float | None = None  # seconds from the start of the run to this source's last answer
        self.thread = threading.Thread(target=self._live, name=f"source-{collector.name}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def hand_scope(self, scope: Scope) -> None:
        self._scope = scope
        self._scope_ready.set()

    def _live(self) -> None:
        began = time.monotonic()
        try:
            _capture(lambda c: c.discover(self.query), self.collector, self.discovery)
            self.discovered.set()
            if self.discovery.error is not None:
                return
            self._scope_ready.wait()
            scope = self._scope
            if scope is None or not scope.pods:
                return
            late = self.discovery.value
            if isinstance(late, Discovery) and late.pods and not _covers(scope, late):
                scope = _with(scope, late)  # discovered after the merge: its own pods still count for itself
            _capture(lambda c: list(c.collect(scope)), self.collector, self.collection)
        finally:
            self.took = time.monotonic() - began
            self.discovered.set()
            self.finished.set()


def gather(
    collectors: Sequence[Collector],
    query: Query,
    deadline_s: float = DEFAULT_DEADLINE_S,
    not_configured: Iterable[SourceReport] = (),
    clock: Callable[[], float] = time.monotonic,
) -> Gathered:
    """Discover with every source, merge the scope, then collect with every source that discovered fine.

    Every source has the same deadline from the start of the run. Discoveries are awaited for half of it; the
    scope is merged from those that answered (all of them, when any is slower and none found the experiment).
    """
    started = clock()
    runs = [_Run(c, query) for c in collectors]
    for run in runs:
        run.start()
    _wait_all([r.discovered for r in runs], started + deadline_s * DISCOVERY_SHARE, clock)
    found = _discoveries(runs)
    if not any(d.pods for d in found):
        _wait_all([r.discovered for r in runs], started + deadline_s, clock)
        found = _discoveries(runs)
    scope = Scope(query=query, pods=merge_pods(d.pods for d in found), nodes=merge_nodes(d.nodes for d in found))
    for run in runs:
        run.hand_scope(scope)
    if scope.pods:
        # the Events a source left to an event archive are read, when the archive had none, as soon as the
        # sources concerned are done: not after the slowest of the others
        archive = [r for r in runs if _with_archive(r.collector)]
        _wait_all([r.finished for r in archive], started + deadline_s, clock)
        _read_left_events(archive, scope, started + deadline_s, clock)
        _wait_all([r.finished for r in runs], started + deadline_s, clock)
        for late in [d for d in _discoveries(runs) if not _covers(scope, d)]:
            scope = _with(scope, late)  # the report lists the pods a late source named too
    total = clock() - started
    reports = {run.collector.name: _report(run, scope, total if run.took is None else run.took) for run in runs}
    for report in not_configured:
        reports.setdefault(report.name, report)
    ordered = tuple(reports[name] for name in _source_order(reports))
    events = [r.collection.value for r in runs if r.collection.done and isinstance(r.collection.value, list)]
    candidates = tuple(sorted({name for d in found for name in d.candidates}))
    timeline = merge_timeline(*events)
    return Gathered(scope=scope, timeline=_with_lines_read(timeline), sources=ordered, candidates=candidates)


def _with_lines_read(timeline: tuple[TimelineEvent, ...]) -> tuple[TimelineEvent, ...]:
    """The timeline with what the log lines other sources read say (the containers' last lines the API served,
    their termination messages), read by the log source's signatures: without a log store they are a dead
    rank's only words. The signatures are imported only when there are such lines."""
    if not any(e.kind in _READ_ELSEWHERE for e in timeline):
        return timeline
    from whathappened.collectors.logs.elsewhere import events_from_lines

    read = events_from_lines(timeline)
    return merge_timeline(timeline, read) if read else timeline


def _read_left_events(runs: Sequence[_Run], scope: Scope, until: float, clock: Callable[[], float]) -> None:
    """A source that left part of its Events to an event archive another source reads (the API's further pages of
    a namespace's Events, at thousands of pods) reads them after all when no source found an archived Event of
    the experiment: within the same deadline, its events added to its own collection."""
    answered = [r for r in runs if r.collection.done and r.collection.error is None]
    if any(getattr(r.collector, "archived_events", 0) for r in answered):
        return
    for run in answered:
        if isinstance(run.collector, LeavesEvents) and run.collector.left_to_archive:
            _read_left(run, run.collector, scope, until, clock)


def _with_archive(collector: Collector) -> bool:
    """Whether a source leaves Events to an event archive or reads one (a source not yet built does neither)."""
    return isinstance(collector, LeavesEvents) or getattr(collector, "archived_events", None) is not None


def _read_left(run: _Run, leaver: LeavesEvents, scope: Scope, until: float, clock: Callable[[], float]) -> None:
    began, outcome = clock(), _Outcome()
    if until <= began:  # the archive's source took the whole deadline: its own report says so
        return
    read = threading.Thread(target=_capture, args=(lambda _: leaver.collect_left(scope), leaver, outcome))
    read.daemon = True
    read.start()
    read.join(max(0.0, until - clock()))
    if outcome.done and outcome.error is None and isinstance(outcome.value, list):
        if isinstance(run.collection.value, list):
            run.collection.value.extend(outcome.value)
    elif outcome.done:  # the extra pages failed: what the source had stands, the failure is named
        run.collection.error = outcome.error
    run.took = (run.took or 0.0) + clock() - began


def _wait_all(events: Sequence[threading.Event], until: float, clock: Callable[[], float]) -> None:
    for event in events:
        remaining = until - clock()
        if remaining <= 0:
            return
        event.wait(remaining)


def _discoveries(runs: Sequence[_Run]) -> list[Discovery]:
    return [
        r.discovery.value
        for r in runs
        if r.discovery.done and r.discovery.error is None and isinstance(r.discovery.value, Discovery)
    ]


def _covers(scope: Scope, discovery: Discovery) -> bool:
    known = {p.key for p in scope.pods}
    return all(p.key in known for p in discovery.pods)


def _with(scope: Scope, discovery: Discovery) -> Scope:
    return Scope(
        query=scope.query,
        pods=merge_pods([scope.pods, discovery.pods]),
        nodes=merge_nodes([scope.nodes, discovery.nodes]),
        gpus=scope.gpus,
    )


def _report(run: _Run, scope: Scope, elapsed: float) -> SourceReport:
    collector = run.collector
    failure = _failure(collector, run.discovery, elapsed)
    if failure is not None:
        return failure
    if not scope.pods:
        problems = [str(p) for p in getattr(collector, "problems", None) or ()]
        if problems:  # damaged input is named even when nothing was found: it may be why
            return SourceReport(
                collector.name,
                SourceStatus.FAILED,
                f"experiment not found here; {_shown(problems)}",
                collector.requests,
                round(elapsed, 3),
            )
        return SourceReport(
            collector.name, SourceStatus.OK, "experiment not found here", collector.requests, round(elapsed, 3)
        )
    failure = _failure(collector, run.collection, elapsed)
    if failure is not None:
        return failure
    assert isinstance(run.collection.value, list)
    return _ok(collector, run.collection.value, scope, elapsed)


def _source_order(reports: dict[str, SourceReport]) -> list[str]:
    preferred = ["kubernetes", "prometheus", "logs"]
    return [n for n in preferred if n in reports] + sorted(n for n in reports if n not in preferred)


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
    # carry a URL or header from the failing request, and say what it is.
    return SourceReport(
        collector.name,
        SourceStatus.FAILED,
        f"internal error ({type(error).__name__}): a bug in this source's reader, please report it",
        collector.requests,
        elapsed,
    )


def _shown(problems: Sequence[str]) -> str:
    return "; ".join(problems[:5]) + (f"; {len(problems) - 5} more problems" if len(problems) > 5 else "")


def _ok(collector: Collector, events: list[TimelineEvent], scope: Scope, elapsed: float) -> SourceReport:
    """A source that answered. One that answered only in part (bad lines in a file, a query that failed
    among several) lists ``problems``: then its events are kept and its status says ``failed``."""
    detail = getattr(collector, "detail", None)
    if not isinstance(detail, str) or not detail:
        pods = {e.subject.pod for e in events if e.subject.pod}
        detail = f"{len(events)} events, {len(pods)} pods"
    problems = [str(p) for p in getattr(collector, "problems", None) or ()]
    if problems:
        return SourceReport(
            collector.name, SourceStatus.FAILED, f"{_shown(problems)} ({detail})", collector.requests, round(elapsed, 3)
        )
    return SourceReport(collector.name, SourceStatus.OK, detail, collector.requests, round(elapsed, 3))
