"""``whathappened collect`` records live sources into a snapshot folder that explains the same way offline."""

from __future__ import annotations

import subprocess

import yaml

from tests.acceptance import BIN, run_cli, scenario_args, verdict_problems
from tests.support import SCENARIOS_DIR, load_scenario

SCENARIO = load_scenario(SCENARIOS_DIR / "xid79-fallen-off-bus")


def test_collect_then_explain_offline(tmp_path, kube_double, prometheus_servers, search_server):
    kube = kube_double(SCENARIO)
    indices = search_server.load_scenario(SCENARIO)
    live = [
        "--kubeconfig", str(kube.kubeconfig),
        "--prometheus-url", prometheus_servers.url_for(SCENARIO.name),
        "--elasticsearch-url", search_server.url,
        "--log-index", indices.log_index,
        "--event-index", indices.event_index,
    ]  # fmt: skip
    folder = tmp_path / "incident"
    result = subprocess.run(
        [str(BIN), "collect", *scenario_args(SCENARIO), *live, "-o", str(folder)],
        capture_output=True, text=True, timeout=180, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    for part in (
        "scenario.yaml",
        "kubernetes/pods.json",
        "kubernetes/events.json",
        "kubernetes/nodes.json",
        "prometheus.om.gz",
        "logs.ndjson",
    ):
        assert (folder / part).is_file(), part
    spec = yaml.safe_load((folder / "scenario.yaml").read_text())
    assert spec["experiment"] == SCENARIO.experiment and spec["namespace"] == SCENARIO.namespace
    code, document, stderr = run_cli(*scenario_args(SCENARIO), "--snapshot", str(folder))
    assert code == 0, stderr
    assert document is not None
    assert not verdict_problems(SCENARIO, document), verdict_problems(SCENARIO, document)
    live_code, live_document, live_stderr = run_cli(*scenario_args(SCENARIO), *live)
    assert live_code == 0 and live_document is not None, live_stderr
    offline = {(v["pod"], v["cause"], v["root"], v["caused_by"]) for v in document["verdicts"]}
    online = {(v["pod"], v["cause"], v["root"], v["caused_by"]) for v in live_document["verdicts"]}
    assert offline == online
