"""Benchmark: the Prometheus collector's edge queries against the naive way, on a large backfilled experiment.

Builds (once, cached in --workdir) a synthetic history in OpenMetrics: N nodes x G GPUs, H hours at a S-second
scrape, 8 dcgm-exporter metrics per GPU with the exporter's label set and pod attribution, plus
kube-state-metrics for one pod per node. A few incidents are planted: an Xid 79 after which the GPU's series
stop, a double-bit ECC error, and utilization collapsing on one GPU while its pod runs. promtool backfills it
into a real Prometheus (100 y retention, no scrape targets), then:

- smart: PrometheusCollector.discover + collect, as the CLI runs it;
- naive: one range query per dcgm metric over the experiment's nodes at full resolution (every raw sample of
  every GPU), each answer parsed as JSON, as a tool that analyzes locally must.

Reports queries, bytes received and wall time for both. Not part of the test suite (it takes minutes to build).

    .venv/bin/python bench/prom_bench.py                      # 512 x 8, 6 h at 15 s (the issue's target)
    .venv/bin/python bench/prom_bench.py --nodes 32 --hours 2 # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from whathappened.collectors.prometheus.collector import PrometheusCollector  # noqa: E402

from bench.loaders import costliest_queries, prometheus  # noqa: E402
from tests.support import require_binary  # noqa: E402
from whathappened.config import PrometheusSettings  # noqa: E402
from whathappened.model import Window  # noqa: E402
from whathappened.scope import Query, Scope  # noqa: E402

START = datetime(2026, 11, 20, 0, 0, tzinfo=UTC)
EXPERIMENT = "bench-llm-pretrain"
NAMESPACE = "research"
METRICS = (
    ("DCGM_FI_DEV_GPU_UTIL", "gauge"),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge"),
    ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter"),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge"),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge"),
    ("DCGM_FI_DEV_FB_USED", "gauge"),
    ("DCGM_FI_DEV_SM_CLOCK", "gauge"),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge"),
)
_NOISE = (91, 96, 93, 98, 94, 97, 92, 95, 99, 93, 96, 94)


class Layout:
    def __init__(self, nodes: int, gpus: int, hours: float, interval: int) -> None:
        self.nodes, self.gpus, self.interval = nodes, gpus, interval
        self.start = int(START.timestamp())
        self.steps = int(hours * 3600 // interval) + 1
        self.end = self.start + (self.steps - 1) * interval
        self.xid = (min(123, nodes - 1), min(5, gpus - 1), self.start + int(self.steps * 2 / 3) * interval)
        self.ecc = (min(200, nodes - 1) if nodes > 2 else 1, min(2, gpus - 1), self.start + self.steps // 2 * interval)
        self.util = (
            min(300, nodes - 1) if nodes > 3 else 2,
            min(1, gpus - 1),
            self.start + int(self.steps * 5 / 6) * interval,
        )

    def node(self, n: int) -> str:
        return f"gpu-node-{n:04d}"

    def pod(self, n: int) -> str:
        return f"{EXPERIMENT}-worker-{n}"

    def key(self) -> str:
        return f"n{self.nodes}-g{self.gpus}-s{self.steps}-i{self.interval}"


def _gpu_labels(layout: Layout, n: int, g: int) -> str:
    uuid = f"GPU-{n:08x}-{g:04x}-4a1b-9c2d-{n * 8 + g:012x}"
    return (
        f'{{DCGM_FI_DRIVER_VERSION="550.127.08",Hostname="{layout.node(n)}",UUID="{uuid}",container="pytorch",'
        f'device="nvidia{g}",gpu="{g}",instance="10.40.{n // 256}.{n % 256}:9400",job="dcgm-exporter",'
        f'modelName="NVIDIA H100 80GB HBM3",namespace="{NAMESPACE}",pci_bus_id="00000000:{g * 16 + 24:02X}:00.0",'
        f'pod="{layout.pod(n)}"}}'
    )


def _value(metric: str, layout: Layout, n: int, g: int, i: int, at: int) -> int | None:
    """The sample, or None where the GPU has fallen off the bus."""
    xn, xg, xat = layout.xid
    if (n, g) == (xn, xg) and at > xat:
        return None
    if metric == "DCGM_FI_DEV_XID_ERRORS":
        return 79 if (n, g) == (xn, xg) and at == xat else 0
    if metric == "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL":
        en, eg, eat = layout.ecc
        return 2 if (n, g) == (en, eg) and at >= eat else 0
    noise = _NOISE[(i + n + g) % len(_NOISE)]
    if metric in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL"):
        un, ug, uat = layout.util
        return 0 if (n, g) == (un, ug) and at >= uat else noise
    if metric == "DCGM_FI_DEV_GPU_TEMP":
        return noise - 25
    if metric == "DCGM_FI_DEV_POWER_USAGE":
        return noise * 7
    if metric == "DCGM_FI_DEV_FB_USED":
        return 70000 + noise * 10
    return 1980


def _dcgm_lines(layout: Layout) -> Iterator[str]:
    times = [layout.start + i * layout.interval for i in range(layout.steps)]
    for metric, kind in METRICS:
        yield f"# TYPE {metric} {kind}\n"
        for n in range(layout.nodes):
            for g in range(layout.gpus):
                prefix = metric + _gpu_labels(layout, n, g) + " "
                chunk = []
                for i, at in enumerate(times):
                    value = _value(metric, layout, n, g, i, at)
                    if value is not None:
                        chunk.append(f"{prefix}{value} {at}\n")
                yield "".join(chunk)


def _kube_lines(layout: Layout) -> Iterator[str]:
    times = [layout.start + i * layout.interval for i in range(layout.steps)]
    ksm = 'job="kube-state-metrics",instance="10.244.0.5:8080"'
    xn, _, xat = layout.xid
    ended = xat + 30
    for metric in ("kube_pod_labels", "kube_pod_info", "kube_pod_status_phase"):
        yield f"# TYPE {metric} gauge\n"
        for n in range(layout.nodes):
            base = f'{ksm},namespace="{NAMESPACE}",pod="{layout.pod(n)}",uid="uid-{n:06d}"'
            if metric == "kube_pod_labels":
                yield "".join(f'{metric}{{{base},label_experiment="{EXPERIMENT}"}} 1 {t}\n' for t in times)
            elif metric == "kube_pod_info":
                info = f'{base},node="{layout.node(n)}",created_by_kind="JobSet",created_by_name="{EXPERIMENT}"'
                yield "".join(f"{metric}{{{info}}} 1 {t}\n" for t in times)
            else:
                for phase in ("Pending", "Running", "Succeeded", "Failed", "Unknown"):
                    lines = []
                    for t in times:
                        failed = n == xn and t >= ended
                        on = (phase == "Failed" and failed) or (phase == "Running" and not failed)
                        lines.append(f'{metric}{{{base},phase="{phase}"}} {int(on)} {t}\n')
                    yield "".join(lines)


def build(layout: Layout, workdir: Path) -> Path:
    """The backfilled TSDB for this layout (cached)."""
    data = workdir / f"tsdb-{layout.key()}"
    if (data / ".complete").exists():
        return data
    shutil.rmtree(data, ignore_errors=True)
    text = workdir / f"history-{layout.key()}.om"
    began = time.monotonic()
    with text.open("w") as out:
        for part in _dcgm_lines(layout):
            out.write(part)
        for part in _kube_lines(layout):
            out.write(part)
        out.write("# EOF\n")
    print(
        f"generated {text.stat().st_size / 1e9:.2f} GB of OpenMetrics in {time.monotonic() - began:.0f} s", flush=True
    )
    began = time.monotonic()
    subprocess.run(
        [require_binary("promtool"), "tsdb", "create-blocks-from", "openmetrics", str(text), str(data)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    print(f"promtool backfill took {time.monotonic() - began:.0f} s", flush=True)
    text.unlink()
    (data / ".complete").touch()
    return data


def cpu_seconds(pid: int) -> float:
    """User + system CPU a process has used (Linux /proc), to report work independent of the machine's load."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Measured:
    queries: int
    bytes: int
    wall_s: float
    note: str = ""
    server_cpu_s: float = 0.0
    client_cpu_s: float = 0.0


def smart(url: str, pid: int, layout: Layout, strip: bool = False) -> Measured:
    window = Window(datetime.fromtimestamp(layout.start, UTC), datetime.fromtimestamp(layout.end, UTC))
    query = Query(EXPERIMENT, NAMESPACE, window)
    # the CLI asks for the per-pod utilization strip only for --output html
    collector = PrometheusCollector(PrometheusSettings(url=url), timeout_s=120, utilization=strip)
    server, client = cpu_seconds(pid), time.process_time()
    began = time.monotonic()
    discovery = collector.discover(query)
    events = list(collector.collect(Scope(query, discovery.pods, discovery.nodes)))
    wall = time.monotonic() - began
    server, client = cpu_seconds(pid) - server, time.process_time() - client
    kinds = sorted({e.kind for e in events if not e.kind.startswith("pod-")})
    note = f"{len(discovery.pods)} pods, {len(events)} events, found {', '.join(kinds)}"
    return Measured(collector.requests, collector.bytes, wall, note, server, client)


def naive(url: str, pid: int, layout: Layout) -> Measured:
    nodes = "|".join(layout.node(n) for n in range(layout.nodes))
    queries = received = samples = 0
    server, mine = cpu_seconds(pid), time.process_time()
    began = time.monotonic()
    with httpx.Client(timeout=600) as client:
        for metric, _ in METRICS:
            params = {
                "query": f'{metric}{{Hostname=~"{nodes}"}}',
                "start": layout.start,
                "end": layout.end,
                "step": f"{layout.interval}s",
            }
            response = client.post(f"{url}/api/v1/query_range", data=params)
            response.raise_for_status()
            queries += 1
            received += len(response.content)
            samples += sum(len(s["values"]) for s in json.loads(response.content)["data"]["result"])
    wall = time.monotonic() - began
    server, mine = cpu_seconds(pid) - server, time.process_time() - mine
    return Measured(queries, received, wall, f"{samples:,} samples", server, mine)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=512)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--hours", type=float, default=6.0)
    parser.add_argument("--interval", type=int, default=15)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "whathappened-prom-bench")
    parser.add_argument("--skip-naive", action="store_true")
    parser.add_argument("--strip", action="store_true", help="also fetch the per-pod utilization strip (--output html)")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    layout = Layout(args.nodes, args.gpus, args.hours, args.interval)
    data = build(layout, args.workdir)
    with prometheus(data, args.workdir) as (url, pid):
        smart(url, pid, layout, args.strip)  # one warm-up run: a second CLI run finds the server's page cache warm
        runs = [smart(url, pid, layout, args.strip) for _ in range(args.runs)]
        best = min(runs, key=lambda r: r.wall_s)
        median = sorted(r.wall_s for r in runs)[len(runs) // 2]
        print(costliest_queries(args.workdir, 1 + args.runs, top=12, indent=""), flush=True)
        walls = ", ".join(f"{r.wall_s:.2f}" for r in runs)
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(
            f"collector: {best.queries} queries, {best.bytes / 1e6:.3f} MB, wall {walls} s (median {median:.2f} s); "
            f"{best.note}",
            flush=True,
        )
        print(
            f"  CPU in the best run: Prometheus {best.server_cpu_s:.2f} s, client {best.client_cpu_s:.2f} s", flush=True
        )
        print(f"load average while measuring: {load} (2 cores)", flush=True)
        if not args.skip_naive:
            slow = naive(url, pid, layout)
            print(
                f"naive: {slow.queries} queries, {slow.bytes / 1e6:.1f} MB, wall {slow.wall_s:.1f} s ({slow.note}); "
                f"{slow.bytes / max(1, best.bytes):.0f}x the collector's bytes; CPU: Prometheus "
                f"{slow.server_cpu_s:.1f} s, client {slow.client_cpu_s:.1f} s",
                flush=True,
            )


if __name__ == "__main__":
    main()
