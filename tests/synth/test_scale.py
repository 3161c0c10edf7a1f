"""The scale experiment at a small size: the requested counts, the shared format, one root among the noise."""

from __future__ import annotations

import gzip
import json
import subprocess
from datetime import datetime
from pathlib import Path

from synth.scale import JOBSET_UID, RESTART_ATTEMPT, ScaleOptions, write_scale
from tests.acceptance import run_cli, scenario_args, verdict_problems
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


def test_a_restarted_scale_experiment_is_explained_attempt_by_attempt(tmp_path: Path) -> None:
    """Three attempts of one JobSet (issue 17's benchmark shape, small): the API keeps the last attempt's pods and
    the TTL's events, the log store archives every event; explained from the folder, each attempt has its own
    root, the answer is the last one's, and every pod of every attempt gets the generator's verdict."""
    opts = ScaleOptions(pods=6, hours=1.5, events=600, logs=3000, seed=5, attempts=3, event_ttl_hours=0.5)
    stats = write_scale(opts, tmp_path)
    pods = k8s_list(tmp_path / "kubernetes" / "pods.json", "PodList")
    assert {p["metadata"]["labels"][RESTART_ATTEMPT] for p in pods} == {"2"} and len(pods) == 6
    assert len({p["metadata"]["labels"][JOBSET_UID] for p in pods}) == 1
    scenario = load_scenario(tmp_path)
    horizon = scenario.end.timestamp() - 0.5 * 3600
    api_events = k8s_list(tmp_path / "kubernetes" / "events.json", "EventList")
    assert api_events and all(
        datetime.fromisoformat((e.get("lastTimestamp") or e["eventTime"]).replace("Z", "+00:00")).timestamp() >= horizon
        for e in api_events
    )
    archived = [d for index, d in bulk_documents(tmp_path / "logs.ndjson") if index.startswith("kube-events-")]
    assert len(archived) > len(api_events) == stats["events"]
    roots = [e for e in scenario.expected if e["root"]]
    assert [r["cause"] for r in roots] == ["gpu-memory-error", "gpu-fallen-off-bus", "gpu-fallen-off-bus"]
    assert len(scenario.expected) == 18

    code, document, stderr = run_cli(*scenario_args(scenario), "--snapshot", str(tmp_path))
    assert code == 0 and document is not None, stderr
    assert not verdict_problems(scenario, document), verdict_problems(scenario, document)[:5]
    attempts = document["attempts"]
    assert [a["root_cause"]["pod"] for a in attempts] == [r["pod"] for r in roots]
    assert [len(a["pods"]) for a in attempts] == [6, 6, 6]
    assert document["root_cause"]["pod"] == stats["root"]
