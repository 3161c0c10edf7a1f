"""``whathappened explain EXPERIMENT`` (also plain ``whathappened EXPERIMENT``): the report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from whathappened.cli import options as o
from whathappened.cli.report_io import debug_requests, emit, progress
from whathappened.model import Outcome

SNAPSHOT_DEADLINE_S = 600.0


def register(app: typer.Typer) -> None:
    app.command("explain", help="Explain why the experiment's pods ended (the default command).")(explain)


@o.with_sources()
def explain(
    experiment: Annotated[str, typer.Argument(help="The experiment's name (a label value or owner name).")],
    output: Annotated[o.Output | None, typer.Option("--output", "-o", help="rich | json | markdown | html")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write the report to this file.")] = None,
    verbose: o.Verbose = False,
    *,
    chosen: o.SourceOptions,
) -> None:
    from whathappened.explain import explain as make_report
    from whathappened.sources import live_sources, snapshot_sources

    snapshot, debug = chosen.snapshot, chosen.debug
    settings = chosen.settings()
    window = o.window_of(settings)  # validate the window before touching any source
    if snapshot is not None and chosen.since is None and chosen.start is None and chosen.end is None:
        from whathappened.collectors.snapshot.writer import recorded_window

        window = recorded_window(snapshot) or window  # a recorded incident replays its own window
    strip = output is o.Output.html  # each pod's GPU utilization strip: a costly query only HTML draws
    if snapshot is not None:
        sources = snapshot_sources(snapshot, settings, chosen.without, utilization=strip)
    else:
        sources = live_sources(settings, chosen.without, utilization=strip)
    sources.require(
        "no source is configured: give --kubeconfig/--context, --prometheus-url, --elasticsearch-url, or --snapshot DIR"
    )
    query = o.query_of(experiment, settings, sources.namespace, window)
    # Reading local files has no server to wait for: a large snapshot gets the time it needs unless asked.
    deadline_s = (
        max(settings.deadline_s, SNAPSHOT_DEADLINE_S)
        if snapshot is not None and chosen.deadline is None
        else (settings.deadline_s)
    )
    with progress(f"asking {', '.join(c.name for c in sources.collectors)}"):
        report = make_report(sources.collectors, query, deadline_s, sources.not_configured)
    emit(report, output, out, debug, verbose)
    if debug:
        debug_requests(sources.collectors)
    if any(s.failed for s in report.sources) or report.outcome is Outcome.NO_EVIDENCE:
        raise typer.Exit(3)
