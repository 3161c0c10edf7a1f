"""Series -> discovery and timeline events: the one analysis both the live collector and snapshots use.

``discover_from_series`` finds the experiment's pods in kube-state-metrics history (``kube_pod_labels`` with
``label_<sanitized key>``, first key wins; then ``kube_pod_info``'s owner), which is how pods the Kubernetes API
has forgotten are still found. ``events_from_series`` turns dcgm-exporter, kube-state-metrics and the exporter's
maintenance series into events for a scope. The live collector asks the server for edges only and turns the
answers into sparse series; the rules in signals read those and raw history alike, so the two agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import cache
from types import MappingProxyType

from whathappened.collectors.prometheus import events as ev
from whathappened.collectors.prometheus.model import Series, canonical_series
from whathappened.collectors.prometheus.placement import EXPORTER_POD, node_of
from whathappened.collectors.prometheus.promql import placed
from whathappened.collectors.prometheus.signals import (
    LOOKBACK_S,
    PRESENCE_METRIC,
    Mode,
    Where,
    derive,
    edges,
    signal_of,
)
from whathappened.collectors.prometheus.util import utilization_events

from whathappened.model import NOT_IN_LABEL_NAME, NodeInfo, PodInfo, TimelineEvent
from whathappened.scope import Discovery, Query, Scope
from whathappened.timeutils import from_unix, to_unix

GPU_REQUESTS = "kube_pod_container_resource_requests"
GPU_RESOURCE = "nvidia_com_gpu"  # nvidia.com/gpu as kube-state-metrics writes a resource name

__all__ = ["LAST_SEEN", "Series", "discover_from_series", "events_from_series", "sanitize_label", "scope_filter"]

SOURCE = ev.SOURCE
# Last-seen times of dcgm series as the live collector reads them (``max by (...) (timestamp(...))``): the
# sample's time and value are both the last time a sample was seen. Raw history needs no such series.
LAST_SEEN = "whathappened:dcgm_last_seen_timestamp_seconds"
MAX_CANDIDATES = 50
# Labels dcgm-exporter puts on the Xid gauge that change with its value; without them it is one series.
_XID_VALUE_LABELS = ("err_code", "err_msg")


@cache  # a handful of keys, asked for every pod's series (12,288 pods: a second of substitutions)
def sanitize_label(key: str) -> str:
    """kube-state-metrics' ``label_<key>`` name for a Kubernetes label key."""
    return "label_" + NOT_IN_LABEL_NAME.sub("_", key)


# --- discovery -------------------------------------------------------------------------------------------------


def experiment_of(labels: Mapping[str, str], label_keys: tuple[str, ...]) -> str | None:
    for key in label_keys:
        value = labels.get(sanitize_label(key))
        if value:
            return value
    return None


def discover_from_series(series: Iterable[Series], query: Query) -> Discovery:
    """The experiment's pods as kube-state-metrics saw them over the window, their nodes, and name candidates."""
    series = map(canonical_series, series)
    pod_labels: dict[tuple[str, str], Series] = {}
    info: dict[tuple[str, str], list[Series]] = {}
    phases: dict[tuple[str, str], list[Series]] = {}
    gpus: dict[tuple[str, str], dict[str, int]] = {}  # pod -> container -> GPUs requested
    candidates: set[str] = set()
    for one in series:
        key = (one.labels.get("namespace", ""), one.labels.get("pod", ""))
        if not key[1] or (query.namespace is not None and key[0] != query.namespace):
            continue
        if one.name == "kube_pod_labels":
            pod_labels[key] = _merge_samples(pod_labels.get(key), one)
            name = experiment_of(one.labels, query.label_keys)
            if name:
                candidates.add(name)
        elif one.name == "kube_pod_info":
            info.setdefault(key, []).append(one)
        elif one.name == "kube_pod_status_phase":
            phases.setdefault(key, []).append(one)
        elif one.name == GPU_REQUESTS and one.labels.get("resource") == GPU_RESOURCE and one.samples:
            containers, name = gpus.setdefault(key, {}), one.labels.get("container", "")
            containers[name] = max(containers.get(name, 0), int(one.samples[-1][1]))
    matched = [k for k in sorted(set(pod_labels) | set(info)) if _matches(k, pod_labels, info, query)]
    window_start = to_unix(query.window.start)
    pods = tuple(
        _pod(
            k, pod_labels.get(k), info.get(k, []), phases.get(k, []), query, window_start, sum(gpus.get(k, {}).values())
        )
        for k in matched
    )
    nodes = tuple(NodeInfo(name=n, sources=frozenset({SOURCE})) for n in sorted({p.node for p in pods if p.node}))
    return Discovery(pods=pods, nodes=nodes, candidates=tuple(sorted(candidates))[:MAX_CANDIDATES])


def _matches(
    key: tuple[str, str],
    pod_labels: dict[tuple[str, str], Series],
    info: dict[tuple[str, str], list[Series]],
    query: Query,
) -> bool:
    labels = pod_labels.get(key)
    named = experiment_of(labels.labels, query.label_keys) if labels is not None else None
    if named is not None:
        return named == query.experiment
    return any(s.labels.get("created_by_name") == query.experiment for s in info.get(key, []))


def _merge_samples(known: Series | None, other: Series) -> Series:
    if known is None:
        return other
    return Series(known.name, known.labels, tuple(sorted(known.samples + other.samples)))


def _pod(
    key: tuple[str, str],
    labels: Series | None,
    info: list[Series],
    phases: list[Series],
    query: Query,
    window_start: float,
    gpus: int,
) -> PodInfo:
    times = [t for s in [*info, *([labels] if labels else [])] for t, _ in s.samples]
    last = max(times) if times else None
    latest_info = max(info, key=lambda s: s.samples[-1][0] if s.samples else 0.0, default=None)
    rises = sorted((e.at, e.series.labels.get("phase", "")) for s in _newest(phases) for e in edges(s, window_start))
    started = next((t for t, p in rises if p == "Running"), None)
    ended = next((t for t, p in rises if p in ("Failed", "Succeeded")), None)
    gone = last is not None and last < to_unix(query.window.end) - 2 * LOOKBACK_S
    # A pod's life begins Pending (or Running, when it started within a scrape): a first edge to an end means the
    # pod was there before the window, created when the history does not say.
    born = rises[0][0] if rises and rises[0][1] in ("Pending", "Running") else None
    return PodInfo(
        name=key[1],
        namespace=key[0],
        node=latest_info.label("node") if latest_info else None,
        uid=_uid(latest_info, labels),
        labels=_pod_label_map(labels, query.label_keys),
        owner_kind=latest_info.label("created_by_kind") if latest_info else None,
        owner_name=latest_info.label("created_by_name") if latest_info else None,
        gpus_requested=gpus,
        phase=rises[-1][1] if rises else None,
        created=from_unix(born) if born is not None else None,
        started=from_unix(started) if started is not None else None,
        ended=from_unix(ended if ended is not None else last) if (ended is not None or gone) and last else None,
        deleted=from_unix(last) if gone and last is not None else None,
        sources=frozenset({SOURCE}),
    )


def _newest(phases: list[Series]) -> list[Series]:
    """The phase series of the pod's newest generation: a controller that recreates a pod under its name (a
    Volcano RestartJob, a PyTorchJob's ExitCode policy) gives each new pod its own uid; the earlier pods' ends are
    on the timeline, the pod's own life is the newest one's."""
    by_uid: dict[str, list[Series]] = {}
    for one in phases:
        by_uid.setdefault(one.labels.get("uid", ""), []).append(one)
    if len(by_uid) < 2:
        return phases
    return max(by_uid.values(), key=lambda group: min((s.samples[0][0] for s in group if s.samples), default=0.0))


def _uid(info: Series | None, labels: Series | None) -> str | None:
    return (info.label("uid") if info else None) or (labels.label("uid") if labels else None)


def _pod_label_map(labels: Series | None, label_keys: tuple[str, ...]) -> Mapping[str, str]:
    if labels is None:
        return MappingProxyType({})
    known = {sanitize_label(k): k for k in label_keys}
    out = {known.get(k, k.removeprefix("label_")): v for k, v in labels.labels.items() if k.startswith("label_") and v}
    return MappingProxyType(out)


# --- events ----------------------------------------------------------------------------------------------------


def scope_filter(scope: Scope) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """The nodes and (namespace, pod) keys whose series belong to this scope."""
    return frozenset(scope.node_names), frozenset(p.key for p in scope.pods)


def _in_scope(series: Series, nodes: frozenset[str], pods: frozenset[tuple[str, str]]) -> bool:
    if series.name == LAST_SEEN:
        return node_of(series.labels, nodes) in nodes
    signal = signal_of(series)
    if signal is None:
        return False
    if signal.where is Where.POD:
        return (series.labels.get("namespace", ""), series.labels.get("pod", "")) in pods
    if signal.where is Where.NODE:
        return series.labels.get("node") in nodes
    return node_of(series.labels, nodes) in nodes


def placed_on_nodes(series: list[Series], nodes: frozenset[str]) -> list[Series]:
    """dcgm-exporter series whose node labels name no scope node but an exporter pod (an older GPU Operator writes
    its own pod's name into Hostname and, not relabelled, nothing else names the node), placed on the node
    kube-state-metrics saw that pod on."""
    hosts = {
        s.labels["pod"]: s.labels["node"]
        for s in series
        if s.name == "kube_pod_info" and EXPORTER_POD in s.labels.get("pod", "") and s.labels.get("node")
    }
    if not hosts:
        return series
    return [_placed(s, hosts) if node_of(s.labels, nodes) not in nodes else s for s in series]


def _placed(series: Series, hosts: Mapping[str, str]) -> Series:
    labels = placed(series.labels, hosts)
    return series if labels is series.labels else Series(series.name, labels, series.samples)


def _derivable(series: Series, nodes: frozenset[str]) -> bool:
    return series.name in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED") and node_of(series.labels, nodes) in nodes


def normalize(series: Iterable[Series]) -> list[Series]:
    """One Xid series per GPU and pod: dcgm-exporter's err_code/err_msg labels change with the value."""
    merged: dict[tuple[str, tuple[tuple[str, str], ...]], list[Series]] = {}
    for one in series:
        labels = one.labels
        if one.name == "DCGM_FI_DEV_XID_ERRORS" and any(k in labels for k in _XID_VALUE_LABELS):
            labels = MappingProxyType({k: v for k, v in labels.items() if k not in _XID_VALUE_LABELS})
        merged.setdefault((one.name, tuple(sorted(labels.items()))), []).append(Series(one.name, labels, one.samples))
    out = []
    for group in merged.values():
        if len(group) == 1:
            out.append(group[0])
            continue
        by_time: dict[float, float] = {}
        for one in group:
            for at, value in one.samples:
                by_time[at] = max(value, by_time.get(at, value))
        out.append(Series(group[0].name, group[0].labels, tuple(sorted(by_time.items()))))
    return out


def stitched(series: list[Series]) -> list[Series]:
    """Raw GPU counters and the Xid gauge read across the GPU's series: dcgm-exporter attributes a GPU to the
    pod holding it, so when the pod dies the GPU's next sample may begin another series (or resume its pod-less
    one after a gap). Where a series begins or resumes within the lookback after another series' sample of the
    same GPU, and the value differs, that sample is put before it, so the change is an edge of this series (as
    the live query's ``_changed_across`` answers it)."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, one in enumerate(series):
        signal, uuid = signal_of(one), one.label("UUID", "uuid")
        if signal is not None and signal.where is Where.GPU and signal.mode is Mode.CHANGE and uuid and one.samples:
            groups.setdefault((one.name, uuid), []).append(i)
    added: dict[int, list[tuple[float, float]]] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        merged = sorted((at, value, i) for i in members for at, value in series[i].samples)
        own_last: dict[int, float] = {}
        previous: tuple[float, float, int] | None = None
        for at, value, i in merged:
            mine = own_last.get(i)
            if (
                previous is not None
                and previous[2] != i
                and previous[0] < at <= previous[0] + LOOKBACK_S
                and previous[1] != value
                and (mine is None or previous[0] - mine > LOOKBACK_S)
            ):
                added.setdefault(i, []).append((previous[0], previous[1]))
            own_last[i] = at
            previous = (at, value, i)
    out = list(series)
    for i, samples in added.items():
        one = series[i]
        out[i] = Series(one.name, one.labels, tuple(sorted((*one.samples, *samples))))
    return out


def events_from_series(
    series: Iterable[Series], scope: Scope, utilization: bool = True, raw: bool = True
) -> list[TimelineEvent]:
    """Every event the watched series show for the scope's nodes, GPUs and pods, in time order; with
    ``utilization``, each pod's GPU utilization strip too (only the HTML report draws it). ``raw``: recorded
    history, every sample; a live answer (not raw) holds only the edges and the sample before each."""
    series = [canonical_series(s) for s in series]
    nodes, pods = scope_filter(scope)
    series = placed_on_nodes(series, nodes)
    kept = normalize(s for s in series if _in_scope(s, nodes, pods) or _derivable(s, nodes))
    kept = [s for s in [*kept, *derive(kept)] if _in_scope(s, nodes, pods)]
    if raw:  # a live answer carries these edges itself (edges.py _changed_across)
        kept = stitched(kept)
    start, end = to_unix(scope.window.start), to_unix(scope.window.end)
    found = tuple(e for s in kept for e in edges(s, start) if start < e.at <= end)
    ctx = ev.Context(scope=scope, pods={p.key: p for p in scope.pods}, edges=found)
    events: list[TimelineEvent] = []
    for edge in found:
        events.extend(ev.BUILDERS[edge.series.name](edge, ctx))
    events.extend(_gpus_missing(kept, ctx, start, end))
    if utilization:
        events.extend(utilization_events(series, ctx))
    return _episodes(sorted(_dedupe(sorted(events, key=_order)), key=_order))  # a kept pod's event may be later


def _order(event: TimelineEvent) -> tuple[object, ...]:
    subject = event.subject
    return (
        event.at,
        event.kind,
        subject.namespace or "",
        subject.pod or "",
        subject.node or "",
        subject.gpu or "",
        event.summary,
    )


def _gpus_missing(series: list[Series], ctx: ev.Context, start: float, end: float) -> list[TimelineEvent]:
    """A GPU whose series stop while other GPUs of its node go on reporting (fallen off the bus, lost)."""
    last: dict[tuple[str, str], tuple[float, Series]] = {}
    node_last: dict[str, float] = {}
    # Sparse (live) input says when series were last seen; raw history shows it in the samples themselves.
    presence = LAST_SEEN if any(s.name == LAST_SEEN for s in series) else PRESENCE_METRIC
    for one in series:
        node, gpu = node_of(one.labels, ctx.nodes), one.label("gpu", "UUID", "uuid")
        if one.name != presence or not one.samples or node is None:
            continue
        at = one.samples[-1][0]
        node_last[node] = max(at, node_last.get(node, at))
        if gpu is not None and ((node, gpu) not in last or at > last[(node, gpu)][0]):
            last[(node, gpu)] = (at, one)
    out = []
    for (node, _), (at, one) in sorted(last.items()):
        if node_last[node] - at > LOOKBACK_S and start < at <= end:
            out.append(ev.gpu_missing(one, at, ctx))
    return out


def _dedupe(events: list[TimelineEvent]) -> list[TimelineEvent]:
    """One event per happening: an Xid seen by both Xid series or by both exporters (dcgm-exporter's and the
    project's, which names no pod), an ECC error by both counters. Of a GPU's, the one that names a pod is kept."""
    seen: dict[tuple[object, ...], tuple[float, int]] = {}
    out: list[TimelineEvent] = []
    for one in events:
        subject = one.subject
        where: object = (subject.node, subject.gpu) if subject.gpu is not None else subject
        key: tuple[object, ...] = (one.kind, where, one.attrs.get("xid"), one.attrs.get("cause"))
        at = one.at.timestamp()
        earlier = seen.get(key)
        if earlier is not None and at - earlier[0] <= LOOKBACK_S and one.kind in _DEDUPED:
            kept = out[earlier[1]]
            if kept.subject == subject or subject.pod is None:  # the same, or it says less
                continue
            if kept.subject.pod is None:  # it names the pod
                out[earlier[1]] = one
                continue
            # another pod on the same GPU (a MIG instance each): its own event
        seen[key] = (at, len(out))
        out.append(one)
    return out


def _episodes(events: list[TimelineEvent]) -> list[TimelineEvent]:
    """Throttling goes on for minutes: one event per episode (increases less than 10 minutes apart), summed."""
    open_: dict[tuple[object, ...], tuple[int, float]] = {}
    out: list[TimelineEvent] = []
    for one in events:
        counter = one.attrs.get("counter")
        if one.kind not in _THROTTLING or "violation_us" not in one.attrs:
            out.append(one)
            continue
        key = (one.kind, one.subject, counter)
        at = one.at.timestamp()
        if key in open_ and at - open_[key][1] <= 2 * LOOKBACK_S:
            index, _ = open_[key]
            first = out[index]
            total = first.attrs["violation_us"] + one.attrs["violation_us"]
            attrs = {**first.attrs, "violation_us": round(total, 1), "until": one.at}
            out[index] = replace(first, attrs=attrs)
            open_[key] = (index, at)
            continue
        open_[key] = (len(out), at)
        out.append(one)
    return out


_THROTTLING = frozenset({"gpu-thermal", "gpu-power-violation"})
_DEDUPED = frozenset({"gpu-xid", "gpu-ecc-dbe", "gpu-ecc-sbe", "gpu-retired-pages"})
