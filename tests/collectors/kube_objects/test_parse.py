"""The pure Kubernetes parsers on recorded payloads: both Event API shapes and the archived one, the reason
table, maintenance notices, pods' own timelines, nodes, and discovery from objects."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from whathappened.collectors.kube_objects.parse import (
    discover_from_objects,
    events_from_objects,
    pod_events,
)

from tests.doubles.kube.store import to_events_v1
from tests.support import all_scenarios
from whathappened.kinds import Kind
from whathappened.model import PodInfo, Window
from whathappened.scope import Query, Scope

SCENARIOS = {s.name: s for s in all_scenarios()}
WINDOW = Window(datetime(2026, 11, 20, 6, tzinfo=UTC), datetime(2026, 11, 20, 8, tzinfo=UTC))


def recorded(scenario: str, name: str) -> list[dict[str, Any]]:
    return json.loads((SCENARIOS[scenario].path / "kubernetes" / f"{name}.json").read_text())["items"]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def node_event(
    reason: str, message: str, component: str = "kubelet", kind: str = "Node", **extra: Any
) -> dict[str, Any]:
    involved = {
        "kind": kind,
        "name": "node-a" if kind == "Node" else "w-0",
        "namespace": None if kind == "Node" else "ml",
    }
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": "x.1",
            "namespace": "default",
            "uid": f"uid-{reason}",
            "creationTimestamp": "2026-11-20T07:00:00Z",
        },
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "source": {"component": component, "host": "node-a"},
        "firstTimestamp": "2026-11-20T07:00:00Z",
        "lastTimestamp": "2026-11-20T07:00:00Z",
        "count": 1,
        "type": extra.pop("type", "Warning"),
        "eventTime": None,
        **extra,
    }


# --- discovery and the scope's timeline ---


def pod(name: str, labels: dict[str, str], owner: str | None = None, namespace: str = "ml") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels}
    if owner:
        meta["ownerReferences"] = [{"kind": "Job", "name": owner, "controller": True}]
    return {"kind": "Pod", "metadata": meta}


def test_discovery_first_key_wins() -> None:
    objects = [
        pod("a", {"training.kubeflow.org/job-name": "exp"}),
        pod("b", {"job-name": "exp"}),
        pod("c", {"experiment": "other"}),
    ]
    found = discover_from_objects(objects, Query("exp", "ml", WINDOW))
    assert [p.name for p in found.pods] == ["a"]
    assert set(found.candidates) == {"exp", "other"}


def test_discovery_walks_owners_when_no_label_matches() -> None:
    job = {
        "kind": "Job",
        "metadata": {
            "name": "exp-workers-0",
            "namespace": "ml",
            "ownerReferences": [{"kind": "JobSet", "name": "exp"}],
        },
    }
    objects = [
        job,
        pod("exp-workers-0-0-x", {}, owner="exp-workers-0"),
        pod("other", {}, owner="unrelated"),
        pod("direct", {}, owner="exp"),
    ]
    found = discover_from_objects(objects, Query("exp", "ml", WINDOW))
    assert [p.name for p in found.pods] == ["direct", "exp-workers-0-0-x"]
    assert discover_from_objects(objects, Query("exp", "elsewhere", WINDOW)).pods == ()


def test_scope_timeline_window_slack_and_dedupe() -> None:
    base = node_event("NodeNotReady", "Node node-a status is now: NodeNotReady")
    inside = dict(base, lastTimestamp="2026-11-20T08:01:30Z")
    outside = dict(base, lastTimestamp="2026-11-20T08:03:00Z", metadata=dict(base["metadata"], uid="late"))
    scope = Scope(Query("exp", "ml", WINDOW), (PodInfo("w-0", "ml", node="node-a"),))
    events = events_from_objects([], [inside, to_events_v1(inside), outside], [], scope)
    assert [e.at for e in events] == [at("2026-11-20T08:01:30Z")]
    unrelated = dict(base, involvedObject={"kind": "Node", "name": "node-z"})
    assert events_from_objects([], [unrelated], [], scope) == []


def test_eviction_status_is_placed_when_the_kubelet_decided() -> None:
    events = pod_events(recorded("node-pressure-eviction", "pods")[0])
    status = next(e for e in events if e.kind == Kind.EVICTED and e.summary.startswith("pod Evicted"))
    disruption = next(e for e in events if e.kind == Kind.DISRUPTION_TARGET)
    assert status.at == disruption.at
