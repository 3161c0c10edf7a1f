"""A month of a cluster's training runs for ``whathappened fleet``: many experiments on one pool of GPU nodes, each
ending in one way drawn from a mix after the Llama 3 paper's table of interruptions (faulty GPUs and GPU memory
first, then software bugs, the network and host maintenance), with some deleted by their users and some run to
completion; two lemon nodes that are at the root of several GPU faults, one GPU of them raising the same Xid again
and again. The pods are long gone (no Kubernetes objects are served with it) and the API's events expired: what is
left is what a cluster keeps for a month, kube-state-metrics and dcgm-exporter history and the logs.

Each experiment is written as its own recorded folder (``write_history``); the truth is in ``truth.json``: every
experiment's cause, root pod, node and GPU. Deterministic for a seed.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path

from synth import messages as msg
from synth.clouds import make_nodes
from synth.common import end, lifecycle_events, nccl_error_collateral, rank_crash, torchrun_teardown, training_chatter
from synth.endings import memory_error, node_lost, off_the_bus, user_deletion
from synth.frameworks import make_pods
from synth.ids import Ids
from synth.spec import Meta, Node, Pod, Recording
from synth.stories_core import _azure_drain
from synth.story import day
from synth.writer import write_recording

NAMESPACES = ("research", "pretrain", "finetune", "alignment")
LABEL_KEY = "training.kubeflow.org/job-name"
WINDOW = timedelta(hours=2)
# How runs end: (cause, weight). The GPU, memory, software, node and maintenance weights follow the Llama 3
# table's shares among the causes generated here; deletions and completions are not interruptions but every
# cluster has them (about half the runs here finish: on 64 nodes, more failures would make every node a lemon).
MIX: tuple[tuple[str, int], ...] = (
    ("gpu-fallen-off-bus", 30),
    ("gpu-memory-error", 22),
    ("application-error", 13),
    ("node-failure", 8),
    ("host-maintenance", 8),
    ("deleted", 5),
    ("completed", 80),
)
HARDWARE = ("gpu-fallen-off-bus", "gpu-memory-error")
FAULTS = (*HARDWARE, "node-failure")  # the causes that count against a node (whathappened/fleet/rollup.py)
LEMONS = ((7, 4), (31, 3))  # (pool index, GPU faults rooted there); the first one's GPU 3 raises every one of its Xids
LEMON_GPU = 3
MAX_FAULTS_ELSEWHERE = 2  # GPU faults any other node is the root of: under whathappened fleet's threshold of 3


@dataclass(frozen=True)
class Plan:
    experiment: str
    namespace: str
    start: datetime
    nodes: tuple[int, ...]  # pool indexes
    cause: str
    bad: int  # the index in ``nodes`` of the root's node
    gpu: int


def plan(count: int, pool: int, days: int, seed: int) -> list[Plan]:
    """Experiments spread over the days, each on 2-4 nodes no other run holds at the time; the lemons get their
    GPU faults."""
    rng = random.Random(seed)
    causes = [rng.choices([c for c, _ in MIX], [w for _, w in MIX])[0] for _ in range(count)]
    lemon_runs = iter(i for i, c in enumerate(causes) if c in HARDWARE)
    lemon_of: dict[int, int] = {}
    for node, count in LEMONS:
        for _ in range(count):
            lemon_of[next(lemon_runs)] = node
    busy: dict[int, list[tuple[datetime, datetime]]] = {}
    faults: dict[int, int] = {}  # GPU faults rooted on each node: below the lemon threshold except on the lemons
    plans = []
    first = day(11, 1, 0)
    for i, cause in enumerate(causes):
        start = first + timedelta(minutes=rng.randrange(0, days * 24 * 60 - int(WINDOW.total_seconds() // 60), 15))
        wanted = rng.randint(2, 4)
        lemon = lemon_of.get(i)

        def free(n: int, start: datetime = start) -> bool:
            return all(e <= start or s >= start + WINDOW for s, e in busy.get(n, ()))

        nodes = [lemon] if lemon is not None else []
        candidates = [n for n in rng.sample(range(pool), pool) if n not in nodes and n not in dict(LEMONS)]
        nodes += [n for n in candidates if free(n)][: wanted - len(nodes)]
        if lemon is not None and not free(lemon):
            start = max(e for _, e in busy[lemon]) + timedelta(minutes=15)  # after the lemon's last run
            nodes = [lemon, *[n for n in candidates if free(n, start)][: wanted - 1]]
        for n in nodes:
            busy.setdefault(n, []).append((start, start + WINDOW))
        spared = [k for k, n in enumerate(nodes) if faults.get(n, 0) < MAX_FAULTS_ELSEWHERE]
        bad = 0 if lemon is not None else rng.choice(spared if cause in FAULTS and spared else range(len(nodes)))
        if cause in FAULTS:
            faults[nodes[bad]] = faults.get(nodes[bad], 0) + 1
        gpu = LEMON_GPU if lemon == LEMONS[0][0] else rng.randrange(8)
        name = f"run-{i:04d}-{rng.choice(('llama', 'mixtral', 'qwen', 'gemma', 'olmo', 'phi'))}"
        plans.append(Plan(name, NAMESPACES[i % len(NAMESPACES)], start, tuple(nodes), cause, bad, gpu))
    return plans


def recording(p: Plan, pool: list[Node], ids: Ids) -> Recording:
    nodes = [pool[n] for n in p.nodes]
    meta = Meta(p.experiment, f"fleet history: {p.cause}", p.experiment, p.namespace, LABEL_KEY, p.start,
                p.start + WINDOW, p.start + WINDOW, ())  # fmt: skip
    rec = Recording(meta=meta, scrape_seconds=60, ksm_resource_requests=True)
    pods = make_pods(ids, "pytorchjob", p.experiment, p.namespace, nodes, created=p.start + timedelta(minutes=3),
                     label_key=LABEL_KEY)  # fmt: skip
    rec.nodes.extend(nodes)
    rec.pods.extend(pods)
    lifecycle_events(rec, pods)
    t = p.start + timedelta(minutes=20, seconds=7)
    training_chatter(rec, ids, pods, t)
    bad, node = pods[p.bad], nodes[p.bad]
    others = [q for q in pods if q is not bad]
    ENDINGS[p.cause](rec, ids, bad, node, others, p.gpu, t)
    root = {"pod": bad.name, "cause": p.cause, "root": True, "node": node.name, "gpu": node.gpus[p.gpu].uuid}
    rec.meta = replace(meta, expected=(root,))
    return rec


Ending = Callable[[Recording, Ids, Pod, Node, list[Pod], int, datetime], None]


def _off_the_bus(rec: Recording, ids: Ids, bad: Pod, node: Node, others: list[Pod], gpu: int, t: datetime) -> None:
    off_the_bus(rec, node, gpu, bad, others, t, gone_after=90.0)  # a scrape a minute: seen on the next one


def _memory(rec: Recording, ids: Ids, bad: Pod, node: Node, others: list[Pod], gpu: int, t: datetime) -> None:
    memory_error(rec, node, gpu, bad, others, t)


def _software(rec: Recording, ids: Ids, bad: Pod, node: Node, others: list[Pod], gpu: int, t: datetime) -> None:
    error = msg.traceback(
        [("/app/train.py", 214, "main", "for step, batch in enumerate(loader):"),
         ("/app/data.py", 88, "__getitem__", 'prompt = sample["conversations"][0]["value"]')],
        "KeyError: 'conversations'",
    )  # fmt: skip
    rank_crash(rec, bad, t, 0, [error])
    torchrun_teardown(rec, others, t + timedelta(seconds=9))


def _node_down(rec: Recording, ids: Ids, bad: Pod, node: Node, others: list[Pod], gpu: int, t: datetime) -> None:
    evict = node_lost(rec, node, bad, others, t)
    # the cloud's node repair deletes the unreachable VM's Node and the pod garbage collector force-deletes its
    # pods (on a node that never comes back, a Terminating pod is only removed so)
    rec.node_gone[node.name] = evict + timedelta(seconds=30)
    bad.gone_at = evict + timedelta(seconds=60)


def _maintenance(rec: Recording, ids: Ids, bad: Pod, node: Node, others: list[Pod], gpu: int, t: datetime) -> None:
    evicted = _azure_drain(rec, ids, node, bad, (t.month, t.day, t.hour, t.minute)).finished or t
    nccl_error_collateral(rec, others, evicted + timedelta(seconds=2), bad.rank0)


def _deleted(rec: Recording, ids: Ids, bad: Pod, node: Node, others: list[Pod], gpu: int, t: datetime) -> None:
    user_deletion(rec, [bad, *others], t)


def _completed(rec: Recording, ids: Ids, bad: Pod, node: Node, others: list[Pod], gpu: int, t: datetime) -> None:
    for i, pod in enumerate([bad, *others]):
        end(pod, t + timedelta(seconds=9 + i), 0, "Completed", "Succeeded")


ENDINGS: dict[str, Ending] = {
    "gpu-fallen-off-bus": _off_the_bus,
    "gpu-memory-error": _memory,
    "application-error": _software,
    "node-failure": _node_down,
    "host-maintenance": _maintenance,
    "deleted": _deleted,
    "completed": _completed,
}


def write_history(root: Path, experiments: int = 200, nodes: int = 64, days: int = 30, seed: int = 7) -> list[Plan]:
    """One folder per experiment under ``root`` and ``root/truth.json``; the plans, in order."""
    ids = Ids(seed)
    pool = make_nodes(ids, "aks-h100", nodes, pool="h100pool", cluster="fleet", created=day(10, 25, 0))
    plans = plan(experiments, nodes, days, seed)
    truth = []
    for number, p in enumerate(plans):
        rec = recording(p, pool, ids)
        write_recording(rec, root / p.experiment, seed + number)
        truth.append({"experiment": p.experiment, "namespace": p.namespace, "start": p.start.isoformat(),
                      **rec.meta.expected[0]})  # fmt: skip
    (root / "truth.json").write_text(json.dumps(truth, indent=1))
    return plans
