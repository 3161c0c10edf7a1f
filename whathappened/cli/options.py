"""The source flags, declared once and shared by every command that reads the sources (``explain``, ``collect``):
validated once, turned into Settings, a Query and sources."""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar, cast

import typer

from whathappened.collectors.logs.fields import preset_choices
from whathappened.config import Settings, load_settings
from whathappened.errors import UsageError
from whathappened.model import Window
from whathappened.scope import Query
from whathappened.timeutils import now, parse_duration, parse_time


class Output(StrEnum):
    rich = "rich"
    json = "json"
    markdown = "markdown"
    html = "html"


Namespace = Annotated[str | None, typer.Option("--namespace", "-n", help="Namespace to look in.")]
AllNamespaces = Annotated[bool, typer.Option("--all-namespaces", "-A", help="Look in every namespace.")]
Kubeconfig = Annotated[str | None, typer.Option("--kubeconfig", help="Kubeconfig file (also KUBECONFIG).")]
Context = Annotated[str | None, typer.Option("--context", help="Kubeconfig context.")]
PrometheusUrl = Annotated[
    str | None, typer.Option("--prometheus-url", help="Prometheus-compatible query API (WHATHAPPENED_PROMETHEUS_URL).")
]
ElasticsearchUrl = Annotated[
    str | None, typer.Option("--elasticsearch-url", help="Elasticsearch/OpenSearch (WHATHAPPENED_ELASTICSEARCH_URL).")
]
LogIndex = Annotated[str | None, typer.Option("--log-index", help="Index pattern for logs [logs-*,filebeat-*].")]
EventIndex = Annotated[str | None, typer.Option("--event-index", help="Index pattern for archived events.")]
Since = Annotated[str | None, typer.Option("--since", help="Look back this far from now: 90m, 6h, 2d [24h].")]
Start = Annotated[str | None, typer.Option("--start", help="Window start, RFC 3339 (overrides --since).")]
End = Annotated[str | None, typer.Option("--end", help="Window end, RFC 3339 [now].")]
ConfigFile = Annotated[Path | None, typer.Option("--config", help="Settings file (TOML).")]
Snapshot = Annotated[Path | None, typer.Option("--snapshot", help="Read a recorded incident folder instead.")]
Debug = Annotated[bool, typer.Option("--debug", help="Tracebacks and per-source request details.")]
Verbose = Annotated[
    bool, typer.Option("--verbose", "-v", help="The long terminal report: full tables of verdicts and timeline.")
]
LabelKey = Annotated[
    list[str] | None, typer.Option("--label-key", help="Experiment label key to try (repeatable; replaces defaults).")
]
Deadline = Annotated[str | None, typer.Option("--deadline", help="Per-source deadline [20s].")]
Without = Annotated[list[str] | None, typer.Option("--without", help="Leave a source out (repeatable).")]
Insecure = Annotated[bool, typer.Option("--insecure-skip-tls-verify", help="Do not verify TLS certificates.")]
LogPreset = Annotated[
    str | None,
    typer.Option(
        "--log-preset",
        help=f"Log field mapping, detected per index when auto: {preset_choices()} [auto].",
    ),
]


@dataclass(frozen=True)
class SourceOptions:
    """What a command was told about its sources, its experiment's window and namespace: one field per flag of
    ``FLAGS``, which every command taking them (``explain``, ``collect``, later ones) gets from ``with_sources``."""

    namespace: str | None = None
    all_namespaces: bool = False
    kubeconfig: str | None = None
    context: str | None = None
    prometheus_url: str | None = None
    elasticsearch_url: str | None = None
    log_index: str | None = None
    event_index: str | None = None
    since: str | None = None
    start: str | None = None
    end: str | None = None
    config: Path | None = None
    snapshot: Path | None = None
    debug: bool = False
    label_keys: tuple[str, ...] = ()
    deadline: str | None = None
    without: tuple[str, ...] = ()
    insecure: bool = False
    log_preset: str | None = None

    def __post_init__(self) -> None:
        if self.namespace and self.all_namespaces:  # checked here so every command that takes both agrees
            raise UsageError("use either --namespace or --all-namespaces, not both")
        if self.kubeconfig and not Path(self.kubeconfig).expanduser().is_file():  # as kubectl: a named file must exist
            raise UsageError(f"--kubeconfig {self.kubeconfig}: no such file")

    def settings(self) -> Settings:
        overrides = {
            "namespace": self.namespace,
            "all_namespaces": self.all_namespaces or None,
            "since": self.since,
            "start": self.start,
            "end": self.end,
            "debug": self.debug or None,
            "label_keys": list(self.label_keys) or None,
            "deadline": self.deadline,
            "verify_tls": False if self.insecure else None,
            "kubernetes.kubeconfig": self.kubeconfig,
            "kubernetes.context": self.context,
            "prometheus.url": self.prometheus_url,
            "elasticsearch.url": self.elasticsearch_url,
            "elasticsearch.log_index": self.log_index,
            "elasticsearch.event_index": self.event_index,
            "elasticsearch.preset": self.log_preset,
        }
        return load_settings(self.config, os.environ, overrides)


# The flags, declared once: (SourceOptions field, the option's annotation, its default), in --help's order.
FLAGS: tuple[tuple[str, Any, Any], ...] = (
    ("namespace", Namespace, None),
    ("all_namespaces", AllNamespaces, False),
    ("kubeconfig", Kubeconfig, None),
    ("context", Context, None),
    ("prometheus_url", PrometheusUrl, None),
    ("elasticsearch_url", ElasticsearchUrl, None),
    ("log_index", LogIndex, None),
    ("event_index", EventIndex, None),
    ("log_preset", LogPreset, None),
    ("since", Since, None),
    ("start", Start, None),
    ("end", End, None),
    ("config", ConfigFile, None),
    ("snapshot", Snapshot, None),
    ("label_keys", LabelKey, None),
    ("deadline", Deadline, None),
    ("without", Without, None),
    ("insecure", Insecure, False),
    ("debug", Debug, False),
)
_AS_TUPLE = frozenset({"label_keys", "without"})  # repeatable flags: a list from typer, a tuple kept

Command = TypeVar("Command", bound=Callable[..., Any])


def with_sources(*, leave_out: Iterable[str] = ()) -> Callable[[Command], Command]:
    """A command that takes the source flags: typer sees every flag of ``FLAGS`` but those left out, after the
    command's own parameters; the command receives them as one ``SourceOptions`` in its ``chosen`` parameter."""
    omitted = frozenset(leave_out)
    unknown = omitted - {name for name, _, _ in FLAGS}
    if unknown:
        raise ValueError(f"no such source flag: {sorted(unknown)}")
    taken = [(name, annotation, default) for name, annotation, default in FLAGS if name not in omitted]

    def wrap(command: Command) -> Command:
        signature = inspect.signature(command, eval_str=True)
        own = [p for name, p in signature.parameters.items() if name != "chosen"]
        flags = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=a, default=d) for n, a, d in taken]

        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> Any:
            given = {name: kwargs.pop(name) for name, _, _ in taken}
            given = {n: tuple(v or ()) if n in _AS_TUPLE else v for n, v in given.items()}
            return command(*args, chosen=SourceOptions(**given), **kwargs)

        run.__signature__ = signature.replace(parameters=[*own, *flags])  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in (*own, *flags)}
        return cast(Command, run)

    return wrap


def window_of(settings: Settings) -> Window:
    """``--start/--end`` when given (end defaults to now), else ``now - since .. now``."""
    end = parse_time(settings.end) if settings.end else now()
    start = parse_time(settings.start) if settings.start else end - parse_duration(settings.since)
    if end <= start:
        raise UsageError(
            "--end must be after --start, for example --start 2026-11-20T06:00:00Z --end 2026-11-20T08:00:00Z"
        )
    return Window(start, end)


def query_of(experiment: str, settings: Settings, namespace: str | None, window: Window) -> Query:
    if not experiment or not experiment.strip():
        raise UsageError("the experiment name is empty")
    return Query(experiment=experiment.strip(), namespace=namespace, window=window, label_keys=settings.label_keys)
