"""``whathappened dashboards``: write the Grafana dashboards as JSON, or upload them to a Grafana.

The token comes from the environment only (WHATHAPPENED_GRAFANA_TOKEN, else GRAFANA_TOKEN), never from a flag,
so it stays out of shell history and process lists; it is registered with ``remember_secret`` so no message
can print it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from whathappened.errors import ConfigError, remember_secret

TOKEN_VARIABLES = ("WHATHAPPENED_GRAFANA_TOKEN", "GRAFANA_TOKEN")

group = typer.Typer(
    name="dashboards",
    help="Grafana dashboards generated from the metric catalog.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


def register(app: typer.Typer) -> None:
    app.add_typer(group, name="dashboards")


@group.command("generate", help="Write the dashboards' JSON files into a folder.")
def generate(
    out: Annotated[Path, typer.Option("--out", help="Folder to write the JSON files into.")] = Path("dashboards"),
) -> None:
    from whathappened.dashboards.generate import write

    for path in write(out):
        typer.echo(str(path))


@group.command("install", help="Upload the dashboards to Grafana (token from WHATHAPPENED_GRAFANA_TOKEN).")
def install(
    grafana_url: Annotated[str, typer.Option("--grafana-url", help="Grafana's base URL.", envvar="GRAFANA_URL")],
    folder_uid: Annotated[str | None, typer.Option("--folder-uid", help="Grafana folder to put them in.")] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds per request.")] = 30.0,
) -> None:
    from whathappened.dashboards.generate import build
    from whathappened.dashboards.install import client_for
    from whathappened.dashboards.install import install as upload

    token = _token()
    with client_for(grafana_url, token, timeout) as client:
        for done in upload(client, build().values(), folder_uid, message="whathappened dashboards install"):
            version = f" v{done.version}" if done.version is not None else ""
            typer.echo(f"{done.outcome:9} {done.uid}{version} {done.url}".rstrip())


def _token() -> str:
    for name in TOKEN_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value:
            remember_secret(value)
            return value
    raise ConfigError(f"no Grafana token found ({' and '.join(TOKEN_VARIABLES)} are empty)")
