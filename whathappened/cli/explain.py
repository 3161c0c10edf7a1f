"""``whathappened explain EXPERIMENT`` (also plain ``whathappened EXPERIMENT``): the report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from whathappened.cli import options as o
from whathappened.cli.report_io import debug_requests, emit, progress
from whathappened.errors import UsageError
from whathappened.model import Outcome, SourceStatus

SNAPSHOT_DEADLINE_S = 600.0


def register(app: typer.Typer) -> None:
    app.command("explain", help="Explain why the experiment's pods ended (the default command).")(explain)


def explain(
    experiment: Annotated[str, typer.Argument(help="The experiment's name (a label value or owner name).")],
    namespace: o.Namespace = None,
    all_namespaces: o.AllNamespaces = False,
    kubeconfig: o.Kubeconfig = None,
    context: o.Context = None,
    prometheus_url: o.PrometheusUrl = None,
    elasticsearch_url: o.ElasticsearchUrl = None,
    log_index: o.LogIndex = None,
    event_index: o.EventIndex = None,
    since: o.Since = None,
    start: o.Start = None,
    end: o.End = None,
    output: Annotated[o.Output | None, typer.Option("--output", "-o", help="rich | json | markdown | html")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write the report to this file.")] = None,
    config: o.ConfigFile = None,
    snapshot: o.Snapshot = None,
    debug: o.Debug = False,
    label_key: o.LabelKey = None,
    deadline: o.Deadline = None,
    without: o.Without = None,
    insecure_skip_tls_verify: o.Insecure = False,
    log_preset: o.LogPreset = None,
    verbose: o.Verbose = False,
) -> None:
    from whathappened.explain import explain as make_report
    from whathappened.sources import live_sources, snapshot_sources

    chosen = o.SourceOptions(
        namespace,
        all_namespaces,
        kubeconfig,
        context,
        prometheus_url,
        elasticsearch_url,
        log_index,
        event_index,
        since,
        start,
        end,
        config,
        snapshot,
        debug,
        tuple(label_key or ()),
        deadline,
        tuple(without or ()),
        insecure_skip_tls_verify,
        log_preset,
    )
    settings = chosen.settings()
    window = o.window_of(settings)  # validate the window before touching any source
    if snapshot is not None and since is None and start is None and end is None:
        from whathappened.collectors.snapshot.writer import recorded_window

        window = recorded_window(snapshot) or window  # a recorded incident replays its own window
    strip = output is o.Output.html  # each pod's GPU utilization strip: a costly query only HTML draws
    if snapshot is not None:
        sources = snapshot_sources(snapshot, settings, chosen.without, utilization=strip)
    else:
        sources = live_sources(settings, chosen.without, utilization=strip)
    if not sources.collectors:
        broken = [f"{r.name}: {r.detail}" for r in sources.not_configured if r.status != SourceStatus.NOT_CONFIGURED]
        if broken:  # a source was given but cannot be used: say why rather than ask for one
            raise UsageError("no usable source; " + "; ".join(broken))
        raise UsageError(
            "no source is configured: give --kubeconfig/--context, --prometheus-url, "
            "--elasticsearch-url, or --snapshot DIR"
        )
    query = o.query_of(experiment, settings, sources.namespace, window)
    # Reading local files has no server to wait for: a large snapshot gets the time it needs unless asked.
    deadline_s = (
        max(settings.deadline_s, SNAPSHOT_DEADLINE_S)
        if snapshot is not None and deadline is None
        else (settings.deadline_s)
    )
    with progress(f"asking {', '.join(c.name for c in sources.collectors)}"):
        report = make_report(sources.collectors, query, deadline_s, sources.not_configured)
    emit(report, output, out, debug, verbose)
    if debug:
        debug_requests(sources.collectors)
    if any(s.failed for s in report.sources) or report.outcome is Outcome.NO_EVIDENCE:
        raise typer.Exit(3)
