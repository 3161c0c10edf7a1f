"""Acceptance from snapshots: every scenario through the installed CLI, offline, with each source left out too."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from whathappened.collectors.logs.parse import match_line

from acceptance.shared import own_scenarios, scenario_id, shared_scenarios
from tests.acceptance import run_cli, scenario_args, verdict_problems
from tests.support import Scenario
from whathappened.timeutils import isoformat, parse_timestamp

SHARED = shared_scenarios()
EVERY = SHARED + own_scenarios()
_RUNS: dict[tuple[str, ...], tuple[int, dict[str, Any] | None, str]] = {}


def snapshot_run(scenario: Scenario, *extra: str) -> tuple[int, dict[str, Any] | None, str]:
    """One CLI run per scenario and arguments, shared by the tests that read its report."""
    key = (str(scenario.path), *extra)
    if key not in _RUNS:
        _RUNS[key] = run_cli(*scenario_args(scenario), "--snapshot", str(scenario.path), *extra)
    return _RUNS[key]


@pytest.mark.parametrize("scenario", EVERY, ids=scenario_id)
def test_verdicts_from_snapshot(scenario: Scenario):
    code, document, stderr = snapshot_run(scenario)
    assert code == 0, stderr
    assert document is not None
    assert not verdict_problems(scenario, document), verdict_problems(scenario, document)


def _times(document: Mapping[str, Any], **where: str) -> set[str]:
    return {e["time"] for e in document["timeline"] if all(e.get(k) == v for k, v in where.items())}


@pytest.mark.parametrize("scenario", SHARED, ids=scenario_id)
def test_snapshot_shows_every_pod_event_and_signature_line(scenario: Scenario):
    _code, document, stderr = snapshot_run(scenario)
    assert document is not None, stderr
    assert {p["name"] for p in document["pods"]} >= {w["pod"] for w in scenario.expected}
    pods = {p["name"] for p in document["pods"]}
    nodes = {p["node"] for p in document["pods"] if p["node"]}
    events = json.loads((scenario.path / "kubernetes" / "events.json").read_text())["items"]
    for event in events:
        regarding = event.get("involvedObject") or event.get("regarding") or {}
        if regarding.get("name") not in pods | nodes:
            continue
        at = parse_timestamp(event.get("eventTime") or event.get("lastTimestamp") or event.get("firstTimestamp"))
        assert at is not None
        assert isoformat(at) in _times(document, source="kubernetes"), f"missing event {event['reason']} at {at}"
    lines = (scenario.path / "logs.ndjson").read_text().splitlines()
    for action, body in zip(lines[::2], lines[1::2], strict=True):
        doc = json.loads(body)
        if "kube-events" in action:
            continue
        owner = (doc.get("kubernetes", {}).get("pod", {}) or {}).get("name") or (doc.get("host") or {}).get("name")
        matched = match_line(doc.get("message", ""))
        if owner not in pods | nodes or matched is None or matched.signature.kind is None:
            continue  # kind None: context only, such as the line mapping a PCI address to a GPU UUID
        at = parse_timestamp(doc["@timestamp"])
        assert at is not None
        assert isoformat(at) in _times(document, source="logs"), f"missing log line {doc['message'][:80]}"


@pytest.mark.parametrize("left_out", ["kubernetes", "prometheus", "logs"])
@pytest.mark.parametrize("scenario", SHARED, ids=scenario_id)
def test_each_source_left_out_is_said_and_the_rest_still_answers(scenario: Scenario, left_out: str):
    code, document, stderr = snapshot_run(scenario, "--without", left_out)
    if code == 4:  # only that source knew the experiment: exit 4 must say so in one line
        assert "not found" in stderr
        return
    assert code == 0, stderr
    assert document is not None
    statuses = {s["name"]: s["status"] for s in document["sources"]}
    assert statuses[left_out] == "not_configured"


def test_unknown_experiment_exits_4_naming_the_closest():
    scenario = SHARED[0]
    wrong = scenario.experiment[:-1] + "x"
    code, _document, stderr = run_cli(
        wrong, "-n", scenario.namespace, *scenario.window_args, "--snapshot", str(scenario.path)
    )
    assert code == 4
    assert scenario.experiment in stderr
    assert len(stderr.strip().splitlines()) == 1


def test_an_undecided_hang_is_still_an_answer():
    """nccl-timeout-unknown: every rank timed out in one collective; the report names it, when the job froze,
    its last progress, and a retryable next step, in JSON and on the terminal's first screen."""
    scenario = next(s for s in SHARED if s.name == "nccl-timeout-unknown")
    code, document, stderr = snapshot_run(scenario)
    assert code == 0, stderr
    assert document is not None and document["outcome"] == "undecided" and document["root_cause"] is None
    hang = document["hang"]
    assert hang["op"] and hang["seq"] is not None and hang["timeout_s"] and hang["froze_at"]
    assert hang["last_progress"] and hang["next_steps"]
    assert document["retryable"] is True and "resubmit" in document["next_step"]
    import subprocess

    from tests.acceptance import BIN

    text = subprocess.run(
        [str(BIN), *scenario_args(scenario), "--snapshot", str(scenario.path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "COLUMNS": "100"},
    ).stdout.splitlines()
    first_screen = "\n".join(text[:25])
    for said in ("outcome: undecided", f"{hang['op']} SeqNum {hang['seq']}", "froze", "retryable   yes", "next"):
        assert said in first_screen, said
