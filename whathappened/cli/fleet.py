"""``whathappened fleet``: the failure taxonomy and the lemon nodes, across every experiment (CONTRACT.md section
3a). Ends of experiment pods found in kube-state-metrics history (collectors/prometheus/fleet.py), grouped into
incidents and each explained like ``whathappened EXPERIMENT`` (whathappened/fleet/), rolled up with pandas."""

from __future__ import annotations

import io
import sys
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from whathappened.cli import options as o
from whathappened.errors import UsageError

if TYPE_CHECKING:
    from whathappened.config import Settings
    from whathappened.fleet.result import FleetResult
    from whathappened.fleet.survey import Case
    from whathappened.model import Window

DEFAULT_SINCE = "30d"


class FleetOutput(StrEnum):
    rich = "rich"
    json = "json"
    markdown = "markdown"
    csv = "csv"
    html = "html"


class By(StrEnum):
    cause = "cause"
    node = "node"
    gpu = "gpu"
    experiment = "experiment"


def register(app: typer.Typer) -> None:
    app.command("fleet", help="Every pod death of every experiment in the window: causes, lemon nodes and GPUs.")(fleet)


@o.with_sources(leave_out=("without",))
def fleet(
    by: Annotated[
        By | None, typer.Option("--by", help="The table to show (and the CSV): cause, node, gpu, experiment.")
    ] = None,
    output: Annotated[
        FleetOutput | None, typer.Option("--output", "-o", help="rich, json, markdown, csv or html [rich].")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write the output to this file.")] = None,
    threshold: Annotated[
        int, typer.Option("--replace-after", help="Root incidents that make a node or GPU one to replace [3].")
    ] = 3,
    *,
    chosen: o.SourceOptions,
) -> None:
    from whathappened.fleet.incidents import incidents
    from whathappened.fleet.result import FleetResult
    from whathappened.fleet.rollup import rollup
    from whathappened.fleet.survey import survey
    from whathappened.sources import SOURCES, live_sources

    if threshold < 1:
        raise UsageError(f"--replace-after {threshold}: must be at least 1")
    if chosen.since is None and chosen.start is None and chosen.snapshot is None:
        chosen = replace(chosen, since=DEFAULT_SINCE)
    settings = chosen.settings()
    window = o.window_of(settings)
    namespace = None if settings.all_namespaces else settings.namespace
    if chosen.snapshot is not None:
        window, cases, covered = _from_snapshots(chosen.snapshot, settings, window if _window_given(chosen) else None)
    else:
        prometheus = next(s for s in SOURCES if s.name == "prometheus")
        if not prometheus.configured(settings):
            raise UsageError(
                "whathappened fleet finds pod deaths in kube-state-metrics history: give --prometheus-url "
                "(or prometheus.url in the config file), or --snapshot"
            )
        finder = prometheus.build(settings, False)
        found = finder.pod_ends(window, settings.label_keys, namespace)  # type: ignore[attr-defined]
        covered = found.covered
        # survey runs a few explanations at once: each asks Prometheus one query at a time (not split for
        # parallel answers), which spares the server a fifth of its work for the same answers
        one_at_a_time = replace(settings, prometheus=replace(settings.prometheus, max_concurrency=1))
        one_at_a_time = _without_absent_kubernetes(one_at_a_time)
        cases = survey(
            incidents(found.ends), lambda _: live_sources(one_at_a_time, utilization=False), window, settings.label_keys,
            settings.deadline_s,
        )  # fmt: skip
    finder_source = {"snapshot" if chosen.snapshot is not None else "prometheus": "ok"}
    result = FleetResult(window, rollup(cases, threshold), tuple(cases), finder_source, threshold, covered)
    _emit(result, output or FleetOutput.rich, by.value if by else None, out)
    failed = any(status not in ("ok", "not_configured") for case in cases for _, status in case.sources)
    if failed or result.outcome == "no-evidence":  # as the report's: made, but some source failed (CONTRACT.md 1)
        raise typer.Exit(3)


def _without_absent_kubernetes(settings: Settings) -> Settings:
    """The settings with Kubernetes left out when no configuration for it is found: looked for once, not again
    for each of hundreds of explanations (each would search the kubeconfig paths again). A configuration that
    is found but broken is left to fail in each explanation, as it does in the CLI."""
    from whathappened.model import SourceStatus
    from whathappened.sources import live_sources

    found = live_sources(settings, utilization=False)
    absent = any(m.name == "kubernetes" and m.status is SourceStatus.NOT_CONFIGURED for m in found.not_configured)
    return replace(settings, kubernetes=replace(settings.kubernetes, enabled=False)) if absent else settings


def _window_given(chosen: o.SourceOptions) -> bool:
    return chosen.start is not None or chosen.since is not None


def _from_snapshots(
    folder: Path, settings: Settings, window: Window | None
) -> tuple[Window, list[Case], tuple[Window, ...]]:
    """A recorded folder (``whathappened collect``'s, or the scenario format), or a folder of them: each one's
    pod ends found in its recorded series, each incident explained from its own folder. The window, unless given:
    from the earliest recorded window's start to the latest's end."""
    from whathappened.collectors.snapshot.folder import snapshot_collectors
    from whathappened.collectors.snapshot.writer import recorded_window
    from whathappened.fleet.incidents import FleetIncident, incidents
    from whathappened.fleet.survey import survey
    from whathappened.model import Window
    from whathappened.sources import Sources

    root = folder.expanduser()
    if not root.is_dir():
        raise UsageError(f"--snapshot {folder}: not a folder")
    recorded = [root] if _is_recording(root) else sorted(p for p in root.iterdir() if _is_recording(p))
    if not recorded:
        raise UsageError(f"--snapshot {folder}: no recorded folder (with prometheus.om.gz) in it")
    if window is None:
        windows = [w for w in (recorded_window(p) for p in recorded) if w is not None]
        if not windows:
            raise UsageError(f"--snapshot {folder}: no scenario.yaml says when it was recorded; give --start and --end")
        window = Window(min(w.start for w in windows), max(w.end for w in windows))
    namespace = None if settings.all_namespaces else settings.namespace
    home: dict[FleetIncident, Path] = {}
    covered: list[Window] = []
    for path in recorded:
        collectors, _ = snapshot_collectors(path, settings.elasticsearch.preset, utilization=False)
        finder = next((c for c in collectors if c.name == "prometheus"), None)
        if finder is None:
            continue
        found = finder.pod_ends(window, settings.label_keys, namespace)
        covered += found.covered
        for incident in incidents(found.ends):
            home[incident] = path

    def sources(incident: FleetIncident) -> Sources:
        collectors, missing = snapshot_collectors(home[incident], settings.elasticsearch.preset, utilization=False)
        return Sources(tuple(collectors), tuple(missing), incident.namespace)

    ordered = sorted(home, key=lambda i: (i.first, i.namespace, i.experiment))
    return window, survey(ordered, sources, window, settings.label_keys, settings.deadline_s), tuple(covered)


def _is_recording(path: Path) -> bool:
    return path.is_dir() and any((path / name).is_file() for name in ("prometheus.om.gz", "prometheus.om"))


def _emit(result: FleetResult, output: FleetOutput, by: str | None, out: Path | None) -> None:
    from whathappened.cli.report_io import deliver
    from whathappened.render import fleet as render

    if output is FleetOutput.rich and out is None and sys.stdout.isatty():
        render.render_terminal(result, by=by)
        return
    if output is FleetOutput.json:
        text = render.render_json(result)
    elif output is FleetOutput.csv:
        text = render.render_csv(result, by or "cause")
    elif output is FleetOutput.markdown:
        text = render.render_markdown(result, by)
    elif output is FleetOutput.html:
        from whathappened.render.fleet_html import render_fleet_html

        text = render_fleet_html(result)
    else:
        buffer = io.StringIO()
        render.render_terminal(result, buffer, by=by, color=False)
        text = buffer.getvalue()
    deliver(text, out)
