"""``whathappened demo``: explain a bundled incident end to end, with no cluster and no servers."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Annotated

import typer

from whathappened.cli.options import Output, Verbose
from whathappened.cli.report_io import emit
from whathappened.errors import UsageError

DEFAULT_INCIDENT = "gpu-xid79-nccl"


def incidents_root() -> Path:
    return Path(str(resources.files("whathappened.data").joinpath("incidents")))


def available() -> list[str]:
    root = incidents_root()
    return sorted(p.name for p in root.iterdir() if (p / "scenario.yaml").is_file()) if root.is_dir() else []


def register(app: typer.Typer) -> None:
    app.command("demo", help="Explain a bundled incident, with no cluster and no servers.")(demo)


def demo(
    incident: Annotated[str | None, typer.Argument(help="Which bundled incident (see --list).")] = None,
    output: Annotated[Output | None, typer.Option("--output", "-o", help="rich | json | markdown | html")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write the report to this file.")] = None,
    list_them: Annotated[bool, typer.Option("--list", help="List the bundled incidents.")] = False,
    verbose: Verbose = False,
) -> None:
    import yaml

    from whathappened.collectors.snapshot.folder import snapshot_collectors
    from whathappened.explain import explain
    from whathappened.model import Window
    from whathappened.scope import Query
    from whathappened.timeutils import parse_time

    names = available()
    if list_them:
        typer.echo("\n".join(names))
        return
    chosen = incident or (DEFAULT_INCIDENT if DEFAULT_INCIDENT in names else (names[0] if names else ""))
    if chosen not in names:
        raise UsageError(f"no bundled incident {chosen!r}; choose one of {', '.join(names) or '(none bundled)'}")
    folder = incidents_root() / chosen
    spec = yaml.safe_load((folder / "scenario.yaml").read_text())
    window = Window(parse_time(str(spec["window"]["start"])), parse_time(str(spec["window"]["end"])))
    query = Query(experiment=spec["experiment"], namespace=spec["namespace"], window=window)
    collectors, missing = snapshot_collectors(folder)
    report = explain(collectors, query, not_configured=missing)
    emit(report, output, out, verbose=verbose)
