"""Which collectors a run uses: a snapshot folder's, or the live sources the settings configure.

A live source that is not configured is reported ``not_configured`` and skipped; clients of the heavy
libraries are built only here, on demand, so ``--help`` imports none of them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whathappened.config import Settings
from whathappened.errors import SourceError, UsageError, scrub
from whathappened.model import SourceReport, SourceStatus, TimelineEvent
from whathappened.scope import Collector, Discovery, Query, Scope

SOURCE_NAMES = ("kubernetes", "prometheus", "logs")


@dataclass(frozen=True)
class Sources:
    collectors: tuple[Collector, ...]
    not_configured: tuple[SourceReport, ...]
    namespace: str | None  # the namespace to look in; None for all


def snapshot_sources(
    folder: Path, settings: Settings, without: Iterable[str] = (), utilization: bool = True
) -> Sources:
    """The snapshot's collectors; ``utilization``: each pod's GPU utilization strip (only HTML draws it)."""
    from whathappened.collectors.snapshot.folder import snapshot_collectors

    skipped = _check_without(without)
    collectors, missing = snapshot_collectors(folder, settings.elasticsearch.preset, utilization)
    kept = tuple(c for c in collectors if c.name not in skipped)
    left_out = tuple(SourceReport(n, SourceStatus.NOT_CONFIGURED, "left out (--without)") for n in sorted(skipped))
    namespace = None if settings.all_namespaces else settings.namespace
    return Sources(kept, (*missing, *left_out), namespace)


def live_sources(settings: Settings, without: Iterable[str] = (), utilization: bool = True) -> Sources:
    """The configured live collectors; the namespace defaults to the kubeconfig context's, as kubectl's does.
    ``utilization``: whether Prometheus fetches each pod's GPU utilization strip (a costly range query that only
    the HTML report draws)."""
    skipped = _check_without(without)
    collectors: list[Collector] = []
    missing: list[SourceReport] = []
    namespace: str | None = None if settings.all_namespaces else settings.namespace
    kubernetes = _kubernetes(settings, skipped)
    if isinstance(kubernetes, SourceReport):
        missing.append(kubernetes)
    else:
        collectors.append(kubernetes)
        if namespace is None and not settings.all_namespaces:
            namespace = kubernetes.namespace
    if namespace is None and not settings.all_namespaces:
        namespace = "default"
    if "prometheus" in skipped or not settings.prometheus.url:
        reason = "left out (--without)" if "prometheus" in skipped else "no --prometheus-url"
        missing.append(SourceReport("prometheus", SourceStatus.NOT_CONFIGURED, reason))
    else:

        def prometheus() -> Collector:
            from whathappened.collectors.prometheus.collector import PrometheusCollector

            return PrometheusCollector(
                settings.prometheus,
                verify_tls=settings.verify_tls,
                timeout_s=settings.deadline_s,
                utilization=utilization,
            )

        collectors.append(Deferred("prometheus", prometheus))
    if "logs" in skipped or not (settings.elasticsearch.url or settings.elasticsearch.cloud_id):
        reason = "left out (--without)" if "logs" in skipped else "no --elasticsearch-url"
        missing.append(SourceReport("logs", SourceStatus.NOT_CONFIGURED, reason))
    else:

        def logs() -> Collector:
            from whathappened.collectors.logs.elasticsearch.collector import LogCollector

            return LogCollector.from_settings(
                settings.elasticsearch, verify_tls=settings.verify_tls, timeout_s=settings.deadline_s
            )

        collectors.append(Deferred("logs", logs))
    return Sources(tuple(collectors), tuple(missing), namespace)


class Deferred:
    """A live collector built on first use, in its source's own thread: its client library's import (a tenth to
    a quarter of a second each) overlaps the other sources' first requests instead of preceding them all. A
    failure to build is that source's failure, reported like any other."""

    def __init__(self, name: str, build: Callable[[], Collector]) -> None:
        self.name = name
        self._build = build
        self._built: Collector | None = None
        self._lock = threading.Lock()

    @property
    def requests(self) -> int:
        return self._built.requests if self._built is not None else 0

    @requests.setter
    def requests(self, count: int) -> None:  # the protocol's attribute is settable; ours follows the built one
        if self._built is not None:
            self._built.requests = count

    def discover(self, query: Query) -> Discovery:
        return self._collector().discover(query)

    def collect(self, scope: Scope) -> Iterable[TimelineEvent]:
        return self._collector().collect(scope)

    def __getattr__(self, attribute: str) -> Any:
        """``detail``, ``request_log``, ``export_snapshot``...: the built collector's, once there is one."""
        built = self.__dict__.get("_built")
        if built is None:
            raise AttributeError(attribute)
        return getattr(built, attribute)

    def _collector(self) -> Collector:
        with self._lock:
            if self._built is None:
                self._built = self._build()
            return self._built


def _kubernetes(settings: Settings, skipped: set[str]) -> Any:
    """The Kubernetes collector, or the report saying why there is none (a broken kubeconfig is a failure).
    Built up front, unlike the others: the kubeconfig's context may name the namespace the others look in (and
    building it in its own thread measured no faster on the 512-pod benchmark)."""
    if "kubernetes" in skipped or not settings.kubernetes.enabled:
        return SourceReport("kubernetes", SourceStatus.NOT_CONFIGURED, "left out")
    from whathappened.collectors.kubernetes.collector import create_collector

    try:
        return create_collector(settings)
    except SourceError as error:
        return SourceReport("kubernetes", SourceStatus(error.status), scrub(str(error)))


def _check_without(names: Iterable[str]) -> set[str]:
    chosen = {n.strip() for n in names if n.strip()}
    unknown = chosen - set(SOURCE_NAMES)
    if unknown:
        raise UsageError(f"unknown source {', '.join(sorted(unknown))} for --without; use {', '.join(SOURCE_NAMES)}")
    return chosen
