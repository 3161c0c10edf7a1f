"""The Kubernetes API test double is faithful: the real kubectl and the official Python client drive it.

kubectl (the machine's, talking to the double through a kubeconfig) lists by label, lists events by field,
describes a pod and reads a previous container's log; the Python client checks selector operators,
pagination, both event APIs and the read-only refusal of writes (WATCH: test_kube_watch.py).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from tests.doubles.kube import KubeDouble, Store
from tests.fixtures.kube import TOKEN, KubeSession
from tests.support import Scenario, all_scenarios, require_binary

SCENARIOS = {s.name: s for s in all_scenarios()}


def kubectl(session: KubeSession, tmp_path: Path, *args: str) -> str:
    binary = require_binary("kubectl")
    env = {"KUBECONFIG": str(session.kubeconfig), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [binary, "--cache-dir", str(tmp_path / "cache"), "--request-timeout", "10s", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


# The project's own incidents (synth/stories_core.py)
PODS = ["phi-3-medium-pt-r5-master-0", *(f"phi-3-medium-pt-r5-worker-{i}" for i in range(3))]
MAINTENANCE_NODE = "aks-h100pool-23098820-vmss000003"
OOM_POD = "tokenize-redpajama-p17-7h42f"


@pytest.fixture
def oom(kube_double: Any) -> KubeSession:
    return kube_double(SCENARIOS["oom-killed"])


@pytest.fixture
def maintenance(kube_double: Any) -> KubeSession:
    return kube_double(SCENARIOS["maintenance-eviction"])


def test_kubectl_get_by_label(maintenance: KubeSession, tmp_path: Path) -> None:
    names = kubectl(
        maintenance, tmp_path, "get", "pods", "-l", "training.kubeflow.org/job-name=phi-3-medium-pt-r5", "-o", "name"
    )
    assert names.split() == [f"pod/{name}" for name in PODS]
    one = kubectl(
        maintenance, tmp_path, "get", "pods", "-l", "training.kubeflow.org/replica-index in (2)", "-o", "name"
    )
    assert one.split() == ["pod/phi-3-medium-pt-r5-worker-2"]
    request = next(r for r in maintenance.requests if r.path == "/api/v1/namespaces/research/pods")
    assert request.query["labelSelector"] == "training.kubeflow.org/job-name=phi-3-medium-pt-r5"
    assert request.method == "GET"


def test_kubectl_get_events_by_field(maintenance: KubeSession, tmp_path: Path) -> None:
    out = kubectl(
        maintenance, tmp_path, "get", "events", "-n", "default", "--field-selector",
        "involvedObject.kind=Node,reason=RebootScheduled", "-o", "json",
    )  # fmt: skip
    events = json.loads(out)["items"]
    assert [e["message"] for e in events] == ["Reboot Scheduled for Fri, 13 Nov 2026 09:15:00 GMT"]


def test_kubectl_describe_pod_shows_state_and_events(oom: KubeSession, tmp_path: Path) -> None:
    out = kubectl(oom, tmp_path, "describe", "pod", OOM_POD)
    assert "Reason:       OOMKilled" in out
    assert "Restart Count:  2" in out
    assert "Back-off restarting failed container main" in out
    search = next(r for r in oom.requests if "involvedObject.uid" in r.query.get("fieldSelector", ""))
    assert f"involvedObject.name={OOM_POD}" in search.query["fieldSelector"]


def test_kubectl_logs_previous(oom: KubeSession, tmp_path: Path) -> None:
    out = kubectl(oom, tmp_path, "logs", OOM_POD, "--previous", "--timestamps")
    # the run the kernel killed at 07:21 (the current one was killed at 07:44)
    assert out.splitlines() == ["2026-11-16T07:18:00.000000000Z tokenized 114,000,000 documents; buffering shard batch"]
    log = next(r for r in oom.requests if r.path.endswith("/log"))
    assert log.query["previous"] == "true"


def test_kubectl_makes_only_reads(oom: KubeSession, tmp_path: Path) -> None:
    kubectl(oom, tmp_path, "get", "nodes", "-o", "name")
    assert {r.method for r in oom.requests} == {"GET"}


def api(session: KubeSession) -> client.CoreV1Api:
    cfg = client.Configuration(
        host=session.url, api_key={"authorization": TOKEN}, api_key_prefix={"authorization": "Bearer"}
    )
    return client.CoreV1Api(client.ApiClient(cfg))


def raw(response: Any) -> Any:
    """Raw JSON: recorded objects (like many real ones) leave out fields the typed models insist on."""
    return json.loads(response.data)


def names(listing: Any) -> list[str]:
    return [item["metadata"]["name"] for item in listing["items"]]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        # PODS: master-0 (index 0), worker-0 (index 0), worker-1 (index 1), worker-2 (index 2)
        ("training.kubeflow.org/replica-index=1", [2]),
        ("training.kubeflow.org/replica-index==1", [2]),
        ("training.kubeflow.org/replica-index!=1", [0, 1, 3]),
        ("training.kubeflow.org/replica-index in (0,2)", [0, 1, 3]),
        ("training.kubeflow.org/replica-index notin (0,2)", [2]),
        ("training.kubeflow.org/replica-type", [0, 1, 2, 3]),
        ("!training.kubeflow.org/replica-type", []),
        ("training.kubeflow.org/replica-type=worker,training.kubeflow.org/replica-index in (0)", [1]),
        ("training.kubeflow.org/replica-type!=worker", [0]),
    ],
)
def test_label_selector_operators(maintenance: KubeSession, selector: str, expected: list[int]) -> None:
    found = names(
        raw(api(maintenance).list_namespaced_pod("research", label_selector=selector, _preload_content=False))
    )
    assert found == [PODS[i] for i in expected]


def test_field_selectors(maintenance: KubeSession) -> None:
    core = api(maintenance)
    node = MAINTENANCE_NODE
    on_node = core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node}", _preload_content=False)
    assert names(raw(on_node)) == ["phi-3-medium-pt-r5-worker-2"]
    cordoned = core.list_node(field_selector="spec.unschedulable=true", _preload_content=False)
    assert names(raw(cordoned)) == [node]
    with pytest.raises(client.ApiException) as caught:
        core.list_namespaced_pod("research", field_selector="spec.color=blue", _preload_content=False)
    assert caught.value.status == 400


def test_pagination_is_complete_and_ordered(maintenance: KubeSession) -> None:
    core = api(maintenance)
    seen: list[str] = []
    token, pages = None, 0
    while True:
        page = raw(core.list_node(limit=3, _continue=token, _preload_content=False))
        seen += names(page)
        pages += 1
        token = page["metadata"].get("continue")
        if not token:
            break
        assert page["metadata"]["remainingItemCount"] == 4 - len(seen)
    everything = raw(core.list_node(_preload_content=False))
    assert (pages, seen) == (2, names(everything))
    assert everything["metadata"]["resourceVersion"]


def test_both_event_apis_serve_the_same_objects(maintenance: KubeSession) -> None:
    core = raw(api(maintenance).list_namespaced_event("default", _preload_content=False))["items"]
    events_api = client.EventsV1Api(api(maintenance).api_client)
    newer = raw(
        events_api.list_namespaced_event("default", field_selector="regarding.kind=Node", _preload_content=False)
    )
    newer_items = newer["items"]
    assert newer["apiVersion"] == "events.k8s.io/v1"
    assert [e["metadata"]["uid"] for e in core] == [e["metadata"]["uid"] for e in newer_items]
    assert [e["message"] for e in core] == [e["note"] for e in newer_items]
    assert [e["lastTimestamp"] for e in core] == [e["deprecatedLastTimestamp"] for e in newer_items]


def test_writes_are_refused_and_recorded(maintenance: KubeSession) -> None:
    with pytest.raises(client.ApiException) as caught:
        api(maintenance).delete_namespaced_pod(PODS[0], "research")
    assert caught.value.status == 405
    assert maintenance.requests[-1].method == "DELETE"
    assert len(raw(api(maintenance).list_namespaced_pod("research", _preload_content=False))["items"]) == 4


def test_gets_and_not_found(maintenance: KubeSession) -> None:
    core = api(maintenance)
    assert raw(core.read_node(MAINTENANCE_NODE, _preload_content=False))["spec"]["unschedulable"]
    assert raw(core.read_namespace("research", _preload_content=False))["status"]["phase"] == "Active"
    with pytest.raises(client.ApiException) as caught:
        core.read_namespaced_pod("gone", "research", _preload_content=False)
    assert caught.value.status == 404


def test_metadata_only_lists(maintenance: KubeSession) -> None:
    accept = {"Accept": "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"}
    listing = raw(api(maintenance).list_namespaced_pod("research", _headers=accept, _preload_content=False))
    assert listing["kind"] == "PartialObjectMetadataList"
    assert {tuple(item) for item in listing["items"]} == {("kind", "apiVersion", "metadata")}


def test_store_serves_events_k8s_io_shaped_input(tmp_path: Path) -> None:
    scenario: Scenario = SCENARIOS["maintenance-eviction"]
    core_events = json.loads((scenario.path / "kubernetes" / "events.json").read_text())["items"]
    from tests.doubles.kube.store import to_core_event, to_events_v1

    newer = [to_events_v1(e) for e in core_events]
    assert [to_core_event(e)["involvedObject"] for e in newer] == [e["involvedObject"] for e in core_events]
    with KubeDouble(Store.build([], newer, [])) as double:
        cfg = client.Configuration(host=double.url)
        listed = raw(client.CoreV1Api(client.ApiClient(cfg)).list_event_for_all_namespaces(_preload_content=False))
    assert sorted(e["reason"] for e in listed["items"]) == sorted(e["reason"] for e in core_events)


def test_kubectl_prints_server_side_tables(oom: KubeSession, tmp_path: Path) -> None:
    rows = [line.split() for line in kubectl(oom, tmp_path, "get", "pods").splitlines()]
    assert rows[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert rows[1][:4] == [OOM_POD, "0/1", "OOMKilled", "2"]
    events = kubectl(oom, tmp_path, "get", "events", "-n", "default")
    assert "OOMKilling" in events and "node/cpu-heavy-r07-n01" in events
    accept = next(r for r in oom.requests if r.path == "/api/v1/namespaces/data/pods")
    assert accept.status == 200


def test_lists_are_served_as_json_dumps_would_write_them(maintenance: KubeSession) -> None:
    """The double serializes each object once and reuses the bytes (speed only): the answer must not change."""
    from tests.doubles.kube.api import Route, encode_list, list_objects

    store = maintenance.double.store
    for route, params in (
        (Route("", "events", "research", None), {"limit": "2"}),
        (Route("events.k8s.io", "events", "default", None), {"fieldSelector": "regarding.kind=Node"}),
        (Route("", "nodes", None, None), {}),
    ):
        listing = list_objects(store, route, params)
        assert listing["items"]
        assert encode_list(listing, store.encoded) == json.dumps(listing).encode()
        assert encode_list(listing, store.encoded) == encode_list(listing, store.encoded)  # served from the cache
    served = api(maintenance).list_namespaced_event("research", _preload_content=False).data
    assert served == json.dumps(list_objects(store, Route("", "events", "research", None), {})).encode()
