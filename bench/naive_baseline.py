"""The naive way to find out why a large run died: a shell loop of kubectl and curl, one pod at a time.

What a person (or a quick script) does without whathappened, against the same three servers:

    kubectl get pods -l KEY=EXPERIMENT -o json                      # the experiment's pods
    for each pod:
      kubectl describe pod POD                                      # status + its events
      kubectl logs POD --all-containers --tail=200                  # the end of its logs
      kubectl get node NODE -o json                                 # the node it ran on
      curl Prometheus /api/v1/query_range  x3                       # Xid, utilization, temperature of the node's GPUs
      curl search /logs-*/_search  x2                               # the pod's log lines, the node's kernel lines

then greps what came back. Only the gathering is timed (reading it all and correlating by hand is not), the loop
is sequential as such a script is, and kubectl keeps its discovery cache between calls (a fresh HOME per run,
like a user's ~/.kube/cache). Requests are counted at the servers' side where we can (the Kubernetes double
records every request kubectl makes, discovery included) and one per curl otherwise.

    .venv/bin/python -m bench.run --naive-only           # through bench.run, which starts the servers
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.loaders import Loaded
from synth.scale import SCALE_FIELDS

LOG_TAIL = 200
SIGNS = ("Xid", "error", "Error", "OOM", "timeout", "Killed")


@dataclass
class NaiveResult:
    pods: int  # pods walked
    total_pods: int  # pods of the experiment
    seconds: float
    requests: dict[str, int] = field(default_factory=dict)
    bytes: int = 0
    hits: int = 0  # lines matching SIGNS: what the person then reads

    @property
    def extrapolated_seconds(self) -> float:
        """The whole experiment's time when only a sample of pods was walked (the loop is linear in pods)."""
        return self.seconds * self.total_pods / max(self.pods, 1)

    @property
    def extrapolated_requests(self) -> dict[str, int]:
        """Requests for every pod: all of them are per pod but the one pod listing."""
        scale = self.total_pods / max(self.pods, 1)
        return {name: round(1 + (n - 1) * scale) if name == "kubernetes" else round(n * scale)
                for name, n in self.requests.items()}  # fmt: skip


class _Shell:
    """Runs the commands, counts curls and bytes, greps the answers."""

    def __init__(self, home: Path) -> None:
        self.env = {"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(home)}
        self.curls = {"prometheus": 0, "logs": 0}
        self.bytes = 0
        self.hits = 0

    def run(self, command: Sequence[str], stdin: str | None = None) -> str:
        done = subprocess.run(list(command), input=stdin, capture_output=True, text=True, env=self.env, check=False)
        self.bytes += len(done.stdout)
        self.hits += sum(1 for line in done.stdout.splitlines() if any(s in line for s in SIGNS))
        return done.stdout

    def curl(self, source: str, command: Sequence[str], stdin: str | None = None) -> str:
        self.curls[source] += 1
        return self.run(["curl", "-sS", *command], stdin)


def _kubectl(loaded: Loaded) -> list[str]:
    return [shutil.which("kubectl") or "kubectl", "--kubeconfig", str(loaded.kubeconfig)]


def _prom(shell: _Shell, loaded: Loaded, node: str) -> None:
    start, end = loaded.scenario.start.timestamp(), loaded.scenario.end.timestamp()
    for metric in SCALE_FIELDS:
        query = f'query={metric}{{Hostname="{node}"}}'
        params = [query, f"start={start}", f"end={end}", "step=15s"]
        shell.curl("prometheus", ["-G", f"{loaded.prometheus_url}/api/v1/query_range", *_encoded(params)])


def _encoded(params: Sequence[str]) -> list[str]:
    return [part for param in params for part in ("--data-urlencode", param)]


def _search(shell: _Shell, loaded: Loaded, field_name: str, value: str) -> None:
    window = {"gte": loaded.scenario.start.isoformat(), "lte": loaded.scenario.end.isoformat()}
    body = {
        "size": 10000,
        "sort": [{"@timestamp": "asc"}],
        "query": {"bool": {"filter": [{"match_phrase": {field_name: value}}, {"range": {"@timestamp": window}}]}},
    }
    url = f"{loaded.search_url}/logs-*/_search"
    shell.curl("logs", ["-H", "Content-Type: application/json", url, "--data-binary", "@-"], json.dumps(body))


def naive(loaded: Loaded, sample: int | None = None) -> NaiveResult:
    """Walk the experiment's pods the naive way (the first ``sample`` of them if given)."""
    scenario = loaded.scenario
    kubectl = _kubectl(loaded)
    with tempfile.TemporaryDirectory() as home:
        shell = _Shell(Path(home))
        before = len(loaded.kube.requests)
        began = time.perf_counter()
        selector = f"{scenario.label_key}={scenario.experiment}"
        listing = json.loads(
            shell.run([*kubectl, "-n", scenario.namespace, "get", "pods", "-l", selector, "-o", "json"])
        )
        pods = listing.get("items", [])
        walked = pods[:sample] if sample else pods
        for pod in walked:
            name, node = pod["metadata"]["name"], pod["spec"].get("nodeName", "")
            shell.run([*kubectl, "-n", scenario.namespace, "describe", "pod", name])
            shell.run([*kubectl, "-n", scenario.namespace, "logs", name, "--all-containers", f"--tail={LOG_TAIL}"])
            shell.run([*kubectl, "get", "node", node, "-o", "json"])
            _prom(shell, loaded, node)
            _search(shell, loaded, "kubernetes.pod.name", name)
            _search(shell, loaded, "host.name", node)
        seconds = time.perf_counter() - began
        kube_requests = len(loaded.kube.requests) - before
    requests = {"kubernetes": kube_requests, **shell.curls}
    return NaiveResult(len(walked), len(pods), seconds, requests, shell.bytes, shell.hits)
