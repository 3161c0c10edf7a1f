"""The pod watch for ``whathappened watch`` against the API double's WATCH: one LIST, then one stream resumed from
the last version it saw (an object's or a bookmark's) whenever it ends; a LIST again only on 410; the pods without
an experiment label key left out. A thread consumes the changes; the test drives the double and reads them."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from whathappened.collectors.kubernetes.api import KubeApi, build_api_client
from whathappened.collectors.kubernetes.pod_watch import PodChange, PodWatch

from tests.doubles.kube import KubeDouble, Store
from tests.fixtures.kube import write_kubeconfig
from tests.support import all_scenarios
from whathappened.config import KubernetesSettings
from whathappened.scope import DEFAULT_LABEL_KEYS

SCENARIO = next(s for s in all_scenarios() if s.name == "maintenance-eviction")
NAMESPACE = SCENARIO.namespace
PODS = ["phi-3-medium-pt-r5-master-0", *(f"phi-3-medium-pt-r5-worker-{i}" for i in range(3))]


class Watching:
    """A PodWatch consumed by a thread into a queue."""

    def __init__(self, double: KubeDouble, tmp_path: Path) -> None:
        config = write_kubeconfig(tmp_path / "kubeconfig", double.url, NAMESPACE, token="unused")
        api_client, _ = build_api_client(KubernetesSettings(kubeconfig=str(config)))
        self.sleeps: list[float] = []
        self.watch = PodWatch(KubeApi(api_client), NAMESPACE, DEFAULT_LABEL_KEYS, self.sleeps.append)
        self.seen: queue.Queue[PodChange] = queue.Queue()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for change in self.watch.changes():
            self.seen.put(change)

    def next(self, count: int = 1) -> list[tuple[str, str, str]]:
        """The next ``count`` changes as (type, pod, phase), waiting at most 10 s for each."""
        out = []
        for _ in range(count):
            change = self.seen.get(timeout=10)
            out.append((change.type, change.pod["metadata"]["name"], change.pod.get("status", {}).get("phase")))
        return out

    def stop(self) -> None:
        self.watch.stop()


@pytest.fixture
def double() -> Iterator[KubeDouble]:
    with KubeDouble(Store.from_scenario(SCENARIO.path)) as started:
        yield started


@pytest.fixture
def watching(double: KubeDouble, tmp_path: Path) -> Iterator[Watching]:
    started = Watching(double, tmp_path)
    yield started
    started.stop()
    double.drop_watches()


def phase(double: KubeDouble, name: str, value: str, labelled: bool = True) -> dict[str, Any]:
    """The stored pod in that phase; ``labelled`` False: a pod beside it that carries no experiment label key."""
    pod = double.store.in_phase(name, value)
    return pod if labelled else {**pod, "metadata": {**pod["metadata"], "labels": {}, "name": f"{name}-sidecar-job"}}


def watch_requests(double: KubeDouble) -> list[Any]:
    return [r for r in double.requests if r.query.get("watch") in ("true", "1")]


def test_one_list_then_every_change_from_its_version(double: KubeDouble, watching: Watching) -> None:
    assert [(t, n) for t, n, _ in watching.next(4)] == [("ADDED", name) for name in PODS]  # the LIST
    double.change("MODIFIED", "pods", phase(double, PODS[1], "Unknown"))
    double.change("ADDED", "pods", phase(double, PODS[2], "Running", labelled=False))  # no experiment label: not ours
    double.change("MODIFIED", "pods", phase(double, PODS[3], "Failed"))
    assert watching.next(2) == [("MODIFIED", PODS[1], "Unknown"), ("MODIFIED", PODS[3], "Failed")]
    assert (watching.watch.lists, watching.watch.watches, watching.seen.empty()) == (1, 1, True)
    [opened] = watch_requests(double)
    assert opened.query["allowWatchBookmarks"] == "true" and opened.query["resourceVersion"]


def test_a_stream_that_ends_is_opened_again_from_the_last_version_without_a_list(
    double: KubeDouble, watching: Watching
) -> None:
    watching.next(4)
    double.change("MODIFIED", "pods", phase(double, PODS[1], "Unknown"))
    watching.next(1)
    seen = double.store.resource_version
    double.drop_watches()
    assert double.changes.wait_idle() and double.changes.wait_watching(1)  # ended, and opened again
    double.change("MODIFIED", "pods", phase(double, PODS[2], "Failed"))
    assert watching.next(1) == [("MODIFIED", PODS[2], "Failed")]
    first, again = watch_requests(double)
    assert again.query["resourceVersion"] == seen != first.query["resourceVersion"]
    assert (watching.watch.lists, watching.watch.watches) == (1, 2)


def test_a_bookmark_moves_the_version_past_changes_the_watch_does_not_see(
    double: KubeDouble, watching: Watching
) -> None:
    watching.next(4)
    assert double.changes.wait_watching(1)
    [event] = double.store.events[:1]
    double.change("MODIFIED", "events", {**event, "count": 99})  # a newer version that no pod carries
    double.bookmark()
    double.drop_watches()
    assert double.changes.wait_idle() and double.changes.wait_watching(1)
    _, again = watch_requests(double)
    assert again.query["resourceVersion"] == double.store.resource_version  # resumed from the bookmark


def test_410_lists_once_again_and_the_pods_come_back_as_they_are(double: KubeDouble, watching: Watching) -> None:
    watching.next(4)
    assert double.changes.wait_watching(1)
    double.drop_watches()
    assert double.changes.wait_idle()
    double.change("MODIFIED", "pods", phase(double, PODS[0], "Failed"))
    double.compact()  # the version the watch would resume from is gone
    again = watching.next(4)
    assert ("ADDED", PODS[0], "Failed") in again and {n for _, n, _ in again} == set(PODS)
    assert (watching.watch.lists, watching.watch.expired) == (2, 1)


def test_429_waits_as_the_server_says_and_watches_again(double: KubeDouble, watching: Watching) -> None:
    watching.next(4)
    assert double.changes.wait_watching(1)
    double.faults.add(status=429, retry_after=7, path="/pods", times=1)
    double.drop_watches()
    assert double.changes.wait_idle() and double.changes.wait_watching(1)
    assert watching.watch.lists == 1 and watching.sleeps == [7.0]
