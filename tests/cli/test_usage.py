"""The CLI's contract on bad input: exit codes and one clear line, through the installed command."""

import subprocess
import sys
from pathlib import Path

import pytest

from whathappened.cli.main import route

BIN = Path(sys.executable).parent / "whathappened"


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN), *args], capture_output=True, text=True, timeout=timeout, env={"PATH": "/usr/bin:/bin"}
    )


def test_routing():
    assert route(["my-exp", "-n", "x"]) == ["explain", "my-exp", "-n", "x"]
    assert route(["-n", "x", "my-exp"]) == ["explain", "-n", "x", "my-exp"]
    assert route(["demo"]) == ["demo"]
    assert route(["explain", "demo"]) == ["explain", "demo"]
    assert route(["--help"]) == ["--help"]


def test_help_lists_commands_and_imports_no_heavy_client():
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "from whathappened.cli.main import run; run(['--help'])"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    assert "explain" in result.stdout and "demo" in result.stdout
    imported = {line.split("|")[-1].strip().split(".")[0] for line in result.stderr.splitlines() if "|" in line}
    assert not imported & {"kubernetes", "elasticsearch", "pandas", "prometheus_api_client"}


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["exp", "--since", "yesterday"], "90m, 6h or 2d"),
        (["exp", "--start", "20/11/2026"], "2026-11-20T06:00:00Z"),
        (["exp", "--start", "2026-11-20T08:00:00Z", "--end", "2026-11-20T06:00:00Z"], "--end must be after"),
        (["exp", "--output", "pdf"], "pdf"),
        (["exp", "-n", "a", "-A"], "either --namespace or --all-namespaces"),
        (["exp", "--snapshot", "/nonexistent/x", "--start", "2026-11-20T06:00:00Z"], "does not exist"),
        (["exp", "--without", "grafana", "--snapshot", "."], "unknown source grafana"),
    ],
)
def test_usage_errors_exit_2_with_a_clear_line(args, needle):
    result = run(*args)
    assert result.returncode == 2, result.stderr
    assert needle in result.stderr
    assert "Traceback" not in result.stderr


def test_no_source_configured_is_a_usage_error(tmp_path):
    result = subprocess.run(
        [str(BIN), "exp"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert result.returncode == 2
    assert "no source is configured" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("namespace", [(), ("-n", "research")])
@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("clusters: [\n  - oops\n", "not valid YAML at line"),
        ("apiVersion: v1\nclusters: 5\n", "Kubernetes configuration"),
    ],
)
def test_a_broken_kubeconfig_is_named_in_one_line(tmp_path, namespace, text, needle):
    """Not YAML, or YAML of the wrong shape: never a traceback or an 'unexpected error', but a usage error
    naming the problem when no other source is given."""
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(text)
    result = subprocess.run(
        [str(BIN), "exp", "--kubeconfig", str(kubeconfig), *namespace, "-o", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert "Traceback" not in result.stderr and "unexpected error" not in result.stderr
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "no usable source; kubernetes:" in result.stderr and needle in result.stderr


def test_collect_also_refuses_namespace_with_all_namespaces(tmp_path):
    result = run("collect", "exp", "-o", str(tmp_path / "out"), "-n", "a", "-A")
    assert result.returncode == 2
    assert "either --namespace or --all-namespaces" in result.stderr


def test_a_report_command_still_runs_the_exit_hooks(tmp_path):
    """A one-shot command leaves without tearing the interpreter down, but after the exit hooks (the clients
    remove their temporary certificate files there)."""
    marker = tmp_path / "hook-ran"
    code = (
        "import atexit, pathlib, sys\n"
        f"atexit.register(pathlib.Path({str(marker)!r}).write_text, 'yes')\n"
        "from whathappened.cli.main import run\n"
        "run(['demo', '--output', 'json'])\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("{") and result.stdout.rstrip().endswith("}")
    assert marker.read_text() == "yes"


def test_every_command_reading_sources_takes_its_flags_from_the_one_definition():
    """explain and collect get their source flags from options.FLAGS: every flag is in both commands' help (but
    those collect leaves out), and each reaches the command as one SourceOptions field."""
    import typer
    from typer.testing import CliRunner

    from whathappened.cli import options as o

    def long_flag(info: typer.models.OptionInfo) -> str:
        # typer keeps an Annotated option's first name as its "default", the others as param_decls
        return next(d for d in (info.default, *(info.param_decls or ())) if isinstance(d, str) and d.startswith("--"))

    names = {name: long_flag(annotation.__metadata__[0]) for name, annotation, _ in o.FLAGS}
    runner = CliRunner()
    app = typer.Typer()
    seen: list[o.SourceOptions] = []

    @app.command()
    @o.with_sources(leave_out=("snapshot",))
    def probe(experiment: str, *, chosen: o.SourceOptions) -> None:
        seen.append(chosen)

    result = runner.invoke(app, ["x", "--since", "2h", "--label-key", "a", "--label-key", "b", "--without", "logs"])
    assert result.exit_code == 0, result.output
    assert seen == [o.SourceOptions(since="2h", label_keys=("a", "b"), without=("logs",))]
    assert runner.invoke(app, ["x", "--snapshot", "d"]).exit_code == 2  # left out: not a flag of this command
    for command, left_out in (("explain", set()), ("collect", {"snapshot", "label_keys", "without", "log_preset"})):
        shown = subprocess.run(
            [sys.executable, "-m", "whathappened.cli.main", command, "--help"],
            capture_output=True,
            text=True,
            env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
        ).stdout
        for name, flag in names.items():
            assert (flag in shown) == (name not in left_out), (command, flag)
    with pytest.raises(ValueError, match="no such source flag"):
        o.with_sources(leave_out=("not-a-flag",))
