"""Field-mapping presets: the same incidents shipped by Fluent Bit (kubernetes filter + syslog parser) instead of
Filebeat give the same timeline, live through osmem-server and offline; presets and overrides are configurable."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from whathappened.collectors.logs import parse as log_parse
from whathappened.collectors.logs.elasticsearch.collector import LogCollector, make_client
from whathappened.collectors.logs.fields import get_path

from tests.collectors.logs.elasticsearch.test_live import comparable, query_of, read_ndjson
from tests.fixtures.search import SearchServer
from tests.support import REPO, Scenario, all_scenarios
from whathappened.config import ElasticsearchSettings
from whathappened.errors import ConfigError
from whathappened.kinds import Kind
from whathappened.scope import Scope

PICKED = [
    s for s in all_scenarios() if s.name in ("ecc-dbe", "xid79-fallen-off-bus", "oom-killed", "history-after-deletion")
]


def fluent_bit_shape(index: str, doc: dict[str, Any]) -> dict[str, Any]:
    """An ECS document as Fluent Bit's kubernetes filter (container logs) or syslog parser (node logs) and the
    Elasticsearch output with Replace_Dots would have written it."""
    if index.startswith("kube-events"):
        return copy.deepcopy(doc)
    k8s = doc.get("kubernetes")
    if k8s is None:  # a node's kernel log line
        return {
            "@timestamp": doc["@timestamp"],
            "host": doc["host"]["name"],
            "ident": "kernel",
            "message": doc["message"],
        }
    return {
        "@timestamp": doc["@timestamp"],
        "time": doc["@timestamp"],
        "stream": doc.get("stream"),
        "log": doc["message"] + "\n",
        "kubernetes": {
            "pod_name": k8s["pod"]["name"],
            "namespace_name": k8s["namespace"],
            "pod_id": k8s["pod"].get("uid"),
            "host": k8s["node"]["name"],
            "container_name": k8s["container"]["name"],
            "docker_id": doc.get("container", {}).get("id"),
            "container_image": "nvcr.io/nvidia/pytorch:24.09-py3",
            "labels": dict(k8s.get("labels", {})),
        },
    }


def fluent_bit_ndjson(scenario: Scenario) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    docs = [(index, fluent_bit_shape(index, doc)) for index, doc in read_ndjson(scenario.path / "logs.ndjson")]
    lines = []
    for index, doc in docs:
        lines.append(json.dumps({"create": {"_index": index}}))
        lines.append(json.dumps(doc))
    return "\n".join(lines), docs


def signature_view(events: list[Any]) -> list[tuple[Any, ...]]:
    return sorted(
        (e.at, e.kind, e.subject.pod or e.subject.node, e.summary, tuple(sorted(map(str, e.attrs.items()))))
        for e in events
    )


@pytest.mark.servers
@pytest.mark.parametrize("scenario", PICKED, ids=[s.name for s in PICKED])
def test_fluent_bit_documents_give_the_ecs_timeline(search_server: SearchServer, scenario: Scenario) -> None:
    text, docs = fluent_bit_ndjson(scenario)
    prefix = f"fluentbit-{scenario.name}"
    search_server.load_ndjson(prefix, text)
    settings = ElasticsearchSettings(
        url=search_server.url,
        log_index=f"{prefix}--logs-*",
        event_index=f"{prefix}--kube-events-*",
        preset="fluent-bit",
    )
    collector = LogCollector(make_client(settings, flavor="opensearch"), settings)
    assert collector.reading.name == "fluent-bit"
    query = query_of(scenario)
    found = collector.discover(query)
    scope = Scope(query, found.pods, found.nodes)
    live = collector.collect(scope)

    ecs = log_parse.mapping_for("ecs")
    ecs_docs = read_ndjson(scenario.path / "logs.ndjson")
    ecs_found = log_parse.discover_from_documents(ecs_docs, query, ecs)
    assert [(p.name, p.node) for p in found.pods] == [(p.name, p.node) for p in ecs_found.pods]
    expected = log_parse.events_from_documents(ecs_docs, scope, ecs)
    assert signature_view(live) == signature_view(expected)
    assert any(e.kind != Kind.LOG_LINE for e in live)
    offline = log_parse.events_from_documents(docs, scope, collector.reading)
    assert comparable(offline) == comparable(live)


def test_presets_name_the_shippers_fields() -> None:
    ecs, fluent = log_parse.mapping_for("ecs"), log_parse.mapping_for("fluent-bit")
    assert (ecs.pod, ecs.namespace, ecs.node, ecs.message_field) == (
        "kubernetes.pod.name",
        "kubernetes.namespace",
        "kubernetes.node.name",
        "message",
    )
    assert (fluent.pod, fluent.namespace, fluent.node, fluent.message_field) == (
        "kubernetes.pod_name",
        "kubernetes.namespace_name",
        "kubernetes.host",
        "log",
    )
    assert ecs.label_fields("training.kubeflow.org/job-name") == (
        "kubernetes.labels.training_kubeflow_org/job-name",
        "kubernetes.labels.training.kubeflow.org/job-name",
    )
    assert log_parse.mapping_for("Fluent_Bit") == fluent


def test_overrides_and_unknown_presets() -> None:
    custom = log_parse.mapping_for("ecs", {"pod": "k8s.pod", "message": "msg", "host": ["agent.hostname"]})
    assert (custom.pod, custom.message, custom.host) == ("k8s.pod", ("msg",), ("agent.hostname",))
    with pytest.raises(ConfigError):
        log_parse.mapping_for("splunk")
    with pytest.raises(ConfigError):
        log_parse.mapping_for("ecs", {"no_such_field": "x"})


def test_fields_are_read_nested_flat_or_mixed() -> None:
    assert get_path({"kubernetes": {"pod": {"name": "a"}}}, "kubernetes.pod.name") == "a"
    assert get_path({"kubernetes.pod.name": "b"}, "kubernetes.pod.name") == "b"
    assert get_path({"kubernetes": {"pod.name": "c"}}, "kubernetes.pod.name") == "c"
    labels = {"kubernetes": {"labels": {"training": {"kubeflow": {"org/job-name": "d"}}}}}
    assert get_path(labels, "kubernetes.labels.training.kubeflow.org/job-name") == "d"
    assert get_path({"kubernetes": "flat string"}, "kubernetes.pod.name") is None


def test_the_preset_list_is_declared_once_and_the_docs_name_every_preset() -> None:
    """The help text is built from the presets; the README's option table and the config file's example name each
    preset and alias, so a preset added to the table and not to the docs fails here."""
    from whathappened.collectors.logs.fields import ALIASES, AUTO, PRESETS, preset_choices

    import whathappened.config
    from whathappened.cli.options import LogPreset

    [option] = LogPreset.__metadata__
    assert preset_choices() in option.help
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    [row] = [line for line in readme.splitlines() if line.startswith("| `--log-preset")]
    [example] = [line for line in (whathappened.config.__doc__ or "").splitlines() if "preset =" in line]
    for name in (AUTO, *PRESETS, *ALIASES):
        assert f"`{name}`" in row, name
    for name in (AUTO, *PRESETS):
        assert name in example, name
