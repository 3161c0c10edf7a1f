"""Exporter benchmark: scrape latency and resident memory over 10,000 metadata polls (not part of the test suite).

Starts the loopback metadata server (tests/doubles/metadata.py) fed with the reference samples, runs the real
``whathappened exporter`` as its own process polling it every millisecond, scrapes ``/metrics`` while it polls,
and reads the exporter's VmRSS from /proc. Targets: scrape p99 under 10 ms, RSS under 60 MB after 10,000 polls.

    .venv/bin/python -m bench.exporter_bench [--polls 10000] [--providers azure,aws,gcp]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO

import httpx

from tests.doubles.metadata import MetadataServer, samples
from tests.support import free_port, wait_until_ready

REQUESTS_PER_POLL = {"azure": 1, "aws": 3, "gcp": 3}  # after the first poll (Azure's VM name, AWS's token)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def feed(provider: str, server: MetadataServer) -> None:
    s = samples()
    server.state.providers = {provider}
    server.state.azure_vm_name = "vm-spot"
    server.state.azure_document = s["azure"]["spot_preempt_example_Z5"]
    server.state.aws_scheduled = s["aws"]["scheduled_maintenance_example_A1_comment_in_ec2metadata.go"]
    server.state.aws_spot = s["aws"]["spot_instance_action_example_A2_AEMM_README"]
    server.state.gcp_maintenance = "TERMINATE_ON_HOST_MAINTENANCE"


def polls(server: MetadataServer, provider: str) -> int:
    return len(server.state.requests) // REQUESTS_PER_POLL[provider]


def start_exporter(
    server: MetadataServer, provider: str, interval: str, log: IO[bytes]
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    args = [
        sys.executable,
        "-m",
        "whathappened.cli.main",
        "exporter",
        "--provider",
        provider,
        "--metadata-url",
        server.url,
        "--node",
        "bench-node",
        "--port",
        str(port),
        "--host",
        "127.0.0.1",
        "--poll-interval",
        interval,
        "--no-gpu",
    ]
    process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    wait_until_ready(f"{url}/healthz", process)
    return process, url


def scrape(client: httpx.Client, url: str) -> float:
    t0 = time.perf_counter()
    response = client.get(f"{url}/metrics")
    took = (time.perf_counter() - t0) * 1000
    assert response.status_code == 200 and "whathappened_node_maintenance_scheduled{" in response.text
    return took


def summary(latencies: list[float]) -> tuple[float, float, float]:
    ordered = sorted(latencies)
    return statistics.median(ordered), ordered[max(0, int(len(ordered) * 0.99) - 1)], ordered[-1]


def stress(provider: str, target_polls: int) -> dict[str, float]:
    """Poll every millisecond until ``target_polls``; scrape every 10 ms meanwhile; follow RSS."""
    server = MetadataServer().start()
    feed(provider, server)
    stop = threading.Event()
    if provider == "gcp":
        # GCE's hanging GET returns on a change only: keep the value changing so polls are not paced at 1 per
        # second (and every poll sees a new notice: the churn a memory leak would show in).
        threading.Thread(target=churn, args=(server, stop), daemon=True).start()
    with tempfile.TemporaryFile() as log:
        process, url = start_exporter(server, provider, "1ms", log)
        try:
            start_rss = peak = rss_mb(process.pid)
            latencies: list[float] = []
            started = time.monotonic()
            with httpx.Client() as client:
                while polls(server, provider) < target_polls:
                    latencies.append(scrape(client, url))
                    peak = max(peak, rss_mb(process.pid))
                    time.sleep(0.01)  # scrape pacing, so the polls get the CPU
            p50, p99, worst = summary(latencies)
            return {
                "polls": polls(server, provider),
                "seconds": time.monotonic() - started,
                "scrapes": len(latencies),
                "p50": p50,
                "p99": p99,
                "max": worst,
                "rss_start": start_rss,
                "rss_peak": peak,
                "rss_end": rss_mb(process.pid),
            }
        finally:
            stop.set()
            process.terminate()
            process.wait(timeout=10)
            server.stop()


def churn(server: MetadataServer, stop: threading.Event) -> None:
    values = ("TERMINATE_ON_HOST_MAINTENANCE", "MIGRATE_ON_HOST_MAINTENANCE")
    flips = 0
    while not stop.is_set():
        flips += 1
        server.state.set_gcp_maintenance(values[flips % 2])
        stop.wait(0.001)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def steady(provider: str, scrapes: int) -> tuple[float, float, float, float]:
    """Scrape latency at the default 10 s poll interval, back-to-back scrapes on one keep-alive connection."""
    server = MetadataServer().start()
    feed(provider, server)
    with tempfile.TemporaryFile() as log:
        process, url = start_exporter(server, provider, "10s", log)
        try:
            with httpx.Client() as client:
                scrape(client, url)
                cpu = cpu_seconds(process.pid)
                latencies = [scrape(client, url) for _ in range(scrapes)]
                per_scrape_cpu = (cpu_seconds(process.pid) - cpu) * 1000 / scrapes
            return (*summary(latencies), per_scrape_cpu)
        finally:
            process.terminate()
            process.wait(timeout=10)
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--polls", type=int, default=10_000)
    parser.add_argument("--providers", default="azure,aws,gcp")
    parser.add_argument("--scrapes", type=int, default=1000)
    options = parser.parse_args()
    print(
        "| provider | polls | seconds | RSS start MB | RSS peak MB | RSS end MB | scrape p50/p99/max ms during polls "
        "| scrape p50/p99/max ms at 10s interval | exporter CPU ms per scrape |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for provider in options.providers.split(","):
        r = stress(provider, options.polls)
        calm = steady(provider, options.scrapes)
        print(
            f"| {provider} | {r['polls']:.0f} | {r['seconds']:.1f} | {r['rss_start']:.1f} | {r['rss_peak']:.1f} | "
            f"{r['rss_end']:.1f} | {r['p50']:.2f} / {r['p99']:.2f} / {r['max']:.2f} ({r['scrapes']:.0f} scrapes) | "
            f"{calm[0]:.2f} / {calm[1]:.2f} / {calm[2]:.2f} ({options.scrapes} scrapes) | {calm[3]:.2f} |",
            flush=True,
        )
    load = " / ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"\nload average at the end: {load} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
