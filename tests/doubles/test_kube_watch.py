"""The API double's WATCH is faithful: the real ``kubectl get pods --watch`` and the official Python client's
``watch.Watch`` follow its streams: the objects as they are, then each change; bookmarks to resume from; 410 for
a resourceVersion older than the last compaction; streams dropped mid-way. Each test has its own double, because
these tests change the store."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException

from tests.doubles.kube import KubeDouble, Store
from tests.fixtures.kube import write_kubeconfig
from tests.support import all_scenarios, require_binary

SCENARIO = next(s for s in all_scenarios() if s.name == "maintenance-eviction")
NAMESPACE = SCENARIO.namespace
PODS = ["phi-3-medium-pt-r5-master-0", *(f"phi-3-medium-pt-r5-worker-{i}" for i in range(3))]


@pytest.fixture
def double() -> Iterator[KubeDouble]:
    with KubeDouble(Store.from_scenario(SCENARIO.path)) as started:
        yield started


def api(double: KubeDouble) -> client.CoreV1Api:
    return client.CoreV1Api(client.ApiClient(client.Configuration(host=double.url)))


def failed(double: KubeDouble, name: str) -> dict[str, Any]:
    """The stored pod, its phase now Unknown (its node stopped reporting): a change every watcher must see."""
    return double.store.in_phase(name, "Unknown")


def events(stream: Iterator[dict[str, Any]], count: int) -> list[tuple[str, str, str]]:
    """The next ``count`` events as (type, name, resourceVersion)."""
    out = []
    for event in stream:
        meta = event["raw_object"]["metadata"]
        out.append((event["type"], meta.get("name", ""), meta.get("resourceVersion", "")))
        if len(out) == count:
            break
    return out


def test_a_watch_sends_the_objects_as_they_are_then_each_change(double: KubeDouble) -> None:
    stream = watch.Watch().stream(api(double).list_namespaced_pod, NAMESPACE, _request_timeout=30)
    assert [(t, n) for t, n, _ in events(stream, 4)] == [("ADDED", name) for name in PODS]
    double.change("MODIFIED", "pods", failed(double, PODS[2]))
    [(kind, name, version)] = events(stream, 1)
    assert (kind, name) == ("MODIFIED", PODS[2]) and int(version) == int(double.store.resource_version)
    double.change("DELETED", "pods", failed(double, PODS[2]))
    assert [(t, n) for t, n, _ in events(stream, 1)] == [("DELETED", PODS[2])]
    stream.close()


def test_a_label_selector_keeps_other_pods_changes_out(double: KubeDouble) -> None:
    stream = watch.Watch().stream(
        api(double).list_namespaced_pod,
        NAMESPACE,
        label_selector="training.kubeflow.org/replica-type=worker",
        resource_version=double.store.resource_version,
        _request_timeout=30,
    )
    double.change("MODIFIED", "pods", failed(double, PODS[0]))  # the master: not selected
    double.change("MODIFIED", "pods", failed(double, PODS[1]))
    assert [(t, n) for t, n, _ in events(stream, 1)] == [("MODIFIED", PODS[1])]
    stream.close()


def test_a_bookmark_is_a_resource_version_to_resume_from(double: KubeDouble) -> None:
    core = api(double)
    stream = watch.Watch().stream(
        core.list_namespaced_pod,
        NAMESPACE,
        resource_version=double.store.resource_version,
        allow_watch_bookmarks=True,
        _request_timeout=30,
    )
    double.change("MODIFIED", "pods", failed(double, PODS[1]))
    assert [t for t, _, _ in events(stream, 1)] == ["MODIFIED"]
    assert double.changes.wait_watching(1)
    double.bookmark()
    [(kind, _, mark)] = events(stream, 1)
    assert kind == "BOOKMARK" and mark == double.store.resource_version
    stream.close()
    double.change("MODIFIED", "pods", failed(double, PODS[3]))
    resumed = watch.Watch().stream(core.list_namespaced_pod, NAMESPACE, resource_version=mark, _request_timeout=30)
    assert [(t, n) for t, n, _ in events(resumed, 1)] == [("MODIFIED", PODS[3])]  # only what came after the mark
    resumed.close()


def test_a_resource_version_older_than_the_compaction_is_410(double: KubeDouble) -> None:
    old = double.store.resource_version
    double.change("MODIFIED", "pods", failed(double, PODS[1]))
    double.compact()
    with pytest.raises(ApiException) as gone:
        events(watch.Watch().stream(api(double).list_namespaced_pod, NAMESPACE, resource_version=old), 1)
    assert gone.value.status == 410
    listed = api(double).list_namespaced_pod(NAMESPACE, _preload_content=False)
    assert b'"resourceVersion": "%s"' % double.store.resource_version.encode() in listed.data  # list again, from now


def test_a_dropped_watch_is_resumed_from_its_last_resource_version_and_misses_nothing(double: KubeDouble) -> None:
    stream = watch.Watch().stream(
        api(double).list_namespaced_pod,
        NAMESPACE,
        resource_version=double.store.resource_version,
        _request_timeout=30,
    )
    double.change("MODIFIED", "pods", failed(double, PODS[1]))
    [(_, _, seen)] = events(stream, 1)
    assert double.changes.wait_watching(1)
    double.drop_watches()  # the stream ends; the client watches again from what it saw last
    assert double.changes.wait_idle()
    double.change("MODIFIED", "pods", failed(double, PODS[3]))
    assert [(t, n) for t, n, _ in events(stream, 1)] == [("MODIFIED", PODS[3])]
    stream.close()
    assert double.changes.opened == 2
    first, again = [r for r in double.requests if r.query.get("watch") in ("true", "1")]
    assert again.query.get("resourceVersion") == seen != first.query.get("resourceVersion")


def test_kubectl_get_pods_watch_prints_each_change(double: KubeDouble, tmp_path: Path) -> None:
    config = write_kubeconfig(tmp_path / "kubeconfig", double.url, NAMESPACE, token="unused")
    env = {"KUBECONFIG": str(config), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    columns = "custom-columns=EVENT:.type,NAME:.object.metadata.name,PHASE:.object.status.phase"
    command = [require_binary("kubectl"), "get", "pods", "--watch", "--output-watch-events", "-o", columns]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as kubectl:
        try:
            assert kubectl.stdout is not None
            header = kubectl.stdout.readline().split()
            assert header == ["EVENT", "NAME", "PHASE"]
            first = [kubectl.stdout.readline().split() for _ in PODS]
            assert [(row[0], row[1]) for row in first] == [("ADDED", name) for name in PODS]
            assert double.changes.wait_watching(1)  # kubectl listed, then opened its watch
            double.change("MODIFIED", "pods", failed(double, PODS[2]))
            assert kubectl.stdout.readline().split() == ["MODIFIED", PODS[2], "Unknown"]
        finally:
            kubectl.kill()
    watches = [r for r in double.requests if r.query.get("watch") in ("true", "1")]
    assert watches and watches[0].query.get("resourceVersion")  # it watched from its list, not from scratch
