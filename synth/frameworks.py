"""Pods as each training framework's controller names, labels and owns them.

PyTorchJob (Kubeflow training-operator), JobSet, Indexed and classic batch Jobs, Volcano Jobs, MPIJob v2
(launcher + workers), KubeRay RayCluster, LeaderWorkerSet. `make_pods` returns healthy running pods placed on
nodes; stories then edit the ones their fault touches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from synth.ids import Ids
from synth.spec import Node, Owner, Pod

PYTORCH_IMAGE = "nvcr.io/nvidia/pytorch:24.09-py3"


@dataclass(frozen=True, slots=True)
class Shape:
    name: str  # pod name
    role: str  # worker, master, launcher, head, leader
    index: int
    labels: dict[str, str]
    owner: tuple[str, str, str]  # kind, name, apiVersion
    container: str
    hostname: str = ""
    subdomain: str = ""
    generate_name: str = ""
    annotations: tuple[tuple[str, str], ...] = ()


ShapeFn = Callable[[Ids, str, int], list[Shape]]


def _pytorchjob(ids: Ids, exp: str, n: int) -> list[Shape]:
    out = []
    for i in range(n):
        role, index = ("master", 0) if i == 0 else ("worker", i - 1)
        labels = {
            "training.kubeflow.org/job-name": exp,
            "training.kubeflow.org/operator-name": "pytorchjob-controller",
            "training.kubeflow.org/replica-type": role,
            "training.kubeflow.org/replica-index": str(index),
        }
        if role == "master":
            labels["training.kubeflow.org/job-role"] = "master"
        out.append(Shape(f"{exp}-{role}-{index}", role, i, labels, ("PyTorchJob", exp, "kubeflow.org/v1"), "pytorch"))
    return out


def _jobset(ids: Ids, exp: str, n: int, rjob: str = "workers", extra: dict[str, str] | None = None) -> list[Shape]:
    job = f"{exp}-{rjob}-0"
    job_uid = ids.uuid("job", job)
    out = []
    for i in range(n):
        labels = {
            "batch.kubernetes.io/controller-uid": job_uid,
            "batch.kubernetes.io/job-completion-index": str(i),
            "batch.kubernetes.io/job-name": job,
            "controller-uid": job_uid,
            "job-name": job,
            "jobset.sigs.k8s.io/jobset-name": exp,
            "jobset.sigs.k8s.io/jobset-uid": ids.uuid("jobset", exp),
            "jobset.sigs.k8s.io/replicatedjob-name": rjob,
            "jobset.sigs.k8s.io/job-index": "0",
            "jobset.sigs.k8s.io/restart-attempt": "0",
            **(extra or {}),
        }
        annotations = (("batch.kubernetes.io/job-completion-index", str(i)), ("jobset.sigs.k8s.io/jobset-name", exp))
        name = f"{job}-{i}-{ids.suffix(exp, i)}"
        out.append(
            Shape(
                name,
                "worker",
                i,
                labels,
                ("Job", job, "batch/v1"),
                "trainer" if extra else "pytorch",
                hostname=f"{job}-{i}",
                subdomain=exp,
                generate_name=f"{job}-{i}-",
                annotations=annotations,
            )
        )
    return out


def _trainjob(ids: Ids, exp: str, n: int) -> list[Shape]:
    """Kubeflow Trainer v2: a TrainJob runs as a JobSet whose replicated job is called `node`."""
    return _jobset(ids, exp, n, rjob="node", extra={"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"})


def _indexed_job(ids: Ids, exp: str, n: int) -> list[Shape]:
    uid = ids.uuid("job", exp)
    out = []
    for i in range(n):
        labels = {
            "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-completion-index": str(i),
            "batch.kubernetes.io/job-name": exp,
            "controller-uid": uid,
            "job-name": exp,
        }
        out.append(
            Shape(
                f"{exp}-{i}-{ids.suffix(exp, i)}",
                "worker",
                i,
                labels,
                ("Job", exp, "batch/v1"),
                "train",
                generate_name=f"{exp}-{i}-",
                annotations=(("batch.kubernetes.io/job-completion-index", str(i)),),
            )
        )
    return out


def _legacy_job(ids: Ids, exp: str, n: int) -> list[Shape]:
    """A non-indexed Job on a pre-1.27 cluster: only the old `job-name` and `controller-uid` labels."""
    uid = ids.uuid("job", exp)
    labels = {"controller-uid": uid, "job-name": exp}
    return [
        Shape(
            f"{exp}-{ids.suffix(exp, i)}",
            "worker",
            i,
            dict(labels),
            ("Job", exp, "batch/v1"),
            "main",
            generate_name=f"{exp}-",
        )
        for i in range(n)
    ]


def _volcano(ids: Ids, exp: str, n: int) -> list[Shape]:
    out = []
    for i in range(n):
        labels = {
            "volcano.sh/job-name": exp,
            "volcano.sh/job-namespace": "",  # filled by make_pods
            "volcano.sh/queue-name": "research",
            "volcano.sh/task-spec": "worker",
            "volcano.sh/job-retry-count": "0",
        }
        annotations = (
            ("scheduling.k8s.io/group-name", f"{exp}-{ids.uuid('podgroup', exp)}"),
            ("volcano.sh/job-version", "0"),
            ("volcano.sh/task-index", str(i)),
        )
        out.append(
            Shape(
                f"{exp}-worker-{i}",
                "worker",
                i,
                labels,
                ("Job", exp, "batch.volcano.sh/v1alpha1"),
                "worker",
                hostname=f"{exp}-worker-{i}",
                subdomain=exp,
                annotations=annotations,
            )
        )
    return out


def _mpijob(ids: Ids, exp: str, n: int) -> list[Shape]:
    base = {"training.kubeflow.org/job-name": exp, "training.kubeflow.org/operator-name": "mpi-operator"}
    launcher = Shape(
        f"{exp}-launcher-{ids.suffix(exp, 'launcher')}",
        "launcher",
        0,
        {
            **base,
            "training.kubeflow.org/job-role": "launcher",
            "batch.kubernetes.io/job-name": f"{exp}-launcher",
            "job-name": f"{exp}-launcher",
        },
        ("Job", f"{exp}-launcher", "batch/v1"),
        "launcher",
        generate_name=f"{exp}-launcher-",
    )
    workers = [
        Shape(
            f"{exp}-worker-{i}",
            "worker",
            i + 1,
            {**base, "training.kubeflow.org/job-role": "worker", "training.kubeflow.org/replica-index": str(i)},
            ("MPIJob", exp, "kubeflow.org/v2beta1"),
            "worker",
            hostname=f"{exp}-worker-{i}",
            subdomain=f"{exp}-worker",
        )
        for i in range(n - 1)
    ]
    return [launcher, *workers]


def _raycluster(ids: Ids, exp: str, n: int) -> list[Shape]:
    base = {
        "ray.io/cluster": exp,
        "ray.io/is-ray-node": "yes",
        "app.kubernetes.io/created-by": "kuberay-operator",
        "app.kubernetes.io/name": "kuberay",
    }
    head = Shape(
        f"{exp}-head-{ids.suffix(exp, 'head')}",
        "head",
        0,
        {**base, "ray.io/node-type": "head", "ray.io/group": "headgroup", "ray.io/identifier": f"{exp}-head"},
        ("RayCluster", exp, "ray.io/v1"),
        "ray-head",
        generate_name=f"{exp}-head-",
    )
    workers = [
        Shape(
            f"{exp}-gpu-group-worker-{ids.suffix(exp, 'w', i)}",
            "worker",
            i + 1,
            {**base, "ray.io/node-type": "worker", "ray.io/group": "gpu-group", "ray.io/identifier": f"{exp}-worker"},
            ("RayCluster", exp, "ray.io/v1"),
            "ray-worker",
            generate_name=f"{exp}-gpu-group-worker-",
        )
        for i in range(n - 1)
    ]
    return [head, *workers]


def _lws(ids: Ids, exp: str, n: int) -> list[Shape]:
    key = ids.hex("lws-group-key", exp, length=40)
    out = []
    for i in range(n):
        labels = {
            "leaderworkerset.sigs.k8s.io/name": exp,
            "leaderworkerset.sigs.k8s.io/group-index": "0",
            "leaderworkerset.sigs.k8s.io/worker-index": str(i),
            "leaderworkerset.sigs.k8s.io/group-key": key,
            "apps.kubernetes.io/pod-index": "0" if i == 0 else str(i),
        }
        if i == 0:
            out.append(
                Shape(
                    f"{exp}-0",
                    "leader",
                    0,
                    labels,
                    ("StatefulSet", exp, "apps/v1"),
                    "vllm-leader",
                    generate_name=f"{exp}-",
                )
            )
        else:
            out.append(
                Shape(
                    f"{exp}-0-{i}",
                    "worker",
                    i,
                    labels,
                    ("StatefulSet", f"{exp}-0", "apps/v1"),
                    "vllm-worker",
                    generate_name=f"{exp}-0-",
                )
            )
    return out


FRAMEWORKS: dict[str, ShapeFn] = {
    "pytorchjob": _pytorchjob,
    "jobset": _jobset,
    "trainjob": _trainjob,
    "indexed-job": _indexed_job,
    "legacy-job": _legacy_job,
    "volcano": _volcano,
    "mpijob": _mpijob,
    "raycluster": _raycluster,
    "lws": _lws,
}


def make_pods(
    ids: Ids,
    framework: str,
    exp: str,
    namespace: str,
    nodes: list[Node],
    *,
    created: datetime,
    label_key: str,
    gpus: int = 8,
    image: str = PYTORCH_IMAGE,
    command: list[str] | None = None,
) -> list[Pod]:
    """One pod per node in order (a launcher or head without GPUs goes on the first node when the framework has one)."""
    shapes = FRAMEWORKS[framework](ids, exp, len(nodes))
    pods = []
    for shape, node in zip(shapes, nodes, strict=True):
        labels = dict(shape.labels)
        if "volcano.sh/job-namespace" in labels:
            labels["volcano.sh/job-namespace"] = namespace
        labels.setdefault(label_key, exp)
        kind, owner_name, api = shape.owner
        owner = Owner(kind=kind, name=owner_name, api_version=api, uid=ids.uuid("owner", namespace, kind, owner_name))
        gpu_count = 0 if shape.role in ("launcher",) else min(gpus, len(node.gpus))
        stagger = timedelta(seconds=shape.index % 4)
        pods.append(
            Pod(
                name=shape.name,
                namespace=namespace,
                uid=ids.uuid("pod", namespace, shape.name),
                labels=labels,
                owner=owner,
                container=shape.container,
                image=image,
                command=list(command or _default_command(framework, len(nodes), gpus)),
                created=created,
                node=node,
                gpu_indices=tuple(range(gpu_count)),
                gpu_request=gpu_count,
                ip=f"10.244.{(ids.number(1, 250, node.name))}.{ids.number(2, 250, shape.name)}",
                scheduled=created + timedelta(seconds=2) + stagger,
                started=created + timedelta(seconds=25) + stagger,
                hostname=shape.hostname,
                subdomain=shape.subdomain,
                generate_name=shape.generate_name,
                annotations=dict(shape.annotations),
                rank0=shape.index * gpus,
                local_ranks=max(gpu_count, 1),
                priority_class="training-high" if framework != "raycluster" else "batch-low",
                priority=100000 if framework != "raycluster" else 1000,
            )
        )
    return pods


def _default_command(framework: str, nnodes: int, gpus: int) -> list[str]:
    if framework == "mpijob":
        return [
            "mpirun",
            "--allow-run-as-root",
            "-np",
            str(max(nnodes - 1, 1) * gpus),
            "-bind-to",
            "none",
            "-x",
            "NCCL_DEBUG=WARN",
            "python",
            "train.py",
        ]
    if framework == "raycluster":
        return ["/bin/bash", "-lc", "--", "ulimit -n 65536; ray start --block"]
    if framework == "lws":
        return [
            "/bin/sh",
            "-c",
            "python3 -m vllm.entrypoints.openai.api_server --tensor-parallel-size 8 --pipeline-parallel-size 2",
        ]
    return ["torchrun", "--nnodes", str(nnodes), "--nproc-per-node", str(gpus), "--rdzv-backend", "c10d", "train.py"]
