"""The double's writable mode is faithful: the real kubectl annotates a training job and creates an Event through
it, reads both back, and ``kubectl describe`` finds the Event on its job as it does on a real cluster (by the
involved object's kind, name, namespace and UID). What a real server refuses, the double refuses."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.doubles.kube import KubeDouble, Store
from tests.doubles.kube.writes import merge
from tests.fixtures.kube import write_kubeconfig
from tests.support import all_scenarios, require_binary

SCENARIO = next(s for s in all_scenarios() if s.name == "maintenance-eviction")
JOB = "phi-3-medium-pt-r5"  # the PyTorchJob that owns the scenario's pods


@pytest.fixture
def double() -> Iterator[KubeDouble]:
    with KubeDouble(Store.from_scenario(SCENARIO.path), writable=True) as started:
        yield started


def kubectl(double: KubeDouble, tmp_path: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    config = write_kubeconfig(tmp_path / "kubeconfig", double.url, SCENARIO.namespace)
    env = {"KUBECONFIG": str(config), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    command = [require_binary("kubectl"), "--cache-dir", str(tmp_path / "cache"), "--request-timeout", "10s", *args]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60, check=False)
    assert (done.returncode == 0) == ok, done.stderr
    return done


def test_kubectl_annotates_a_training_job_and_reads_it_back(double: KubeDouble, tmp_path: Path) -> None:
    uid = json.loads(kubectl(double, tmp_path, "get", "pytorchjob", JOB, "-o", "json").stdout)["metadata"]["uid"]
    kubectl(double, tmp_path, "annotate", "pytorchjob", JOB, 'whathappened.io/verdict={"cause":"x"}')
    got = json.loads(kubectl(double, tmp_path, "get", "pytorchjobs.kubeflow.org", JOB, "-o", "json").stdout)
    assert got["metadata"]["annotations"] == {"whathappened.io/verdict": '{"cause":"x"}'}
    assert got["metadata"]["uid"] == uid and int(got["metadata"]["resourceVersion"]) > 1000
    kubectl(double, tmp_path, "annotate", "pytorchjob", JOB, "whathappened.io/verdict-")  # null removes it
    got = json.loads(kubectl(double, tmp_path, "get", "pytorchjob", JOB, "-o", "json").stdout)
    assert not got["metadata"].get("annotations")
    assert [(r.method, r.status) for r in double.requests if r.method != "GET"] == [("PATCH", 200), ("PATCH", 200)]


def test_an_event_created_with_kubectl_is_listed_and_described_on_its_job(double: KubeDouble, tmp_path: Path) -> None:
    job = json.loads(kubectl(double, tmp_path, "get", "pytorchjob", JOB, "-o", "json").stdout)
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"{JOB}.", "namespace": SCENARIO.namespace},
        "involvedObject": {k: job["metadata"][k] for k in ("name", "namespace", "uid")}
        | {"apiVersion": job["apiVersion"], "kind": job["kind"]},
        "reason": "WhatHappened",
        "type": "Warning",
        "message": "the node was drained for host maintenance",
        "firstTimestamp": "2026-03-02T10:00:00Z",
        "lastTimestamp": "2026-03-02T10:00:00Z",
        "count": 1,
    }
    (tmp_path / "event.json").write_text(json.dumps(event))
    # --validate=false: kubectl validates against the server's OpenAPI document, which the double does not serve
    created = kubectl(
        double, tmp_path, "create", "--validate=false", "-f", str(tmp_path / "event.json"), "-o", "name"
    ).stdout.strip()
    assert created.startswith(f"event/{JOB}.") and len(created) == len(f"event/{JOB}.") + 5
    listed = kubectl(double, tmp_path, "get", "events", "--field-selector", "reason=WhatHappened", "-o", "json")
    assert [e["message"] for e in json.loads(listed.stdout)["items"]] == [event["message"]]
    described = kubectl(double, tmp_path, "describe", "pytorchjob", JOB).stdout
    assert "WhatHappened" in described and "the node was drained for host maintenance" in described


@pytest.mark.parametrize(
    ("method", "path", "content_type", "body", "status"),
    [
        # an Event about an object in another namespace
        ("POST", "/api/v1/namespaces/{ns}/events", "application/json",
         {"metadata": {"generateName": "x."}, "involvedObject": {"namespace": "elsewhere"}}, 422),
        ("POST", "/api/v1/namespaces/{ns}/events", "application/json", {"metadata": {}}, 422),  # no name
        ("POST", "/api/v1/namespaces/{ns}/events", "application/json", [1, 2], 400),  # not an object
        # custom resources take no strategic merge patch
        ("PATCH", f"/apis/kubeflow.org/v1/namespaces/{{ns}}/pytorchjobs/{JOB}",
         "application/strategic-merge-patch+json", {"metadata": {"annotations": {"a": "b"}}}, 415),
        ("PATCH", "/apis/kubeflow.org/v1/namespaces/{ns}/pytorchjobs/gone", "application/merge-patch+json", {}, 404),
        ("PATCH", "/api/v1/namespaces/{ns}/pods/x", "application/merge-patch+json", {}, 405),  # only owners
        ("DELETE", f"/apis/kubeflow.org/v1/namespaces/{{ns}}/pytorchjobs/{JOB}", "application/json", {}, 405),
    ],
)  # fmt: skip
def test_what_a_server_refuses_is_refused(
    double: KubeDouble, method: str, path: str, content_type: str, body: Any, status: int
) -> None:
    url = double.url + path.format(ns=SCENARIO.namespace)
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": content_type}, method=method)
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == status
    assert json.loads(refused.value.read())["kind"] == "Status"
    assert len(double.store.objects("events")) == len(Store.from_scenario(SCENARIO.path).events)


def test_a_jobset_is_served_from_its_pods_labels() -> None:
    """A real JobSet's pods are owned by Jobs carrying the JobSet's name and UID: the double holds both."""
    pod = {
        "metadata": {
            "name": "train-workers-0-0-abcde",
            "namespace": "research",
            "labels": {"jobset.sigs.k8s.io/jobset-name": "train", "jobset.sigs.k8s.io/jobset-uid": "u-js"},
            "ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "Job", "name": "train-workers-0", "uid": "u-job", "controller": True}
            ],
        }
    }
    store = Store.build([pod], [], [])
    [jobset] = store.objects("jobsets.jobset.x-k8s.io")
    [job] = store.objects("jobs.batch")
    assert (jobset["metadata"]["name"], jobset["metadata"]["uid"]) == ("train", "u-js")
    assert job["metadata"]["ownerReferences"][0]["uid"] == "u-js"


def test_merge_patch_is_rfc_7386() -> None:
    # the RFC's appendix A examples
    assert merge({"a": "b"}, {"a": "c"}) == {"a": "c"}
    assert merge({"a": "b"}, {"b": "c"}) == {"a": "b", "b": "c"}
    assert merge({"a": "b"}, {"a": None}) == {}
    assert merge({"a": ["b"]}, {"a": "c"}) == {"a": "c"}
    assert merge({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}) == {"a": {"b": "d"}}
    assert merge({"a": [{"b": "c"}]}, {"a": [1]}) == {"a": [1]}
    assert merge({"e": None}, {"a": 1}) == {"e": None, "a": 1}
    assert merge("c", {"a": {"bb": {"ccc": None}}}) == {"a": {"bb": {}}}
