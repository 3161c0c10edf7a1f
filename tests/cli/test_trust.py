"""Answers a researcher can trust, through the installed CLI: missing evidence is never good news, bad input is
named in one line with the contract's exit code, and every failure under ``-o json`` still writes JSON.

The incidents are the project's own (tests/scenarios/); dead sources are loopback ports nothing listens on.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.acceptance import BIN, run_cli, scenario_args
from tests.fixtures.kube import write_kubeconfig
from tests.support import SCENARIOS_DIR, free_port, load_scenario

EXPLAINED = load_scenario(SCENARIOS_DIR / "node-failure")
FINISHED = load_scenario(SCENARIOS_DIR / "completed")
GOOD_NEWS = ("No failure found", "nothing failed", 'class="root tone-none"')


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "COLUMNS": "100", **(env or {})},
    )


def _dead(source: str, tmp_path: Path) -> list[str]:
    url = f"http://127.0.0.1:{free_port()}"
    if source == "kubernetes":
        return ["--kubeconfig", str(write_kubeconfig(tmp_path / "kubeconfig", url, "pretrain"))]
    if source == "prometheus":
        return ["--prometheus-url", url]
    return ["--elasticsearch-url", url]


DEAD_SETS = {
    "kubernetes": ("kubernetes",),
    "prometheus": ("prometheus",),
    "logs": ("logs",),
    "all": ("kubernetes", "prometheus", "logs"),
}


def _dead_args(which: str, tmp_path: Path) -> list[str]:
    args = ["run-7", "-n", "pretrain", "--deadline", "5s"]
    for source in DEAD_SETS[which]:
        args += _dead(source, tmp_path)
    if "kubernetes" not in DEAD_SETS[which]:
        args += ["--without", "kubernetes"]
    return args


@pytest.mark.parametrize("which", sorted(DEAD_SETS))
def test_dead_sources_give_no_evidence_in_json(which: str, tmp_path: Path) -> None:
    code, document, stderr = run_cli(*_dead_args(which, tmp_path))
    assert code == 3, stderr
    assert document is not None and document["outcome"] == "no-evidence"
    assert document["root_cause"] is None and "nothing failed" not in (document["next_step"] or "")
    failed = {s["name"] for s in document["sources"] if s["status"] in ("unreachable", "timeout", "failed")}
    assert failed == set(DEAD_SETS[which])


@pytest.mark.parametrize("form", ["rich", "markdown", "html"])
@pytest.mark.parametrize("which", ["prometheus", "all"])
def test_dead_sources_are_never_good_news_in_any_form(which: str, form: str, tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = _cli(*_dead_args(which, tmp_path), "--output", form, "--out", str(out))
    assert result.returncode == 3, result.stderr
    text = out.read_text()
    assert "no answer" in text.lower() and "no source could be read" in text
    assert not any(phrase in text for phrase in GOOD_NEWS)
    for source in DEAD_SETS[which]:
        assert source in text and "unreachable" in text  # each source's reason is shown
    if form == "html":
        assert 'data-tone="no-evidence"' in text


def test_no_failure_says_which_sources_answered() -> None:
    code, document, stderr = run_cli(FINISHED.experiment, "-n", FINISHED.namespace, "--snapshot", str(FINISHED.path))
    assert code == 0, stderr
    assert document is not None and document["outcome"] == "no-failure"
    text = _cli(FINISHED.experiment, "-n", FINISHED.namespace, "--snapshot", str(FINISHED.path)).stdout
    assert "outcome: no failure" in text and "kubernetes, prometheus, logs answered" in text


def test_explained_outcome_in_every_form(tmp_path: Path) -> None:
    args = [*scenario_args(EXPLAINED), "--snapshot", str(EXPLAINED.path)]
    code, document, _ = run_cli(*args)
    assert code == 0 and document is not None and document["outcome"] == "explained"
    for form in ("rich", "markdown", "html"):
        out = tmp_path / f"r.{form}"
        assert _cli(*args, "--output", form, "--out", str(out)).returncode == 0
        assert "outcome: explained" in out.read_text().lower()


def test_a_snapshot_replays_its_recorded_window() -> None:
    code, document, stderr = run_cli(EXPLAINED.experiment, "-n", EXPLAINED.namespace, "--snapshot", str(EXPLAINED.path))
    assert code == 0, stderr
    assert document is not None
    assert document["window"]["start"].startswith(EXPLAINED.start.strftime("%Y-%m-%dT%H:%M:%S"))
    assert document["window"]["end"].startswith(EXPLAINED.end.strftime("%Y-%m-%dT%H:%M:%S"))
    assert document["outcome"] == "explained"
    assert document["root_cause"]["cause"] == "node-failure"


def test_a_window_flag_still_overrides_the_recorded_one() -> None:
    code, document, _ = run_cli(
        EXPLAINED.experiment, "-n", EXPLAINED.namespace, "--snapshot", str(EXPLAINED.path), "--since", "1h"
    )
    # an hour before now holds none of the recorded incident: nothing can be said, and it says so
    assert code in (3, 4)
    assert document is None or document["outcome"] == "no-evidence"


BAD_INPUT = [
    (["--prometheus-url", "localhost:9090"], "--prometheus-url", "http://"),
    (["--elasticsearch-url", "not-a-url"], "--elasticsearch-url", "http://"),
    (["--prometheus-url", "http://:9090"], "--prometheus-url", "no host"),
    (["--prometheus-url", "http://h:99999"], "--prometheus-url", "not a URL"),
]


@pytest.mark.parametrize(("args", "names", "says"), BAD_INPUT)
def test_bad_urls_are_usage_errors_naming_the_option(args: list[str], names: str, says: str) -> None:
    result = _cli("run-7", "-n", "x", *args)
    assert result.returncode == 2 and result.stdout == ""
    line = result.stderr.strip()
    assert names in line and says in line and len(line.splitlines()) == 1
    assert "internal error" not in line and "Traceback" not in line


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ("[prometheus]\nurl = 5\n", "'prometheus.url'"),
        ('[elasticsearch]\nurl = "elastic:9200"\n', "'elasticsearch.url'"),
        ("prometheus = 3\n", "[prometheus]"),
        ("url = 5\n", "unknown setting 'url'"),
    ],
)
def test_bad_config_values_are_usage_errors_naming_the_key(config: str, says: str, tmp_path: Path) -> None:
    path = tmp_path / "whathappened.toml"
    path.write_text(config)
    result = _cli("run-7", "-n", "x", "--config", str(path))
    assert result.returncode == 2
    assert says in result.stderr and str(path) in result.stderr and "internal error" not in result.stderr


def test_a_bad_url_from_the_environment_names_the_variable() -> None:
    result = _cli("run-7", "-n", "x", env={"WHATHAPPENED_PROMETHEUS_URL": "prom:9090"})
    assert result.returncode == 2 and "WHATHAPPENED_PROMETHEUS_URL" in result.stderr


def test_a_missing_kubeconfig_is_named() -> None:
    result = _cli("run-7", "-n", "x", "--kubeconfig", "/missing/file")
    assert result.returncode == 2 and "--kubeconfig /missing/file: no such file" in result.stderr


def test_a_namespace_typo_gets_a_hint() -> None:
    args = [EXPLAINED.experiment, "-n", "pretrian", "--snapshot", str(EXPLAINED.path)]
    result = _cli(*args)
    assert result.returncode == 4
    assert f"found in namespace {EXPLAINED.namespace}; use -n {EXPLAINED.namespace}" in result.stderr
    document = json.loads(_cli(*args, "-o", "json").stdout)
    assert document["error"]["kind"] == "not-found" and document["error"]["namespaces"] == [EXPLAINED.namespace]


def test_a_malformed_snapshot_names_every_damaged_file(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    shutil.copytree(EXPLAINED.path, folder)
    for path in [*(folder / "kubernetes").glob("*.json"), folder / "logs.ndjson"]:
        path.write_text("{not json\n")
    (folder / "prometheus.om.gz").write_bytes(b"not gzip")
    args = [EXPLAINED.experiment, "-n", EXPLAINED.namespace, "--snapshot", str(folder)]
    code, document, _ = run_cli(*args)
    assert code == 3 and document is not None and document["outcome"] == "no-evidence"
    details = " ".join(s["detail"] for s in document["sources"])
    for name in ("pods.json", "events.json", "nodes.json", "prometheus.om.gz", "logs.ndjson"):
        assert name in details
    assert "pods.json" in _cli(*args).stdout


def _error_document(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(result.stdout)
    assert document["schema"] == "whathappened/v1"
    assert document["error"]["exit_code"] == result.returncode and document["error"]["message"]
    return document


@pytest.mark.parametrize(
    ("args", "code", "kind"),
    [
        (["run-7", "--bogus-flag"], 2, "usage"),
        (["run-7", "-n", "x", "--prometheus-url", "localhost:1"], 2, "usage"),
        (["run-7", "-n", "x"], 2, "usage"),  # no source at all
        (["run-7", "-n", "x", "--snapshot", "/nonexistent/folder"], 2, "usage"),
        (["nobody", "-n", "pretrain", "--snapshot", str(EXPLAINED.path)], 4, "not-found"),
    ],
)
def test_every_failure_under_json_writes_a_json_error(args: list[str], code: int, kind: str) -> None:
    result = _cli(*args, "-o", "json")
    assert result.returncode == code, result.stderr
    assert _error_document(result)["error"]["kind"] == kind
    assert result.stderr.strip()  # the one line for people is still on standard error


def test_collect_with_no_readable_source_exits_3_naming_it(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    result = _cli(
        "collect", "run-7", "-n", "x", "--prometheus-url", dead, "--deadline", "5s", "-o", str(tmp_path / "o")
    )
    assert result.returncode == 3
    assert "prometheus unreachable" in result.stderr and "not found" not in result.stderr


def test_times_carry_the_date_when_the_window_spans_days() -> None:
    base = [EXPLAINED.experiment, "-n", EXPLAINED.namespace, "--snapshot", str(EXPLAINED.path)]
    day = EXPLAINED.start.strftime("%Y-%m-%d")
    short = _cli(*base).stdout
    wide = _cli(
        *base,
        "--start",
        f"{day}T00:00:00Z",
        "--end",
        (EXPLAINED.end.replace(day=EXPLAINED.end.day + 2)).strftime("%Y-%m-%dT%H:%M:%SZ"),
    ).stdout
    timeline = lambda text: text.split("Timeline", 1)[1]  # noqa: E731
    assert f"{day} " not in timeline(short)  # within a day: the clock alone
    assert f"{day} " in timeline(wide)  # across days: every row says which day
