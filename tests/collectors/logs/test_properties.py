"""Property tests of the log-document parsers: a document's fields read the same nested, flat-dotted or mixed;
no document, however hostile, makes the parsers raise; every event is inside the window and about the scope;
the signature events do not depend on the order the documents came in; discovery finds what the labels say."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from whathappened.collectors.logs import parse as log_parse
from whathappened.collectors.logs.fields import get_path, message_of, text_of
from whathappened.collectors.logs.signatures import SIGNATURES

from whathappened.kinds import Kind
from whathappened.model import NodeInfo, PodInfo, Window
from whathappened.scope import Query, Scope

T0 = datetime(2026, 11, 20, 6, tzinfo=UTC)
WINDOW = Window(T0, T0 + timedelta(hours=1))
ECS = log_parse.mapping_for("ecs")
PODS = ("p-0", "p-1", "other-0")
NODES = ("n-0", "n-1", "n-9")
SCOPE = Scope(
    Query("exp", "ml", WINDOW),
    (PodInfo("p-0", "ml", node="n-0", phase="Failed"), PodInfo("p-1", "ml", node="n-1", phase="Running")),
    (NodeInfo("n-0"), NodeInfo("n-1")),
)
LINES = [example for s in SIGNATURES for example in s.examples] + ["step=10 loss=2.1", "", "Traceback"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
keys = st.text(alphabet="abc", min_size=1, max_size=3)


def nest(parts: list[str], value: Any, flat_from: int) -> dict[str, Any]:
    """``value`` at ``parts`` with the keys from ``flat_from`` on written as one dotted key."""
    if flat_from <= 0:
        return {".".join(parts): value}
    return {parts[0]: nest(parts[1:], value, flat_from - 1)} if len(parts) > 1 else {parts[0]: value}


@settings(max_examples=150, deadline=None)
@given(st.lists(keys, min_size=1, max_size=5), st.text(min_size=1, max_size=10), st.data())
def test_a_field_reads_the_same_nested_flat_or_mixed(parts: list[str], value: str, data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(parts) - 1))
    assert get_path(nest(parts, value, cut), ".".join(parts)) == value


at_seconds = st.integers(-600, 4200)
documents = st.fixed_dictionaries(
    {
        "@timestamp": st.one_of(
            at_seconds.map(lambda s: (T0 + timedelta(seconds=s)).isoformat()),
            st.sampled_from([1e300, -1e20, 2**70, float("inf"), 99999999999999]),  # no clock holds these
            json_values,
        ),
        "message": st.one_of(st.sampled_from(LINES), json_values),
        "kubernetes": st.one_of(
            st.fixed_dictionaries(
                {
                    "namespace": st.sampled_from(["ml", "other"]),
                    "pod": st.fixed_dictionaries({"name": st.sampled_from(PODS)}),
                    "container": st.fixed_dictionaries({"name": st.sampled_from(["trainer", "sidecar"])}),
                    "labels": st.fixed_dictionaries({"experiment": st.sampled_from(["exp", "other"])}),
                }
            ),
            json_values,
        ),
        "host": st.one_of(st.fixed_dictionaries({"name": st.sampled_from(NODES)}), json_values),
    }
)


@settings(max_examples=120, deadline=None)
@given(st.lists(documents, max_size=30), st.randoms(use_true_random=False))
def test_hostile_documents_never_raise_and_events_stay_in_scope(docs: list[dict[str, Any]], rng: random.Random) -> None:
    pairs = [("logs-x", doc) for doc in docs]
    events = log_parse.events_from_documents(pairs, SCOPE, ECS)
    pods, nodes = {p.name for p in SCOPE.pods}, set(SCOPE.node_names)
    for event in events:
        assert WINDOW.contains(event.at)
        assert event.subject.pod in pods if event.subject.pod else event.subject.node in nodes
        assert event.subject.namespace in (None, "ml")
    shuffled = list(pairs)
    rng.shuffle(shuffled)
    again = log_parse.events_from_documents(shuffled, SCOPE, ECS)

    def signature(found: list[Any]) -> list[Any]:
        return sorted(repr((e.at, e.kind, e.subject, e.summary)) for e in found if e.kind != Kind.LOG_LINE)

    assert signature(again) == signature(events)
    found = log_parse.discover_from_documents(pairs, Query("exp", "ml", WINDOW), ECS)
    for pod in found.pods:
        assert pod.namespace == "ml" and pod.name in PODS
        assert any(
            get_path(doc, "kubernetes.pod.name") == pod.name and get_path(doc, "kubernetes.labels.experiment") == "exp"
            for doc in docs
        )


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_any_json_value_is_text_and_any_text_is_matched_or_not(value: Any) -> None:
    text = text_of(value)
    assert isinstance(text, str)
    assert message_of({"message": value}, ECS) == text
    log_parse.match_line(text)
