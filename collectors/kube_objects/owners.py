"""Which object a researcher looks at for a pod: its training job (Job, JobSet, PyTorchJob, ...), read from the
pod alone, and where that object lives in the API. ``whathappened watch --write-events`` / ``--annotate`` write the
verdict there (CONTRACT.md section 3a).

The pod's controller reference names its direct owner. Some controllers stack: a JobSet creates Jobs that create the
pods. The JobSet controller writes its own name and UID as labels on the Jobs and their pods (JobSet's "JobSet
labels" documentation: ``jobset.sigs.k8s.io/jobset-name``, ``jobset.sigs.k8s.io/jobset-uid``), so the JobSet is
known from the pod without reading the Job: ``PARENTS`` says, per stacking, which labels name the parent. A parent is
taken only when both its name and UID are on the pod: an Event needs the UID for ``kubectl describe`` to find it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from whathappened.collectors.kube_objects.text import dig


@dataclass(frozen=True, slots=True)
class Owner:
    api_version: str  # "batch/v1", "jobset.x-k8s.io/v1alpha2", "v1"
    kind: str
    name: str
    namespace: str
    uid: str

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def resource(self) -> str:
        """The plural the API serves it under: the known ones from ``RESOURCES``, else Kubernetes' convention."""
        return RESOURCES.get((self.group, self.kind)) or f"{self.kind.lower()}s"

    @property
    def path(self) -> str:
        """Its URL path on the API server (what a PATCH goes to)."""
        root = f"/apis/{self.api_version}" if self.group else f"/api/{self.api_version}"
        return f"{root}/namespaces/{self.namespace}/{self.resource}/{self.name}"

    def reference(self) -> dict[str, str]:
        """As an Event's ``involvedObject`` names it."""
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "name": self.name,
            "namespace": self.namespace,
            "uid": self.uid,
        }


# (API group, kind) -> resource, for the owners of training pods the projects document. The write variant of the
# watch's RBAC (deploy/writes/) grants patch on exactly these; tests/test_deploy.py holds the two together.
RESOURCES: dict[tuple[str, str], str] = {
    ("batch", "Job"): "jobs",
    ("jobset.x-k8s.io", "JobSet"): "jobsets",
    ("kubeflow.org", "PyTorchJob"): "pytorchjobs",
    ("kubeflow.org", "TFJob"): "tfjobs",
    ("kubeflow.org", "MPIJob"): "mpijobs",
    ("kubeflow.org", "XGBoostJob"): "xgboostjobs",
    ("kubeflow.org", "PaddleJob"): "paddlejobs",
    ("kubeflow.org", "JAXJob"): "jaxjobs",
    ("trainer.kubeflow.org", "TrainJob"): "trainjobs",
    ("batch.volcano.sh", "Job"): "jobs",
    ("ray.io", "RayCluster"): "rayclusters",  # KubeRay owns the pods by their RayCluster, also under a RayJob
}


@dataclass(frozen=True, slots=True)
class Parent:
    """A controller that creates the pod's owner and labels the pods with its own name and UID."""

    child_group: str
    child_kind: str
    name_label: str
    uid_label: str
    api_version: str
    kind: str


PARENTS: tuple[Parent, ...] = (
    Parent(
        "batch", "Job", "jobset.sigs.k8s.io/jobset-name", "jobset.sigs.k8s.io/jobset-uid", "jobset.x-k8s.io/v1alpha2",
        "JobSet",
    ),
)  # fmt: skip


def owner_of(pod: Mapping[str, Any]) -> Owner | None:
    """The pod's training job: its controller, or that controller's parent (``PARENTS``); None for a bare pod."""
    namespace = str(dig(pod, "metadata", "namespace") or "")
    references = dig(pod, "metadata", "ownerReferences") or ()
    controller = next((r for r in references if r.get("controller")), None) or next(iter(references), None)
    if not controller or not controller.get("name") or not controller.get("uid"):
        return None
    owner = Owner(
        str(controller.get("apiVersion") or ""),
        str(controller.get("kind") or ""),
        str(controller["name"]),
        namespace,
        str(controller["uid"]),
    )
    labels = dig(pod, "metadata", "labels") or {}
    for parent in PARENTS:
        name, uid = labels.get(parent.name_label), labels.get(parent.uid_label)
        if (owner.group, owner.kind) == (parent.child_group, parent.child_kind) and name and uid:
            return Owner(parent.api_version, parent.kind, str(name), namespace, str(uid))
    return owner


def pod_itself(pod: Mapping[str, Any]) -> Owner | None:
    """The pod as an Event's subject (a bare pod has no job to write on)."""
    name, uid = dig(pod, "metadata", "name"), dig(pod, "metadata", "uid")
    if not name or not uid:
        return None
    return Owner("v1", "Pod", str(name), str(dig(pod, "metadata", "namespace") or ""), str(uid))
