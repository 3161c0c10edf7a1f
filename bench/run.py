"""`make bench`: the installed CLI end to end on a large experiment, beside the naive way, and how it scales.

1. The generator's scale experiment (512 pods on 512 nodes x 8 GPUs, 6 h at a 15 s dcgm scrape, 50,000 Kubernetes
   events, 1,000,000 log documents, one GPU falling off the bus among the noise), cached under bench/out/.
2. Loaded into the Kubernetes API double, a real Prometheus (promtool backfill) and osmem-server, on loopback.
3. `.venv/bin/whathappened EXPERIMENT ... --output json` as a fresh process, several times: wall time (process
   start to exit, so interpreter start-up and imports are included), peak RSS (the CLI's own ru_maxrss, from
   wait4 in a small launcher: Linux keeps a process's peak RSS across exec), requests per source (the report's sources[].requests), and whether the verdict names the real fault.
4. The naive baseline (bench/naive_baseline.py: kubectl and curl per pod) against the same servers.
5. The scaling series: the same measurement for 64, 128, 256 and 512 pods (events and documents scale too).

Every figure is printed with the load average beside it; a JSON record goes to bench/out/results-*.json.

    .venv/bin/python -m bench.run                                 # everything (the naive loop takes minutes)
    .venv/bin/python -m bench.run --series 64,128 --runs 3 --naive-sample 32
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import pstats
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.loaders import OUT, SIX_HOURS, Loaded, Shape, costliest_queries, experiment, generation_seconds, serve
from bench.naive_baseline import NaiveResult, naive
from tests.acceptance import verdict_problems

CLI = Path(sys.executable).parent / "whathappened"


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.1f}/{five:.1f}/{fifteen:.1f}"


def say(text: str) -> None:
    print(text, flush=True)


@dataclass(frozen=True)
class Run:
    seconds: float
    max_rss_mib: float
    exit_code: int
    requests: dict[str, int]
    statuses: dict[str, str]
    source_seconds: dict[str, float]
    root_cause: str | None
    problems: int
    load: str
    cpu_s: float  # the CLI process's user + system CPU time: what it costs when it has a core to itself
    server_cpu_s: dict[str, float]  # CPU the servers spent answering it (the double runs in this process)
    attempt_roots: list[str] = field(default_factory=list)  # each attempt's root cause, "cause pod", oldest first


@dataclass
class Series:
    pods: int
    runs: list[Run] = field(default_factory=list)
    warmup: Run | None = None
    load_seconds: dict[str, float] = field(default_factory=dict)
    documents: int = 0

    @property
    def median_s(self) -> float:
        return statistics.median(r.seconds for r in self.runs)

    @property
    def median_cpu_s(self) -> float:
        return statistics.median(r.cpu_s for r in self.runs)

    @property
    def max_rss_mib(self) -> float:
        return max(r.max_rss_mib for r in self.runs)


EXTRA: list[str] = []  # more CLI arguments (bench.run --without SOURCE): to time one source's share


def cli_arguments(loaded: Loaded, deadline: str) -> list[str]:
    s = loaded.scenario
    return [
        str(CLI),
        s.experiment,
        "-n",
        s.namespace,
        *s.window_args,
        "--kubeconfig",
        str(loaded.kubeconfig),
        "--prometheus-url",
        loaded.prometheus_url,
        "--elasticsearch-url",
        loaded.search_url,
        "--log-index",
        "logs-*",
        "--event-index",
        "kube-events-*",
        "--deadline",
        deadline,
        "--output",
        "json",
        *EXTRA,
    ]


# Linux keeps a process's peak RSS across exec, so a CLI started straight from this (large) process would report
# this process's size as its own. A small interpreter forks it instead, and reports wall time, CPU and peak RSS
# of the CLI alone from wait4.
_LAUNCHER = """
import json, os, sys, time
began = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - began
with open(sys.argv[1], "w") as out:
    json.dump({"wall_s": wall, "max_rss_kib": usage.ru_maxrss, "cpu_s": usage.ru_utime + usage.ru_stime,
               "exit_code": os.waitstatus_to_exitcode(status)}, out)
"""


def run_cli(loaded: Loaded, deadline: str, out: Path) -> Run:
    """One fresh CLI process: wall time from spawn to reaped, its CPU and its own peak RSS (see _LAUNCHER)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}  # no user config, as the acceptance suite runs it
    stdout, stderr = out / "report.json", out / "stderr.txt"
    with stdout.open("wb") as so, stderr.open("wb") as se:
        state = load()
        servers = server_cpu(loaded)
        usage_file = out / "usage.json"
        launcher = [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(usage_file)]
        subprocess.run([*launcher, *cli_arguments(loaded, deadline)], stdout=so, stderr=se, env=env, check=False)
        usage = json.loads(usage_file.read_text())
        seconds = usage["wall_s"]
        spent = {name: cpu - servers[name] for name, cpu in server_cpu(loaded).items()}
    text = stdout.read_text()
    document: dict[str, Any] = json.loads(text) if text.startswith("{") else {}
    sources = document.get("sources", [])
    root = document.get("root_cause")
    return Run(
        seconds=seconds,
        max_rss_mib=usage["max_rss_kib"] / 1024,
        exit_code=usage["exit_code"],
        requests={s["name"]: s["requests"] for s in sources},
        statuses={s["name"]: s["status"] for s in sources},
        source_seconds={s["name"]: s["elapsed_s"] for s in sources},
        root_cause=root["pod"] if root else None,
        problems=len(verdict_problems(loaded.scenario, document)) if document else -1,
        load=state,
        cpu_s=usage["cpu_s"],
        server_cpu_s=spent,
        attempt_roots=[
            f"{(a.get('root_cause') or {}).get('cause')} {(a.get('root_cause') or {}).get('pod')}"
            for a in document.get("attempts", [])
        ],
    )


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_cpu(loaded: Loaded) -> dict[str, float]:
    """CPU seconds so far of each server: Prometheus, osmem-server, and this process (the Kubernetes double)."""
    return {
        "prometheus": _proc_cpu(loaded.prometheus_pid) if loaded.prometheus_pid else 0.0,
        "osmem": _proc_cpu(loaded.search_pid),
        "kube-double": time.process_time(),
    }


def profile_cli(loaded: Loaded, deadline: str, out: Path, top: int = 45) -> str:
    """One more run under cProfile: where the CLI's own time goes (cumulative, then own time)."""
    stats_path = out / "cli.prof"
    command = [sys.executable, "-m", "cProfile", "-o", str(stats_path), *cli_arguments(loaded, deadline)]
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    text = io.StringIO()
    stats = pstats.Stats(str(stats_path), stream=text)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(25)
    return text.getvalue()


def describe(run: Run, label: str) -> str:
    per_source = ", ".join(
        f"{name} {run.statuses[name]} {run.requests[name]} req {run.source_seconds[name]:.2f} s"
        for name in run.statuses
    )
    return (
        f"  {label}: {run.seconds:.2f} s (CLI CPU {run.cpu_s:.2f} s; servers' CPU "
        f"{', '.join(f'{k} {v:.2f} s' for k, v in run.server_cpu_s.items())}), "
        f"peak RSS {run.max_rss_mib:.0f} MiB, exit {run.exit_code}, "
        f"root cause {run.root_cause}, verdict problems {run.problems}; {per_source}; load {run.load}"
        + (f"; attempts: {' | '.join(run.attempt_roots)}" if len(run.attempt_roots) > 1 else "")
    )


def measure(
    pods: int,
    runs: int,
    deadline: str,
    stride: int,
    naive_sample: int | None,
    with_naive: bool,
    profile: bool = False,
    shape: Shape = SIX_HOURS,
) -> tuple[Series, NaiveResult | None]:
    say(f"== {pods} pods, {shape} (load {load()})")
    folder = experiment(pods, shape=shape)
    say(f"  experiment {folder} (generated in {generation_seconds(folder):.0f} s)")
    series = Series(pods)
    baseline = None
    with serve(folder, stride, say) as loaded:
        series.load_seconds, series.documents = loaded.seconds, loaded.documents
        out = folder / "run"
        series.warmup = run_cli(loaded, deadline, out)
        say(describe(series.warmup, "warm-up"))
        for i in range(runs):
            series.runs.append(run_cli(loaded, deadline, out))
            say(describe(series.runs[-1], f"run {i + 1}"))
        say(
            f"  median {series.median_s:.2f} s (CLI CPU {series.median_cpu_s:.2f} s), "
            f"peak RSS {series.max_rss_mib:.0f} MiB (load {load()})"
        )
        say(costliest_queries(out, len(series.runs) + 1))
        if profile:
            say(profile_cli(loaded, deadline, out))
        if with_naive:
            say(f"  naive baseline ({naive_sample or 'all'} pods, load {load()}) ...")
            baseline = naive(loaded, naive_sample)
            say(
                f"  naive: {baseline.pods}/{baseline.total_pods} pods in {baseline.seconds:.1f} s "
                f"(whole experiment {baseline.extrapolated_seconds:.0f} s), requests {baseline.requests}, "
                f"{baseline.bytes / 1e6:.0f} MB, {baseline.hits} matching lines (load {load()})"
            )
    return series, baseline


def machine() -> dict[str, str]:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "?")  # fmt: skip
    memory = next(line.split(":", 1)[1].strip() for line in Path("/proc/meminfo").read_text().splitlines()
                  if line.startswith("MemTotal"))  # fmt: skip
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    return {
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "memory": memory,
        "kernel": platform.release(),
        "commit": commit.stdout.strip(),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pods", type=int, default=512, help="the headline experiment")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--series", default="64,128,256,512", help="pod counts of the scaling series ('' for none)")
    p.add_argument("--series-runs", type=int, default=3)
    p.add_argument("--deadline", default="120s", help="per-source deadline given to the CLI")
    p.add_argument("--naive-sample", type=int, default=0, help="walk only this many pods naively (0: all)")
    p.add_argument("--no-naive", action="store_true")
    p.add_argument("--profile", action="store_true", help="one more CLI run under cProfile, top functions printed")
    p.add_argument("--log-stride", type=int, default=128, help="load 1 in N filler log lines (1: all; see README)")
    p.add_argument("--without", action="append", default=[], help="passed to the CLI: leave a source out")
    p.add_argument("--hours", type=float, default=6.0, help="the experiment's window")
    p.add_argument("--attempts", type=int, default=1, help="the JobSet's attempts (each earlier one ends in a fault)")
    p.add_argument("--event-ttl", type=float, default=None, help="hours the API keeps events (shorter: archived)")
    args = p.parse_args(argv)
    shape = Shape(args.hours, args.attempts, args.event_ttl)
    EXTRA[:] = [part for source in args.without for part in ("--without", source)]
    say(f"machine: {machine()}; load {load()}")
    head, baseline = measure(
        args.pods,
        args.runs,
        args.deadline,
        args.log_stride,
        args.naive_sample or None,
        not args.no_naive,
        args.profile,
        shape,
    )
    scaling = {args.pods: head}
    for pods in [int(x) for x in args.series.split(",") if x.strip()]:
        if pods not in scaling:
            scaling[pods] = measure(pods, args.series_runs, args.deadline, args.log_stride, None, False, shape=shape)[0]
    say("\n== summary")
    say(f"{args.pods} pods: median {head.median_s:.2f} s over {len(head.runs)} runs, peak RSS {head.max_rss_mib:.0f} MiB, "
        f"requests {head.runs[-1].requests}, root cause right: {all(r.problems == 0 for r in head.runs)}")  # fmt: skip
    if baseline is not None:
        say(f"naive: {baseline.extrapolated_seconds:.0f} s for {baseline.total_pods} pods (walked {baseline.pods}: "
            f"{baseline.seconds:.1f} s, requests {baseline.requests}), requests {baseline.extrapolated_requests}"
            f" -> {baseline.extrapolated_seconds / head.median_s:.0f}x slower")  # fmt: skip
    for pods in sorted(scaling):
        s = scaling[pods]
        say(
            f"  {pods:4d} pods: median {s.median_s:.2f} s, peak RSS {s.max_rss_mib:.0f} MiB, requests {s.runs[-1].requests}"
        )
    record = {
        "machine": machine(),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load": load(),
        "shape": asdict(shape),
        "series": {str(k): asdict(v) for k, v in scaling.items()},
        "naive": None if baseline is None else asdict(baseline),
    }
    path = OUT / f"results-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}.json"
    path.write_text(json.dumps(record, indent=2, default=str))
    say(f"record: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
