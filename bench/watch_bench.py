"""Benchmark: ``whathappened watch`` on the 512-pod scale experiment, served as ``make bench`` serves it.

1. Idle: the watch runs ``--idle`` seconds on the experiment's namespace with nothing changing; the API requests it
   made are counted (one LIST at the start, one open stream; a stream is opened again each ``timeoutSeconds``,
   300 s, so an hour costs 12 streams and no LIST).
2. An incident: every pod of the experiment is set Running (not deaths), then Failed one after another, as the
   generator's incident has them (the victim first, the 511 others after); the watch runs with --write-events and
   --annotate. The latency is from the last death to the verdict's JSON line and to the Event on the JobSet
   arriving at the API server, with ``--settle`` included, against the issue's bound of settle + 5 s.

    .venv/bin/python -m bench.watch_bench                  # 512 pods, settle 90 s (the default), 20 s idle
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from whathappened.collectors.kubernetes.verdict_writes import EVENT_REASON

from bench.loaders import experiment, serve
from tests.doubles.kube.store import in_phase
from tests.doubles.kube.watch import Change

CLI = Path(sys.executable).parent / "whathappened"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", type=int, default=512)
    parser.add_argument("--settle", type=int, default=90)
    parser.add_argument("--idle", type=float, default=20.0)
    args = parser.parse_args()
    folder = experiment(args.pods)
    with serve(folder, log_stride=128, writable=True) as loaded:
        s, double = loaded.scenario, loaded.kube
        command = [str(CLI), "watch", "-n", s.namespace, "--kubeconfig", str(loaded.kubeconfig), "--port", "0"]
        command += ["--prometheus-url", loaded.prometheus_url, "--elasticsearch-url", loaded.search_url]
        command += ["--log-index", "logs-*", "--event-index", "kube-events-*", "--deadline", "120s"]
        # the window reaches 6 h back from the first death, as the CLI's run over the recorded 6 h does
        command += ["--settle", f"{args.settle}s", "--since", "6h", "--write-events", "--annotate"]
        env = {**os.environ, "HOME": "/nonexistent"}
        print(f"load {os.getloadavg()[0]:.1f}; {' '.join(command[1:3])} ...", flush=True)
        double.reset()
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as watch:
            assert watch.stdout is not None and watch.stderr is not None
            try:
                port = int(watch.stderr.readline().rsplit(":", 1)[1])
                assert double.changes.wait_watching(1, timeout_s=60)
                time.sleep(args.idle)  # the idle period being measured: nothing changes, nothing should be asked
                asked = [r for r in double.requests if r.path.endswith("/pods")]
                lists = [r for r in asked if r.query.get("watch") not in ("true", "1")]
                streams = [r for r in asked if r.query.get("watch") in ("true", "1")]
                print(f"idle {args.idle:.0f} s: {len(lists)} LIST pages, {len(streams)} stream(s) open", flush=True)
                ours = [
                    p for p in double.store.pods if p["metadata"].get("labels", {}).get(s.label_key) == s.experiment
                ]
                for pod in ours:
                    double.change("MODIFIED", "pods", in_phase(pod, "Running"))
                victim = next(e["pod"] for e in s.expected if e.get("root"))
                ordered = sorted(ours, key=lambda p: p["metadata"]["name"] != victim)
                for pod in ordered:
                    double.change("MODIFIED", "pods", in_phase(pod, "Failed"))
                last = time.monotonic()
                line = json.loads(watch.stdout.readline())
                latency = time.monotonic() - last
                written = double.changes.wait_for(lambda changes: any(_ours(c) for c in changes), timeout_s=60)
                to_event = time.monotonic() - last
                root = (line.get("root_cause") or {}).get("pod")
                metrics = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
                explaining = float(re.findall(r"whathappened_explain_seconds_sum (\S+)", metrics)[0])
                print(
                    f"{len(ordered)} deaths -> {line['deaths']} in one incident; verdict {latency:.1f} s after the last "
                    f"death, the Event {to_event:.1f} s{'' if written else ' (NOT WRITTEN)'}, explaining {explaining:.1f} s "
                    f"(settle {args.settle} s, "
                    f"bound {args.settle + 5} s); root {root} ({'right' if root == victim else 'WRONG'}); "
                    f"sources {line['sources']}; load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
            finally:
                watch.terminate()
                watch.wait(timeout=60)


def _ours(change: Change) -> bool:
    return change.resource == "events" and change.obj.get("reason") == EVENT_REASON


if __name__ == "__main__":
    main()
