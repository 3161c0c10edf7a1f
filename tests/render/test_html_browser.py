"""The HTML report in headless Chromium: it loads cleanly, fetches nothing, and shows the incident's lanes and events.

Three of the project's incidents go through the library (snapshot collectors, explain, render) with their key events
checked on their lanes; every one goes through the CLI's ``--output html --out FILE``; a hand-built report
carries hostile log lines and GPU utilization samples.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from whathappened.collectors.snapshot.folder import snapshot_collectors

from tests.fixtures.chromium import Chromium, Tab
from tests.render.reports import xid79_report
from tests.render.test_html import hostile_report
from tests.support import SCENARIOS_DIR, Scenario, all_scenarios, load_scenario
from whathappened.explain import explain
from whathappened.model import Report, Window
from whathappened.render.html import render_html
from whathappened.scope import Query

MIN_SCREENSHOT_BYTES = 30_000
KEY_EVENTS = {
    "xid79-fallen-off-bus": [
        '[data-lane="node:gke-lm-gke-a3-highgpu-24288c15-p7kl"] [data-kind="gpu-xid"]',
        '[data-lane="pod:falcon-40b-cpt-s2-workers-0-2-pnt2f"] [data-kind="cuda-error"]',
        '[data-lane="pod:falcon-40b-cpt-s2-workers-0-2-pnt2f"] [data-kind="container-terminated"]',
        '[data-lane="pod:falcon-40b-cpt-s2-workers-0-0-hf62d"] [data-kind="nccl-timeout"]',
        '[data-lane="pod:falcon-40b-cpt-s2-workers-0-3-bh7gc"] [data-kind="nccl-timeout"]',
    ],
    "maintenance-eviction": [
        '[data-lane="node:aks-h100pool-23098820-vmss000003"] [data-kind="maintenance-notice"]',
        '[data-lane="node:aks-h100pool-23098820-vmss000003"] [data-kind="node-cordoned"]',
        '[data-lane="pod:phi-3-medium-pt-r5-worker-2"] [data-kind="eviction-api"]',
        '[data-lane="pod:phi-3-medium-pt-r5-master-0"] [data-kind="nccl-error"]',
    ],
    "oom-killed": [
        '[data-lane="node:cpu-heavy-r07-n01"] [data-kind="kernel-oom"]',
        '[data-lane="pod:tokenize-redpajama-p17-7h42f"] [data-kind="oom-killed"]',
        '[data-lane="pod:tokenize-redpajama-p17-7h42f"] [data-kind="container-terminated"]',
    ],
}


def scenario_report(scenario: Scenario) -> Report:
    return _report_of(scenario.name)


@functools.cache  # by name: a Scenario holds dicts and does not hash
def _report_of(name: str) -> Report:
    scenario = load_scenario(SCENARIOS_DIR / name)
    collectors, missing = snapshot_collectors(scenario.path)
    query = Query(
        experiment=scenario.experiment, namespace=scenario.namespace, window=Window(scenario.start, scenario.end)
    )
    return explain(collectors, query, not_configured=missing)


def load(tab: Tab, page: Path) -> None:
    tab.open(page.as_uri())
    assert tab.evaluate("document.documentElement.dataset.ready") == "1"  # the page's script ran to its end


def assert_clean(tab: Tab, page: Path) -> None:
    assert tab.console_errors() == []
    assert [url for url in tab.requests() if url != page.as_uri()] == []


def count(tab: Tab, selector: str) -> int:
    return tab.evaluate(f"document.querySelectorAll({selector!r}).length")


def write(report: Report, folder: Path) -> Path:
    page = folder / "report.html"
    page.write_text(render_html(report), encoding="utf-8")
    return page


@pytest.mark.parametrize("name", sorted(KEY_EVENTS))
def test_scenario_page_loads_clean_with_its_key_events(chromium: Chromium, tmp_path: Path, name: str) -> None:
    scenario = load_scenario(SCENARIOS_DIR / name)
    report = scenario_report(scenario)
    page = write(report, tmp_path)
    with chromium.tab() as tab:
        load(tab, page)
        assert_clean(tab, page)
        found = {s: count(tab, s) for s in KEY_EVENTS[name]}
        assert all(found.values()), found
        lanes = tab.evaluate(
            "[...document.querySelectorAll('svg[data-view=all] [data-lane]')].map(e => e.dataset.lane)"
        )
        assert {f"pod:{e['pod']}" for e in scenario.expected} <= set(lanes)
        assert {f"node:{p.node}" for p in report.pods if p.node} <= set(lanes)
        root = next(e for e in scenario.expected if e["root"])
        assert count(tab, f'tr.verdict.role-root[data-pod="{root["pod"]}"]') == 1
        assert count(tab, "svg[data-view=all] .chain .step") >= 1
        width, height = tab.screenshot(tmp_path / "report.png")
        assert width >= 1200 and height >= 900
        assert (tmp_path / "report.png").stat().st_size > MIN_SCREENSHOT_BYTES


def test_hover_details_and_the_evidence_filter(chromium: Chromium, tmp_path: Path) -> None:
    page = write(scenario_report(load_scenario(SCENARIOS_DIR / "xid79-fallen-off-bus")), tmp_path)
    with chromium.tab() as tab:
        load(tab, page)
        assert tab.evaluate("document.getElementById('tip').hidden") is True
        tab.hover('[data-lane="node:gke-lm-gke-a3-highgpu-24288c15-p7kl"] [data-kind="gpu-xid"]')
        assert tab.evaluate("document.getElementById('tip').hidden") is False
        text = tab.evaluate("document.getElementById('tip').textContent")
        assert "gpu-xid" in text and "gke-lm-gke-a3-highgpu-24288c15-p7kl" in text and "79" in text
        visible = "[...document.querySelectorAll('tr.ev')].filter(r => r.offsetParent !== null).length"
        everything = tab.evaluate(visible)
        tab.evaluate("document.getElementById('only-cited').click()")
        cited = tab.evaluate(visible)
        assert 0 < cited == count(tab, "tr.ev.cited") < everything


def test_clicking_a_marker_unfolds_its_raw_payload(chromium: Chromium, tmp_path: Path) -> None:
    page = write(scenario_report(load_scenario(SCENARIOS_DIR / "xid79-fallen-off-bus")), tmp_path)
    marker = '[data-lane="node:gke-lm-gke-a3-highgpu-24288c15-p7kl"] [data-kind="gpu-xid"]'
    with chromium.tab() as tab:
        load(tab, page)
        index = tab.evaluate(f"document.querySelector({marker!r}).dataset.index")
        assert tab.evaluate(f"document.querySelector('#ev-{index} details').open") is False
        tab.evaluate(f"document.querySelector({marker!r}).dispatchEvent(new MouseEvent('click', {{bubbles: true}}))")
        assert tab.evaluate("location.hash") == f"#ev-{index}"
        assert tab.evaluate(f"document.querySelector('#ev-{index} details').open") is True
        assert "NVRM" in tab.evaluate(f"document.querySelector('#ev-{index} details pre.raw').textContent")


def test_utilization_strip_is_drawn(chromium: Chromium, tmp_path: Path) -> None:
    page = write(xid79_report(), tmp_path)
    with chromium.tab() as tab:
        load(tab, page)
        assert_clean(tab, page)
        box = tab.evaluate(
            "(() => { const r = document.querySelector('[data-util=\"gpt-neox-20b-sweep3-workers-0-0\"] .util-area')"
            ".getBoundingClientRect(); return [r.width, r.height]; })()"
        )
        assert box[0] > 500 and box[1] > 3


def test_hostile_log_lines_do_not_run_or_fetch(chromium: Chromium, tmp_path: Path) -> None:
    page = write(hostile_report(), tmp_path)
    with chromium.tab() as tab:
        load(tab, page)
        assert_clean(tab, page)
        assert tab.evaluate("typeof window.__pwned") == "undefined"
        assert tab.evaluate("document.querySelectorAll('img').length") == 0
        assert tab.evaluate("document.scripts.length") == 1
        text = tab.evaluate("document.body.innerText")
        assert "<script>window.__pwned=1</script>" in text


def test_utilization_strips_of_a_recorded_incident(chromium: Chromium, tmp_path: Path) -> None:
    """From the scenario's snapshot: each pod's dcgm-exporter utilization becomes a strip under its lane."""
    report_scenario = load_scenario(SCENARIOS_DIR / "xid79-fallen-off-bus")
    report = scenario_report(report_scenario)
    pods = [e["pod"] for e in report_scenario.expected]
    page = write(report, tmp_path)
    with chromium.tab() as tab:
        load(tab, page)
        assert_clean(tab, page)
        for pod in pods:
            box = tab.evaluate(
                f"(() => {{ const r = document.querySelector('svg[data-view=all] [data-util=\"{pod}\"] .util-area')"
                ".getBoundingClientRect(); return [r.width, r.height]; })()"
            )
            assert box[0] > 300 and box[1] > 3, (pod, box)
        # the strip is a picture, not a timeline row: no marker for it
        assert count(tab, '[data-kind="gpu-utilization"]') == 0


def cli() -> str:
    path = Path(sys.executable).parent / "whathappened"
    if not path.exists():
        raise FileNotFoundError(f"{path}: install the project (make install)")
    return str(path)


@pytest.fixture(scope="module")
def cli_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[subprocess.CompletedProcess[str], Path]]:
    """Every scenario through ``whathappened EXP --snapshot DIR ... --output html --out FILE``, a few at once."""
    folder = tmp_path_factory.mktemp("cli-html")

    def one(scenario: Scenario) -> tuple[subprocess.CompletedProcess[str], Path]:
        page = folder / f"{scenario.name}.html"
        args = [cli(), scenario.experiment, "--snapshot", str(scenario.path), "-n", scenario.namespace]
        # A generous per-source deadline: this checks the page, and the shared test machine can be very busy.
        args += [*scenario.window_args, "--deadline", "120s", "--output", "html", "--out", str(page)]
        return subprocess.run(args, capture_output=True, text=True, timeout=120), page

    scenarios = all_scenarios()
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip((s.name for s in scenarios), pool.map(one, scenarios), strict=True))


@pytest.mark.parametrize("scenario", all_scenarios(), ids=lambda s: s.name)
def test_cli_writes_a_page_that_renders(chromium: Chromium, cli_pages, scenario: Scenario) -> None:
    done, page = cli_pages[scenario.name]
    assert done.returncode == 0, done.stderr
    with chromium.tab() as tab:
        load(tab, page)
        assert_clean(tab, page)
        assert tab.evaluate("document.querySelector('h1').dataset.experiment") == scenario.experiment
        for expected in scenario.expected:
            assert count(tab, f'[data-lane="pod:{expected["pod"]}"]') >= 1, expected["pod"]
            assert count(tab, f'tr.verdict[data-pod="{expected["pod"]}"]') == 1, expected["pod"]
        assert count(tab, "svg[data-view=all] .marker") >= 1
