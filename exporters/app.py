"""Wiring for ``whathappened exporter`` and ``whathappened preflight``: configuration in, threads and answers out.

The exporter runs three kinds of work: the metadata poll loop, the GPU sampler plus the NVML Xid watcher, and the
HTTP server. Auto-detection that finds no metadata service is not fatal: the poll loop keeps trying (counted in
``whathappened_poll_errors_total{provider="unknown"}``) while GPU health is still served.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
from prometheus_client.registry import REGISTRY, CollectorRegistry
from whathappened.exporters import aws, azure, gcp
from whathappened.exporters._metadata_http import DEFAULT_BASE_URL, make_client
from whathappened.exporters.detect import detect_provider, node_name
from whathappened.exporters.gpu import GpuHealth
from whathappened.exporters.metrics import ExporterState, MaintenanceCollector
from whathappened.exporters.notices import Clock, Notice, PreflightResult, evaluate
from whathappened.exporters.runner import Backoff, NoticeSink, Poller, PollLoop
from whathappened.exporters.server import MetricsServer

from whathappened.errors import SourceError
from whathappened.timeutils import now as utcnow

log = logging.getLogger("whathappened.exporter")

PROVIDER_CHOICES = ("auto", "azure", "aws", "gcp")
PREFLIGHT_DUE = 75  # EX_TEMPFAIL: "try again later, elsewhere"
PREFLIGHT_UNKNOWN = 1


@dataclass(frozen=True, slots=True)
class ExporterConfig:
    provider: str = "auto"
    metadata_url: str | None = None
    node: str | None = None
    port: int = 9977
    host: str = "0.0.0.0"
    poll_interval: timedelta = timedelta(seconds=10)
    window: timedelta = timedelta(minutes=60)
    azure_acknowledge: bool = False
    node_events: bool = False
    label_node: bool = False
    gpu: bool = True


def make_poller(
    provider: str,
    client: httpx.Client,
    clock: Clock,
    base_url: str | None = None,
    *,
    wait_seconds: int = 0,
    azure_acknowledge: bool = False,
) -> Poller:
    base = base_url or DEFAULT_BASE_URL
    if provider == "azure":
        return azure.AzurePoller(client, clock, base, acknowledge=azure_acknowledge)
    if provider == "aws":
        return aws.AwsPoller(client, clock, base)
    if provider == "gcp":
        return gcp.GcpPoller(client, clock, base, wait_seconds=wait_seconds)
    raise ValueError(f"unknown provider {provider!r}; use one of {', '.join(PROVIDER_CHOICES)}")


class DetectingPoller:
    """Detects the cloud on its first successful poll (``provider`` reads ``unknown`` until then)."""

    def __init__(self, client: httpx.Client, factory: Callable[[str], Poller], base_url: str | None) -> None:
        self._client = client
        self._factory = factory
        self._base_url = base_url
        self._inner: Poller | None = None
        self.provider = "unknown"

    def poll(self) -> tuple[Notice, ...]:
        if self._inner is None:
            self._inner = self._factory(detect_provider(self._client, self._base_url))
            self.provider = self._inner.provider
            log.info("metadata service: %s", self.provider)
        return tuple(self._inner.poll())


def check(
    provider: str,
    metadata_url: str | None,
    window: timedelta,
    clock: Clock = utcnow,
    client: httpx.Client | None = None,
) -> PreflightResult:
    """One read of the metadata service and the 60-minute rule; SourceError when it cannot be read."""
    # One shot, as an initContainer: it can wait longer than the exporter's poll (Azure's first Scheduled Events
    # call on a fresh VM is known to be slow while the service switches on).
    http = client or make_client(httpx.Timeout(10.0, connect=1.0))
    try:
        name = detect_provider(http, metadata_url) if provider == "auto" else provider
        notices = make_poller(name, http, clock, metadata_url).poll()
    finally:
        if client is None:
            http.close()
    return evaluate(notices, clock(), window)


def preflight_exit(result: PreflightResult | SourceError) -> tuple[int, str]:
    """The contract's exit code and the one line to print."""
    if isinstance(result, SourceError):
        return PREFLIGHT_UNKNOWN, f"preflight unknown: cannot read the cloud metadata service: {result}"
    return (0 if result.ok else PREFLIGHT_DUE), result.line()


class Exporter:
    """Starts the poll loop, GPU health and the HTTP server; ``stop()`` ends them."""

    def __init__(
        self,
        config: ExporterConfig,
        clock: Clock = utcnow,
        registry: CollectorRegistry = REGISTRY,
        client: httpx.Client | None = None,
        nvml: Any | None = None,
        env: Mapping[str, str] | None = None,
        sinks: tuple[NoticeSink, ...] = (),
    ) -> None:
        self.config = config
        self.node = node_name(config.node, env)
        self._clock = clock
        self._client = client or make_client()
        self._stop = threading.Event()
        self.state = ExporterState(provider=config.provider if config.provider != "auto" else "unknown")
        self.loop = PollLoop(self._poller(), self.state, clock, Backoff(config.poll_interval), sinks=sinks)
        stale = max(3 * config.poll_interval, timedelta(seconds=60))
        registry.register(MaintenanceCollector(self.state, self.node, clock, config.window, stale))
        self.gpu = GpuHealth(self.node, nvml)
        registry.register(self.gpu)
        self.server = MetricsServer(config.port, config.host, registry, self.health)
        self._threads: list[threading.Thread] = []

    def _poller(self) -> Poller:
        config = self.config
        wait = max(1, int(config.poll_interval.total_seconds()))

        def factory(name: str) -> Poller:
            return make_poller(
                name,
                self._client,
                self._clock,
                config.metadata_url,
                wait_seconds=wait,
                azure_acknowledge=config.azure_acknowledge,
            )

        if config.provider == "auto":
            return DetectingPoller(self._client, factory, config.metadata_url)
        return factory(config.provider)

    def health(self) -> tuple[bool, str]:
        # The loop beats at least once per max backoff plus one GCE hanging GET; allow twice that.
        silence = 2 * (Backoff(self.config.poll_interval).max_backoff + self.config.poll_interval).total_seconds() + 30
        # Only the poll loop counts: GPU health turning itself off is logged, not a reason to restart the pod.
        polling = [t for t in self._threads if t.name == "metadata-poll"]
        alive = bool(polling) and polling[0].is_alive() and self.loop.healthy(silence)
        snapshot = self.state.snapshot()
        text = f"{'ok' if alive else 'poll loop stopped'}; provider={snapshot.provider} errors={snapshot.errors}"
        return alive, text

    def start(self) -> Exporter:
        if self.config.gpu:
            self.gpu.start()
        else:
            self.gpu.reason = "disabled by --no-gpu"
            log.info("GPU health off: disabled by --no-gpu")
        self._spawn("metadata-poll", self.loop.run, self._stop)
        if self.gpu.enabled:
            self._spawn("gpu-sample", self._sample_gpus)
            self._spawn("gpu-xid", self.gpu.watch_xid, self._stop)
        self.server.start()
        log.info("serving /metrics and /healthz on %s:%d for node %s", self.config.host, self.server.port, self.node)
        return self

    def _spawn(self, name: str, target: Callable[..., None], *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _sample_gpus(self) -> None:
        while not self._stop.is_set():
            self.gpu.sample()
            self._stop.wait(self.config.poll_interval.total_seconds())

    def wait(self) -> None:
        self._stop.wait()

    def request_stop(self) -> None:
        self._stop.set()

    def stop(self) -> None:
        self._stop.set()
        self.server.stop()
        for thread in self._threads:
            thread.join(timeout=5)
        self.gpu.close()
        self._client.close()


def run_exporter(*, clock: Clock = utcnow, **options: Any) -> None:
    """The ``exporter`` command: run until SIGTERM or SIGINT (a pod being stopped), then shut down cleanly."""
    import signal

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = ExporterConfig(**options)
    sinks: tuple[NoticeSink, ...] = ()
    if config.node_events:
        from whathappened.exporters.node_events import in_cluster_recorder

        sinks = (in_cluster_recorder(node_name(config.node), clock),)
    if config.label_node:
        from whathappened.exporters.node_labels import in_cluster_labeler

        sinks = (*sinks, in_cluster_labeler(node_name(config.node), clock, config.window))
    exporter = Exporter(config, clock=clock, sinks=sinks).start()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: exporter.request_stop())
    exporter.wait()
    exporter.stop()
