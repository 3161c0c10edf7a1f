"""Which collectors a run uses: a snapshot folder's, or the live sources the settings configure.

A live source that is not configured is reported ``not_configured`` and skipped; clients of the heavy
libraries are built only here, on demand, so ``--help`` imports none of them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from importlib import import_module
from pathlib import Path
from typing import Any

from whathappened.config import Settings
from whathappened.errors import SourceError, UsageError, scrub
from whathappened.model import SourceReport, SourceStatus, TimelineEvent
from whathappened.scope import Collector, Discovery, Query, Scope


@dataclass(frozen=True)
class Source:
    """One live source, registered once: its name, where its collector is built (imported on first use, so
    ``--help`` and snapshot runs import no client library), whether the settings configure it and what to say
    when they do not."""

    name: str
    factory: str  # "module:function", called with (settings, utilization=...)
    configured: Callable[[Settings], bool]
    missing: str  # why it is left out when not configured
    upfront: bool = False  # built before the others: its kubeconfig context may name the namespace

    def build(self, settings: Settings, utilization: bool) -> Collector:
        module, _, function = self.factory.partition(":")
        made: Collector = getattr(import_module(module), function)(settings, utilization=utilization)
        return made


SOURCES: tuple[Source, ...] = (
    Source(
        "kubernetes",
        "whathappened.collectors.kubernetes.collector:create_collector",
        lambda s: s.kubernetes.enabled,
        "left out",
        upfront=True,
    ),
    Source(
        "prometheus",
        "whathappened.collectors.prometheus.collector:create_collector",
        lambda s: bool(s.prometheus.url),
        "no --prometheus-url",
    ),
    Source(
        "logs",
        "whathappened.collectors.logs.elasticsearch.collector:create_collector",
        lambda s: bool(s.elasticsearch.url or s.elasticsearch.cloud_id),
        "no --elasticsearch-url",
    ),
)
SOURCE_NAMES = tuple(source.name for source in SOURCES)


@dataclass(frozen=True)
class Sources:
    collectors: tuple[Collector, ...]
    not_configured: tuple[SourceReport, ...]
    namespace: str | None  # the namespace to look in; None for all

    def require(self, none_configured: str) -> None:
        """A usage error when no source can be used: the sources given but broken are named rather than asked
        for again; with none given, ``none_configured`` says which flags would give one."""
        if self.collectors:
            return
        broken = [f"{r.name}: {r.detail}" for r in self.not_configured if r.status != SourceStatus.NOT_CONFIGURED]
        if broken:
            raise UsageError("no usable source; " + "; ".join(broken))
        raise UsageError(none_configured)


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
    for source in SOURCES:
        if source.name in skipped or not source.configured(settings):
            reason = "left out (--without)" if source.name in skipped else source.missing
            missing.append(SourceReport(source.name, SourceStatus.NOT_CONFIGURED, reason))
        elif source.upfront:
            built = _upfront(source, settings, utilization)
            if isinstance(built, SourceReport):
                missing.append(built)
                continue
            collectors.append(built)
            if namespace is None and not settings.all_namespaces:
                namespace = getattr(built, "namespace", None)
        else:
            collectors.append(Deferred(source.name, partial(source.build, settings, utilization)))
    if namespace is None and not settings.all_namespaces:
        namespace = "default"
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


def _upfront(source: Source, settings: Settings, utilization: bool) -> Collector | SourceReport:
    """A source built before the others, or the report saying why it could not be (a broken kubeconfig is a
    failure, not a missing source). Built up front, unlike the others: the kubeconfig's context may name the
    namespace the others look in (and building it in its own thread measured no faster on the 512-pod
    benchmark)."""
    try:
        return source.build(settings, utilization)
    except SourceError as error:
        return SourceReport(source.name, SourceStatus(error.status), scrub(str(error)))


def _check_without(names: Iterable[str]) -> set[str]:
    chosen = {n.strip() for n in names if n.strip()}
    unknown = chosen - set(SOURCE_NAMES)
    if unknown:
        raise UsageError(f"unknown source {', '.join(sorted(unknown))} for --without; use {', '.join(SOURCE_NAMES)}")
    return chosen
