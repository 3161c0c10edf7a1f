"""Which shipper wrote which index, from ``_field_caps`` answers in Elasticsearch's own form (``include_unmapped``:
a type entry lists its indices only when the indices disagree; objects hold no value)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import pytest
from whathappened.collectors.logs.fields import NODE_MAPPING, PRESETS, Reading
from whathappened.collectors.logs.shapes import Shape, asked_fields, compacted, day_of, mapped_in, shapes

from whathappened.model import Window


def keyword(*indices: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "keyword", "searchable": True, "aggregatable": True}
    return {"keyword": {**entry, "indices": list(indices)}} if indices else {"keyword": entry}


def unmapped(*indices: str) -> dict[str, Any]:
    return {"unmapped": {"type": "unmapped", "searchable": False, "aggregatable": False, "indices": list(indices)}}


def test_one_shipper_everywhere_reads_the_users_pattern() -> None:
    """Every index agrees (no ``indices`` lists): one shape, and the search names the pattern, not a list."""
    caps = {"kubernetes.pod.name": keyword(), "kubernetes.namespace": keyword(), "@timestamp": {"date": {}}}
    caps |= {"message": {"text": {"type": "text"}}, "log": {"object": {"type": "object"}}}
    found = shapes(caps, ["logs-a", "logs-b"], Reading(), "logs-*,filebeat-*")
    assert [(s.index, s.mapping.name) for s in found] == [("logs-*,filebeat-*", "ecs")]
    assert found[0].mapping.message == ("message",)  # ECS's "log" is an object: no text there
    assert found[0].mapping.timestamp == ("@timestamp",)


def test_each_shipper_reads_its_own_indices_and_node_logs_go_with_the_first() -> None:
    ecs, fb, vec, node = "logs-kubernetes.container_logs-default", "logstash-2026.11.20", "vector-2026.11.20", "logs-x"
    every = [ecs, fb, vec, node]
    caps = {
        "kubernetes.pod.name": keyword(ecs) | unmapped(fb, vec, node),
        "kubernetes.namespace": keyword(ecs) | unmapped(fb, vec, node),
        "kubernetes.pod_name": keyword(fb, vec) | unmapped(ecs, node),
        "kubernetes.namespace_name": keyword(fb) | unmapped(ecs, vec, node),
        "kubernetes.pod_namespace": keyword(vec) | unmapped(ecs, fb, node),
        "MESSAGE": keyword(fb) | unmapped(ecs, vec, node),
        "message": keyword(ecs, vec, node) | unmapped(fb),
        "log": keyword(fb) | {"object": {"type": "object", "indices": [ecs]}} | unmapped(vec, node),
        "@timestamp": keyword(ecs, fb, node) | unmapped(vec),
        "timestamp": keyword(vec) | unmapped(ecs, fb, node),
        "host.hostname": keyword(node) | unmapped(ecs, fb, vec),
        "_HOSTNAME": keyword(fb) | unmapped(ecs, vec, node),
    }
    found = {s.mapping.name: s for s in shapes(caps, every, Reading(), "logs-*,logstash-*,vector-*")}
    # daily indices are searched by their stem (no other shape's index matches it)
    assert {name: s.index for name, s in found.items()} == {
        "ecs": f"{ecs},{node}",
        "fluent-bit": "logstash-*",
        "vector": "vector-*",
    }
    assert found["ecs"].mapping.host == ("host.hostname",)  # the node indices' spelling, folded into the first
    assert found["fluent-bit"].mapping.message == ("log", "MESSAGE")
    assert found["vector"].mapping.timestamp == ("timestamp",)  # what its sort must use


def test_a_chosen_preset_is_never_second_guessed() -> None:
    chosen = Reading(PRESETS["fluent-bit"])
    assert [(s.index, s.mapping) for s in shapes({}, ["logs-a"], chosen, "logs-*")] == [
        ("logs-*", PRESETS["fluent-bit"])
    ]


def test_an_empty_store_is_read_as_the_first_preset() -> None:
    assert [(s.index, s.mapping.name) for s in shapes({}, [], Reading(), "logs-*")] == [("logs-*", "ecs")]


def test_only_node_logs_read_with_every_host_spelling() -> None:
    caps = {"host.hostname": keyword(), "message": keyword(), "@timestamp": {"date": {}}}
    (only,) = shapes(caps, ["logs-system.syslog-default"], Reading(), "logs-*")
    assert only.index == "logs-*" and only.mapping.host == ("host.hostname",)


def test_mapped_in_reads_type_entries_with_and_without_index_lists() -> None:
    assert mapped_in({"f": keyword()}, "f", ["a", "b"]) == {"a", "b"}
    assert mapped_in({"f": keyword("a") | unmapped("b")}, "f", ["a", "b"]) == {"a"}
    assert mapped_in({"f": {"object": {"type": "object"}}}, "f", ["a"]) == set()
    assert mapped_in({}, "f", ["a"]) == set()


def test_one_field_caps_request_asks_for_every_shape_in_a_short_url() -> None:
    """Labels by wildcard, one pattern a preset: the request line stays far below a server's 4 KB limit."""
    asked = asked_fields(Reading())
    assert {f"{m.labels}.*" for m in PRESETS.values()} <= set(asked)
    assert {m.pod for m in PRESETS.values()} | set(NODE_MAPPING.host) <= set(asked)
    assert len(",".join(asked)) < 3000


def test_a_month_of_daily_indices_is_searched_as_one_pattern_per_shipper() -> None:
    """Thirty daily indices of each of two shippers: each shape's index list is its own patterns, short, and never
    names the other shipper's indices."""
    fluent = [f"logstash-2026.11.{d:02d}" for d in range(1, 31)]
    vector = [f"vector-2026.11.{d:02d}" for d in range(1, 31)]
    every = [*fluent, *vector]
    caps = {
        "kubernetes.pod_name": keyword(),
        "kubernetes.namespace_name": keyword(*fluent) | unmapped(*vector),
        "kubernetes.pod_namespace": keyword(*vector) | unmapped(*fluent),
    }
    found = {s.mapping.name: s.index for s in shapes(caps, every, Reading(), "logstash-*,vector-*")}
    assert found == {"fluent-bit": "logstash-*", "vector": "vector-*"}
    # a pattern that would also match another shape's index is not used: the names stay exact
    assert compacted(["logs-a-2026.11.01"], ["logs-a-2026.11.01", "logs-a-other"]) == "logs-a-2026.11.01"
    assert compacted([".ds-logs-x-2026.11.20-000001"], [".ds-logs-x-2026.11.20-000001"]) == ".ds-logs-x-*"


# --- a window's indices ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("index", "day"),
    [
        ("logstash-2026.11.20", date(2026, 11, 20)),  # Fluent Bit's and Fluentd's logstash_format, Logstash
        ("filebeat-7.17.0-2026.11.20", date(2026, 11, 20)),  # Filebeat 7 without ILM
        ("kube-events-2026-11-20", date(2026, 11, 20)),
        ("vector-20261120", date(2026, 11, 20)),
        ("logs-2026.11.20.07", date(2026, 11, 20)),  # hourly
        (".ds-logs-k8s-default-2026.11.20-000001", None),  # a backing index: its creation day, not its data's
        ("filebeat-8.11.0-2026.11.20-000003", None),  # a rollover index, likewise
        ("logs-000003", None),
        ("logs-2026.11", None),  # monthly: left whole
        ("logs-2026.13.45", None),  # no such day
        ("logs-k8s", None),
    ],
)
def test_the_day_a_daily_index_is_named_for(index: str, day: date | None) -> None:
    assert day_of(index) == day


def days(stem: str, first: int, last: int) -> list[str]:
    return [f"{stem}-2026.11.{d:02d}" for d in range(first, last + 1)]


def window(start: str, end: str) -> Window:
    return Window(datetime.fromisoformat(start), datetime.fromisoformat(end))


def test_a_narrow_window_searches_its_days_and_those_within_14_hours() -> None:
    """Index days are UTC days; an index named in local time is at most 14 hours off."""
    shape = Shape("logs-*", PRESETS["ecs"], (*days("logs-k8s", 1, 30), "logs-node"))
    assert shape.index_for(window("2026-11-20T07:00:00+00:00", "2026-11-20T09:00:00+00:00")) == (
        "logs-k8s-2026.11.19,logs-k8s-2026.11.20,logs-node"  # an undated index always
    )
    across_midnight = shape.index_for(window("2026-11-20T23:00:00+00:00", "2026-11-21T01:00:00+00:00"))
    assert across_midnight.split(",") == [*days("logs-k8s", 20, 21), "logs-node"]
    tokyo = shape.index_for(window("2026-11-21T08:00:00+09:00", "2026-11-21T10:00:00+09:00"))  # 20th, 23:00 UTC
    assert tokyo.split(",") == [*days("logs-k8s", 20, 21), "logs-node"]


def test_a_data_streams_backing_indices_are_searched_by_their_stream() -> None:
    members = (*days("logstash", 1, 30), ".ds-logs-k8s-default-2026.11.02-000001")
    shape = Shape("logs-*,logstash-*", PRESETS["ecs"], members)
    assert shape.index_for(window("2026-11-20T07:00:00+00:00", "2026-11-20T09:00:00+00:00")).split(",") == [
        *days("logstash", 19, 20),
        "logs-k8s-default",
    ]


@pytest.mark.parametrize(
    ("shape", "why"),
    [
        (Shape("logs", PRESETS["ecs"], tuple(days("logs", 1, 30))), "members behind an alias"),
        (Shape("logs-*", PRESETS["ecs"], tuple(days("logs", 19, 20))), "nothing to leave out"),
        (Shape("logs-*", PRESETS["ecs"], tuple(days("logs", 1, 5))), "nothing left"),
        (Shape("logs-*", PRESETS["ecs"]), "members unknown"),
        (Shape("logs-*", PRESETS["ecs"], tuple(f"logs-{n:0200d}-2026.11.20" for n in range(20))), "too long"),
    ],
)
def test_the_whole_expression_where_narrowing_is_unsafe_or_useless(shape: Shape, why: str) -> None:
    assert shape.index_for(window("2026-11-20T07:00:00+00:00", "2026-11-20T09:00:00+00:00")) == shape.index, why


def test_shapes_know_their_concrete_indices() -> None:
    caps = {"kubernetes.pod.name": keyword(), "kubernetes.namespace": keyword(), "@timestamp": {"date": {}}}
    (one,) = shapes(caps, days("logs-k8s", 1, 3), Reading(), "logs-*")
    assert one.members == tuple(days("logs-k8s", 1, 3))
    (chosen,) = shapes({}, days("logs-k8s", 1, 3), Reading(PRESETS["ecs"]), "logs-*")
    assert chosen.members == one.members
