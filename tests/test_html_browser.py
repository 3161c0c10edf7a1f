"""The HTML report in headless Chromium: it loads cleanly, fetches nothing, and shows the incident's lanes and events."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.chromium import Chromium, Tab
from tests.test_html_render import hostile_report, maintenance_report, oom_report, xid79_report
from whathappened.model import Report
from whathappened.render.html import render_html

MIN_SCREENSHOT_BYTES = 30_000


def load(chromium: Chromium, tab: Tab, report: Report, folder: Path) -> Path:
    page = folder / "report.html"
    page.write_text(render_html(report), encoding="utf-8")
    tab.open(page.as_uri())
    assert tab.evaluate("document.documentElement.dataset.ready") == "1"
    return page


def assert_clean(tab: Tab, page: Path) -> None:
    assert tab.console_errors() == []
    assert [url for url in tab.requests() if url != page.as_uri()] == []


def present(tab: Tab, selectors: list[str]) -> dict[str, int]:
    return {s: tab.evaluate(f"document.querySelectorAll({s!r}).length") for s in selectors}


@pytest.mark.parametrize(
    ("build", "selectors"),
    [
        (
            xid79_report,
            [
                '[data-lane="node:gpu-node-19"] [data-kind="gpu-xid"]',
                '[data-lane="pod:gpt-neox-20b-sweep3-workers-0-2"] [data-kind="cuda-error"]',
                '[data-lane="pod:gpt-neox-20b-sweep3-workers-0-0"] [data-kind="nccl-timeout"]',
                '[data-lane="pod:gpt-neox-20b-sweep3-workers-0-0"] [data-util]',
                "svg .chain .step",
            ],
        ),
        (
            maintenance_report,
            [
                '[data-lane="node:aks-gpu-12345678-vmss000002"] [data-kind="maintenance-notice"]',
                '[data-lane="node:aks-gpu-12345678-vmss000002"] [data-kind="node-cordoned"]',
                '[data-lane="pod:llama-70b-run7-worker-2"] [data-kind="eviction-api"]',
                '[data-lane="pod:llama-70b-run7-worker-1"] [data-kind="nccl-error"]',
            ],
        ),
        (
            oom_report,
            [
                '[data-lane="node:cpu-pool-d64-7"] [data-kind="kernel-oom"]',
                '[data-lane="pod:tokenize-pile-shard42-7xk2p"] [data-kind="oom-killed"]',
            ],
        ),
    ],
    ids=["xid79", "maintenance", "oom"],
)
def test_report_loads_clean_with_its_key_events(chromium: Chromium, tmp_path: Path, build, selectors) -> None:
    report = build()
    with chromium.tab() as tab:
        page = load(chromium, tab, report, tmp_path)
        assert_clean(tab, page)
        found = present(tab, selectors)
        assert all(found.values()), found
        lanes = tab.evaluate("[...document.querySelectorAll('[data-lane]')].map(e => e.dataset.lane)")
        assert {f"pod:{p.name}" for p in report.pods} <= set(lanes)
        width, height = tab.screenshot(tmp_path / "report.png")
        assert width >= 1200 and height >= 900
        assert (tmp_path / "report.png").stat().st_size > MIN_SCREENSHOT_BYTES


def test_hovering_a_marker_shows_its_details(chromium: Chromium, tmp_path: Path) -> None:
    with chromium.tab() as tab:
        load(chromium, tab, xid79_report(), tmp_path)
        assert tab.evaluate("document.getElementById('tip').hidden") is True
        tab.hover('[data-lane="node:gpu-node-19"] [data-kind="gpu-xid"]')
        assert tab.evaluate("document.getElementById('tip').hidden") is False
        text = tab.evaluate("document.getElementById('tip').textContent")
        assert "GPU has fallen off the bus" in text and "gpu-node-19" in text and "xid=79" in text


def test_clicking_a_marker_unfolds_its_raw_payload(chromium: Chromium, tmp_path: Path) -> None:
    with chromium.tab() as tab:
        load(chromium, tab, xid79_report(), tmp_path)
        index = tab.evaluate(
            'document.querySelector(\'[data-lane="node:gpu-node-19"] [data-kind="gpu-xid"]\').dataset.index'
        )
        assert tab.evaluate(f"document.querySelector('#ev-{index} details').open") is False
        tab.evaluate(
            "document.querySelector('[data-lane=\"node:gpu-node-19\"] [data-kind=\"gpu-xid\"]').dispatchEvent(new MouseEvent('click', {bubbles: true}))"
        )
        assert tab.evaluate("location.hash") == f"#ev-{index}"
        assert tab.evaluate(f"document.querySelector('#ev-{index} details').open") is True


def test_hostile_log_lines_do_not_run_or_fetch(chromium: Chromium, tmp_path: Path) -> None:
    with chromium.tab() as tab:
        page = load(chromium, tab, hostile_report(), tmp_path)
        assert_clean(tab, page)
        assert tab.evaluate("typeof window.__pwned") == "undefined"
        assert tab.evaluate("document.querySelectorAll('img').length") == 0
        assert tab.evaluate("document.scripts.length") == 1
        text = tab.evaluate("document.body.innerText")
        assert "<script>window.__pwned=1</script>" in text
