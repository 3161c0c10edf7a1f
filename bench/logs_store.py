"""The synthetic log store the log benchmark searches: documents in the shape Filebeat writes (ECS container lines in
``logs-k8s-*``, kernel lines of the nodes), the experiment's failure planted among ordinary noise, written as the
bulk NDJSON osmem-server is seeded from."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

START = datetime(2026, 11, 20, 0, 0, tzinfo=UTC)
EXPERIMENT = "bench-llm-pretrain"
OTHER = "bench-other-sweep"
NAMESPACE = "research"
LABEL = "training_kubeflow_org/job-name"
ORDINARY = (
    "step={step} loss={loss:.4f} lr=3.0e-04 tokens_per_sec={tps} mfu=0.41",
    "[rank{rank}]: dataloader worker {w} prefetched shard {step} in 0.{tps}s",
    "{host}:{pid}:{pid} [{gpu}] NCCL INFO Channel {w:02d}/32 : {rank} -> {peer} via P2P/IPC",
    "[rank{rank}]: grad_norm={loss:.3f} skipped=0 scale=65536.0",
)
KERNEL = (
    "IPv6: ADDRCONF(NETDEV_CHANGE): veth{pid}: link becomes ready",
    "audit: type=1400 audit({tps}.{w}:{pid}): apparmor",
)


def pod_name(i: int) -> str:
    return f"{EXPERIMENT}-worker-{i}"


def node_name(i: int) -> str:
    return f"gpu-node-{i // 8:03d}"


def container_doc(at: datetime, pod: str, node: str, message: str, experiment: str = EXPERIMENT) -> dict[str, Any]:
    return {
        "@timestamp": at.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
        "message": message,
        "stream": "stderr" if "Error" in message or "WARN" in message else "stdout",
        "kubernetes": {
            "namespace": NAMESPACE,
            "pod": {"name": pod},
            "node": {"name": node},
            "container": {"name": "pytorch"},
            "labels": {LABEL: experiment},
        },
        "host": {"name": node},
    }


def node_doc(at: datetime, node: str, message: str) -> dict[str, Any]:
    return {
        "@timestamp": at.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
        "message": message,
        "host": {"name": node},
        "process": {"name": "kernel"},
    }


def planted(pods: int, hours: float) -> list[tuple[str, dict[str, Any]]]:
    """The signature lines: what the collector must find among the chatter."""
    crash = START + timedelta(hours=hours * 0.8)
    bad = pods // 3
    bad_node = node_name(bad)
    docs = [
        ("node", node_doc(crash - timedelta(seconds=2), bad_node, "NVRM: GPU at PCI:0000:9b:00: GPU-3982b923-68d9-1c75-a7ea-e1845c4aca6e")),
        ("node", node_doc(crash, bad_node, "NVRM: Xid (PCI:0000:9b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")),
        ("pod", container_doc(crash + timedelta(seconds=4), pod_name(bad), bad_node, "RuntimeError: CUDA error: unspecified launch failure")),
        ("pod", container_doc(crash + timedelta(seconds=9), pod_name(bad), bad_node, "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: train.py FAILED")),
        ("pod", container_doc(crash + timedelta(seconds=5), pod_name(bad + 1), node_name(bad + 1),
            'Traceback (most recent call last):\n  File "/workspace/train.py", line 412, in <module>\n    main()\n'
            "RuntimeError: CUDA error: an illegal memory access was encountered")),
    ]  # fmt: skip
    for i in range(0, pods, 2):  # half the ranks report the NCCL failure
        at = crash + timedelta(seconds=30 + i % 7)
        docs.append(("pod", container_doc(at, pod_name(i), node_name(i),
            f"[rank{i * 8}]:[E1120 ProcessGroupNCCL.cpp:632] [Rank {i * 8}] Watchdog caught collective operation timeout: "
            f"WorkNCCL(SeqNum=48211, OpType=ALLREDUCE, NumelIn=262144000, NumelOut=262144000, Timeout(ms)=1800000) "
            "ran for 1800043 milliseconds before timing out.")))  # fmt: skip
    for hour in range(int(hours)):
        at = START + timedelta(hours=hour + 0.5)
        docs.append(("pod", container_doc(at, pod_name(0), node_name(0),
            f"  successfully saved checkpoint from iteration {1000 * (hour + 1)} to /ckpt/{EXPERIMENT}")))  # fmt: skip
    for k in range(3):
        at = START + timedelta(hours=hours * 0.3 + k)
        docs.append(("node", node_doc(at, node_name(8 * (k + 2)), f"Memory cgroup out of memory: Killed process {4100 + k} (pt_data_worker) total-vm:7156kB, anon-rss:6701kB")))  # fmt: skip
    return docs


def generate(total: int, pods: int, hours: float, seed: int = 7) -> Iterator[tuple[str, dict[str, Any]]]:
    """``total`` documents: the planted lines, node chatter (2 %), another experiment's pods (5 %), the rest
    ordinary lines of the experiment's pods, spread evenly over the window."""
    rng = random.Random(seed)
    signatures = planted(pods, hours)
    yield from signatures
    nodes = sorted({node_name(i) for i in range(pods)})
    span = hours * 3600
    ordinary = total - len(signatures)
    for n in range(ordinary):
        at = START + timedelta(seconds=span * n / ordinary)
        values = {"step": n // pods, "loss": 2 + rng.random(), "tps": 400000 + n % 9999, "rank": n % (pods * 8),
                  "w": n % 32, "host": nodes[n % len(nodes)], "pid": 1000 + n % 5000, "gpu": n % 8, "peer": (n + 1) % 64}  # fmt: skip
        roll = n % 100
        if roll < 2:
            yield "node", node_doc(at, nodes[n % len(nodes)], KERNEL[n % 2].format(**values))
        elif roll < 7:
            i = n % pods
            yield "pod", container_doc(at, f"{OTHER}-worker-{i}", node_name(i), ORDINARY[0].format(**values), OTHER)
        else:
            i = n % pods
            yield "pod", container_doc(at, pod_name(i), node_name(i), ORDINARY[n % len(ORDINARY)].format(**values))


def write_seed(path: Path, docs: Iterator[tuple[str, dict[str, Any]]]) -> int:
    """The store as one bulk NDJSON file, which osmem-server loads at start (faster than HTTP _bulk)."""
    count = 0
    partial = path.with_suffix(".partial")
    with partial.open("w", encoding="utf-8") as out:
        for kind, doc in docs:
            index = "logs-k8s-2026.11.20" if kind == "pod" else "logs-node-2026.11.20"
            out.write(json.dumps({"create": {"_index": index}}) + "\n" + json.dumps(doc) + "\n")
            count += 1
    partial.rename(path)
    return count
