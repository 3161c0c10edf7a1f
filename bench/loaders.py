"""Loaders for the end-to-end benchmark: the generated experiment, cached under bench/out/, served on loopback by
the Kubernetes API double, a real Prometheus (backfilled with promtool) and osmem-server (bulk-loaded).

The servers are the test suite's own: tests/doubles/kube, tests/fixtures/prometheus.py's promtool backfill,
tests/fixtures/search.py's osmem-server binary and
bench/logs_bench.py's bulk loader. What is new here is only what a million documents need: the log files are
streamed (never read whole) both into osmem-server and into the double's container-log book.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.doubles.kube import KubeDouble, Store
from tests.doubles.kube.store import LogBook, LogLine
from tests.fixtures.kube import write_kubeconfig
from tests.fixtures.prometheus import backfill_prometheus
from tests.fixtures.search import osmem_binary
from tests.support import REPO, Scenario, free_port, load_scenario, require_binary, server_process

OUT = REPO / "bench" / "out"
# The generator's filler: per-rank progress lines and the fleet's NIC-link kernel chatter. The story's own lines
# (the Xid, the CUDA error, every rank's NCCL watchdog lines) are kept whole when the log store is sampled.
FILLER = re.compile(r'^\{"@timestamp": "[^"]+", "message": "(\[rank\d+\] step \d+ loss |mlx5_core |IPv6: ADDRCONF)')
# Archived events sampled as the filler is: the other workloads' (synth/scale.py _noise_events) and the routine
# start of every pod of every attempt (12,000 pods' worth at 4,096 pods and three attempts); the experiment's other
# events are kept whole.
NOISE_EVENT = re.compile(
    r'^\{"apiVersion": "v1", "involvedObject": \{"apiVersion": "[^"]*", "kind": "\w+", '
    r'"name": "(eval-harness-|reward-model-serve-|hparam-sweep-|ckpt-gc)'
)
ROUTINE_EVENT = re.compile(r'"reason": "(?:Scheduled|Pulling|Pulled|Created|Started)", "reportingComponent"')


def _filler(line: str) -> bool:
    if FILLER.match(line) or NOISE_EVENT.match(line):
        return True
    return line.startswith('{"apiVersion": "v1", "involvedObject"') and ROUTINE_EVENT.search(line) is not None


@dataclass(frozen=True)
class Loaded:
    """Where one experiment is served, and what loading it cost."""

    scenario: Scenario
    kubeconfig: Path
    kube: KubeDouble
    prometheus_url: str
    search_url: str
    search_pid: int
    prometheus_pid: int
    seconds: dict[str, float]
    documents: int


@dataclass(frozen=True)
class Shape:
    """The scale experiment's shape besides its pods: the window, the JobSet's attempts, the API's event TTL."""

    hours: float = 6.0
    attempts: int = 1
    event_ttl_hours: float | None = None  # None: the API keeps every event of the window

    def folder_name(self, pods: int) -> str:
        if self == Shape():
            return f"scale-{pods}"
        ttl = "" if self.event_ttl_hours is None else f"-ttl{self.event_ttl_hours:g}h"
        return f"scale-{pods}-{self.hours:g}h-a{self.attempts}{ttl}"

    def arguments(self) -> list[str]:
        ttl = [] if self.event_ttl_hours is None else ["--event-ttl", f"{self.event_ttl_hours:g}"]
        return ["--hours", f"{self.hours:g}", "--attempts", str(self.attempts), *ttl]


SIX_HOURS = Shape()  # the 512-pod headline experiment: 6 h, one attempt, every event kept


def experiment(pods: int, root: Path = OUT, shape: Shape = SIX_HOURS) -> Path:
    """The generator's scale experiment for ``pods`` pods (events and documents scale with it), made once."""
    folder = root / shape.folder_name(pods)
    done = folder / ".complete"
    made_by = folder / ".generator"
    if done.exists() and (not made_by.exists() or made_by.read_text() != generator_fingerprint()):
        print(f"  {folder.name} was made by another version of the generator: making it again", flush=True)
        shutil.rmtree(folder)
    if not done.exists():
        began = time.monotonic()
        # A separate process: the generator's memory goes back to the system before the servers load.
        command = [
            sys.executable,
            "-m",
            "synth",
            "scale",
            "--pods",
            str(pods),
            "--out",
            str(folder),
            *shape.arguments(),
        ]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=REPO)
        done.write_text(f"{time.monotonic() - began:.1f}\n")
        made_by.write_text(generator_fingerprint())
    return folder


def generator_fingerprint() -> str:
    """A hash of the generator's source: a cached experiment made by an older generator is made again."""
    digest = hashlib.sha256()
    for path in sorted((REPO / "synth").glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16] + "\n"


def generation_seconds(folder: Path) -> float:
    return float((folder / ".complete").read_text())


def tsdb(folder: Path) -> Path:
    """The experiment's metrics backfilled by promtool into a TSDB next to it (cached)."""
    data = folder / "tsdb"
    done = folder / ".tsdb-complete"
    if not done.exists():
        began = time.monotonic()
        backfill_prometheus(folder / "prometheus.om.gz", data)
        done.write_text(f"{time.monotonic() - began:.1f}\n")
    return data


def sampled_logs(folder: Path, stride: int) -> Path:
    """logs.ndjson with every story document but only one in ``stride`` of the filler lines (cached).

    osmem-server keeps about 55 KB of memory per document and indexes a few hundred a second on this machine,
    so the generator's 1,000,000 documents (about 55 GB) cannot be held here: see bench/README.md.
    """
    if stride <= 1:
        return folder / "logs.ndjson"
    path = folder / f"logs.sample-{stride}.ndjson"
    if path.exists():
        return path
    seen, keep, action = 0, False, ""
    with (folder / "logs.ndjson").open(encoding="utf-8") as source, path.with_suffix(".part").open("w") as out:
        for line in source:
            if line.startswith('{"create"') or line.startswith('{"index"'):
                action = line
                continue
            keep = True
            if _filler(line):
                keep = seen % stride == 0
                seen += 1
            if keep:
                out.write(action)
                out.write(line)
    path.with_suffix(".part").rename(path)
    return path


def _container_line(doc: dict[str, Any]) -> tuple[tuple[str, str, str], LogLine] | None:
    kube = doc.get("kubernetes") or {}
    if not kube.get("pod"):
        return None
    key = (kube.get("namespace", ""), kube["pod"].get("name", ""), (kube.get("container") or {}).get("name", ""))
    cid = (doc.get("container") or {}).get("id", "")
    return key, LogLine(doc.get("@timestamp", ""), cid, str(doc.get("message", "")))


def log_book(path: Path) -> LogBook:
    """LogBook.from_ndjson, streamed line by line: the double's container logs without reading 600 MB at once."""
    book = LogBook()
    with path.open(encoding="utf-8") as stream:
        for raw in stream:
            if raw.startswith('{"create"') or raw.startswith('{"index"') or not raw.strip():
                continue
            found = _container_line(json.loads(raw))
            if found is not None:
                book.lines[found[0]].append(found[1])
    for lines in book.lines.values():
        lines.sort(key=lambda line: line.timestamp)
    return book


def kube_store(folder: Path, namespace: str, logs: Path) -> Store:
    def items(name: str) -> list[dict[str, Any]]:
        path = folder / "kubernetes" / f"{name}.json"
        return list(json.loads(path.read_text()).get("items", [])) if path.is_file() else []

    return Store.build(items("pods"), items("events"), items("nodes"), log_book(logs), [namespace])


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _search_server(work: Path, seed: Path) -> tuple[str, contextlib.AbstractContextManager[subprocess.Popen[bytes]]]:
    """osmem-server seeded from the bulk NDJSON at start (much faster than HTTP _bulk, as bench/logs_bench.py does)."""
    url = f"http://127.0.0.1:{free_port()}"
    command = [osmem_binary(), "--addr", url.removeprefix("http://"), "--no-ja", "--no-stdin-watch"]
    command += ["--parent-pid", str(os.getpid()), "--seed", str(seed)]
    return url, server_process(command, f"{url}/", work / "osmem.log", timeout=3 * 3600)


def count_documents(path: Path) -> int:
    with path.open(encoding="utf-8") as stream:
        return sum(1 for line in stream if line.strip() and not line.startswith(('{"create"', '{"index"')))


@contextlib.contextmanager
def serve(folder: Path, log_stride: int = 1, say: Any = print, writable: bool = False) -> Iterator[Loaded]:
    """All three servers loaded with one experiment, on loopback, stopped on exit; ``writable``: the Kubernetes
    double takes the watch's writes (Events, annotations)."""
    scenario = load_scenario(folder)
    work = folder / "run"
    work.mkdir(exist_ok=True)
    seconds: dict[str, float] = {}
    with contextlib.ExitStack() as stack:
        began = time.monotonic()
        data = tsdb(folder)
        seconds["promtool"] = float((folder / ".tsdb-complete").read_text())
        url, prom_pid = stack.enter_context(prometheus(data, work))
        seconds["prometheus_start"] = time.monotonic() - began
        say(f"  prometheus ready at {url} ({seconds['prometheus_start']:.0f} s, promtool {seconds['promtool']:.0f} s)")
        logs = sampled_logs(folder, log_stride)
        documents = count_documents(logs)
        began = time.monotonic()
        search_url, starting = _search_server(work, logs)
        search = stack.enter_context(starting)
        seconds["osmem_load"] = time.monotonic() - began
        say(
            f"  osmem-server: {documents:,} documents in {seconds['osmem_load']:.0f} s, RSS {rss_mib(search.pid):,.0f} MiB"
        )
        began = time.monotonic()
        double = stack.enter_context(KubeDouble(kube_store(folder, scenario.namespace, logs), writable=writable))
        seconds["kube_load"] = time.monotonic() - began
        kubeconfig = write_kubeconfig(work / "kubeconfig", double.url, scenario.namespace)
        say(f"  kube double at {double.url} ({seconds['kube_load']:.0f} s)")
        yield Loaded(scenario, kubeconfig, double, url, search_url, search.pid, prom_pid, seconds, documents)


@contextlib.contextmanager
def prometheus(data: Path, work: Path) -> Iterator[tuple[str, int]]:
    """A real Prometheus on a backfilled TSDB (both benchmarks start it so), with a query log: every query's
    timings (queue, preparation, inner evaluation, result sort) and samples go to work/queries.log."""
    port = free_port()
    (work / "queries.log").unlink(missing_ok=True)  # Prometheus appends: each session's log is its own
    config = work / "prometheus.yml"
    config.write_text(f"global:\n  query_log_file: {work / 'queries.log'}\nscrape_configs: []\n")
    args = [
        require_binary("prometheus"),
        f"--config.file={config}",
        f"--storage.tsdb.path={data}",
        "--storage.tsdb.retention.time=100y",
        f"--web.listen-address=127.0.0.1:{port}",
    ]
    url = f"http://127.0.0.1:{port}"
    with server_process(args, f"{url}/-/ready", work / "prometheus.log", timeout=600) as process:
        yield url, process.pid


def query_log(work: Path) -> list[dict[str, Any]]:
    path = work / "queries.log"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def costliest_queries(work: Path, runs: int, top: int = 8, indent: str = "  ") -> str:
    """Prometheus' own figures from its query log, per run: execution seconds and samples touched by query."""
    spent: dict[str, list[float]] = {}
    for entry in query_log(work):
        text = " ".join(str(entry.get("params", {}).get("query", "")).split())
        stats = entry.get("stats", {})
        row = spent.setdefault(text, [0.0, 0.0])
        row[0] += float(stats.get("timings", {}).get("execTotalTime", 0))
        row[1] += float(stats.get("samples", {}).get("totalQueryableSamples", 0))
    runs = max(runs, 1)
    total = sum(r[0] for r in spent.values()) / runs
    rows = [f"{indent}prometheus: {len(spent)} distinct queries, {total:.2f} s of execution per run; the costliest:"]
    for text, (seconds, samples) in sorted(spent.items(), key=lambda kv: -kv[1][0])[:top]:
        rows.append(f"{indent}  {seconds / runs:6.2f} s {samples / runs / 1e6:7.1f} M samples  {text[:150]}")
    return "\n".join(rows)
