"""The test servers themselves: both backends hold exactly the recorded history (other tests rely on it)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import httpx

from tests.support import SCENARIOS_DIR, load_scenario

SCENARIO = "xid79-fallen-off-bus"


def _query(url: str, expr: str, at: float) -> list[dict]:
    response = httpx.get(f"{url}/api/v1/query", params={"query": expr, "time": at}, timeout=30)
    response.raise_for_status()
    return response.json()["data"]["result"]


def _root_node(folder: Path) -> str:
    root = next(e["pod"] for e in load_scenario(folder).expected if e["root"])
    pods = json.loads((folder / "kubernetes" / "pods.json").read_text())["items"]
    return str(next(p["spec"]["nodeName"] for p in pods if p["metadata"]["name"] == root))


def test_both_backends_hold_the_xid_79_sample(prometheus_servers, victoria_servers) -> None:
    scenario = load_scenario(SCENARIOS_DIR / SCENARIO)
    end = scenario.end.timestamp()
    # one series while the pod held the GPU (0, then 79), one after dcgm-exporter dropped its pod labels (79)
    expr = f'max_over_time(DCGM_FI_DEV_XID_ERRORS{{Hostname="{_root_node(scenario.path)}",gpu="5"}}[2h])'
    for url in (prometheus_servers.url_for(SCENARIO), victoria_servers.url_for(SCENARIO)):
        values = sorted(float(r["value"][1]) for r in _query(url, expr, end))
        assert values == [79.0, 79.0], url


def test_sample_counts_match_the_file(prometheus_servers, victoria_servers) -> None:
    scenario = load_scenario(SCENARIOS_DIR / SCENARIO)
    expr = "sum(count_over_time(kube_pod_status_phase[3h]))"
    at = scenario.end.timestamp() + 60
    counts = [
        float(_query(u, expr, at)[0]["value"][1]) for u in (prometheus_servers(SCENARIO), victoria_servers(SCENARIO))
    ]
    text = gzip.decompress((scenario.path / "prometheus.om.gz").read_bytes()).decode()
    recorded = sum(1 for line in text.splitlines() if line.startswith("kube_pod_status_phase{"))
    assert recorded > 1000 and counts == [recorded, recorded]
