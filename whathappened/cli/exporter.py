"""``whathappened exporter`` (the node sidecar) and ``whathappened preflight`` (the launch guard).

``preflight`` exits 0 when no host maintenance is due within ``--window``, 75 when one is (EX_TEMPFAIL: launch
elsewhere or later), 1 when the metadata service cannot be read; it prints one line saying which, so it works
as an initContainer. The clock is a parameter of ``register`` so tests can run both commands at a fixed time.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated

import typer

from whathappened.errors import SourceError, UsageError
from whathappened.timeutils import now as utcnow
from whathappened.timeutils import parse_duration

PROVIDERS = ("auto", "azure", "aws", "gcp")
ProviderOpt = Annotated[str, typer.Option("--provider", help="auto | azure | aws | gcp")]
MetadataUrlOpt = Annotated[
    str | None, typer.Option("--metadata-url", help="Use this base URL instead of the cloud's 169.254.169.254.")
]


def _provider(value: str) -> str:
    if value not in PROVIDERS:
        raise UsageError(f"--provider must be one of {', '.join(PROVIDERS)}, not {value!r}")
    return value


def register(app: typer.Typer, clock: Callable[[], datetime] = utcnow) -> None:
    """Add ``exporter`` and ``preflight`` to ``app``; ``clock`` returns the current UTC time."""

    @app.command("exporter", help="Serve cloud maintenance notices and GPU health as Prometheus metrics.")
    def exporter(
        provider: ProviderOpt = "auto",
        metadata_url: MetadataUrlOpt = None,
        node: Annotated[
            str | None, typer.Option("--node", help="Node name (default: $NODE_NAME, then host name).")
        ] = None,
        port: Annotated[int, typer.Option("--port", help="Port for /metrics and /healthz.")] = 9977,
        host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "0.0.0.0",
        poll_interval: Annotated[str, typer.Option("--poll-interval", help="How often to poll (10s, 1m).")] = "10s",
        window: Annotated[
            str, typer.Option("--window", help="Preflight window for whathappened_preflight_ok.")
        ] = "60m",
        azure_acknowledge: Annotated[
            bool, typer.Option("--azure-acknowledge", help="Approve Azure scheduled events (lets them start early).")
        ] = False,
        node_events: Annotated[
            bool, typer.Option("--node-events", help="Also record notices as Kubernetes Events on the Node.")
        ] = False,
        label_node: Annotated[
            bool,
            typer.Option(
                "--label-node", help="Label the Node whathappened.io/maintenance-due=true while maintenance is due."
            ),
        ] = False,
        gpu: Annotated[bool, typer.Option("--gpu/--no-gpu", help="GPU health from NVML where present.")] = True,
    ) -> None:
        from whathappened.exporters.app import run_exporter

        run_exporter(
            provider=_provider(provider),
            metadata_url=metadata_url,
            node=node,
            port=port,
            host=host,
            poll_interval=parse_duration(poll_interval),
            window=parse_duration(window),
            azure_acknowledge=azure_acknowledge,
            node_events=node_events,
            label_node=label_node,
            gpu=gpu,
            clock=clock,
        )

    @app.command("preflight", help="Exit 0 if no host maintenance is due within --window, 75 if one is, 1 if unknown.")
    def preflight(
        provider: ProviderOpt = "auto",
        metadata_url: MetadataUrlOpt = None,
        window: Annotated[str, typer.Option("--window", help="How far ahead to look (60m, 2h).")] = "60m",
    ) -> None:
        from whathappened.exporters.app import check, preflight_exit

        span = parse_duration(window)
        try:
            outcome = check(_provider(provider), metadata_url, span, clock)
        except SourceError as exc:
            code, line = preflight_exit(exc)
            typer.echo(line, err=True)
            raise typer.Exit(code) from None
        code, line = preflight_exit(outcome)
        typer.echo(line)
        raise typer.Exit(code)
