"""gather(): concurrency, deadlines, and every failure turned into the contract's source status."""

import threading
from datetime import UTC, datetime, timedelta

from whathappened.errors import SourceForbidden, SourceUnreachable
from whathappened.gather import gather
from whathappened.kinds import Kind
from whathappened.model import PodInfo, Severity, SourceReport, SourceStatus, Subject, TimelineEvent, Window
from whathappened.scope import Discovery, Query

START = datetime(2026, 11, 20, 6, tzinfo=UTC)
QUERY = Query("exp", "ns", Window(START, START + timedelta(hours=2)))


def _event(minute: int, pod: str = "p-0", source: str = "fake") -> TimelineEvent:
    return TimelineEvent(
        START + timedelta(minutes=minute),
        source,
        Kind.KILLING,
        Severity.WARNING,
        "stopping",
        Subject(namespace="ns", pod=pod),
    )


class Fake:
    def __init__(self, name, pods=("p-0",), events=(), fail_discover=None, fail_collect=None, block=None, problems=()):
        self.name = name
        self.requests = 0
        self.pods = pods
        self.events = events
        self.fail_discover = fail_discover
        self.fail_collect = fail_collect
        self.block = block
        self.problems = list(problems)

    def discover(self, query):
        self.requests += 1
        if self.block is not None:
            self.block.wait(10)
        if self.fail_discover:
            raise self.fail_discover
        return Discovery(
            pods=tuple(PodInfo(n, "ns", sources=frozenset({self.name})) for n in self.pods), candidates=("exp-other",)
        )

    def collect(self, scope):
        self.requests += 1
        if self.fail_collect:
            raise self.fail_collect
        return list(self.events)


def test_every_failure_becomes_a_status_and_the_rest_still_answer():
    release = threading.Event()
    collectors = [
        Fake("kubernetes", events=[_event(5), _event(1)]),
        Fake("prometheus", fail_discover=SourceUnreachable("connection refused to http://127.0.0.1:1")),
        Fake("logs", fail_collect=SourceForbidden("403: no read on logs-*")),
        Fake("slow", block=release),
        Fake("buggy", fail_discover=KeyError("secret-looking-text")),
    ]
    try:
        gathered = gather(collectors, QUERY, deadline_s=0.5)
    finally:
        release.set()
    statuses = {s.name: s.status for s in gathered.sources}
    assert statuses == {
        "kubernetes": SourceStatus.OK,
        "prometheus": SourceStatus.UNREACHABLE,
        "logs": SourceStatus.FORBIDDEN,
        "slow": SourceStatus.TIMEOUT,
        "buggy": SourceStatus.FAILED,
    }
    details = {s.name: s.detail for s in gathered.sources}
    assert "secret-looking-text" not in details["buggy"]  # unexpected errors are reported by type only
    assert [e.at.minute for e in gathered.timeline] == [1, 5]  # sorted
    assert [p.name for p in gathered.scope.pods] == ["p-0"]
    assert gathered.candidates == ("exp-other",)


def test_partial_problems_keep_events_and_say_failed():
    collectors = [Fake("logs", events=[_event(2)], problems=["logs.ndjson: line 7: not valid JSON"])]
    gathered = gather(collectors, QUERY)
    (report,) = gathered.sources
    assert report.status is SourceStatus.FAILED
    assert "line 7" in report.detail
    assert len(gathered.timeline) == 1


def test_duplicates_across_sources_collapse():
    same = _event(3, source="kubernetes")
    gathered = gather([Fake("kubernetes", events=[same, same])], QUERY)
    assert len(gathered.timeline) == 1


def test_not_found_collects_nothing_and_not_configured_is_kept():
    fake = Fake("kubernetes", pods=())
    gathered = gather([fake], QUERY, not_configured=[SourceReport("logs", SourceStatus.NOT_CONFIGURED, "no url")])
    assert not gathered.found
    assert fake.requests == 1  # discovery only
    assert [s.status for s in gathered.sources] == [SourceStatus.OK, SourceStatus.NOT_CONFIGURED]


class SlowCollect(Fake):
    def collect(self, scope):
        self.requests += 1
        threading.Event().wait(0.3)  # a real source's collection takes time of its own
        return list(self.events)


def test_a_stalled_discovery_does_not_eat_the_others_collection_time():
    release = threading.Event()
    collectors = [SlowCollect("kubernetes", events=[_event(1)]), Fake("prometheus", block=release)]
    try:
        gathered = gather(collectors, QUERY, deadline_s=1.0)
    finally:
        release.set()
    statuses = {s.name: s.status for s in gathered.sources}
    assert statuses == {"kubernetes": SourceStatus.OK, "prometheus": SourceStatus.TIMEOUT}
    assert len(gathered.timeline) == 1


def test_a_late_discovery_still_collects_for_its_own_pods():
    gate = threading.Event()

    class Late(Fake):
        def discover(self, query):
            gate.wait(0.4)  # answers after the scope was merged without it
            return super().discover(query)

    late = Late("logs", pods=("p-9",), events=[_event(4, pod="p-9")])
    gathered = gather([Fake("kubernetes", events=[_event(1)]), late], QUERY, deadline_s=0.6)
    statuses = {s.name: s.status for s in gathered.sources}
    assert statuses == {"kubernetes": SourceStatus.OK, "logs": SourceStatus.OK}
    assert [e.subject.pod for e in gathered.timeline] == ["p-0", "p-9"]
    assert [p.name for p in gathered.scope.pods] == ["p-0", "p-9"]


def test_a_source_built_in_its_own_thread_reports_its_requests_and_a_failure_to_build():
    from whathappened.errors import SourceError
    from whathappened.sources import Deferred

    built: list[str] = []

    def build_fake() -> Fake:
        built.append(threading.current_thread().name)
        return Fake("prometheus", events=[_event(3)])

    def build_broken() -> Fake:
        raise SourceError("the CA file /nonexistent/ca.pem does not exist")

    deferred = Deferred("prometheus", build_fake)
    assert deferred.requests == 0 and not hasattr(deferred, "detail")  # nothing built, nothing to show yet
    result = gather([Fake("kubernetes"), deferred, Deferred("logs", build_broken)], QUERY, deadline_s=5)
    by_name = {s.name: s for s in result.sources}
    assert built == ["source-prometheus"]  # built once, in the source's own thread
    assert by_name["prometheus"].status == SourceStatus.OK and by_name["prometheus"].requests == 2
    assert by_name["logs"].status == SourceStatus.FAILED and "CA file" in by_name["logs"].detail
    assert [e.source for e in result.timeline] == ["fake"]
