"""``whathappened fleet`` on the generator's month of a cluster (synth/fleet.py): 200 experiments over 64 nodes,
their causes mixed after the Llama 3 table, two lemon nodes, one GPU failing again and again, the pods deleted and
the API's events expired. Backfilled into one real Prometheus and one log store; the installed command's taxonomy,
lemon lists and incidents are checked exactly against the generator's truth."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from synth.fleet import write_history
from tests.acceptance import BIN
from tests.fixtures.prometheus import prometheus_of
from tests.fixtures.search import SearchServer, default_indices
from whathappened.fleet.rollup import FAULTS, LEMON_THRESHOLD

EXPERIMENTS, NODES, DAYS = 200, 64, 30
MONTH = ["--start", "2026-11-01T00:00:00Z", "--end", "2026-12-01T00:00:00Z"]
RECORDED: list[Path] = []  # the month's recorded folders, once the fixture wrote them


@pytest.fixture(scope="module")
def month(tmp_path_factory: pytest.TempPathFactory, search_server: SearchServer) -> Iterator[tuple[dict, list[dict]]]:
    """The fleet's JSON for the month, live, and the generator's truth; the recorded folders stay for the snapshot
    test."""
    folder = tmp_path_factory.mktemp("fleet-history")
    plans = write_history(folder / "history", EXPERIMENTS, NODES, DAYS)
    truth = json.loads((folder / "history" / "truth.json").read_text())
    for number, p in enumerate(plans):
        search_server.load_ndjson(
            f"fleet-month-{number}", (folder / "history" / p.experiment / "logs.ndjson").read_text()
        )
    with prometheus_of([folder / "history" / p.experiment / "prometheus.om.gz" for p in plans], folder) as url:
        sources = ["--prometheus-url", url, *default_indices("fleet-month-*").arguments(search_server.url)]
        env = {"PATH": "/usr/bin:/bin", "HOME": str(folder)}
        done = subprocess.run([str(BIN), "fleet", *sources, *MONTH, "--output", "json"], capture_output=True,
                              text=True, env=env, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    RECORDED.append(folder / "history")
    yield json.loads(done.stdout), truth


def failed(truth: list[dict]) -> list[dict]:
    return [t for t in truth if t["cause"] != "completed"]


def test_the_taxonomy_is_the_generators(month: tuple[dict[str, Any], list[dict]]) -> None:
    result, truth = month
    assert result["outcome"] == "explained"
    wanted = Counter(t["cause"] for t in failed(truth))
    assert {row["cause"]: row["incidents"] for row in result["by_cause"]} == dict(wanted)
    assert result["totals"]["incidents"] == len(failed(truth)) and len(wanted) >= 5
    assert [row["cause"] for row in result["by_cause"]][:2] == ["gpu-fallen-off-bus", "gpu-memory-error"]
    assert sum(row["share"] for row in result["by_cause"]) == pytest.approx(1.0, abs=1e-3)


def test_each_incident_is_its_experiments_with_the_right_root(month: tuple[dict[str, Any], list[dict]]) -> None:
    result, truth = month
    got = {i["experiment"]: i for i in result["incidents"]}
    assert set(got) == {t["experiment"] for t in failed(truth)}  # one incident each; the completed have none
    for t in failed(truth):
        incident = got[t["experiment"]]
        assert incident["cause"] == t["cause"], t["experiment"]
        if t["cause"] in FAULTS:  # the hardware that failed
            assert incident["node"] == t["node"], t["experiment"]
            if t["cause"] != "node-failure":
                assert incident["gpu"] == t["gpu"], t["experiment"]
        assert incident["pod_deaths"] >= 2  # the root and its collateral (2 to 4 ranks)


def test_the_lemons_are_the_two_nodes_and_the_gpu(month: tuple[dict[str, Any], list[dict]]) -> None:
    result, truth = month
    rooted = Counter(t["node"] for t in failed(truth) if t["cause"] in FAULTS)
    lemons = {node for node, count in rooted.items() if count >= LEMON_THRESHOLD}
    assert len(lemons) == 2
    assert {row["node"] for row in result["by_node"] if row["verdict"] == "replace"} == lemons
    nodes = {row["node"]: row for row in result["by_node"]}
    assert all(nodes[node]["root_incidents"] == rooted[node] for node in rooted)
    gpus = Counter(t["gpu"] for t in failed(truth) if t["cause"] in FAULTS and t["cause"] != "node-failure")
    [(lemon_gpu, faults)] = [(gpu, n) for gpu, n in gpus.items() if n >= LEMON_THRESHOLD]
    [row] = [row for row in result["by_gpu"] if row["verdict"] == "replace"]
    assert (row["gpu"], row["root_incidents"], row["experiments_killed"]) == (lemon_gpu, faults, faults)
    assert row["xids_seen"] >= faults


def test_from_the_recorded_folders_the_same_answer(month: tuple[dict[str, Any], list[dict]], tmp_path: Path) -> None:
    """The month as 200 recorded folders (``--snapshot``): the same incidents, causes and lemons as live."""
    live, _ = month
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    command = [str(BIN), "fleet", "--snapshot", str(RECORDED[0]), *MONTH, "--output", "json"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    recorded = json.loads(done.stdout)
    # the GPU-hours too: live from kube-state-metrics' request series (the pods are deleted), recorded from the pods'
    # objects; live, when a pod started and ended is read from the 60 s scrape (a lost node's pods end at their
    # series' last sample), recorded from the objects' own times: within 10 %
    counted = [{k: v for k, v in row.items() if k != "gpu_hours_lost"} for row in recorded["by_cause"]]
    assert counted == [{k: v for k, v in row.items() if k != "gpu_hours_lost"} for row in live["by_cause"]]
    lost = {row["cause"]: row["gpu_hours_lost"] for row in live["by_cause"]}
    assert {row["cause"]: row["gpu_hours_lost"] for row in recorded["by_cause"]} == pytest.approx(lost, rel=0.1)
    assert all(hours > 0 for cause, hours in lost.items() if cause != "deleted"), lost  # a deletion is a choice
    assert recorded["by_node"] == live["by_node"] and recorded["by_gpu"] == live["by_gpu"]
    pick = ("experiment", "cause", "root_pod", "node", "gpu")
    assert [{k: i[k] for k in pick} for i in recorded["incidents"]] == [
        {k: i[k] for k in pick} for i in live["incidents"]
    ]
