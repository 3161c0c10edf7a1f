"""Read-only by construction: the collector's one way to the API is a GET on a path of a granted resource, every
request it makes is a GET that deploy/base/rbac.yaml allows, and rbac.yaml grants exactly the permissions the code
uses, no more."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import yaml
from whathappened.collectors.kubernetes.access import PERMISSIONS
from whathappened.collectors.kubernetes.api import PATHS
from whathappened.collectors.kubernetes.collector import KubernetesCollector, build_api_client

from tests.doubles.kube import Request
from tests.fixtures.kube import KubeSession
from tests.support import REPO, all_scenarios
from whathappened.config import KubernetesSettings, Settings
from whathappened.model import PodInfo, Window
from whathappened.scope import Query, Scope

Grant = tuple[str, str, str]  # (API group, resource, verb)
GRANTED: set[Grant] = {(p.group, p.resource, verb) for p in PERMISSIONS for verb in p.verbs}
READ_VERBS = {"get", "list", "watch"}


def rbac_grants() -> set[Grant]:
    documents = list(yaml.safe_load_all((REPO / "deploy" / "base" / "rbac.yaml").read_text()))
    roles = [d for d in documents if d and d["kind"] in ("ClusterRole", "Role")]
    assert len(roles) == 1
    return {
        (group, resource, verb)
        for rule in roles[0]["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def test_rbac_grants_exactly_what_the_code_declares() -> None:
    assert rbac_grants() == GRANTED
    assert {verb for _, _, verb in GRANTED} <= READ_VERBS


def _http_methods(module: str, within: str | None = None) -> list[str]:
    """Every ``method=`` given in a module (or one class of it), as source text."""
    tree: ast.AST = ast.parse((REPO / "collectors" / module).read_text())
    if within is not None:
        [tree] = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == within]
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    return [ast.unparse(k.value) for n in calls for k in n.keywords if k.arg == "method"]


def test_the_only_way_out_is_a_get() -> None:
    assert _http_methods("kubernetes/api.py", "KubeApi") == ["'GET'"]  # one request builder, its method a constant
    assert _http_methods("kubernetes/collector.py") == []
    # the watch's opt-in writes are another class, with two verbs of its own (tests/test_deploy.py: their RBAC)
    assert _http_methods("kubernetes/api.py") == ["'GET'", "method"]
    writes = [
        n for n in ast.walk(ast.parse((REPO / "collectors/kubernetes/api.py").read_text())) if isinstance(n, ast.Call)
    ]
    verbs = {ast.unparse(n.args[0]) for n in writes if ast.unparse(n.func) == "self._write"}
    assert verbs == {"'POST'", "'PATCH'"}
    source = (REPO / "collectors" / "kubernetes" / "collector.py").read_text()
    # the collector reaches the API only through KubeApi.get: no client object, REST layer or pool of its own
    for name in ("param_serialize", "call_api", "rest_client", "pool_manager", "CoreV1Api", "import kubernetes"):
        assert name not in source, name


def test_every_path_is_a_granted_resource() -> None:
    for template in PATHS.values():
        request = Request("GET", template.format(namespace="ns", name="x"), {}, 200)
        assert _grant_of(request) in GRANTED, template


def _grant_of(request: Request) -> Grant:
    path = request.path
    verb = {"GET": "get"}.get(request.method, request.method.lower())
    group = "events.k8s.io" if path.startswith("/apis/events.k8s.io/") else ""
    parts = [p for p in re.sub(r"^/(api/v1|apis/events.k8s.io/v1)", "", path).split("/") if p]
    if parts[:1] == ["namespaces"] and len(parts) >= 3:
        parts = parts[2:]
    resource = parts[0]
    if len(parts) == 3:
        return (group, f"{resource}/{parts[2]}", verb)
    return (group, resource, verb if len(parts) == 2 else ("watch" if request.query.get("watch") else "list"))


def _run(session: KubeSession, experiment: str, namespace: str | None, window: Window) -> None:
    api_client, default = build_api_client(KubernetesSettings(kubeconfig=str(session.kubeconfig)))
    collector = KubernetesCollector(api_client, default, Settings())
    query = Query(experiment, namespace, window)
    discovery = collector.discover(query)
    others = tuple(PodInfo(e["pod"], default) for e in (session.scenario.expected if session.scenario else ()))
    collector.collect(Scope(query, discovery.pods + others, discovery.nodes))


def test_every_request_is_granted_and_every_grant_is_used(kube_double: Any) -> None:
    used: set[Grant] = set()
    for scenario in all_scenarios():
        session = kube_double(scenario)
        window = Window(scenario.start, scenario.end)
        _run(session, scenario.experiment, None, window)
        if scenario.name == "oom-killed":
            # the paths only failures take: the newer events API when core events are forbidden, and the
            # namespace check when nothing is found
            session.faults.add(status=403, path="/api/v1/namespaces/data/events", times=-1)
            _run(session, scenario.experiment, None, window)
            _run(session, "no-such-experiment", None, window)
        assert {r.method for r in session.requests} == {"GET"}
        used |= {_grant_of(r) for r in session.requests if r.status != 403}
    assert used <= GRANTED, used - GRANTED
    assert used == GRANTED, f"granted but never used: {GRANTED - used}"


def test_request_mapping_knows_the_shapes() -> None:
    def request(path: str, **query: str) -> Request:
        return Request("GET", path, query, 200)

    assert _grant_of(request("/api/v1/namespaces/research/pods")) == ("", "pods", "list")
    assert _grant_of(request("/api/v1/pods", watch="true")) == ("", "pods", "watch")
    assert _grant_of(request("/api/v1/namespaces/research/pods/w-0/log")) == ("", "pods/log", "get")
    assert _grant_of(request("/api/v1/nodes/n-1")) == ("", "nodes", "get")
    assert _grant_of(request("/api/v1/namespaces/research")) == ("", "namespaces", "get")
    assert _grant_of(request("/apis/events.k8s.io/v1/namespaces/x/events")) == ("events.k8s.io", "events", "list")


def test_manifest_is_valid_yaml_with_a_binding() -> None:
    kinds = [d["kind"] for d in yaml.safe_load_all(Path(REPO / "deploy" / "base" / "rbac.yaml").read_text()) if d]
    assert kinds == ["ServiceAccount", "ClusterRole", "ClusterRoleBinding"]
