"""What we were asked and what the sources found: the experiment's pods, nodes and GPUs in a window.

Resolution is two-phase. Every source first *discovers* the experiment's pods (Kubernetes by label selectors,
Prometheus through kube-state-metrics history, logs through the label fields), the union becomes the Scope,
and then every source *collects* the events for that scope. This is what lets a source that no longer knows
the pods (deleted, events expired) still contribute: the others have named the pods and nodes for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol, TypeVar, runtime_checkable

from whathappened.model import EMPTY, NodeInfo, PodInfo, TimelineEvent, Window

_Info = TypeVar("_Info", PodInfo, NodeInfo)

# The contract's label keys, in order: the first key that matches a pod names its experiment.
DEFAULT_LABEL_KEYS: tuple[str, ...] = (
    "experiment",
    "whathappened.io/experiment",
    "training.kubeflow.org/job-name",
    "jobset.sigs.k8s.io/jobset-name",
    "batch.kubernetes.io/job-name",
    "job-name",
    "app.kubernetes.io/instance",
    "ray.io/cluster",
    "volcano.sh/job-name",
    "leaderworkerset.sigs.k8s.io/name",
)


@dataclass(frozen=True, slots=True)
class Query:
    experiment: str
    namespace: str | None  # None: all namespaces
    window: Window
    label_keys: tuple[str, ...] = DEFAULT_LABEL_KEYS


@dataclass(frozen=True, slots=True)
class Discovery:
    """What one source knows of the experiment before collection."""

    pods: tuple[PodInfo, ...] = ()
    nodes: tuple[NodeInfo, ...] = ()
    candidates: tuple[str, ...] = ()  # experiment names this source saw, for "did you mean" on exit 4


@dataclass(frozen=True, slots=True)
class Scope:
    query: Query
    pods: tuple[PodInfo, ...]
    nodes: tuple[NodeInfo, ...] = ()
    # node -> GPU indexes the experiment's pods held there, where a source could tell
    gpus: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: EMPTY, compare=False, hash=False)

    @property
    def window(self) -> Window:
        return self.query.window

    @property
    def pod_names(self) -> tuple[str, ...]:
        return tuple(sorted({p.name for p in self.pods}))

    @property
    def node_names(self) -> tuple[str, ...]:
        names = {p.node for p in self.pods if p.node} | {n.name for n in self.nodes}
        return tuple(sorted(names))

    @property
    def namespaces(self) -> tuple[str, ...]:
        return tuple(sorted({p.namespace for p in self.pods}))


@runtime_checkable
class Collector(Protocol):
    """One source. Takes its client in ``__init__``; ``requests`` counts every request it made.

    A collector may also set a ``detail`` string after ``collect`` ("4 pods, 3 events, 4 nodes") that the
    source-health footer and the JSON ``sources[].detail`` show.
    """

    name: str
    requests: int

    def discover(self, query: Query) -> Discovery: ...

    def collect(self, scope: Scope) -> Iterable[TimelineEvent]: ...


@runtime_checkable
class LeavesEvents(Protocol):
    """A collector that may leave part of its Events to an event archive another source reads (the Kubernetes
    API's further pages of a namespace's Events) and reads them after all when that source found none."""

    name: str
    requests: int

    @property
    def left_to_archive(self) -> bool: ...

    def collect_left(self, scope: Scope) -> list[TimelineEvent]: ...


def merge_pods(found: Iterable[Iterable[PodInfo]]) -> tuple[PodInfo, ...]:
    """One PodInfo per (namespace, name); earlier sources win field by field, later ones fill gaps."""
    merged: dict[tuple[str, str], PodInfo] = {}
    for pods in found:
        for pod in pods:
            known = merged.get(pod.key)
            merged[pod.key] = pod if known is None else _fill(known, pod)
    return tuple(sorted(merged.values(), key=lambda p: (p.namespace, p.name)))


def merge_nodes(found: Iterable[Iterable[NodeInfo]]) -> tuple[NodeInfo, ...]:
    merged: dict[str, NodeInfo] = {}
    for nodes in found:
        for node in nodes:
            known = merged.get(node.name)
            merged[node.name] = node if known is None else _fill(known, node)
    return tuple(sorted(merged.values(), key=lambda n: n.name))


def _blank(value: object) -> bool:
    return value is None or value == () or value is False or value == 0 or (isinstance(value, Mapping) and not value)


def _fill(known: _Info, other: _Info) -> _Info:
    changes: dict[str, object] = {}
    for name in known.__dataclass_fields__:
        mine, theirs = getattr(known, name), getattr(other, name)
        if name == "sources":
            changes[name] = mine | theirs
        elif _blank(mine) and not _blank(theirs):
            changes[name] = theirs
    return replace(known, **changes) if changes else known  # type: ignore[arg-type]
