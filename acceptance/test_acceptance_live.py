"""Acceptance from live sources: every scenario loaded into the Kubernetes API double, a real Prometheus and
osmem-server, explained by the installed CLI as a subprocess; then again with each source left out."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from acceptance.shared import own_scenarios, scenario_id, shared_scenarios
from tests.acceptance import BIN, run_cli, scenario_args, verdict_problems
from tests.fixtures.kube import TOKEN
from tests.support import Scenario

SHARED = shared_scenarios()
EVERY = SHARED + own_scenarios()


@pytest.fixture
def live(kube_double, prometheus_servers, search_server):
    """The CLI arguments that point at live servers loaded with a scenario."""

    def arguments(scenario: Scenario) -> list[str]:
        kube = kube_double(scenario)
        prometheus = prometheus_servers.url_for(scenario.key, scenario.path / "prometheus.om.gz")
        indices = search_server.load_scenario(scenario)
        return [
            *scenario_args(scenario),
            "--kubeconfig",
            str(kube.kubeconfig),
            "--prometheus-url",
            prometheus,
            *indices.arguments(search_server.url),
        ]

    return arguments


def _statuses(document: dict[str, Any]) -> dict[str, str]:
    return {s["name"]: s["status"] for s in document["sources"]}


@pytest.mark.parametrize("scenario", EVERY, ids=scenario_id)
def test_verdicts_from_live_sources(scenario: Scenario, live):
    code, document, stderr = run_cli(*live(scenario))
    assert code == 0, stderr
    assert document is not None
    assert _statuses(document) == {"kubernetes": "ok", "prometheus": "ok", "logs": "ok"}
    assert not verdict_problems(scenario, document), verdict_problems(scenario, document)
    assert TOKEN not in stderr and TOKEN not in str(document)


@pytest.mark.parametrize("left_out", ["kubernetes", "prometheus", "logs"])
@pytest.mark.parametrize("scenario", SHARED, ids=scenario_id)
def test_live_with_a_source_left_out(scenario: Scenario, left_out: str, live):
    code, document, stderr = run_cli(*live(scenario), "--without", left_out)
    if code == 4:
        assert "not found" in stderr and len(stderr.strip().splitlines()) == 1
        return
    assert code == 0, stderr
    assert document is not None
    assert _statuses(document)[left_out] == "not_configured"
    assert document["pods"], "the remaining sources still name the pods"


@pytest.mark.parametrize("scenario", SHARED, ids=scenario_id)
def test_html_report_from_live_sources(scenario: Scenario, live, tmp_path):
    page = tmp_path / "report.html"
    result = subprocess.run(
        [str(BIN), *live(scenario), "--output", "html", "--out", str(page)],
        capture_output=True, text=True, timeout=180, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    html = page.read_text(encoding="utf-8")
    assert "<svg" in html and 'data-lane="' in html
    for expected in scenario.expected:
        assert f'data-pod="{expected["pod"]}"' in html, expected["pod"]
    assert "http://" not in html.split("<body", 1)[0] and "https://" not in html.split("<body", 1)[0]
