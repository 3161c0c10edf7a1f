"""Benchmark: the log collector's bounded, server-filtered searches against the naive way, on a large experiment.

Generates a synthetic log store in the shape Filebeat writes (ECS, ``logs-k8s-*`` container lines and
``logs-node-*`` kernel lines): P pods (8 per node) of one experiment over H hours, D documents in all, mostly
ordinary training chatter (step/loss lines, dataloader and NCCL INFO lines), with a few hundred signature lines
planted (an Xid 79 on one node and its GPU UUID line, CUDA and NCCL errors on the ranks, a traceback, a
checkpoint every hour, kernel OOM kills, NCCL watchdog timeouts), plus documents of another experiment on the
same nodes that no query may return. Loads it into osmem-server (in-memory OpenSearch API), then:

- smart: LogCollector.discover + collect, exactly as the CLI runs them;
- naive: every document of every pod and node of the experiment in the window, paged with search_after at
  10,000 a page, matched locally with the same parser.

Reports requests, documents transferred and wall time for both, and checks that both give the same timeline.
Not part of the test suite.

    .venv/bin/python bench/logs_bench.py                          # 1,000,000 docs, 512 pods, 6 h
    .venv/bin/python bench/logs_bench.py --docs 100000 --pods 64  # a quick look

With ``--experiment DIR`` (a cached ``bench.run`` experiment, e.g. bench/out/scale-512) it measures instead what
the CLI's log source costs on that experiment: osmem-server seeded with the experiment's sampled log file (read
only), the scope the Kubernetes source would hand over (from DIR/kubernetes/*.json), then ``--runs`` times a
fresh collector's discover + collect with the CLI's label keys, printing every request (wall time, osmem-server
CPU seconds during it, bytes) and the totals per run (the CLI adds one ``GET /`` to tell Elasticsearch from
OpenSearch).

    .venv/bin/python -m bench.logs_bench --experiment bench/out/scale-512 --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from elastic_transport import HttpHeaders  # noqa: E402
from elastic_transport._node import NodeApiResponse  # noqa: E402
from elastic_transport.client_utils import DEFAULT, DefaultType  # noqa: E402
from elasticsearch import Elasticsearch  # noqa: E402
from whathappened.collectors.kubernetes.snapshot import SnapshotKubernetes  # noqa: E402
from whathappened.collectors.logs import parse as log_parse  # noqa: E402
from whathappened.collectors.logs.elasticsearch import query as log_query  # noqa: E402
from whathappened.collectors.logs.elasticsearch.collector import (  # noqa: E402
    LogCollector,
    OpenSearchNode,
    client_options,
    make_client,
)

from bench.logs_store import EXPERIMENT, NAMESPACE, START, generate, write_seed  # noqa: E402
from tests.fixtures.search import osmem_binary  # noqa: E402
from tests.support import free_port, load_scenario, server_process  # noqa: E402
from whathappened.config import ElasticsearchSettings  # noqa: E402
from whathappened.kinds import Kind  # noqa: E402
from whathappened.model import Window  # noqa: E402
from whathappened.scope import Query, Scope, merge_nodes, merge_pods  # noqa: E402


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def smart(settings: ElasticsearchSettings, query: Query) -> dict[str, Any]:
    collector = LogCollector(make_client(settings, flavor="opensearch", timeout_s=120), settings)
    began = time.perf_counter()
    found = collector.discover(query)
    discovered = time.perf_counter()
    discover_requests, discover_docs = collector.requests, collector.documents
    scope = Scope(query, found.pods, found.nodes)
    events = collector.collect(scope)
    done = time.perf_counter()
    return {
        "pods": len(found.pods),
        "nodes": len(found.nodes),
        "discover_s": discovered - began,
        "discover_requests": discover_requests,
        "discover_docs": discover_docs,
        "collect_s": done - discovered,
        "collect_requests": collector.requests - discover_requests,
        "collect_docs": collector.documents - discover_docs,
        "events": events,
        "scope": scope,
    }


def naive(settings: ElasticsearchSettings, scope: Scope) -> dict[str, Any]:
    """Every document of the experiment's pods and nodes in the window, then the same local matching."""
    client = make_client(settings, flavor="opensearch", timeout_s=600)
    mapping = log_parse.mapping_for("ecs")
    window = scope.window
    query = {
        "bool": {
            "filter": [log_query.in_window(mapping.timestamp, window.start, window.end)],
            "should": [
                log_query.exact(mapping.pod, scope.pod_names),
                {"bool": {"filter": [log_query.exact("host.name", scope.node_names)], "must_not": [{"exists": {"field": mapping.pod}}]}},
            ],
            "minimum_should_match": 1,
        }
    }  # fmt: skip
    docs: list[tuple[str, dict[str, Any]]] = []
    requests, after, began = 0, None, time.perf_counter()
    while True:
        body: dict[str, Any] = {
            "size": 10000,
            "query": query,
            "sort": log_query.sort_by_time(mapping),
            "track_total_hits": False,
        }
        if after is not None:
            body["search_after"] = after
        hits = client.search(index=settings.log_index, **body).body["hits"]["hits"]
        requests += 1
        docs.extend((h["_index"], h["_source"]) for h in hits)
        if len(hits) < 10000:
            break
        after = hits[-1]["sort"]
    fetched = time.perf_counter()
    events = log_parse.events_from_documents(docs, scope, mapping)
    return {
        "requests": requests,
        "docs": len(docs),
        "fetch_s": fetched - began,
        "match_s": time.perf_counter() - fetched,
        "events": events,
    }


def report(
    args: argparse.Namespace,
    loaded: int,
    load_s: float,
    load_cpu: float,
    rss: float,
    fast: dict[str, Any],
    slow: dict[str, Any],
) -> str:
    signature = [e for e in fast["events"] if e.kind != Kind.LOG_LINE]
    same = sorted(map(repr, (e.identity for e in fast["events"]))) == sorted(
        map(repr, (e.identity for e in slow["events"]))
    )
    fast_docs = fast["discover_docs"] + fast["collect_docs"]
    fast_s = fast["discover_s"] + fast["collect_s"]
    slow_s = slow["fetch_s"] + slow["match_s"]
    rows = [
        f"documents in the store: {loaded:,} ({args.pods} pods on {args.pods // 8} nodes, {args.hours} h); osmem-server loaded it in {load_s:.0f} s ({load_cpu:.0f} CPU-s), RSS {rss:,.0f} MiB",
        f"smart  discover: {fast['discover_requests']} requests, {fast['discover_docs']} documents, {fast['discover_s']:.2f} s -> {fast['pods']} pods, {fast['nodes']} nodes",
        f"smart  collect:  {fast['collect_requests']} requests, {fast['collect_docs']:,} documents, {fast['collect_s']:.2f} s -> {len(fast['events'])} events ({len(signature)} signature events)",
        f"smart  total:    {fast['discover_requests'] + fast['collect_requests']} requests, {fast_docs:,} documents, {fast_s:.2f} s",
        f"naive  total:    {slow['requests']} requests, {slow['docs']:,} documents, {slow_s:.2f} s (fetch {slow['fetch_s']:.2f} s, match {slow['match_s']:.2f} s)",
        f"ratio:           {slow['docs'] / max(fast_docs, 1):,.0f}x fewer documents, {slow_s / max(fast_s, 1e-9):,.1f}x faster; same timeline: {same}",
    ]  # fmt: skip
    return "\n".join(rows)


# --- the CLI's share on a cached end-to-end experiment -------------------------------------------------------


@dataclass
class Request:
    what: str
    seconds: float
    server_cpu_s: float
    sent: int
    received: int


def recording_node(pid: int, log: list[Request]) -> type[OpenSearchNode]:
    """The collector's own node class, noting each request's wall time, bytes and osmem-server's CPU during it
    (with requests in flight at once, each one's CPU figure includes the others')."""

    class Recording(OpenSearchNode):
        def perform_request(
            self,
            method: str,
            target: str,
            body: bytes | None = None,
            headers: HttpHeaders | None = None,
            request_timeout: DefaultType | float | None = DEFAULT,
        ) -> NodeApiResponse:
            cpu, began = cpu_s(pid), time.perf_counter()
            response = super().perform_request(method, target, body, headers, request_timeout)
            seconds = time.perf_counter() - began
            size = len(json.dumps(response.body)) if not isinstance(response.body, bytes | str) else len(response.body)
            what = f"{method} {target.split('?', 1)[0]} {_shape(body)}"
            log.append(Request(what, seconds, cpu_s(pid) - cpu, len(body or b""), size))
            return response

    return Recording


def _shape(body: bytes | None) -> str:
    """A short name for a search body: what its filters are made of."""
    if not body:
        return ""
    text = body.decode("utf-8", errors="replace")
    kinds = [k for k in ("regexp", "match_phrase", "composite", "exists", "range", "terms") if f'"{k}"' in text]
    return f"[{len(text.splitlines())} lines: {' '.join(kinds)}]"


def experiment_scope(folder: Path, query: Query) -> tuple[Scope, float]:
    """The scope the CLI's Kubernetes source would name (its snapshot reader over the same objects)."""
    began = time.perf_counter()
    found = SnapshotKubernetes(folder).discover(query)
    return Scope(query, merge_pods([found.pods]), merge_nodes([found.nodes])), time.perf_counter() - began


def one_cli_share(
    url: str, pid: int, query: Query, kube: Scope
) -> tuple[LogCollector, list[Request], float, float, float]:
    """One fresh collector (a new client: connections are not reused across CLI runs), as gather runs it."""
    log: list[Request] = []
    settings = ElasticsearchSettings(url=url, log_index="logs-*", event_index="kube-events-*")
    client = Elasticsearch(node_class=recording_node(pid, log), **client_options(settings, timeout_s=120))
    collector = LogCollector(client, settings)
    cpu, began, mine = cpu_s(pid), time.perf_counter(), time.process_time()
    found = collector.discover(query)
    scope = Scope(query, merge_pods([kube.pods, found.pods]), merge_nodes([kube.nodes, found.nodes]))
    collector.collect(scope)
    return collector, log, time.perf_counter() - began, cpu_s(pid) - cpu, time.process_time() - mine


def experiment_main(folder: Path, runs: int, stride: int) -> None:
    scenario = load_scenario(folder)
    seed = folder / f"logs.sample-{stride}.ndjson"
    if not seed.exists():
        raise SystemExit(f"{seed} is missing: bench.run makes it (this benchmark only reads it)")
    query = Query(
        scenario.experiment, scenario.namespace, Window(scenario.start, scenario.end)
    )  # label keys: as the CLI
    kube, kube_s = experiment_scope(folder, query)
    print(f"{folder.name}: scope of {len(kube.pods)} pods, {len(kube.node_names)} nodes ({kube_s:.1f} s to read)")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [osmem_binary(), "--addr", f"127.0.0.1:{port}", "--no-ja", "--no-stdin-watch"]
    command += ["--parent-pid", str(os.getpid()), "--seed", str(seed)]
    workdir = Path(tempfile.mkdtemp(prefix="logs-bench-"))
    with server_process(command, f"{url}/", workdir / "osmem.log", timeout=3600) as process:
        print(
            f"osmem-server seeded from {seed.name}: {cpu_s(process.pid):.0f} CPU-s, RSS {rss_mib(process.pid):,.0f} MiB"
        )
        for run in range(runs + 1):
            collector, log, seconds, server, client = one_cli_share(url, process.pid, query, kube)
            label = "warm-up" if run == 0 else f"run {run}"
            print(
                f"{label}: {collector.requests} requests, {seconds:.2f} s, osmem {server:.2f} CPU-s, client {client:.2f} CPU-s, "
                f"{collector.documents:,} documents -> {collector.detail}"
            )
            for request in log:
                print(
                    f"    {request.seconds:6.3f} s  osmem {request.server_cpu_s:5.2f} CPU-s  "
                    f"sent {request.sent:>8,} B  got {request.received:>9,} B  {request.what}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--experiment", type=Path, help="a cached bench.run experiment folder (see above)")
    parser.add_argument("--runs", type=int, default=3, help="with --experiment: measured runs after a warm-up")
    parser.add_argument("--stride", type=int, default=128, help="with --experiment: the sampled log file's stride")
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--pods", type=int, default=512)
    parser.add_argument("--hours", type=float, default=6.0)
    parser.add_argument("--skip-naive", action="store_true")
    parser.add_argument("--workdir", default=str(Path(tempfile.gettempdir()) / "whathappened-logs-bench"))
    args = parser.parse_args()
    if args.experiment is not None:
        experiment_main(args.experiment, args.runs, args.stride)
        return
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    seed = workdir / f"logs-{args.docs}-{args.pods}-{args.hours:g}h.ndjson"
    if not seed.exists():
        write_seed(seed, generate(args.docs, args.pods, args.hours))
    loaded = sum(1 for _ in seed.open()) // 2
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        osmem_binary(),
        "--addr",
        f"127.0.0.1:{port}",
        "--no-ja",
        "--no-stdin-watch",
        "--parent-pid",
        str(os.getpid()),
    ]
    command += ["--seed", str(seed)]
    began = time.perf_counter()
    with server_process(command, f"{url}/", workdir / "osmem.log", timeout=3 * 3600) as process:
        load_s = time.perf_counter() - began
        load_cpu = cpu_s(process.pid)
        rss = rss_mib(process.pid)
        settings = ElasticsearchSettings(url=url, log_index="logs-*", event_index="kube-events-*")
        window = Window(START, START + timedelta(hours=args.hours))
        query = Query(EXPERIMENT, NAMESPACE, window)
        fast = smart(settings, query)
        slow = {"requests": 0, "docs": 0, "fetch_s": 0.0, "match_s": 0.0, "events": fast["events"]}
        if not args.skip_naive:
            slow = naive(settings, fast["scope"])
        print(report(args, loaded, load_s, load_cpu, rss, fast, slow))


if __name__ == "__main__":
    main()
