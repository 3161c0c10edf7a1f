"""The test servers themselves: both backends hold exactly the recorded history (other tests rely on it)."""

from __future__ import annotations

import httpx

from tests.support import SCENARIOS_DIR, load_scenario

SCENARIO = "xid79-fallen-off-bus"


def _query(url: str, expr: str, at: float) -> list[dict]:
    response = httpx.get(f"{url}/api/v1/query", params={"query": expr, "time": at}, timeout=30)
    response.raise_for_status()
    return response.json()["data"]["result"]


def test_both_backends_hold_the_xid_79_sample(prometheus_servers, victoria_servers) -> None:
    scenario = load_scenario(SCENARIOS_DIR / SCENARIO)
    end = scenario.end.timestamp()
    expr = 'max_over_time(DCGM_FI_DEV_XID_ERRORS{Hostname="gpu-node-19",gpu="5"}[2h])'
    for url in (prometheus_servers.url_for(SCENARIO), victoria_servers.url_for(SCENARIO)):
        values = sorted(float(r["value"][1]) for r in _query(url, expr, end))
        assert values == [0.0, 79.0], url


def test_sample_counts_match_the_file(prometheus_servers, victoria_servers) -> None:
    scenario = load_scenario(SCENARIOS_DIR / SCENARIO)
    expr = "sum(count_over_time(kube_pod_status_phase[3h]))"
    at = scenario.end.timestamp() + 60
    counts = [
        float(_query(u, expr, at)[0]["value"][1]) for u in (prometheus_servers(SCENARIO), victoria_servers(SCENARIO))
    ]
    assert counts == [4740.0, 4740.0]
