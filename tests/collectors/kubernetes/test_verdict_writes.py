"""The watch's opt-in writes through the real Kubernetes client against the writable API double: the Event on the
training job and the verdict annotation, retried with backoff when the server is busy or failing, counted as failed
when it refuses, on the pod itself (Event only) when the pod has no job."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from whathappened.collectors.kube_objects.event_objects import MAX_MESSAGE
from whathappened.collectors.kube_objects.owners import owner_of, pod_itself
from whathappened.collectors.kubernetes.api import KubeWrites, build_api_client
from whathappened.collectors.kubernetes.verdict_writes import EVENT_REASON, VERDICT_ANNOTATION, VerdictWriter

from tests.doubles.kube import KubeDouble, Store
from tests.fixtures.kube import write_kubeconfig
from tests.support import all_scenarios
from whathappened.config import KubernetesSettings
from whathappened.retrying import BACKOFF_S

SCENARIO = next(s for s in all_scenarios() if s.name == "maintenance-eviction")
WORKER = "phi-3-medium-pt-r5-worker-1"
AT = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
VERDICT = {"experiment": "phi-3-medium-pt-r5", "root_cause": {"cause": "node-maintenance", "pod": WORKER}}


@pytest.fixture
def double() -> Iterator[KubeDouble]:
    with KubeDouble(Store.from_scenario(SCENARIO.path), writable=True) as started:
        yield started


def writer(double: KubeDouble, tmp_path: Path, sleeps: list[float], **asked: bool) -> VerdictWriter:
    config = write_kubeconfig(tmp_path / "kubeconfig", double.url, SCENARIO.namespace, token="unused")
    api_client, _ = build_api_client(KubernetesSettings(kubeconfig=str(config)))
    return VerdictWriter(KubeWrites(api_client), sleeps.append, "watch-0", **asked)


def stored_pod(double: KubeDouble, name: str = WORKER) -> dict:
    return next(p for p in double.store.pods if p["metadata"]["name"] == name)


def ours(double: KubeDouble) -> list[dict]:
    return [e for e in double.store.objects("events") if e.get("reason") == EVENT_REASON]


def test_the_event_and_the_annotation_land_on_the_training_job(double: KubeDouble, tmp_path: Path) -> None:
    sleeps: list[float] = []
    write = writer(double, tmp_path, sleeps, events=True, annotations=True)
    owner = owner_of(stored_pod(double))
    assert owner is not None and owner.kind == "PyTorchJob"
    write.write(owner, VERDICT, "x" * 2000, AT)
    write.close()
    [event] = ours(double)
    assert event["involvedObject"] == owner.reference() and event["type"] == "Warning"
    assert len(event["message"]) == MAX_MESSAGE and event["reportingInstance"] == "watch-0"
    assert event["metadata"]["name"].startswith(f"{owner.name}.")
    [job] = double.store.objects("pytorchjobs.kubeflow.org")
    assert json.loads(job["metadata"]["annotations"][VERDICT_ANNOTATION]) == VERDICT
    assert write.counts() == {"event": (1, 0, 0), "annotation": (1, 0, 0)} and sleeps == []
    patch = next(r for r in double.requests if r.method == "PATCH")
    assert patch.path == owner.path


def test_a_busy_or_failing_server_is_retried_with_backoff(double: KubeDouble, tmp_path: Path) -> None:
    double.faults.add(status=429, path="/events", retry_after=1)
    double.faults.add(status=503, path="/events")
    double.faults.add(status=500, path="/pytorchjobs/", times=-1)  # never recovers
    sleeps: list[float] = []
    write = writer(double, tmp_path, sleeps, events=True, annotations=True)
    write.write(owner_of(stored_pod(double)), VERDICT, "drained", AT)  # type: ignore[arg-type]
    write.close()
    assert len(ours(double)) == 1
    assert write.counts() == {"event": (1, 0, 0), "annotation": (0, 1, 0)}
    assert sorted(sleeps) == sorted([*BACKOFF_S[:2], *BACKOFF_S])
    patches = [r.status for r in double.requests if r.method == "PATCH"]
    assert patches == [500] * (len(BACKOFF_S) + 1)


def test_a_refusal_is_not_retried(double: KubeDouble, tmp_path: Path) -> None:
    double.faults.add(status=403, path="/events")
    sleeps: list[float] = []
    write = writer(double, tmp_path, sleeps, events=True, annotations=False)
    write.write(owner_of(stored_pod(double)), VERDICT, "drained", AT)  # type: ignore[arg-type]
    write.close()
    assert write.counts() == {"event": (0, 1, 0)} and sleeps == [] and ours(double) == []


def test_a_bare_pod_gets_the_event_and_no_annotation(double: KubeDouble, tmp_path: Path) -> None:
    bare = {**stored_pod(double), "metadata": {**stored_pod(double)["metadata"], "ownerReferences": []}}
    subject = owner_of(bare) or pod_itself(bare)
    assert subject is not None and subject.kind == "Pod"
    write = writer(double, tmp_path, [], events=True, annotations=True)
    write.write(subject, VERDICT, "drained", AT)
    write.close()
    [event] = ours(double)
    assert event["involvedObject"]["kind"] == "Pod" and event["involvedObject"]["name"] == WORKER
    assert write.counts()["annotation"] == (0, 0, 0)
    assert not [r for r in double.requests if r.method == "PATCH"]


def test_no_answer_is_retried_then_counted(tmp_path: Path) -> None:
    """The API server gone: every attempt answers nothing (status 0), each retried, then one failure."""
    store = Store.from_scenario(SCENARIO.path)
    double = KubeDouble(store, writable=True).start()
    sleeps: list[float] = []
    write = writer(double, tmp_path, sleeps, events=True, annotations=False)
    double.stop()
    write.write(owner_of(stored_pod(double)), VERDICT, "drained", AT)  # type: ignore[arg-type]
    write.close()
    assert write.counts() == {"event": (0, 1, 0)} and sleeps == list(BACKOFF_S)
