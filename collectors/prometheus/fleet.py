"""``whathappened fleet``'s first pass: every end of an experiment pod over a long window (30 days), from
kube-state-metrics history alone, so pods deleted long ago count too. Pure: queries in, answers parsed.

The queries scale with pod lifetimes, not with GPUs: a range query at a coarse step (``fleet_step``: minutes for a
month) over the pod series only. A pod's run ends, at the step it is seen, as:

- ``failed``: its phase turned Failed;
- ``restarted``: a container's restart count went up (a restart in place; JobSet and PyTorchJob restarts too);
- ``evicted``: a status reason says the kubelet or the node took it (Evicted, Preempting, NodeLost, ...);
- ``gone``: it was Running, and then its series ended (deleted: a drain, a user, a controller's restart of the
  whole group). The correlator decides which.

Each end is then explained by the same correlator as the CLI's, in its own narrow window (whathappened/fleet).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from itertools import pairwise
from typing import Any

from whathappened.collectors.prometheus.model import Series
from whathappened.collectors.prometheus.series import experiment_of, sanitize_label

from whathappened.model import FoundEnds, PodEnd, Window
from whathappened.timeutils import from_unix

MAX_STEPS = 5_000  # per series and query: well under Prometheus' 11,000 points
MIN_STEP_S = 300
ALIVE = "alive"
LOOKBACK_S = 300  # Prometheus' default lookback: an instant selector sees a series this long after its last sample
# kube_pod_status_reason's reasons that end a pod's run (kube-state-metrics' podStatusReasons, all releases)
ENDING_REASONS = ("Evicted", "NodeAffinity", "NodeLost", "Shutdown", "UnexpectedAdmissionError", "Preempting")


def fleet_step(seconds: float) -> int:
    """Whole minutes, at least 5, at most ``MAX_STEPS`` points over the window."""
    return max(MIN_STEP_S, math.ceil(seconds / MAX_STEPS / 60) * 60)


def end_queries(step: int) -> dict[str, str]:
    """How each way a run ends shows at a step: a series per pod with a sample at each step where it did."""
    window = f"[{step}s]"
    running = 'kube_pod_status_phase{phase="Running"}'
    reasons = "|".join(ENDING_REASONS)
    return {
        "failed": f'max_over_time(kube_pod_status_phase{{phase="Failed"}}{window}) > 0',
        # over two steps: a restart between the last sample of one step and the first of the next is seen too
        # (the two steps that show it are one run, one end)
        "restarted": f"increase(kube_pod_container_status_restarts_total[{2 * step}s]) > 0",
        "evicted": f'max_over_time(kube_pod_status_reason{{reason=~"{reasons}"}}{window}) > 0',
        # Running at its last sample, and no sample since: the steps' windows, 5 minutes back (the lookback), tile
        # the timeline, so exactly one step sees each series end. Set operators match on every label but the
        # name: the pod's own series on both sides.
        "gone": f"max_over_time({running}{window} offset {LOOKBACK_S}s) == 1 unless count_over_time({running}"
        f"[{LOOKBACK_S}s])",
        # when kube-state-metrics itself was answering: a series that ends while it is down (or where the history
        # ends) is not a pod that went
        ALIVE: "group(kube_node_spec_unschedulable)",  # one series per node, every node, every release
    }


def roster_queries(label_keys: Sequence[str], window: Window) -> tuple[str, str]:
    """Every pod that carried one of the experiment label keys in the window, with its labels; and where each pod
    ran (kube_pod_info's node)."""
    span = f"[{math.ceil(window.seconds)}s]"
    members = " or ".join(f'last_over_time(kube_pod_labels{{{sanitize_label(k)}!=""}}{span})' for k in label_keys)
    return members, f"last_over_time(kube_pod_info{span})"


def pod_ends(
    answers: Mapping[str, list[dict[str, Any]]],
    members: list[dict[str, Any]],
    placements: list[dict[str, Any]],
    label_keys: Sequence[str],
    step: int,
    namespace: str | None = None,
) -> list[PodEnd]:
    """The ends of experiment pods, oldest first: one per pod and way per run of consecutive steps (a Failed
    phase seen at ten steps is one end, at the first)."""
    experiments: dict[tuple[str, str], str] = {}
    for item in members:
        labels = item["metric"]
        found = experiment_of(labels, tuple(label_keys))
        if found and (namespace is None or labels.get("namespace") == namespace):
            experiments[(labels.get("namespace", ""), labels.get("pod", ""))] = found
    nodes = {
        (m["metric"].get("namespace", ""), m["metric"].get("pod", "")): m["metric"].get("node") for m in placements
    }
    alive = {float(t) for series in answers.get(ALIVE, ()) for t, _ in series.get("values") or ()}
    ends: list[PodEnd] = []
    for how, answer in answers.items():
        for series in answer if how != ALIVE else ():
            key = (series["metric"].get("namespace", ""), series["metric"].get("pod", ""))
            experiment = experiments.get(key)
            if experiment is None:
                continue
            times = [float(t) for t, _ in series.get("values") or ()]
            for at in _first_of_runs([t for t in times if t in alive] if how == "gone" else times, step):
                ends.append(PodEnd(key[0], key[1], experiment, at, how, nodes.get(key) or None))
    return sorted(set(ends), key=lambda e: (e.at, e.namespace, e.pod, e.how))


def covered(answers: Mapping[str, list[dict[str, Any]]], step: int, window: Window) -> tuple[Window, ...]:
    """When kube-state-metrics was answering (the ``ALIVE`` grid points): each run of consecutive points, from
    its first step's start to its last point, inside the window."""
    times = sorted({float(t) for series in answers.get(ALIVE, ()) for t, _ in series.get("values") or ()})
    runs: list[list[float]] = []
    for t in times:
        if runs and t - runs[-1][1] <= step * 1.5:
            runs[-1][1] = t
        else:
            runs.append([t - step, t])
    return _inside([(from_unix(a), from_unix(b)) for a, b in runs], window)


def _inside(spans: Iterable[tuple[datetime, datetime]], window: Window) -> tuple[Window, ...]:
    clipped = [(max(a, window.start), min(b, window.end)) for a, b in spans]
    return tuple(Window(a, b) for a, b in clipped if a < b)


def _first_of_runs(times: Iterable[float], step: int) -> list[datetime]:
    """The first time of each run of consecutive grid points."""
    firsts: list[datetime] = []
    last: float | None = None
    for t in sorted(times):
        if last is None or t - last > step * 1.5:
            # the step's window ends at t: the end happened within the step before
            firsts.append(from_unix(t) - timedelta(seconds=step))
        last = t
    return firsts


def ends_in_series(
    series: Iterable[Series], window: Window, label_keys: Sequence[str], namespace: str | None = None
) -> FoundEnds:
    """The same ends from recorded series (a snapshot), sample by sample: a phase or reason turning 1, a restart
    count going up, a Running series whose last sample is 1 while the nodes' series go on; and the span
    kube-state-metrics' series cover."""
    start, stop = window.start.timestamp(), window.end.timestamp()
    pods: dict[tuple[str, str], dict[str, list[Series]]] = {}
    node_last, first, last = 0.0, math.inf, 0.0  # the nodes' last sample; any kube-state-metrics series' span
    for one in series:
        if one.name.startswith("kube_") and one.samples:
            first, last = min(first, one.samples[0][0]), max(last, one.samples[-1][0])
        if one.name == "kube_node_spec_unschedulable" and one.samples:
            node_last = max(node_last, one.samples[-1][0])
            continue
        key = (one.label("namespace", "exported_namespace") or "", one.label("pod", "exported_pod") or "")
        pods.setdefault(key, {}).setdefault(one.name, []).append(one)
    ends: list[PodEnd] = []
    for (ns, pod), named in pods.items():
        labels = next((dict(s.labels) for s in named.get("kube_pod_labels", ())), None)
        experiment = experiment_of(labels, tuple(label_keys)) if labels else None
        if experiment is None or (namespace is not None and ns != namespace):
            continue
        node = next((s.label("node") for s in named.get("kube_pod_info", ()) if s.label("node")), None)
        found: list[tuple[float, str]] = []
        for phase in named.get("kube_pod_status_phase", ()):
            if phase.labels.get("phase") == "Failed":
                found += [(t, "failed") for t in _rises(phase.samples)][:1]
            elif phase.labels.get("phase") == "Running" and phase.samples and phase.samples[-1][1] == 1:
                # gone while running, if the nodes' series (kube-state-metrics answering) go on after it
                found += [(phase.samples[-1][0], "gone")] if phase.samples[-1][0] < node_last else []
        for reason in named.get("kube_pod_status_reason", ()):
            if reason.labels.get("reason") in ENDING_REASONS:
                found += [(t, "evicted") for t in _rises(reason.samples)][:1]
        for restarts in named.get("kube_pod_container_status_restarts_total", ()):
            found += [(t, "restarted") for (_, a), (t, b) in pairwise(restarts.samples) if b > a]
        ends += [PodEnd(ns, pod, experiment, from_unix(t), how, node) for t, how in found if start <= t <= stop]
    spans = [(from_unix(first), from_unix(last))] if first < last else []
    return FoundEnds(tuple(sorted(set(ends), key=lambda e: (e.at, e.namespace, e.pod, e.how))), _inside(spans, window))


def _rises(samples: Sequence[tuple[float, float]]) -> list[float]:
    """When the value turned from 0 (or nothing) to 1."""
    return [t for i, (t, v) in enumerate(samples) if v == 1 and (i == 0 or samples[i - 1][1] != 1)]
