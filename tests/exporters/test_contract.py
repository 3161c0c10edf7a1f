"""The exposition against the catalog and CONTRACT.md section 4, and deploy/ against the CLI it runs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import typer
import yaml
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from whathappened.exporters import aws, azure, catalog, gcp
from whathappened.exporters.gpu import GpuHealth
from whathappened.exporters.metrics import ExporterState, MaintenanceCollector

from tests.doubles.metadata import samples
from tests.exporters.test_gpu import FakeNvml
from tests.support import REPO
from whathappened.cli.exporter import register

NOW = datetime(2026, 4, 11, 22, 0, tzinfo=UTC)
DEPLOY = REPO / "deploy"


def _exposition() -> str:
    s = samples()
    notices = (
        *azure.parse_scheduled_events(s["azure"]["spot_preempt_example_Z5"], None, {}, NOW).notices,
        *aws.parse_scheduled(s["aws"]["scheduled_maintenance_example_A1_comment_in_ec2metadata.go"]),
        aws.parse_spot_action(s["aws"]["spot_instance_action_example_A2_AEMM_README"]),
        aws.parse_rebalance(s["aws"]["rebalance_recommendation_example_A2"]),
        gcp.parse_maintenance_event("TERMINATE_ON_HOST_MAINTENANCE", "e", NOW),
        gcp.parse_preempted("TRUE", NOW),
    )
    state = ExporterState("aws")
    state.record_success("aws", [n for n in notices if n is not None], NOW)
    registry = CollectorRegistry()
    registry.register(MaintenanceCollector(state, "node-1", lambda: NOW, timedelta(hours=1), timedelta(minutes=1)))
    gpu = GpuHealth("node-1", FakeNvml())
    gpu.start()
    gpu.sample()
    registry.register(gpu)
    return generate_latest(registry).decode()


def test_every_family_is_catalogued_with_its_type_and_labels() -> None:
    specs = {spec.name.removesuffix("_total"): spec for spec in catalog.EXPORTER_METRICS}
    families = list(text_string_to_metric_families(_exposition()))
    assert {f.name for f in families} == set(specs)
    for fam in families:
        spec = specs[fam.name]
        assert fam.type == spec.type, fam.name
        for sample in fam.samples:
            assert tuple(sorted(sample.labels)) == tuple(sorted(spec.labels)), sample


def test_contract_metrics_exactly() -> None:
    assert catalog.MAINTENANCE_SCHEDULED.name == "whathappened_node_maintenance_scheduled"
    assert catalog.MAINTENANCE_NOT_BEFORE.name == "whathappened_node_maintenance_not_before_timestamp_seconds"
    assert catalog.MAINTENANCE_LABELS == ("node", "provider", "event_id", "event_type")
    assert (catalog.PREFLIGHT_OK.name, catalog.PREFLIGHT_OK.labels) == ("whathappened_preflight_ok", ("node",))
    scheduled = [
        s
        for f in text_string_to_metric_families(_exposition())
        for s in f.samples
        if f.name == catalog.MAINTENANCE_SCHEDULED.name
    ]
    assert {s.labels["provider"] for s in scheduled} == {"azure", "aws", "gcp"}
    types = {s.labels["event_type"] for s in scheduled}
    assert types >= catalog.SPOT_EVENT_TYPES | catalog.REBALANCE_EVENT_TYPES
    assert all(s.value == 1.0 for s in scheduled)


def _docs(name: str) -> list[dict[str, Any]]:
    return list(yaml.safe_load_all((REPO / name).read_text()))


def _options(command: str) -> set[str]:
    app = typer.Typer()
    register(app)
    group = typer.main.get_command(app)
    params = group.commands[command].params  # type: ignore[attr-defined]
    return {opt.split("/")[0] for p in params for opt in [*p.opts, *p.secondary_opts]}


def _containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    spec = doc["spec"]["template"]["spec"] if "template" in doc["spec"] else doc["spec"]
    return [*spec.get("initContainers", []), *spec["containers"]]


def test_deploy_args_are_options_the_cli_accepts() -> None:
    manifests = {
        "deploy/base/daemonset.yaml": 0,
        "examples/sidecar.yaml": 0,
        "examples/preflight-initcontainer.yaml": 0,
    }
    for name in manifests:
        for doc in _docs(name):
            for container in _containers(doc):
                args = container.get("args") or []
                if args[:1] in (["exporter"], ["preflight"]):
                    flags = {a.split("=")[0] for a in args[1:] if a.startswith("--")}
                    assert flags <= _options(args[0]), (name, flags - _options(args[0]))
                    manifests[name] += 1
    assert all(manifests.values()), manifests


def test_daemonset_scrape_annotations_match_the_port() -> None:
    (daemonset,) = _docs("deploy/base/daemonset.yaml")
    annotations = daemonset["spec"]["template"]["metadata"]["annotations"]
    (container,) = daemonset["spec"]["template"]["spec"]["containers"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/port"] == str(container["ports"][0]["containerPort"]) == "9977"
    assert "--port=9977" in container["args"]
    assert {e["name"] for e in container["env"]} >= {"NODE_NAME"}
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"


def test_rbac_grants_create_events_and_patch_nodes_only() -> None:
    """--node-events creates Events (in "default"), --label-node patches its Node: nothing else."""
    roles = {
        d["metadata"]["name"]: d["rules"] for d in _docs("deploy/base/exporter-rbac.yaml") if d["kind"] == "ClusterRole"
    }
    assert roles == {
        "whathappened-exporter-node-events": [{"apiGroups": [""], "resources": ["events"], "verbs": ["create"]}],
        "whathappened-exporter-node-label": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["patch"]}],
    }
    assert Path(DEPLOY / "Containerfile").read_text().count("ENTRYPOINT") == 1
