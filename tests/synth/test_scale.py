"""The scale experiment at a small size: the requested counts, the shared format, one root among the noise."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

from synth.scale import ScaleOptions, write_scale
from tests.support import load_scenario, require_binary
from tests.synth.checks import bulk_documents, k8s_list, openmetrics_series


def test_small_scale_experiment(tmp_path: Path) -> None:
    opts = ScaleOptions(pods=6, hours=0.75, events=700, logs=3000, seed=5)
    stats = write_scale(opts, tmp_path)
    assert stats["pods"] == 6 and stats["nodes"] == 6
    assert len(k8s_list(tmp_path / "kubernetes" / "events.json", "EventList")) == 700 == stats["events"]
    pods = k8s_list(tmp_path / "kubernetes" / "pods.json", "PodList")
    assert len(pods) == 6
    assert all(p["status"]["phase"] == "Failed" for p in pods), "every rank ends inside the window"
    docs = bulk_documents(tmp_path / "logs.ndjson")
    assert len(docs) == 3000 == stats["log_documents"]
    assert any("Xid (PCI:" in d["message"] and ": 79, " in d["message"] for _, d in docs)
    scenario = load_scenario(tmp_path)
    roots = [e for e in scenario.expected if e["root"]]
    assert [r["pod"] for r in roots] == [stats["root"]] and len(scenario.expected) == 6
    assert all(e["caused_by"] == stats["root"] for e in scenario.expected if not e["root"])
    series = openmetrics_series(tmp_path / "prometheus.om.gz")
    xid = [k for k in series if k.startswith("DCGM_FI_DEV_XID_ERRORS{")]
    assert len({k.split('UUID="')[1][:40] for k in xid}) == 6 * 8
    step = series[next(k for k in series if k.startswith("DCGM_FI_DEV_GPU_UTIL{"))]
    assert step[1] - step[0] == 15


def test_scale_metrics_load_into_promtool(tmp_path: Path) -> None:
    write_scale(ScaleOptions(pods=2, hours=0.25, events=50, logs=200, seed=9), tmp_path / "exp")
    text = tmp_path / "m.om"
    text.write_bytes(gzip.decompress((tmp_path / "exp" / "prometheus.om.gz").read_bytes()))
    done = subprocess.run([require_binary("promtool"), "tsdb", "create-blocks-from", "openmetrics", str(text), str(tmp_path / "db")],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(next((tmp_path / "db").glob("*/meta.json")).read_text())["stats"]["numSamples"] > 0
