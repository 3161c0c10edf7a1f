"""A pod's training job, read from the pod alone, in the shapes the controllers write (Kubeflow's training operator,
JobSet's Jobs, Volcano, a plain Job, a bare pod), and the API path each one is patched at."""

from __future__ import annotations

from typing import Any

import pytest
from whathappened.collectors.kube_objects.owners import RESOURCES, Owner, owner_of, pod_itself


def pod(owners: list[dict[str, Any]], labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "p-0",
            "namespace": "research",
            "uid": "u-pod",
            "labels": labels or {},
            "ownerReferences": owners,
        }
    }


def ref(api_version: str, kind: str, name: str, uid: str = "u-1", controller: bool | None = True) -> dict[str, Any]:
    found: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid}
    if controller is not None:
        found |= {"controller": controller, "blockOwnerDeletion": True}
    return found


@pytest.mark.parametrize(
    ("owners", "labels", "expected"),
    [
        # Kubeflow's training operator owns its pods directly
        ([ref("kubeflow.org/v1", "PyTorchJob", "llama")], {"training.kubeflow.org/job-name": "llama"},
         ("kubeflow.org/v1", "PyTorchJob", "llama", "u-1",
          "/apis/kubeflow.org/v1/namespaces/research/pytorchjobs/llama")),
        # a JobSet's pods are owned by a Job; the JobSet's name and UID are labels on the pod
        ([ref("batch/v1", "Job", "train-workers-0")],
         {"jobset.sigs.k8s.io/jobset-name": "train", "jobset.sigs.k8s.io/jobset-uid": "u-js"},
         ("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "u-js",
          "/apis/jobset.x-k8s.io/v1alpha2/namespaces/research/jobsets/train")),
        # an older JobSet without the UID label: the Job it is (an Event needs a UID to be found by describe)
        ([ref("batch/v1", "Job", "train-workers-0")], {"jobset.sigs.k8s.io/jobset-name": "train"},
         ("batch/v1", "Job", "train-workers-0", "u-1", "/apis/batch/v1/namespaces/research/jobs/train-workers-0")),
        ([ref("batch.volcano.sh/v1alpha1", "Job", "mpi")], {},
         ("batch.volcano.sh/v1alpha1", "Job", "mpi", "u-1", "/apis/batch.volcano.sh/v1alpha1/namespaces/research/jobs/mpi")),
        # the controller among several references; an unknown kind by Kubernetes' plural convention
        ([ref("v1", "ConfigMap", "cfg", "u-c", controller=None), ref("example.com/v1", "TrainRun", "r", "u-r")], {},
         ("example.com/v1", "TrainRun", "r", "u-r", "/apis/example.com/v1/namespaces/research/trainruns/r")),
    ],
)  # fmt: skip
def test_the_training_job_of_a_pod(owners: list[dict[str, Any]], labels: dict[str, str], expected: tuple) -> None:
    owner = owner_of(pod(owners, labels))
    assert owner is not None
    assert (owner.api_version, owner.kind, owner.name, owner.uid, owner.path) == expected
    assert owner.reference() == {
        "apiVersion": expected[0],
        "kind": expected[1],
        "name": expected[2],
        "namespace": "research",
        "uid": expected[3],
    }


def test_a_bare_pod_has_no_job_but_is_its_own_subject() -> None:
    bare = pod([])
    assert owner_of(bare) is None
    assert pod_itself(bare) == Owner("v1", "Pod", "p-0", "research", "u-pod")
    assert pod_itself(bare).path == "/api/v1/namespaces/research/pods/p-0"  # type: ignore[union-attr]
    assert owner_of(pod([ref("batch/v1", "Job", "j", uid="")])) is None  # no UID: nothing an Event could name


def test_every_known_kind_has_a_lowercase_plural() -> None:
    assert all(plural == plural.lower() and plural.endswith("s") for plural in RESOURCES.values())
