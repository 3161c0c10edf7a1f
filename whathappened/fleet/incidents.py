"""Pod ends grouped into incidents: the ends of one experiment (namespace and name) that follow each other within
``GAP`` are one incident, one root cause and its collateral (ranks that hit the NCCL watchdog thirty minutes after
the rank that crashed are the same incident; a restart two hours later is the next one). Pure."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from whathappened.model import PodEnd, Window

GAP = timedelta(minutes=45)  # longer than NCCL's default watchdog timeout (30 min), shorter than a resubmission
LOOKBACK = timedelta(hours=2)  # evidence before the first end: the Xid, the notice, the last checkpoint
SETTLE = timedelta(minutes=30)  # evidence after the last end: the collateral's logs, the archived events


@dataclass(frozen=True, slots=True)
class FleetIncident:
    namespace: str
    experiment: str
    ends: tuple[PodEnd, ...]  # oldest first

    @property
    def first(self) -> datetime:
        return self.ends[0].at

    @property
    def last(self) -> datetime:
        return self.ends[-1].at

    @property
    def pods(self) -> frozenset[str]:
        return frozenset(e.pod for e in self.ends)

    def window(self, within: Window) -> Window:
        """The narrow window it is explained in, inside the fleet's."""
        start = max(within.start, self.first - LOOKBACK)
        return Window(start, max(min(within.end, self.last + SETTLE), start + timedelta(minutes=1)))


def incidents(ends: Iterable[PodEnd]) -> list[FleetIncident]:
    """Oldest first; a pod's repeated ends (restarts) inside one incident are kept, each is a death."""
    by_experiment: dict[tuple[str, str], list[PodEnd]] = defaultdict(list)
    for end in ends:
        by_experiment[(end.namespace, end.experiment)].append(end)
    found: list[FleetIncident] = []
    for (namespace, experiment), theirs in by_experiment.items():
        group: list[PodEnd] = []
        for end in sorted(theirs, key=lambda e: (e.at, e.pod)):
            if group and end.at - group[-1].at > GAP:
                found.append(FleetIncident(namespace, experiment, tuple(group)))
                group = []
            group.append(end)
        if group:
            found.append(FleetIncident(namespace, experiment, tuple(group)))
    return sorted(found, key=lambda i: (i.first, i.namespace, i.experiment))
