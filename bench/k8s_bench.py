"""Benchmark: the Kubernetes collector's requests and wall time on a large experiment, against the naive way.

An experiment of 512 pods on 512 nodes, in a namespace of 1,024 pods whose 50,000 events include 20,000
about the experiment's pods, plus node events in "default", and 32 failed pods with 2,000 log lines each, served
by the project's Kubernetes API double (tests/doubles/kube) on loopback. The collector (discover + collect) is compared with the naive way a script
or a person does it: the pods by label, then for every pod a GET, an event LIST by field selector, and a
``kubectl describe`` (GET + event LIST), and a GET of its node.

    .venv/bin/python -m bench.k8s_bench            # 512 pods, 50,000 events
    .venv/bin/python -m bench.k8s_bench --pods 64  # smaller, quicker

Not a timed test: numbers depend on the machine; the request counts do not. CPU is split between the
collector's thread and the rest of the process (the double, and the collector's log-reading threads).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kubernetes import client
from whathappened.collectors.kubernetes.collector import KubernetesCollector, build_api_client

from tests.doubles.kube import KubeDouble, LogBook, Store
from tests.doubles.kube.store import LogLine
from tests.fixtures.kube import write_kubeconfig
from whathappened.config import KubernetesSettings, Settings
from whathappened.kinds import Kind
from whathappened.model import Window
from whathappened.scope import Query, Scope

NAMESPACE = "research"
EXPERIMENT = "llama-bench-r1"
KEY = "training.kubeflow.org/job-name"
START = datetime(2026, 11, 20, 6, tzinfo=UTC)
WINDOW = Window(START, START + timedelta(hours=2))
REASONS = (
    ("Scheduled", "Normal"),
    ("Pulled", "Normal"),
    ("Created", "Normal"),
    ("Started", "Normal"),
    ("Unhealthy", "Warning"),
    ("BackOff", "Warning"),
    ("Killing", "Normal"),
)


def _stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _pod(name: str, experiment: str, node: str, failed: bool) -> dict[str, Any]:
    state: dict[str, Any] = {"running": {"startedAt": _stamp(START + timedelta(minutes=2))}}
    if failed:
        state = {
            "terminated": {
                "exitCode": 1,
                "reason": "Error",
                "startedAt": _stamp(START + timedelta(minutes=2)),
                "finishedAt": _stamp(START + timedelta(minutes=70)),
                "containerID": f"containerd://{name}",
            }
        }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": f"uid-{name}",
            "resourceVersion": "5000",
            "creationTimestamp": _stamp(START),
            "labels": {KEY: experiment},
        },
        "spec": {
            "nodeName": node,
            "containers": [
                {
                    "name": "pytorch",
                    "image": "nvcr.io/nvidia/pytorch:24.09-py3",
                    "resources": {"limits": {"nvidia.com/gpu": "8"}},
                }
            ],
        },
        "status": {
            "phase": "Failed" if failed else "Running",
            "startTime": _stamp(START),
            "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": _stamp(START)}],
            "containerStatuses": [{"name": "pytorch", "restartCount": 0, "state": state, "lastState": {}}],
        },
    }


def _node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "labels": {"nvidia.com/gpu.count": "8", "node.kubernetes.io/instance-type": "Standard_ND96isr_H100_v5"},
        },
        "spec": {"providerID": f"azure:///subscriptions/0/virtualMachines/{name}"},
        "status": {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-17T06:00:00Z"}]},
    }


def _event(i: int, kind: str, name: str, namespace: str, at: datetime) -> dict[str, Any]:
    reason, etype = REASONS[i % len(REASONS)]
    involved: dict[str, Any] = {"kind": kind, "name": name, "uid": f"uid-{name}", "apiVersion": "v1"}
    if kind == "Pod":
        involved |= {"namespace": namespace, "fieldPath": "spec.containers{pytorch}"}
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{name}.{i:08x}",
            "namespace": namespace,
            "uid": f"ev-{namespace}-{i}",
            "resourceVersion": str(100000 + i),
            "creationTimestamp": _stamp(at),
        },
        "involvedObject": involved,
        "reason": reason,
        "message": f"{reason} for {name} (bench event {i})",
        "source": {"component": "kubelet", "host": "node"},
        "firstTimestamp": _stamp(at),
        "lastTimestamp": _stamp(at),
        "count": 1,
        "type": etype,
        "eventTime": None,
    }


def _logs(pods: list[dict[str, Any]], lines: int) -> LogBook:
    """``lines`` lines per failed container, spread over its life, under its container id."""
    book = LogBook()
    for pod in pods:
        for status in pod["status"]["containerStatuses"]:
            ended = status["state"].get("terminated")
            if not ended:
                continue
            key = (NAMESPACE, pod["metadata"]["name"], status["name"])
            short = ended["containerID"].split("://")[-1]
            for n in range(lines):
                at = START + timedelta(minutes=2, seconds=n * 4080 / lines)
                book.lines[key].append(LogLine(at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), short, f"rank step {n} loss 2.31"))
    return book


def build_store(pods: int, events: int, ours: int, failed: int) -> Store:
    mine = [_pod(f"{EXPERIMENT}-worker-{i}", EXPERIMENT, f"aks-h100-vmss{i:06d}", i < failed) for i in range(pods)]
    theirs = [_pod(f"other-run-worker-{i}", "other-run", f"aks-h100-vmss{pods + i:06d}", False) for i in range(pods)]
    nodes = [_node(f"aks-h100-vmss{i:06d}") for i in range(2 * pods)]
    step = WINDOW.seconds / max(events, 1)
    found = []
    for i in range(events):
        target = (mine if i < ours else theirs)[i % pods]["metadata"]["name"]
        spread = (i * 7919) % events  # interleave the experiment's events with the others' in time
        found.append(_event(i, "Pod", target, NAMESPACE, START + timedelta(seconds=spread * step)))
    node_events = [
        _event(
            events + i, "Node", nodes[i % len(nodes)]["metadata"]["name"], "default", START + timedelta(seconds=i * 3)
        )
        for i in range(2000)
    ]
    return Store.build(mine + theirs, found + node_events, nodes, _logs(mine, 2000))


def ours(kubeconfig: Path) -> dict[str, Any]:
    """Discover + collect, timed; CPU split between this thread (the collector) and the rest of the process (the
    double's handler threads, and the collector's few log readers, which are counted with the double)."""
    api_client, namespace = build_api_client(KubernetesSettings(kubeconfig=str(kubeconfig)))
    collector = KubernetesCollector(api_client, namespace, Settings(deadline_s=600))
    started, process, thread = time.perf_counter(), time.process_time(), time.thread_time()
    query = Query(EXPERIMENT, NAMESPACE, WINDOW)
    discovery = collector.discover(query)
    timeline = collector.collect(Scope(query, discovery.pods, discovery.nodes))
    elapsed = time.perf_counter() - started
    collector_cpu = time.thread_time() - thread
    logs = sum(1 for e in timeline if e.kind == Kind.LOG_LINE)
    return {
        "seconds": elapsed,
        "collector_cpu": collector_cpu,
        "double_cpu": time.process_time() - process - collector_cpu,
        "requests": collector.requests,
        "pods": len(discovery.pods),
        "timeline": len(timeline),
        "log_lines": logs,
        "detail": collector.detail,
    }


def naive(url: str) -> dict[str, Any]:
    core = client.CoreV1Api(client.ApiClient(client.Configuration(host=url)))
    started = time.perf_counter()
    pods, token = [], None
    while True:
        page = json.loads(
            core.list_namespaced_pod(
                NAMESPACE, label_selector=f"{KEY}={EXPERIMENT}", limit=500, _continue=token, _preload_content=False
            ).data
        )
        pods += page["items"]
        token = page["metadata"].get("continue")
        if not token:
            break
    events = 0
    for pod in pods:
        name = pod["metadata"]["name"]
        _ = core.read_namespaced_pod(name, NAMESPACE, _preload_content=False).data  # GET
        by_pod = f"involvedObject.name={name},involvedObject.namespace={NAMESPACE}"
        events += len(
            json.loads(core.list_namespaced_event(NAMESPACE, field_selector=by_pod, _preload_content=False).data)[
                "items"
            ]
        )
        core.read_namespaced_pod(name, NAMESPACE, _preload_content=False)  # describe: GET + event search
        core.list_namespaced_event(
            NAMESPACE, field_selector=by_pod + f",involvedObject.uid=uid-{name}", _preload_content=False
        )
        core.read_node(pod["spec"]["nodeName"], _preload_content=False)
    return {"seconds": time.perf_counter() - started, "pods": len(pods), "events": events}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=512)
    parser.add_argument("--events", type=int, default=50_000)
    parser.add_argument("--ours", type=int, default=20_000, help="events about the experiment's pods")
    parser.add_argument("--runs", type=int, default=2, help="the first fills the double's caches; the last is shown")
    parser.add_argument("--failed", type=int, default=32, help="failed pods (their last log lines are read)")
    args = parser.parse_args()
    store = build_store(args.pods, args.events, args.ours, args.failed)
    with KubeDouble(store) as double, tempfile.TemporaryDirectory() as folder:
        kubeconfig = write_kubeconfig(Path(folder) / "kubeconfig", double.url, NAMESPACE)
        for run in range(args.runs):
            double.reset()
            result = ours(kubeconfig)
            print(
                f"run {run + 1}: {result['seconds']:.2f} s, collector {result['collector_cpu']:.2f} CPU-s, "
                f"double {result['double_cpu']:.2f} CPU-s{' (its caches filling)' if run == 0 else ''}"
            )
        mine = list(double.requests)
        double.reset()
        baseline = naive(double.url)
        theirs = list(double.requests)
    api = [r for r in mine if not r.is_log]
    print(
        f"experiment: {args.pods} pods on {args.pods} nodes; namespace: {2 * args.pods} pods, {args.events} events "
        f"({args.ours} about the experiment); {2 * args.pods} nodes, 2000 node events"
    )
    print(
        f"whathappened: {len(api)} requests besides logs (+{len(mine) - len(api)} log reads), {result['seconds']:.2f} s "
        f"(collector {result['collector_cpu']:.2f} CPU-s, double {result['double_cpu']:.2f} CPU-s), {result['detail']}"
    )
    for request in api:
        print(f"    GET {request.path} {dict(request.query)}")
    print(f"naive:        {len(theirs)} requests, {baseline['seconds']:.2f} s")
    print(
        f"ratio:        {len(theirs) / max(len(api), 1):.0f}x fewer requests, {baseline['seconds'] / result['seconds']:.1f}x faster"
    )


if __name__ == "__main__":
    main()
