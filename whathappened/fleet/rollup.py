"""The fleet's tables from its cases, with pandas (grouping, shares, weekly buckets are what it is for; imported
only by ``whathappened fleet``):

- by cause: incidents, pod deaths, share of incidents, GPU-hours lost (the shape of the Llama 3 paper's table of
  interruptions by cause);
- by node and by GPU: incidents each was the root of (hardware faults only, ``FAULTS``: a user's deletion or a
  maintenance drain on a node says nothing of the node), Xids seen, experiments killed; "replace" at ``threshold``
  root incidents: the lemon list;
- by experiment: incidents (attempts that ended), their causes, pod deaths, GPU-hours lost;
- weekly: incidents per cause per week (weeks start on Monday).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from whathappened.fleet.survey import Case

LEMON_THRESHOLD = 3  # root incidents in the window that make a node or a GPU one to replace
# The causes that count against the node or GPU at their root: the hardware failed. Not a maintenance notice or a
# spot reclaim (the cloud's schedule), a pressure eviction (the workload's memory), nor any other category.
FAULTS = frozenset({"gpu-fallen-off-bus", "gpu-memory-error", "gpu-hardware-error", "nvlink-error", "gpu-thermal",
                    "network-error", "node-failure"})  # fmt: skip
ROUND = 2


@dataclass(frozen=True)
class Rollup:
    by_cause: list[dict[str, Any]]
    by_node: list[dict[str, Any]]
    by_gpu: list[dict[str, Any]]
    by_experiment: list[dict[str, Any]]
    weekly: list[dict[str, Any]]
    totals: dict[str, Any]


def rollup(cases: Sequence[Case], threshold: int = LEMON_THRESHOLD) -> Rollup:
    frame = pd.DataFrame(
        [
            {
                "namespace": c.incident.namespace,
                "experiment": c.incident.experiment,
                "first": c.incident.first,
                "cause": c.cause,
                "category": c.category,
                "retryable": c.retryable,
                "node": c.node,
                "gpu": _gpu_key(c.node, c.gpu),
                "deaths": c.deaths,
                "gpu_hours": c.gpu_hours_lost,
            }
            for c in cases
        ],
        columns=["namespace", "experiment", "first", "cause", "category", "retryable", "node", "gpu", "deaths",
                 "gpu_hours"],
    )  # fmt: skip
    xids = pd.DataFrame(
        [{"node": x.node, "gpu": _gpu_key(x.node, x.gpu), "xid": x.xid, "at": x.at} for c in cases for x in c.xids],
        columns=["node", "gpu", "xid", "at"],
    ).drop_duplicates()
    totals = {
        "incidents": len(frame),
        "pod_deaths": int(frame["deaths"].sum()),
        "gpu_hours_lost": round(float(frame["gpu_hours"].sum()), ROUND),
    }
    return Rollup(
        _by_cause(frame),
        _lemons(frame, xids, "node", threshold),
        _lemons(frame, xids, "gpu", threshold),
        _by_experiment(frame),
        _weekly(frame),
        totals,
    )


def _by_cause(frame: pd.DataFrame) -> list[dict[str, Any]]:
    if frame.empty:
        return []
    grouped = frame.groupby(["cause", "category"], as_index=False).agg(
        incidents=("cause", "size"), pod_deaths=("deaths", "sum"), gpu_hours_lost=("gpu_hours", "sum")
    )
    grouped["share"] = (grouped["incidents"] / grouped["incidents"].sum()).round(4)
    grouped["gpu_hours_lost"] = grouped["gpu_hours_lost"].round(ROUND)
    ordered = grouped.sort_values(["incidents", "gpu_hours_lost", "cause"], ascending=[False, False, True])
    return _records(ordered[["cause", "category", "incidents", "share", "pod_deaths", "gpu_hours_lost"]])


def _lemons(frame: pd.DataFrame, xids: pd.DataFrame, key: str, threshold: int) -> list[dict[str, Any]]:
    rooted = frame[frame["cause"].isin(FAULTS) & frame[key].notna()]
    roots = rooted.groupby(key).agg(
        root_incidents=("cause", "size"),
        experiments_killed=("experiment", "nunique"),
        causes=("cause", lambda s: ", ".join(sorted(set(s)))),
    )
    seen = xids.groupby(key).agg(xids_seen=("xid", "size"), xid_codes=("xid", lambda s: sorted(set(int(x) for x in s))))
    table = roots.join(seen, how="outer").reset_index()
    if table.empty:
        return []
    table["root_incidents"] = table["root_incidents"].fillna(0).astype(int)
    table["experiments_killed"] = table["experiments_killed"].fillna(0).astype(int)
    table["xids_seen"] = table["xids_seen"].fillna(0).astype(int)
    table["causes"] = table["causes"].fillna("")
    table["xid_codes"] = table["xid_codes"].apply(lambda v: v if isinstance(v, list) else [])
    table["verdict"] = table["root_incidents"].apply(lambda n: "replace" if n >= threshold else "watch" if n else "")
    ordered = table.sort_values(["root_incidents", "xids_seen", key], ascending=[False, False, True])
    return _records(
        ordered[[key, "root_incidents", "experiments_killed", "xids_seen", "xid_codes", "causes", "verdict"]]
    )


def _by_experiment(frame: pd.DataFrame) -> list[dict[str, Any]]:
    if frame.empty:
        return []
    grouped = frame.groupby(["namespace", "experiment"], as_index=False).agg(
        incidents=("cause", "size"),
        causes=("cause", lambda s: ", ".join(sorted(set(s)))),
        pod_deaths=("deaths", "sum"),
        gpu_hours_lost=("gpu_hours", "sum"),
    )
    grouped["gpu_hours_lost"] = grouped["gpu_hours_lost"].round(ROUND)
    return _records(grouped.sort_values(["incidents", "gpu_hours_lost", "experiment"], ascending=[False, False, True]))


def _weekly(frame: pd.DataFrame) -> list[dict[str, Any]]:
    if frame.empty:
        return []
    week = pd.to_datetime(frame["first"], utc=True).dt.tz_localize(None).dt.to_period("W-SUN").dt.start_time
    counted = frame.assign(week=week.dt.strftime("%Y-%m-%d")).groupby(["week", "cause"], as_index=False).size()
    return _records(counted.rename(columns={"size": "incidents"}).sort_values(["week", "cause"]))


def _gpu_key(node: str | None, gpu: str | None) -> str | None:
    """A GPU by its UUID; one known only by its index is named with its node (index 5 is on every node)."""
    if gpu is None:
        return None
    return gpu if gpu.startswith("GPU-") else f"{node} {gpu}"


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Plain Python values (JSON, CSV and the renderers read them), in the frame's order."""
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()} for row in frame.to_dict("records")]
