"""Benchmark: ``whathappened fleet`` over a generated month (synth/fleet.py), served as the tests serve it.

The history (default: 1,000 experiments over 512 nodes, 30 days) is written under bench/out/fleet-<n>-<nodes>/,
backfilled into one real Prometheus (promtool, three at a time) and its logs bulk-loaded into one osmem-server.
Then the installed CLI runs once as a fresh process (bench/run.py's launcher: wall time from spawn to reaped, its
CPU and its own peak RSS) with ``--output json``; its taxonomy is checked against the generator's truth.

    .venv/bin/python -m bench.fleet_bench [--experiments 1000] [--nodes 512] [--days 30] [--hold]

``--hold`` keeps the servers up after the run and prints the command, to run it again by hand (or profiled)
without loading the month again; Ctrl-C ends it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from bench.run import _LAUNCHER, _proc_cpu
from synth.fleet import write_history
from tests.fixtures.prometheus import prometheus_of
from tests.fixtures.search import SearchServer, default_indices, osmem_binary
from tests.support import free_port, server_process

CLI = Path(sys.executable).parent / "whathappened"
OUT = Path(__file__).parent / "out"
MONTH = ["--start", "2026-11-01T00:00:00Z", "--end", "2026-12-01T00:00:00Z"]


def say(text: str) -> None:
    print(f"{text} (load {os.getloadavg()[0]:.1f})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--experiments", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=512)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3, help="runs of the CLI; the median is reported")
    parser.add_argument("--hold", action="store_true", help="keep the servers up after the runs")
    args = parser.parse_args()
    folder = OUT / f"fleet-{args.experiments}-{args.nodes}"
    began = time.monotonic()
    plans = write_history(folder / "history", args.experiments, args.nodes, args.days)  # deterministic: rewritten
    truth = json.loads((folder / "history" / "truth.json").read_text())
    say(f"generated {len(plans)} experiments in {time.monotonic() - began:.0f} s")
    with tempfile.TemporaryDirectory(dir=OUT) as work:
        began = time.monotonic()
        sources = [folder / "history" / p.experiment / "prometheus.om.gz" for p in plans]
        search_port = free_port()
        search_url = f"http://127.0.0.1:{search_port}"
        osmem = [osmem_binary(), "--addr", f"127.0.0.1:{search_port}", "--no-ja", "--no-stdin-watch"]
        with (
            prometheus_of(sources, Path(work) / "prometheus") as url,
            server_process(osmem, f"{search_url}/", Path(work) / "o.log") as search,
        ):
            prometheus_pid = _pid_serving(Path(work) / "prometheus")
            say(f"backfilled and started in {time.monotonic() - began:.0f} s")
            store = SearchServer(search_url)
            began = time.monotonic()
            for p in plans:  # one store, as a cluster's: every experiment's documents in the daily indices
                store.load_ndjson("fleet", (folder / "history" / p.experiment / "logs.ndjson").read_text())
            say(f"logs loaded in {time.monotonic() - began:.0f} s")
            command = [str(CLI), "fleet", "--prometheus-url", url, *default_indices("fleet").arguments(search_url)]
            quiet = _settled(prometheus_pid)
            say(f"Prometheus done compacting the backfilled blocks after {quiet:.0f} s")
            runs = [_run(command, Path(work), prometheus_pid, search.pid) for _ in range(args.runs)]
            usage, servers, result = sorted(runs, key=lambda run: run[0]["wall_s"])[len(runs) // 2]  # the median
            walls = ", ".join(f"{run[0]['wall_s']:.1f}" for run in runs)
            if args.hold:
                say("holding the servers: " + " ".join([*command, *MONTH]))
                with contextlib.suppress(KeyboardInterrupt):
                    threading.Event().wait()
    wanted = Counter(t["cause"] for t in truth if t["cause"] != "completed")
    answers = [{row["cause"]: row["incidents"] for row in run[2]["by_cause"]} for run in runs]
    got = next((answer for answer in answers if answer != dict(wanted)), answers[0])  # a wrong one, if any
    lemons = [row["node"] for row in result["by_node"] if row["verdict"] == "replace"]
    say(
        f"fleet (median of {walls} s): {usage['wall_s']:.1f} s wall, {usage['cpu_s']:.1f} s CLI CPU, peak RSS "
        f"{usage['max_rss_kib'] / 1024:.0f} MiB, exit {usage['exit_code']}; server CPU: Prometheus "
        f"{servers['prometheus']:.1f} s, osmem-server {servers['osmem']:.1f} s; {result['totals']['incidents']} incidents "
        f"({sum(wanted.values())} generated), taxonomy {'right' if got == dict(wanted) else f'WRONG: {got} != {dict(wanted)}'}; "
        f"lemons to replace: {len(lemons)}"
    )


def _run(command: list[str], work: Path, prometheus: int, search: int) -> tuple[dict, dict, dict]:
    """One run of the installed CLI as a fresh process: its usage, the servers' CPU meanwhile, its answer."""
    usage_file, report = work / "usage.json", work / "fleet.json"
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    before = {"prometheus": _proc_cpu(prometheus), "osmem": _proc_cpu(search)}
    with report.open("wb") as out:
        launcher = [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(usage_file)]
        subprocess.run([*launcher, *command, *MONTH, "--output", "json"], stdout=out, env=env, check=True)
    servers = {"prometheus": _proc_cpu(prometheus) - before["prometheus"], "osmem": _proc_cpu(search) - before["osmem"]}
    return json.loads(usage_file.read_text()), servers, json.loads(report.read_text())


def _settled(pid: int, idle_share: float = 0.05, quiet_s: float = 5.0, limit_s: float = 900.0) -> float:
    """Seconds until the process used under ``idle_share`` of a core over ``quiet_s``: a freshly backfilled
    Prometheus compacts its two-hour blocks for minutes after it is ready, which a cluster's long-running one does
    not do while someone asks it about last month."""
    began = time.monotonic()
    while time.monotonic() - began < limit_s:
        before = _proc_cpu(pid)
        time.sleep(quiet_s)  # a CPU-use window, not a wait for readiness: there is no readiness to ask for
        if _proc_cpu(pid) - before < idle_share * quiet_s:
            break
    return time.monotonic() - began


def _pid_serving(folder: Path) -> int:
    """The Prometheus process whose storage is under ``folder`` (prometheus_of keeps the process to itself)."""
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if str(folder) in (proc / "cmdline").read_bytes().decode(errors="replace"):
                    return int(proc.name)
    raise RuntimeError(f"no Prometheus serves {folder}")


if __name__ == "__main__":
    main()
