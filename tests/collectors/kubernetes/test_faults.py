"""Each fault the API can throw yields its contract status, with a message that names what was not possible
and never a credential: 401/403 forbidden, 404 namespace, 429 retried after Retry-After within the deadline,
410 on a continue token restarts the list, refused/DNS unreachable, slow timeout."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
import urllib3
from whathappened.collectors.kubernetes.access import Call, transport_error
from whathappened.collectors.kubernetes.api import transport_kind
from whathappened.collectors.kubernetes.collector import KubernetesCollector, build_api_client

from tests.fixtures.kube import TOKEN, KubeSession, write_kubeconfig
from tests.support import Scenario, all_scenarios, free_port
from whathappened.config import ElasticsearchSettings, KubernetesSettings, Settings
from whathappened.errors import SourceError, SourceForbidden, SourceTimeout, SourceUnreachable
from whathappened.gather import gather
from whathappened.model import PodInfo, SourceStatus, Window
from whathappened.scope import Discovery, Query, Scope

SCENARIO = next(s for s in all_scenarios() if s.name == "maintenance-eviction")


@pytest.fixture
def session(kube_double: Any) -> KubeSession:
    return kube_double(SCENARIO)


def collector(kubeconfig: Path, sleeps: list[float] | None = None, **overrides: Any) -> KubernetesCollector:
    api_client, namespace = build_api_client(KubernetesSettings(kubeconfig=str(kubeconfig)))
    sleep = sleeps.append if sleeps is not None else (lambda _: None)
    return KubernetesCollector(api_client, namespace, Settings(**overrides), sleep=sleep)


def query(scenario: Scenario = SCENARIO, namespace: str | None = None) -> Query:
    return Query(scenario.experiment, namespace, Window(scenario.start, scenario.end))


def no_secret(error: BaseException) -> str:
    text = f"{error} {error!r}"
    assert TOKEN not in text
    return str(error)


def test_forbidden_events_names_the_missing_permission(session: KubeSession) -> None:
    session.faults.add(status=403, path="/events", times=-1)
    result = gather([collector(session.kubeconfig)], query(), deadline_s=10)
    report = result.sources[0]
    assert report.status == SourceStatus.FORBIDDEN
    assert "cannot list events in namespace research" in report.detail
    assert TOKEN not in report.detail
    # the newer events API was tried before giving up
    assert any(r.path.startswith("/apis/events.k8s.io/v1/") for r in session.requests)


def test_events_api_fallback_when_only_core_is_forbidden(session: KubeSession) -> None:
    session.faults.add(status=403, path="/api/v1/namespaces/research/events", times=-1)
    c = collector(session.kubeconfig)
    result = gather([c], query(), deadline_s=10)
    assert result.sources[0].status == SourceStatus.OK
    assert "3 events" in c.detail


def test_forbidden_pods(session: KubeSession) -> None:
    session.faults.add(status=403, path="/pods", times=-1)
    with pytest.raises(SourceForbidden) as caught:
        collector(session.kubeconfig).discover(query())
    assert no_secret(caught.value).startswith("cannot list pods in namespace research")


def test_rejected_token_is_forbidden_and_never_shown(session: KubeSession, tmp_path: Path) -> None:
    session.double.token = TOKEN
    wrong = write_kubeconfig(tmp_path / "kubeconfig", session.url, SCENARIO.namespace, token=TOKEN + "-revoked")
    with pytest.raises(SourceForbidden) as caught:
        collector(wrong).discover(query())
    message = no_secret(caught.value)
    assert "401" in message and "cannot list pods" in message
    assert "revoked" not in message
    assert session.requests[0].status == 401
    assert len(collector(session.kubeconfig).discover(query()).pods) == 4  # the right token is let in
    assert session.requests[-1].authorization == f"Bearer {TOKEN}"


def test_throttled_request_is_retried_after_retry_after(session: KubeSession) -> None:
    session.faults.add(status=429, retry_after=2, path="/pods", times=1)
    sleeps: list[float] = []
    c = collector(session.kubeconfig, sleeps)
    discovery = c.discover(query())
    assert len(discovery.pods) == 4
    assert sleeps == [2.0]
    assert [r.status for r in session.requests[:2]] == [429, 200]
    assert c.requests == len(session.requests)


def test_throttled_past_the_deadline_is_a_timeout(session: KubeSession) -> None:
    session.faults.add(status=429, retry_after=120, path="/pods", times=-1)
    result = gather([collector(session.kubeconfig, deadline_s=5)], query(), deadline_s=5)
    assert result.sources[0].status == SourceStatus.TIMEOUT
    assert "429" in result.sources[0].detail


def test_expired_continue_token_restarts_the_list(session: KubeSession) -> None:
    session.faults.add(status=410, on_continue=True, times=1)
    c = collector(session.kubeconfig, kubernetes=KubernetesSettings(page_size=3))
    discovery = c.discover(query())
    assert len(discovery.pods) == 4
    lists = [r for r in session.requests if r.path.endswith("/pods")]
    [expired] = [k for k, r in enumerate(lists) if r.status == 410]
    gone, again = lists[expired], lists[expired + 1]
    assert "continue" in gone.query and "continue" not in again.query and again.status == 200
    assert {k: v for k, v in again.query.items() if k != "continue"} == {
        k: v for k, v in gone.query.items() if k != "continue"
    }  # the same list, asked again from its start


@pytest.mark.parametrize("page_size", [500, 100_000])
def test_every_list_asks_for_pages_of_at_most_500_objects(session: KubeSession, page_size: int) -> None:
    """Pods, events and nodes alike, whatever page size is configured: a LIST never asks the API server for more
    than 500 objects at once (a large page is the server's memory, at once)."""
    c = collector(session.kubeconfig, kubernetes=KubernetesSettings(page_size=page_size))
    discovery = c.discover(query())
    c.collect(Scope(query(), discovery.pods, discovery.nodes))
    lists = [r for r in session.requests if r.method == "GET" and not r.is_log and "limit" in r.query]
    assert {r.path.rsplit("/", 1)[-1] for r in lists} >= {"pods", "events"}
    assert all(0 < int(r.query["limit"]) <= 500 for r in lists)


def test_missing_namespace_is_reported(session: KubeSession) -> None:
    with pytest.raises(SourceError) as caught:
        collector(session.kubeconfig).discover(query(namespace="no-such-namespace"))
    assert caught.value.status == "failed"
    assert str(caught.value) == "namespace no-such-namespace not found"


def test_refused_connection_is_unreachable(tmp_path: Path) -> None:
    closed = write_kubeconfig(tmp_path / "kubeconfig", f"http://127.0.0.1:{free_port()}", "research")
    result = gather([collector(closed)], query(), deadline_s=5)
    assert result.sources[0].status == SourceStatus.UNREACHABLE
    assert "connection refused" in result.sources[0].detail
    assert TOKEN not in result.sources[0].detail


def test_unresolvable_name_is_unreachable() -> None:
    error = urllib3.exceptions.NameResolutionError("api.cluster.invalid", None, socket.gaierror(-2, "Name unknown"))  # type: ignore[arg-type]
    kind = transport_kind(urllib3.exceptions.MaxRetryError(None, "/api", error))  # type: ignore[arg-type]
    mapped = transport_error(kind, Call("list", "pods", "research"), "https://api.cluster.invalid:6443")
    assert isinstance(mapped, SourceUnreachable)
    assert "name not resolved" in str(mapped)


def test_slow_answer_is_a_timeout(session: KubeSession) -> None:
    session.faults.add(delay_s=2.0, path="/events", times=1)
    c = collector(session.kubeconfig, deadline_s=0.8)
    discovery = c.discover(query())
    with pytest.raises(SourceTimeout) as caught:
        c.collect(Scope(query(), discovery.pods, discovery.nodes))
    assert "events" in no_secret(caught.value) or "deadline" in str(caught.value)


def test_server_error_is_a_failure(session: KubeSession) -> None:
    session.faults.add(status=500, path="/nodes", times=-1)
    result = gather([collector(session.kubeconfig)], query(), deadline_s=5)
    assert result.sources[0].status == SourceStatus.FAILED
    assert result.sources[0].detail == "API server answered 500 while trying to list nodes at cluster scope"


def test_no_kubeconfig_is_not_configured(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as caught:
        build_api_client(KubernetesSettings(kubeconfig=str(tmp_path / "absent"), in_cluster=False))
    assert caught.value.status == "not_configured"


def test_unknown_context_fails_clearly(session: KubeSession) -> None:
    with pytest.raises(SourceError) as caught:
        build_api_client(KubernetesSettings(kubeconfig=str(session.kubeconfig), context="nope"))
    assert caught.value.status == "failed"
    assert TOKEN not in str(caught.value)


def test_kubeconfig_path_list_is_merged_as_kubectl_does(session: KubeSession, tmp_path: Path) -> None:
    paths = os.pathsep.join([str(tmp_path / "absent"), str(session.kubeconfig)])
    api_client, namespace = build_api_client(KubernetesSettings(kubeconfig=paths))
    assert namespace == SCENARIO.namespace
    c = KubernetesCollector(api_client, namespace, Settings())
    assert len(c.discover(query()).pods) == 4
    assert c.request_log[0] == "list pods in namespace research: 200"
    assert all(TOKEN not in line for line in c.request_log)


def test_vanished_node_is_asked_for_once(kube_double: Any) -> None:
    scenario = next(s for s in all_scenarios() if s.name == "oom-killed")
    session = kube_double(scenario)
    c = collector(session.kubeconfig)
    found = c.discover(query(scenario))
    ghost = PodInfo("tokenize-redpajama-p17-ghost", scenario.namespace, node="vanished-node")
    scope = Scope(query(scenario), (*found.pods, ghost), found.nodes)
    c.collect(scope)
    c.collect(scope)
    node_gets = [(r.path, r.status) for r in session.requests if r.path.startswith("/api/v1/nodes/")]
    [pod] = found.pods
    assert node_gets == [(f"/api/v1/nodes/{pod.node}", 200), ("/api/v1/nodes/vanished-node", 404)]
    assert c.detail.startswith("1 pods, 3 events, 1 nodes")


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b'{"kind": "EventList", "apiVersion": "v1", "metadata": {}, "items": [{"metadata": {"na', "not JSON"),
        (b"<html><body>502 Bad Gateway</body></html>", "not JSON"),
        (b'{"kind": "Status", "status": "Success"}', "not a list"),
        (b'{"kind": "EventList", "items": {"metadata": {}}}', "not a list"),
    ],
)
def test_garbled_answer_is_a_failure_that_says_what(session: KubeSession, body: bytes, said: str) -> None:
    session.faults.add(body=body, path="/events", times=1)
    result = gather([collector(session.kubeconfig)], query(), deadline_s=10)
    report = result.sources[0]
    assert report.status == SourceStatus.FAILED
    assert report.detail == f"the API server's answer is {said} while trying to list events in namespace research"


BUSY = next(s for s in all_scenarios() if s.name == "config-error")  # ten events in its namespace


def _events_of(kube_double: Any, page_size: int) -> tuple[list[Any], list[Any]]:
    """The scope's events as the collector keeps them, and the LISTs of its namespace's events it sent, when a page
    holds ``page_size`` objects."""
    session = kube_double(BUSY)
    c = collector(session.kubeconfig, kubernetes=KubernetesSettings(page_size=page_size))
    discovery = c.discover(query(BUSY))
    c.collect(Scope(query(BUSY), discovery.pods, discovery.nodes))
    kept = sorted(str(e["metadata"].get("uid") or e["metadata"]["name"]) for e in c._events)
    lists = [r for r in session.requests if r.path.endswith(f"/namespaces/{BUSY.namespace}/events")]
    return kept, lists


def test_a_busy_namespace_is_asked_for_the_experiment_s_objects_by_name(kube_double: Any) -> None:
    """More events than a page and an experiment that names few objects: one page, then a field-selected LIST per
    object its events can be about, never the namespace's every page; the same events as the whole list."""
    whole, [_whole_list] = _events_of(kube_double, 500)  # one page holds the namespace
    kept, lists = _events_of(kube_double, 2)
    assert kept == whole and whole
    assert "fieldSelector" not in lists[0].query and len(lists) > 1
    assert all(r.query.get("fieldSelector", "").startswith("involvedObject.name=") for r in lists[1:])
    assert not any("continue" in r.query for r in lists if "fieldSelector" not in r.query)  # one page of it, no more


def test_an_experiment_of_many_objects_pages_through_its_namespace(
    kube_double: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the limit of names, asking by name would cost more than the pages: the namespace is paged on."""
    from whathappened.collectors.kubernetes import events

    whole, _ = _events_of(kube_double, 500)
    monkeypatch.setattr(events, "NAMED_EVENT_LISTS", 0)
    kept, lists = _events_of(kube_double, 2)
    assert kept == whole
    assert not any("fieldSelector" in r.query for r in lists)
    assert sum("continue" in r.query for r in lists) == len(lists) - 1 >= 4  # ten events, two a page


ARCHIVE = ElasticsearchSettings(url="http://127.0.0.1:9")  # configured: the log source reads an event archive


def test_with_an_event_archive_a_large_experiment_leaves_the_further_pages_to_it(
    kube_double: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The archive's search asks by name at any size: the API's further pages are left, and read only on demand
    (no archived event found), the same events then as the whole list."""
    from whathappened.collectors.kubernetes import events

    whole, _ = _events_of(kube_double, 500)
    monkeypatch.setattr(events, "NAMED_EVENT_LISTS", 0)
    session = kube_double(BUSY)
    c = collector(session.kubeconfig, kubernetes=KubernetesSettings(page_size=2), elasticsearch=ARCHIVE)
    discovery = c.discover(query(BUSY))
    scope = Scope(query(BUSY), discovery.pods, discovery.nodes)
    c.collect(scope)
    lists = [r for r in session.requests if r.path.endswith(f"/namespaces/{BUSY.namespace}/events")]
    assert len(lists) == 1 and "continue" not in lists[0].query and c.left_to_archive
    assert f"further event pages of {BUSY.namespace} left to the event archive" in c.detail
    first = len(c._events)
    more = c.collect_left(scope)
    kept = sorted(str(e["metadata"].get("uid") or e["metadata"]["name"]) for e in c._events)
    assert kept == whole and len(whole) > first and len(more) == len(whole) - first
    assert not c.left_to_archive and "left to the event archive" not in c.detail
    assert f", {len(whole)} events," in c.detail


class _Archive:
    """A source that read an event archive and found ``archived`` events of the experiment."""

    name = "logs"
    requests = 0

    def __init__(self, archived: int) -> None:
        self.archived_events = archived

    def discover(self, q: Query) -> Discovery:
        return Discovery()

    def collect(self, scope: Scope) -> list[Any]:
        return []


@pytest.mark.parametrize("archived", [0, 3])
def test_the_left_pages_are_read_only_when_the_archive_found_nothing(
    kube_double: Any, monkeypatch: pytest.MonkeyPatch, archived: int
) -> None:
    from whathappened.collectors.kubernetes import events

    monkeypatch.setattr(events, "NAMED_EVENT_LISTS", 0)
    session = kube_double(BUSY)
    whole = gather([collector(session.kubeconfig)], query(BUSY), deadline_s=10).timeline
    session = kube_double(BUSY)
    c = collector(session.kubeconfig, kubernetes=KubernetesSettings(page_size=2), elasticsearch=ARCHIVE)
    result = gather([c, _Archive(archived)], query(BUSY), deadline_s=10)
    lists = [r for r in session.requests if r.path.endswith(f"/namespaces/{BUSY.namespace}/events")]
    if archived:
        assert len(result.timeline) < len(whole) and len(lists) == 1 and c.left_to_archive
    else:
        assert result.timeline == whole and len(lists) >= 5 and not c.left_to_archive
    assert result.sources[0].status == SourceStatus.OK


class _Slow:
    """A source that reads no archive and answers only when released."""

    name = "prometheus"
    requests = 0

    def __init__(self) -> None:
        self.release = threading.Event()

    def discover(self, q: Query) -> Discovery:
        return Discovery()

    def collect(self, scope: Scope) -> list[Any]:
        self.release.wait(10)
        return []


def test_the_left_pages_do_not_wait_for_a_source_without_an_archive(
    kube_double: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from whathappened.collectors.kubernetes import events

    monkeypatch.setattr(events, "NAMED_EVENT_LISTS", 0)
    session = kube_double(BUSY)
    c = collector(session.kubeconfig, kubernetes=KubernetesSettings(page_size=2), elasticsearch=ARCHIVE)
    slow = _Slow()
    done: list[Any] = []
    run = threading.Thread(target=lambda: done.append(gather([c, _Archive(0), slow], query(BUSY), deadline_s=20)))
    run.start()
    read = False
    for _ in range(200):  # the left pages are read while the slow source still holds its answer
        lists = [r for r in session.requests if r.path.endswith(f"/namespaces/{BUSY.namespace}/events")]
        if len(lists) >= 5 and not c.left_to_archive and not done:
            read = True
            break
        threading.Event().wait(0.05)
    slow.release.set()
    run.join(20)
    assert read and done and done[0].sources[0].status == SourceStatus.OK
