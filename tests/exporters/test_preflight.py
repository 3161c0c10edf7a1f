"""``whathappened preflight`` exit codes (0 not due, 75 due, 1 unknown) through the registered typer command."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import typer
from typer.testing import CliRunner

from tests.doubles.metadata import MetadataServer, samples
from tests.support import free_port, server_process
from whathappened.cli.exporter import register
from whathappened.errors import UsageError

PREEMPT_AT = datetime(2022, 8, 9, 17, 7, 32, tzinfo=UTC)  # NotBefore of the Azure spot sample


def _app(at: datetime) -> typer.Typer:
    app = typer.Typer()
    register(app, clock=lambda: at)
    return app


def _run(at: datetime, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(_app(at), ["preflight", *args])
    return result.exit_code, result.output


def _azure_preempt(metadata: MetadataServer) -> None:
    metadata.state.azure_document = samples()["azure"]["spot_preempt_example_Z5"]
    metadata.state.azure_vm_name = "vm-spot"
    metadata.state.providers = {"azure"}  # so that auto-detection has one cloud to find


def test_due_within_window_exits_75_with_what_and_when(metadata: MetadataServer) -> None:
    _azure_preempt(metadata)
    code, output = _run(PREEMPT_AT - timedelta(minutes=20), "--metadata-url", metadata.url)
    assert code == 75
    assert output.count("\n") == 1
    assert "Preempt" in output and "2022-08-09T17:07:32Z" in output and "in 20 min" in output


def test_not_due_within_window_exits_0(metadata: MetadataServer) -> None:
    _azure_preempt(metadata)
    code, output = _run(PREEMPT_AT - timedelta(minutes=90), "--provider", "azure", "--metadata-url", metadata.url)
    assert (code, output.strip()) == (0, "preflight ok: no host maintenance due within 60 min")
    code, _ = _run(PREEMPT_AT - timedelta(minutes=90), "--metadata-url", metadata.url, "--window", "2h")
    assert code == 75  # a wider window catches it


def test_no_notice_exits_0_on_each_provider(metadata: MetadataServer) -> None:
    for provider in ("azure", "aws", "gcp"):
        code, _ = _run(PREEMPT_AT, "--provider", provider, "--metadata-url", metadata.url)
        assert code == 0, provider


def test_aws_spot_and_gcp_terminate_are_due(metadata: MetadataServer) -> None:
    action = samples()["aws"]["spot_instance_action_example_A2_AEMM_README"]
    metadata.state.aws_spot = action
    code, output = _run(datetime(2020, 4, 24, 17, 10, tzinfo=UTC), "--provider", "aws", "--metadata-url", metadata.url)
    assert code == 75 and "spot-interruption" in output
    metadata.state.set_gcp_maintenance("TERMINATE_ON_HOST_MAINTENANCE")
    code, output = _run(PREEMPT_AT, "--provider", "gcp", "--metadata-url", metadata.url)
    assert code == 75 and "TERMINATE_ON_HOST_MAINTENANCE" in output


def test_unreadable_metadata_exits_1(dead_url: str, metadata: MetadataServer) -> None:
    code, output = _run(PREEMPT_AT, "--metadata-url", dead_url)
    assert code == 1 and "cannot read the cloud metadata service" in output
    metadata.state.malformed = True
    _azure_preempt(metadata)
    code, output = _run(PREEMPT_AT, "--provider", "azure", "--metadata-url", metadata.url)
    assert code == 1 and "malformed JSON" in output


def test_bad_provider_is_a_usage_error(metadata: MetadataServer) -> None:
    result = CliRunner().invoke(_app(PREEMPT_AT), ["preflight", "--provider", "ibm", "--metadata-url", metadata.url])
    assert isinstance(result.exception, UsageError) and result.exception.exit_code == 2


def test_real_entry_point_preflight_and_exporter(metadata: MetadataServer, dead_url: str, tmp_path: Path) -> None:
    """The installed CLI: preflight's exit code, and the exporter process serving /healthz and /metrics."""
    main = [sys.executable, "-m", "whathappened.cli.main"]
    unknown = subprocess.run(
        [*main, "preflight", "--metadata-url", dead_url], capture_output=True, text=True, timeout=60
    )
    assert unknown.returncode == 1 and "cannot read the cloud metadata service" in unknown.stderr
    _azure_preempt(metadata)
    due = subprocess.run(
        [*main, "preflight", "--metadata-url", metadata.url], capture_output=True, text=True, timeout=60
    )
    assert due.returncode == 75 and "Preempt" in due.stdout  # NotBefore 2022: long due
    port = free_port()
    args = [
        *main,
        "exporter",
        "--metadata-url",
        metadata.url,
        "--node",
        "n1",
        "--port",
        str(port),
        "--host",
        "127.0.0.1",
    ]
    with server_process(
        [*args, "--no-gpu", "--poll-interval", "1s"], f"http://127.0.0.1:{port}/healthz", tmp_path / "log"
    ):
        text = httpx.get(f"http://127.0.0.1:{port}/metrics").text
        assert 'whathappened_preflight_ok{node="n1"}' in text
        assert 'whathappened_preflight_unknown{node="n1"} 0.0' in text  # the answer is known
        assert 'whathappened_gpu_health_enabled{node="n1"} 0.0' in text
