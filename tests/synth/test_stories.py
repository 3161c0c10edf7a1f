"""Each guard scenario really holds the trap it is named for, so a later edit of a story cannot quietly defuse it."""

from __future__ import annotations

import gzip
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from synth.catalog import SCENARIOS_DIR
from tests.synth.checks import bulk_documents, openmetrics_series


def _pods(name: str) -> dict[str, dict[str, Any]]:
    items = json.loads((SCENARIOS_DIR / name / "kubernetes" / "pods.json").read_text())["items"]
    return {p["metadata"]["name"]: p for p in items}


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _logs(name: str) -> list[dict[str, Any]]:
    return [doc for _, doc in bulk_documents(SCENARIOS_DIR / name / "logs.ndjson")]


def test_exit_137_during_maintenance_is_not_an_oom() -> None:
    pods = _pods("guard-drain-exit137-not-oom")
    victim = next(p for p in pods.values() if p["status"].get("reason") == "Terminated")
    terminated = victim["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated["exitCode"] == 137 and terminated["reason"] == "Error"
    assert any(
        c["type"] == "DisruptionTarget" and c["reason"] == "TerminationByKubelet"
        for c in victim["status"]["conditions"]
    )
    text = (SCENARIOS_DIR / "guard-drain-exit137-not-oom" / "logs.ndjson").read_text()
    assert "OOMKilled" not in json.dumps(pods) and "out of memory" not in text.lower()


def test_sigterm_on_scale_down_leaves_survivors_running() -> None:
    pods = _pods("guard-sigterm-scale-down")
    assert {p["status"]["phase"] for p in pods.values()} == {"Running"}
    gone = {
        d["kubernetes"]["pod"]["name"] for d in _logs("guard-sigterm-scale-down") if "SIGTERM" in d.get("message", "")
    }
    assert len(gone) == 2 and not gone & set(pods)


def test_the_xid_predates_the_pod_but_the_gauge_still_shows_it() -> None:
    name = "guard-xid-predates-pod"
    pods = _pods(name)
    first_created = min(_time(p["metadata"]["creationTimestamp"]) for p in pods.values())
    xids = [d for d in _logs(name) if ": 48, " in d.get("message", "")]
    assert xids and all(_time(d["@timestamp"]) < first_created for d in xids)
    series = openmetrics_series(SCENARIOS_DIR / name / "prometheus.om.gz")
    held = [k for k in series if k.startswith("DCGM_FI_DEV_XID_ERRORS{") and 'pod="' in k]
    assert held, "the pod's GPU series exist"
    text = gzip.decompress((SCENARIOS_DIR / name / "prometheus.om.gz").read_bytes()).decode()
    lines = [ln for ln in text.splitlines() if ln.startswith("DCGM_FI_DEV_XID_ERRORS{") and 'pod="' in ln]
    assert any(ln.split("} ")[1].split()[0] == "48" for ln in lines)


def test_clock_skew_puts_the_cause_after_its_effects_by_under_two_minutes() -> None:
    name = "guard-clock-skew"
    docs = _logs(name)
    root_error = min(_time(d["@timestamp"]) for d in docs if "CUDA error" in d.get("message", ""))
    collateral = min(_time(d["@timestamp"]) for d in docs if "remote process exited" in d.get("message", ""))
    kernel = min(_time(d["@timestamp"]) for d in docs if "Xid" in d.get("message", ""))
    assert collateral < kernel < root_error
    assert (root_error - collateral).total_seconds() < 120


def test_node_failure_pod_keeps_its_last_reported_status() -> None:
    pods = _pods("node-failure")
    dead = next(p for p in pods.values() if "deletionTimestamp" in p["metadata"])
    assert dead["status"]["phase"] == "Running"
    assert "running" in dead["status"]["containerStatuses"][0]["state"]
    nodes = json.loads((SCENARIOS_DIR / "node-failure" / "kubernetes" / "nodes.json").read_text())["items"]
    node = next(n for n in nodes if n["metadata"]["name"] == dead["spec"]["nodeName"])
    ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "Unknown" and {t["key"] for t in node["spec"]["taints"]} == {
        "node.kubernetes.io/unreachable"
    }


def test_scenarios_dir_is_the_committed_one() -> None:
    assert Path(__file__).resolve().parents[1] / "scenarios" == SCENARIOS_DIR
