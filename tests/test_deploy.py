"""deploy/ as kustomize: the real kubectl renders the read-only whole (deploy/) and the watch with its opt-in writes
(deploy/writes/); the watch Deployment runs options the CLI has; the ServiceAccount it runs as may do what the watch
does (the reader's reads and a WATCH on pods; with the writes, creating Events and patching training jobs) and no
more."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import typer
import yaml
from whathappened.collectors.kubernetes.access import PERMISSIONS
from whathappened.collectors.kubernetes.pod_watch import WATCH_PERMISSIONS
from whathappened.collectors.kubernetes.verdict_writes import WRITE_PERMISSIONS

from tests.support import REPO, require_binary
from whathappened.cli.watch import register

DEPLOY = REPO / "deploy"


def rendered(tmp_path: Any, variant: str = "") -> list[dict[str, Any]]:
    done = subprocess.run(
        [require_binary("kubectl"), "kustomize", str(DEPLOY / variant)],
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


def watch_grants(docs: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    """What the watch Deployment's ServiceAccount is granted, through every binding of it."""
    [deployment] = [d for d in docs if d["kind"] == "Deployment"]
    account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    roles = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ClusterRole"}
    bound = [
        roles[b["roleRef"]["name"]]
        for b in docs
        if b["kind"] == "ClusterRoleBinding" and any(s["name"] == account for s in b["subjects"])
    ]
    return grants([rule for role in bound for rule in role["rules"]])


def permitted(*permissions: Any) -> set[tuple[str, str, str]]:
    return {(p.group, p.resource, v) for p in permissions for v in p.verbs}


def test_the_watch_may_read_and_watch_pods_and_nothing_more(tmp_path: Any) -> None:
    docs = rendered(tmp_path)
    assert watch_grants(docs) == permitted(*PERMISSIONS, *WATCH_PERMISSIONS)
    roles = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ClusterRole"}
    assert grants(roles["whathappened-watch"]["rules"]) == permitted(*WATCH_PERMISSIONS)


def test_the_writes_variant_adds_exactly_the_writes_and_their_flags(tmp_path: Any) -> None:
    docs = rendered(tmp_path, "writes")
    assert watch_grants(docs) == permitted(*PERMISSIONS, *WATCH_PERMISSIONS, *WRITE_PERMISSIONS)
    [deployment] = [d for d in docs if d["kind"] == "Deployment"]
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert {"--write-events", "--annotate"} <= set(container["args"])
    base = {(d["kind"], d["metadata"]["name"]) for d in rendered(tmp_path)}
    assert base < {(d["kind"], d["metadata"]["name"]) for d in docs}  # everything of the base, and more


def test_checkov_finds_no_failed_check_and_every_skip_says_why(tmp_path: Any) -> None:
    """checkov (installed by make test in .venv-checkov) on everything under deploy/; --skip-download keeps it off
    the network. A check that does not apply is skipped in the manifest with its reason."""
    checkov = REPO / ".venv-checkov" / "bin" / "checkov"
    assert checkov.is_file(), "checkov is not installed: run `make test` (or `make checkov`)"
    command = [str(checkov), "-d", str(DEPLOY), "--framework", "kubernetes", "--skip-download", "--output", "json"]
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "LOG_LEVEL": "ERROR"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, check=False)
    report = json.loads(done.stdout)
    results = report["results"]
    failed = [(c["check_id"], c["resource"]) for c in results["failed_checks"]]
    assert failed == [] and done.returncode == 0, failed
    assert report["summary"]["passed"] > 100  # it did check the manifests
    skipped = results["skipped_checks"]
    assert skipped and all(len((c.get("check_result") or {}).get("suppress_comment") or "") > 20 for c in skipped)
