"""deploy/ as one kustomize base: the real kubectl renders it; the watch Deployment runs options the CLI has; the
ServiceAccount it runs as may do what the watch does (the reader's reads and a WATCH on pods) and no more."""

from __future__ import annotations

import subprocess
from typing import Any

import typer
import yaml
from whathappened.collectors.kubernetes.access import PERMISSIONS
from whathappened.collectors.kubernetes.pod_watch import WATCH_PERMISSIONS

from tests.support import REPO, require_binary
from whathappened.cli.watch import register

DEPLOY = REPO / "deploy"


def rendered(tmp_path: Any) -> list[dict[str, Any]]:
    done = subprocess.run(
        [require_binary("kubectl"), "kustomize", str(DEPLOY)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def grants(rules: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(g, r, v) for rule in rules for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}


def test_the_base_renders_with_kubectl_and_holds_the_watch_and_the_exporter(tmp_path: Any) -> None:
    kinds = {(d["kind"], d["metadata"]["name"]) for d in rendered(tmp_path)}
    assert {("Deployment", "whathappened-watch"), ("DaemonSet", "whathappened-exporter")} <= kinds
    assert {("ServiceMonitor", "whathappened-watch"), ("ServiceMonitor", "whathappened-exporter")} <= kinds
    assert ("Namespace", "whathappened") in kinds


def test_the_watch_runs_options_the_cli_has(tmp_path: Any) -> None:
    app = typer.Typer()
    register(app)
    command = typer.main.get_command(app)
    options = {o for p in command.params for o in [*p.opts, *p.secondary_opts]}  # type: ignore[attr-defined]
    [deployment] = [d for d in rendered(tmp_path) if d["kind"] == "Deployment"]
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    args = container["args"]
    assert args[0] == "watch" and {a.split("=")[0] for a in args[1:]} <= options
    port = next(a.split("=")[1] for a in args if a.startswith("--port="))
    assert str(container["ports"][0]["containerPort"]) == port
    assert deployment["spec"]["replicas"] == 1  # two watchers would explain every incident twice


def test_the_watch_may_read_and_watch_pods_and_nothing_more(tmp_path: Any) -> None:
    docs = rendered(tmp_path)
    [deployment] = [d for d in docs if d["kind"] == "Deployment"]
    account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    roles = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ClusterRole"}
    bound = [
        roles[b["roleRef"]["name"]]
        for b in docs
        if b["kind"] == "ClusterRoleBinding" and any(s["name"] == account for s in b["subjects"])
    ]
    granted = grants([rule for role in bound for rule in role["rules"]])
    needed = {(p.group, p.resource, v) for p in (*PERMISSIONS, *WATCH_PERMISSIONS) for v in p.verbs}
    assert granted == needed
    assert grants(roles["whathappened-watch"]["rules"]) == {
        (p.group, p.resource, v) for p in WATCH_PERMISSIONS for v in p.verbs
    }
