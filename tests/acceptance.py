"""Shared checks of the acceptance suite: run the installed CLI, compare verdicts with a scenario's ``expected``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema

from tests.support import Scenario
from whathappened.render.jsonout import schema

BIN = Path(sys.executable).parent / "whathappened"
COLLATERAL_CAUSES = {"nccl-error", "nccl-timeout", "peer-failure"}


def run_cli(*args: str, timeout: float = 120) -> tuple[int, dict[str, Any] | None, str]:
    result = subprocess.run(
        [str(BIN), *args, "--output", "json"],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
    )
    document = json.loads(result.stdout) if result.stdout.strip().startswith("{") else None
    if document is not None and "error" in document:  # every failure under -o json: an error document
        assert result.returncode != 0 and document["error"]["exit_code"] == result.returncode, document
        assert document["schema"] == "whathappened/v1" and document["error"]["message"], document
        document = None
    elif document is not None:
        jsonschema.validate(document, schema())
    return result.returncode, document, result.stderr


def scenario_args(scenario: Scenario) -> list[str]:
    return [scenario.experiment, "-n", scenario.namespace, *scenario.window_args]


def verdict_problems(scenario: Scenario, document: dict[str, Any]) -> list[str]:
    """What differs from ``expected``: cause, root, caused_by (any collateral cause will do for collateral pods)."""
    got = {v["pod"]: v for v in document["verdicts"]}
    problems = []
    for want in scenario.expected:
        pod = want["pod"]
        verdict = got.get(pod)
        if verdict is None:
            problems.append(f"{pod}: no verdict (have {sorted(got)})")
            continue
        cause_ok = verdict["cause"] == want["cause"] or (
            want.get("root") is False
            and want.get("caused_by")
            and want["cause"] in COLLATERAL_CAUSES
            and verdict["cause"] in COLLATERAL_CAUSES
        )
        if not cause_ok:
            problems.append(f"{pod}: cause {verdict['cause']} != {want['cause']}")
        if verdict["root"] != want.get("root"):
            problems.append(f"{pod}: root {verdict['root']} != {want.get('root')}")
        if want.get("caused_by") is not None and verdict["caused_by"] != want["caused_by"]:
            problems.append(f"{pod}: caused_by {verdict['caused_by']} != {want['caused_by']}")
    roots = [w for w in scenario.expected if w.get("root") is True]
    root_cause = document["root_cause"]
    if roots and (root_cause is None or root_cause["pod"] not in {w["pod"] for w in roots}):
        problems.append(f"root_cause {root_cause and root_cause['pod']} not among {[w['pod'] for w in roots]}")
    if not roots and root_cause is not None and all(w.get("root") is None for w in scenario.expected):
        problems.append(f"root_cause should be null when nothing decides, got {root_cause['pod']}")
    return problems
