"""The frame every story starts from: a window, a cluster of nodes and a healthy running experiment."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from synth.clouds import make_nodes
from synth.common import lifecycle_events
from synth.frameworks import make_pods
from synth.ids import Ids
from synth.spec import DcgmStyle, Meta, Node, Pod, Recording


@dataclass(frozen=True, slots=True)
class Setup:
    name: str
    description: str
    experiment: str
    namespace: str
    label_key: str
    framework: str
    flavor: str
    pool: str
    cluster: str
    start: datetime
    pods: int
    gpus: int = 8
    hours: float = 2.0
    created_after: float = 300.0  # seconds after the window start
    scrape: int = 30
    dcgm: DcgmStyle = field(default_factory=DcgmStyle)
    image: str = ""


def day(month: int, dom: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, month, dom, hour, minute, tzinfo=UTC)


def begin(ids: Ids, s: Setup) -> tuple[Recording, list[Node], list[Pod]]:
    end = s.start + timedelta(hours=s.hours)
    meta = Meta(s.name, s.description, s.experiment, s.namespace, s.label_key, s.start, end, end, ())
    rec = Recording(meta=meta, scrape_seconds=s.scrape, dcgm=s.dcgm)
    nodes = make_nodes(ids, s.flavor, s.pods, pool=s.pool, cluster=s.cluster, created=s.start)
    kwargs: dict[str, Any] = {"image": s.image} if s.image else {}
    pods = make_pods(
        ids,
        s.framework,
        s.experiment,
        s.namespace,
        nodes,
        created=s.start + timedelta(seconds=s.created_after),
        label_key=s.label_key,
        gpus=s.gpus,
        **kwargs,
    )
    rec.nodes.extend(nodes)
    rec.pods.extend(pods)
    lifecycle_events(rec, pods)
    return rec, nodes, pods


def expect(
    rec: Recording, *entries: tuple[Pod, str, bool | None, Pod | None], captured_at: datetime | None = None
) -> Recording:
    expected = []
    for pod, cause, root, by in entries:
        entry: dict[str, Any] = {"pod": pod.name, "cause": cause, "root": root}
        if by is not None:
            entry["caused_by"] = by.name
        expected.append(entry)
    rec.meta = replace(rec.meta, expected=tuple(expected), captured_at=captured_at or rec.meta.captured_at)
    return rec
