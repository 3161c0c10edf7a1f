"""Every dashboard query parses with promtool and leaves no variable unresolved."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from tests.dashboards.test_prometheus import QUERIES, builtins_for, scenario, variables_for
from tests.fixtures._grafana_templating import interpolate
from tests.support import require_binary

# --- parsing -------------------------------------------------------------------------------------------------


def test_every_query_parses_with_promtool(tmp_path: Path) -> None:
    s = scenario("xid79-fallen-off-bus")
    rules = [
        {"record": f"dashboard:query_{i}", "expr": interpolate(q.expr, variables_for(s), builtins_for(s))}
        for i, q in enumerate(QUERIES)
    ]
    good = tmp_path / "good.yml"
    good.write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}))
    bad = tmp_path / "bad.yml"
    bad.write_text(
        yaml.safe_dump({"groups": [{"name": "broken", "rules": [{"record": "x:y", "expr": "sum by (node (up)"}]}]})
    )
    promtool = require_binary("promtool")

    checked = subprocess.run([promtool, "check", "rules", str(good)], capture_output=True, text=True, check=False)
    broken = subprocess.run([promtool, "check", "rules", str(bad)], capture_output=True, text=True, check=False)

    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"{len(QUERIES)} rules found" in checked.stdout
    assert broken.returncode != 0  # the check really parses


def test_queries_cover_every_dashboard_and_leave_no_variable_unresolved() -> None:
    assert {q.board for q in QUERIES} == {"experiment.json", "fleet-gpu-health.json", "maintenance-preflight.json"}
    assert len(QUERIES) >= 40
    s = scenario("xid79-fallen-off-bus")
    for q in QUERIES:
        expr = interpolate(q.expr, variables_for(s), builtins_for(s))
        assert not re.search(r"\$(?!1\b)", expr), f"{q.id}: {expr}"
