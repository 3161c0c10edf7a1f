"""``whathappened collect EXPERIMENT -o DIR``: record an incident from the live sources as a snapshot folder.

The folder is the scenario format, so it can be attached to a ticket and explained later, offline, with
``whathappened EXPERIMENT --snapshot DIR``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from whathappened.cli import options as o
from whathappened.cli.report_io import progress
from whathappened.errors import ExperimentNotFound, SourcesFailed
from whathappened.model import SourceStatus


def register(app: typer.Typer) -> None:
    app.command("collect", help="Record the experiment's evidence from live sources into a snapshot folder.")(collect)


@o.with_sources(leave_out=("snapshot", "label_keys", "without", "log_preset"))
def collect(
    experiment: Annotated[str, typer.Argument(help="The experiment's name.")],
    output_dir: Annotated[Path, typer.Option("--output-dir", "-o", help="Folder to write the snapshot into.")],
    *,
    chosen: o.SourceOptions,
) -> None:
    from whathappened.collectors.snapshot.writer import write_snapshot
    from whathappened.gather import gather
    from whathappened.sources import live_sources

    settings = chosen.settings()
    window = o.window_of(settings)
    sources = live_sources(settings)
    sources.require(
        "no live source is configured: give --kubeconfig/--context, --prometheus-url or --elasticsearch-url"
    )
    query = o.query_of(experiment, settings, sources.namespace, window)
    with progress("collecting"):
        gathered = gather(sources.collectors, query, settings.deadline_s, sources.not_configured)
    if not gathered.found:
        failed = [f"{s.name} {s.status.value}: {s.detail}" for s in gathered.sources if s.failed]
        if failed and not any(s.status is SourceStatus.OK for s in gathered.sources):
            raise SourcesFailed("nothing recorded: no source could be read; " + "; ".join(failed))
        raise ExperimentNotFound(experiment)
    written = write_snapshot(output_dir, sources.collectors, gathered.scope)
    typer.echo(f"wrote {', '.join(written)} to {output_dir}")
    if any(s.failed for s in gathered.sources):
        raise typer.Exit(3)
