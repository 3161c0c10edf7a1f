"""``whathappened fleet`` end to end, as the installed command, over a month's history: the project's incidents
backfilled into one real Prometheus and their logs into one log store (osmem-server), the pods long gone (no
Kubernetes API). Each incident's root cause is known from the generator (scenario.yaml), so the taxonomy and the
lemon list are checked exactly against it."""

from __future__ import annotations

import csv
import io
import json
import subprocess
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.acceptance import BIN
from tests.fixtures.chromium import Chromium
from tests.fixtures.prometheus import prometheus_of
from tests.fixtures.search import SearchServer, default_indices
from tests.support import Scenario, all_scenarios, free_port
from whathappened.fleet.rollup import FAULTS

# Incidents of distinct experiments on distinct days of November 2026, each with one root cause.
HISTORY = (
    "xid79-fallen-off-bus",
    "maintenance-eviction",
    "oom-killed",
    "ecc-dbe",
    "cuda-oom",
    "app-traceback",
    "node-failure",
    "spot-preemption",
    "deleted-by-user",
    "completed",  # ran to the end: no death, no incident
)
MONTH = ["--start", "2026-11-01T00:00:00Z", "--end", "2026-12-01T00:00:00Z"]
PREFIX = "fleet-history"


def scenarios() -> list[Scenario]:
    found = {s.name: s for s in all_scenarios()}
    return [found[name] for name in HISTORY]


def root_of(scenario: Scenario) -> str | None:
    """The incident's root cause as the generator wrote it; None when nothing failed."""
    return next((e["cause"] for e in scenario.expected if e.get("root")), None)


def failed() -> list[Scenario]:
    return [s for s in scenarios() if root_of(s)]


def roots() -> Counter[str]:
    return Counter(root_of(s) for s in failed())


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory, search_server: SearchServer) -> Iterator[list[str]]:
    """The CLI's source flags for the month."""
    folder = tmp_path_factory.mktemp("fleet")
    for number, scenario in enumerate(scenarios()):
        search_server.load_ndjson(f"{PREFIX}-{number}", (scenario.path / "logs.ndjson").read_text(encoding="utf-8"))
    with prometheus_of([s.path / "prometheus.om.gz" for s in scenarios()], folder) as url:
        yield ["--prometheus-url", url, *default_indices(f"{PREFIX}-*").arguments(search_server.url), *MONTH]


def fleet(history: list[str], tmp_path: Path, *args: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([str(BIN), "fleet", *history, *args], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_taxonomy_counts_each_incident_once_under_its_root_cause(history: list[str], tmp_path: Path) -> None:
    result: dict[str, Any] = json.loads(fleet(history, tmp_path, "--output", "json"))
    assert result["outcome"] == "explained"
    assert {row["cause"]: row["incidents"] for row in result["by_cause"]} == dict(roots())
    assert result["totals"]["incidents"] == sum(roots().values())
    assert sum(row["share"] for row in result["by_cause"]) == pytest.approx(1.0, abs=1e-3)
    by_experiment = {row["experiment"] for row in result["by_experiment"]}
    assert by_experiment == {s.experiment for s in failed()}
    incidents = {i["experiment"]: i for i in result["incidents"]}
    for scenario in failed():
        died = {e["pod"] for e in scenario.expected if e.get("cause") != "completed"}
        root = next(e["pod"] for e in scenario.expected if e.get("root"))
        incident = incidents[scenario.experiment]
        # the ends found are pods that died (a pod stuck Terminating on a lost node is found only when its object
        # goes: here the history ends first), and the root is the generator's
        assert set(incident["pods"]) <= died and incident["pod_deaths"] >= 1, scenario.name
        assert incident["root_pod"] == root, scenario.name


def test_the_lemon_lists_name_the_roots_hardware(history: list[str], tmp_path: Path) -> None:
    result = json.loads(fleet(history, tmp_path, "--output", "json", "--replace-after", "1"))
    faulty = {i["node"] for i in result["incidents"] if i["cause"] in FAULTS}  # not maintenance, not spot
    assert faulty and {row["node"] for row in result["by_node"] if row["root_incidents"]} == faulty
    assert all(row["verdict"] == "replace" for row in result["by_node"] if row["root_incidents"])
    # the GPUs at the root of the GPU faults, by UUID, with the Xids they raised (79 off the bus, 48 the DBE)
    gpus = {row["gpu"]: row["xid_codes"] for row in result["by_gpu"] if row["root_incidents"]}
    faults = [i for i in result["incidents"] if i["cause"] in ("gpu-fallen-off-bus", "gpu-memory-error")]
    assert {i["gpu"] for i in faults} <= set(gpus) and all(g.startswith("GPU-") for g in gpus)
    assert sorted(code for codes in gpus.values() for code in codes) == [48, 79]


def test_csv_and_markdown_show_the_same_table(history: list[str], tmp_path: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(fleet(history, tmp_path, "--output", "csv", "--by", "cause"))))
    assert {r["cause"]: int(r["incidents"]) for r in rows} == dict(roots())
    markdown = fleet(history, tmp_path, "--output", "markdown", "--by", "experiment")
    assert markdown.startswith("# whathappened fleet")
    assert all(s.experiment in markdown for s in failed())


def test_a_window_without_history_is_no_evidence_not_good_news(history: list[str], tmp_path: Path) -> None:
    """October: Prometheus answers, but holds no kube-state-metrics history then. No death seen is not no death."""
    quiet = [a for a in history if a not in MONTH] + [
        "--start",
        "2026-10-01T00:00:00Z",
        "--end",
        "2026-10-31T00:00:00Z",
    ]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([str(BIN), "fleet", *quiet, "--output", "json"], capture_output=True, text=True, env=env,
                          timeout=300)  # fmt: skip
    assert done.returncode == 3, done.stderr  # made, but on no evidence (CONTRACT.md section 1)
    result = json.loads(done.stdout)
    assert (result["outcome"], result["totals"]["incidents"], result["history"]) == (
        "no-evidence",
        0,
        {"coverage": 0.0, "covered": []},
    )
    markdown = subprocess.run([str(BIN), "fleet", *quiet, "--output", "markdown"], capture_output=True, text=True,
                              env=env, timeout=300).stdout  # fmt: skip
    assert "No kube-state-metrics history from 2026-10-01 00:00 to 2026-10-31 00:00 UTC" in markdown
    assert "No experiment pod died" not in markdown


def test_a_covered_window_without_a_death_says_no_failure(history: list[str], tmp_path: Path) -> None:
    """A stretch the history covers, before the first death in it: no failure, and no gap to mention."""
    month = json.loads(fleet(history, tmp_path, "--output", "json"))
    deaths = sorted(datetime.fromisoformat(i["first_death"]) for i in month["incidents"])
    quiet = None
    for span in month["history"]["covered"]:
        start, end = datetime.fromisoformat(span["start"]), datetime.fromisoformat(span["end"])
        before = min([d for d in deaths if start <= d] + [end]) - timedelta(minutes=15)
        start += timedelta(minutes=10)  # the month's coarse step rounds a span's start down by up to 9 minutes
        if before - start >= timedelta(minutes=10):
            quiet = (start, before)
            break
    assert quiet is not None, month["history"]
    window = ["--start", quiet[0].isoformat(), "--end", quiet[1].isoformat()]
    result = json.loads(fleet([a for a in history if a not in MONTH] + window, tmp_path, "--output", "json"))
    assert (result["outcome"], result["totals"]["incidents"], result["history"]["coverage"]) == ("no-failure", 0, 1.0)


def test_a_month_of_scattered_history_says_how_much_it_covers(history: list[str], tmp_path: Path) -> None:
    """The ten incidents' recordings are a few hours each: the headline says the rest of the month is unseen."""
    result = json.loads(fleet(history, tmp_path, "--output", "json"))
    assert 0 < result["history"]["coverage"] < 0.2
    markdown = fleet(history, tmp_path, "--output", "markdown")
    share = f"{result['history']['coverage']:.0%}"
    assert f"kube-state-metrics history covers only {share} of the window" in markdown
    assert "deaths outside it are not counted" in markdown


def test_without_prometheus_it_says_what_it_needs(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([str(BIN), "fleet", *MONTH], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().endswith("give --prometheus-url (or prometheus.url in the config file), or --snapshot")
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_html_page_draws_the_taxonomy_in_chromium(history: list[str], tmp_path: Path, chromium: Chromium) -> None:
    """Self-contained (no request, no console error under its policy); one bar per cause with its count; the weekly
    stacks add up to the incidents."""
    page = tmp_path / "fleet.html"
    fleet(history, tmp_path, "--output", "html", "--out", str(page))
    with chromium.tab() as tab:
        tab.open(page.as_uri())
        assert tab.console_errors() == []
        assert [url for url in tab.requests() if url != page.as_uri()] == []
        bars = tab.evaluate(
            "[...document.querySelectorAll('#causes .bar')].map(b => [b.dataset.cause, +b.dataset.incidents])"
        )
        assert dict(bars) == dict(roots())
        stacked = tab.evaluate(
            "[...document.querySelectorAll('#weekly .seg')].reduce((n, s) => n + +s.dataset.incidents, 0)"
        )
        assert stacked == sum(roots().values())
        assert tab.evaluate("document.querySelectorAll('#by-experiment tbody tr').length") == len(failed())
        width, height = tab.screenshot(tmp_path / "fleet.png")
        assert width >= 1000 and height >= 600


def test_from_a_snapshot_the_same_taxonomy(tmp_path: Path) -> None:
    """A folder of recorded folders (as ``whathappened collect`` writes them): the same ends, found in the recorded
    series, each incident explained from its own folder; the window is the recordings' unless given."""
    folder = tmp_path / "recorded"
    folder.mkdir()
    for scenario in scenarios():
        (folder / scenario.name).symlink_to(scenario.path)
    result = json.loads(fleet(["--snapshot", str(folder)], tmp_path, "--output", "json"))
    assert {row["cause"]: row["incidents"] for row in result["by_cause"]} == dict(roots())
    assert {i["experiment"]: i["root_pod"] for i in result["incidents"]} == {
        s.experiment: next(e["pod"] for e in s.expected if e.get("root")) for s in failed()
    }
    assert result["sources"] == {"snapshot": "ok"} and result["window"]["start"].startswith("2026-11-12")


def test_a_log_store_down_still_gives_the_taxonomy_prometheus_can_tell_and_exit_3(
    history: list[str], tmp_path: Path
) -> None:
    """The deaths come from Prometheus; with the log store refusing, the causes only logs show are unknown, the
    others are right, every incident says which source failed, and the exit code is the contract's 3."""
    down = [*history[: history.index("--elasticsearch-url") + 1], f"http://127.0.0.1:{free_port()}"]
    down += history[history.index("--elasticsearch-url") + 2 :]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([str(BIN), "fleet", *down, "--output", "json"], capture_output=True, text=True, env=env,
                          timeout=300)  # fmt: skip
    assert done.returncode == 3, done.stderr
    result = json.loads(done.stdout)
    assert result["totals"]["incidents"] == sum(roots().values())
    assert all(i["sources"]["logs"] == "unreachable" for i in result["incidents"])
    hardware = {row["cause"]: row["incidents"] for row in result["by_cause"] if row["cause"] in FAULTS}
    assert hardware == {cause: n for cause, n in roots().items() if cause in FAULTS}
