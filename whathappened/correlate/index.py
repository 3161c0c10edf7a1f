"""The timeline indexed by pod and by node, built once per correlation.

Rules ask "events of these kinds about this pod (or its node) in this window" for every pod that died; scanning
the whole timeline for each question is quadratic, and a 512-pod experiment has hundreds of thousands of events.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from whathappened.kinds import Kind
from whathappened.model import PodInfo, TimelineEvent


@dataclass(frozen=True)
class TimelineIndex:
    timeline: Sequence[TimelineEvent]
    by_pod: dict[str, tuple[int, ...]]  # pod name -> indexes (any namespace; callers check it)
    by_node: dict[str, tuple[int, ...]]  # node -> indexes of events naming that node
    podless: tuple[int, ...]  # events about no pod (nodes, Jobs, the cluster)
    # per-run candidate lists that do not depend on the pod asking (evidence.Case fills it)
    shared: dict[tuple[str, frozenset[str]], dict[str, list[int]]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def of(cls, timeline: Sequence[TimelineEvent]) -> TimelineIndex:
        by_pod: dict[str, list[int]] = defaultdict(list)
        by_node: dict[str, list[int]] = defaultdict(list)
        podless: list[int] = []
        for i, event in enumerate(timeline):
            if event.subject.pod:
                by_pod[event.subject.pod].append(i)
            else:
                podless.append(i)
            if event.subject.node:
                by_node[event.subject.node].append(i)
        return cls(
            timeline=timeline,
            by_pod={k: tuple(v) for k, v in by_pod.items()},
            by_node={k: tuple(v) for k, v in by_node.items()},
            podless=tuple(podless),
        )

    @functools.cached_property
    def checkpoints(self) -> tuple[TimelineEvent, ...]:
        """Every checkpoint saved, in time order: each death asks for the last one before it (rank 0 alone
        usually logs the save), and scanning the whole timeline per death is quadratic."""
        return tuple(e for e in self.timeline if e.kind == Kind.CHECKPOINT_SAVED)

    def about_pod(self, pod: PodInfo) -> tuple[int, ...]:
        return tuple(
            i for i in self.by_pod.get(pod.name, ()) if self.timeline[i].subject.namespace in (None, pod.namespace)
        )

    def on_node(self, node: str | None) -> tuple[int, ...]:
        return self.by_node.get(node, ()) if node else ()
