"""Every committed generated incident is in the shared scenario format and loads into the real tools."""

from __future__ import annotations

import gzip
import subprocess
from pathlib import Path

import pytest
from whathappened.collectors.logs.fields import detect, name_of

from synth.catalog import DEMOS, DEMOS_DIR, SCENARIOS, SCENARIOS_DIR
from tests.support import load_scenario, require_binary
from tests.synth.checks import CAUSES, bulk_documents, k8s_list, openmetrics_series

FOLDERS = [SCENARIOS_DIR / name for name in SCENARIOS] + [DEMOS_DIR / name for name in DEMOS]


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_folder_is_in_the_scenario_format(folder: Path) -> None:
    scenario = load_scenario(folder)
    assert scenario.start < scenario.end <= scenario.captured_at
    pods = {p["metadata"]["name"] for p in k8s_list(folder / "kubernetes" / "pods.json", "PodList")}
    k8s_list(folder / "kubernetes" / "events.json", "EventList")
    assert k8s_list(folder / "kubernetes" / "nodes.json", "NodeList")
    series = openmetrics_series(folder / "prometheus.om.gz")
    window = (int(scenario.start.timestamp()), int(scenario.end.timestamp()))
    assert all(window[0] <= t <= window[1] for stamps in series.values() for t in stamps)
    docs = bulk_documents(folder / "logs.ndjson")
    logged = {name_of(d, m.pod) for _, d in docs if (m := detect(d)) is not None}
    known = {key.split('pod="', 1)[1].split('"', 1)[0] for key in series if key.startswith("kube_pod_info{")}
    assert scenario.expected, "every generated scenario states what a careful engineer concludes"
    for entry in scenario.expected:
        assert entry["cause"] in CAUSES
        assert entry["root"] in (True, False, None)
        # The evidence must exist somewhere: a pod deleted from the API is still in kube-state-metrics history.
        assert entry["pod"] in pods | known, entry["pod"]
        if entry.get("caused_by"):
            assert entry["root"] is False and entry["caused_by"] in pods | known | logged


def test_every_cause_the_shared_set_lacks_has_a_scenario() -> None:
    causes = {e["cause"] for name in SCENARIOS for e in load_scenario(SCENARIOS_DIR / name).expected}
    wanted = {"node-failure", "nvlink-error", "gpu-thermal", "network-error", "scheduler-preemption", "config-error",
              "liveness-probe", "deadline-exceeded", "completed"}  # fmt: skip
    assert wanted <= causes
    assert sum(name.startswith("guard-") for name in SCENARIOS) == 4


def test_demo_incidents_stay_small() -> None:
    for name in DEMOS:
        size = sum(f.stat().st_size for f in (DEMOS_DIR / name).rglob("*") if f.is_file())
        assert size < 150_000, (name, size)


@pytest.mark.parametrize(
    "folder", [DEMOS_DIR / "gpu-xid79-nccl", SCENARIOS_DIR / "guard-clock-skew"], ids=lambda p: p.name
)
def test_promtool_loads_the_openmetrics(folder: Path, tmp_path: Path) -> None:
    promtool = require_binary("promtool")
    text = tmp_path / "metrics.om"
    text.write_bytes(gzip.decompress((folder / "prometheus.om.gz").read_bytes()))
    done = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(text), str(tmp_path / "data")],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    blocks = [p for p in (tmp_path / "data").iterdir() if (p / "meta.json").is_file()]
    assert blocks, done.stdout
