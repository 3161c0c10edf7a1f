"""kube-state-metrics and whathappened-exporter series of a Recording, plus the file-level writer of all metrics."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path

from synth.ids import Ids
from synth.metrics import (
    _KSM_REASONS,
    _PHASES,
    DcgmWriter,
    Grid,
    Noise,
    _sanitize,
    _ts,
    _write_track,
    exporter_pod,
)
from synth.openmetrics import OpenMetricsWriter, labels_text
from synth.spec import KSM_REASONS_BY_RELEASE, Pod, Recording


def _pod_span(rec: Recording, grid: Grid, pod: Pod) -> tuple[int, int]:
    end = len(grid.times)
    return grid.index(pod.created, end), grid.index(pod.gone_at, end)


def _phase_at(pod: Pod, t: float) -> str:
    if pod.kubelet_lost_at is not None:
        return "Running" if pod.started and t >= pod.started.timestamp() else "Pending"
    if t >= _ts(pod.finished) and pod.final_phase:
        return pod.final_phase
    first = pod.runs[0].started if pod.runs else pod.started
    return "Running" if t >= _ts(first) else "Pending"


def _pod_labels(pod: Pod) -> list[tuple[str, str]]:
    return [("namespace", pod.namespace), ("pod", pod.name), ("uid", pod.uid)]


def write_pods(out: OpenMetricsWriter, rec: Recording, grid: Grid) -> None:
    track = partial(_write_track, honor_labels=rec.ksm_honor_labels)
    pods = rec.pods
    out.family("kube_pod_info", "gauge", "Information about pod.")
    for pod in pods:
        b, e = _pod_span(rec, grid, pod)
        node = pod.node.name if pod.node and pod.scheduled else ""
        owner = pod.owner
        labels = [
            *_pod_labels(pod),
            ("host_ip", pod.node.ip if node and pod.node else ""),
            ("pod_ip", pod.ip if pod.started else ""),
            ("node", node),
            ("created_by_kind", owner.kind if owner else "<none>"),
            ("created_by_name", owner.name if owner else "<none>"),
            ("priority_class", pod.priority_class),
            ("host_network", "false"),
        ]
        track(out, grid, "kube_pod_info", labels, b, e, lambda t: "1")
    if rec.dcgm.hostname_is_exporter:
        _exporter_pods(out, rec, grid, track)
    out.family("kube_pod_labels", "gauge", "Kubernetes labels converted to Prometheus labels.")
    for pod in pods:
        b, e = _pod_span(rec, grid, pod)
        labels = _pod_labels(pod) + sorted((_sanitize(k), v) for k, v in pod.labels.items())
        track(out, grid, "kube_pod_labels", labels, b, e, lambda t: "1")
    if rec.ksm_resource_requests:
        _gpu_requests(out, rec, grid, track)
    out.family("kube_pod_status_phase", "gauge", "The pods current phase.")
    for pod in pods:
        b, e = _pod_span(rec, grid, pod)
        for phase in _PHASES:
            track(
                out,
                grid,
                "kube_pod_status_phase",
                [*_pod_labels(pod), ("phase", phase)],
                b,
                e,
                partial(_phase_value, pod, phase),
            )
    _reasons(out, rec, grid)
    _containers(out, rec, grid)


def _gpu_requests(out: OpenMetricsWriter, rec: Recording, grid: Grid, track: Callable[..., None]) -> None:
    """Each pod's GPU request, as kube-state-metrics writes a container's extended resource."""
    name = "kube_pod_container_resource_requests"
    out.family(name, "gauge", "The number of requested request resource for a container.")
    for pod in rec.pods:
        if pod.gpu_request <= 0:
            continue
        b, e = _pod_span(rec, grid, pod)
        node = pod.node.name if pod.node and pod.scheduled else ""
        labels = [*_pod_labels(pod), ("container", pod.container), ("node", node)]
        labels += [("resource", "nvidia_com_gpu"), ("unit", "integer")]
        track(out, grid, name, labels, b, e, partial(_constant, str(pod.gpu_request)))


def _constant(value: str, _at: int) -> str:
    return value


def _exporter_pods(out: OpenMetricsWriter, rec: Recording, grid: Grid, track: Callable[..., None]) -> None:
    """The GPU Operator's dcgm-exporter DaemonSet pods, one per node for the whole window: where an exporter
    that writes its own pod's name into Hostname is found on its node."""
    for node in rec.nodes:
        labels = [
            ("namespace", "gpu-operator"),
            ("pod", exporter_pod(node)),
            ("uid", Ids(0).uuid("dcgm-exporter", node.name)),
            ("host_ip", node.ip),
            ("pod_ip", node.ip),
            ("node", node.name),
            ("created_by_kind", "DaemonSet"),
            ("created_by_name", "nvidia-dcgm-exporter"),
            ("priority_class", "system-node-critical"),
            ("host_network", "false"),
        ]
        track(out, grid, "kube_pod_info", labels, 0, len(grid.times), lambda t: "1")


def _reasons(out: OpenMetricsWriter, rec: Recording, grid: Grid) -> None:
    track = partial(_write_track, honor_labels=rec.ksm_honor_labels)
    out.family("kube_pod_status_reason", "gauge", "The pod status reasons")
    listed = KSM_REASONS_BY_RELEASE.get(rec.ksm_release)
    if listed is not None:
        _listed_reasons(out, rec, grid, listed)
        return
    for pod in rec.pods:
        if pod.status_reason in _KSM_REASONS and pod.finished is not None:
            b, e = _pod_span(rec, grid, pod)
            track(
                out,
                grid,
                "kube_pod_status_reason",
                [*_pod_labels(pod), ("reason", pod.status_reason)],
                max(b, grid.index(pod.finished, e)),
                e,
                lambda t: "1",
            )
    out.family("kube_pod_status_disruption_reason", "gauge", "The pod disruption reason")
    for pod in rec.pods:
        if pod.disruption is not None:
            b, e = _pod_span(rec, grid, pod)
            track(
                out,
                grid,
                "kube_pod_status_disruption_reason",
                [*_pod_labels(pod), ("reason", pod.disruption[0])],
                max(b, grid.index(pod.disruption[2], e)),
                e,
                lambda t: "1",
            )


def _listed_reasons(out: OpenMetricsWriter, rec: Recording, grid: Grid, listed: tuple[str, ...]) -> None:
    """Up to v2.19 every pod has one series per listed reason for its whole life, 0 until the reason holds (its
    status reason, or from v2.19 a DisruptionTarget condition's reason), then 1; no disruption-reason family."""
    track = partial(_write_track, honor_labels=rec.ksm_honor_labels)
    for pod in rec.pods:
        b, e = _pod_span(rec, grid, pod)
        holds: dict[str, float] = {}
        if pod.status_reason and pod.finished is not None:
            holds[pod.status_reason] = _ts(pod.finished)
        if pod.disruption is not None and "TerminationByKubelet" in listed:
            holds.setdefault(pod.disruption[0], _ts(pod.disruption[2]))
        for reason in listed:
            since = holds.get(reason, float("inf"))
            labels = [*_pod_labels(pod), ("reason", reason)]
            track(out, grid, "kube_pod_status_reason", labels, b, e, partial(_from, since))


def _containers(out: OpenMetricsWriter, rec: Recording, grid: Grid) -> None:
    track = partial(_write_track, honor_labels=rec.ksm_honor_labels)
    out.family(
        "kube_pod_container_status_terminated_reason",
        "gauge",
        "Describes the reason the container is currently in terminated state.",
    )
    for pod in rec.pods:
        if pod.finished is not None and pod.kubelet_lost_at is None:
            b, e = _pod_span(rec, grid, pod)
            labels = [*_pod_labels(pod), ("container", pod.container), ("reason", pod.term_reason or "Error")]
            track(
                out,
                grid,
                "kube_pod_container_status_terminated_reason",
                labels,
                max(b, grid.index(pod.finished, e)),
                e,
                lambda t: "1",
            )
    out.family(
        "kube_pod_container_status_last_terminated_reason",
        "gauge",
        "Describes the last reason the container was in terminated state.",
    )
    for pod in rec.pods:
        if pod.runs:
            b, e = _pod_span(rec, grid, pod)
            reason = pod.runs[-1].reason
            labels = [*_pod_labels(pod), ("container", pod.container), ("reason", reason)]
            track(
                out,
                grid,
                "kube_pod_container_status_last_terminated_reason",
                labels,
                max(b, grid.index(pod.runs[0].finished, e)),
                e,
                lambda t: "1",
            )
    out.family(
        "kube_pod_container_status_waiting_reason",
        "gauge",
        "Describes the reason the container is currently in waiting state.",
    )
    for pod in rec.pods:
        if pod.waiting is not None and pod.scheduled is not None:
            b, e = _pod_span(rec, grid, pod)
            since = pod.runs[-1].finished if pod.runs else pod.scheduled + timedelta(seconds=20)
            labels = [*_pod_labels(pod), ("container", pod.container), ("reason", pod.waiting[0])]
            track(
                out,
                grid,
                "kube_pod_container_status_waiting_reason",
                labels,
                max(b, grid.index(since, e)),
                e,
                lambda t: "1",
            )
    out.family("kube_pod_container_status_restarts", "counter", "The number of container restarts per container.")
    for pod in rec.pods:
        if pod.started is not None and pod.kubelet_lost_at is None:
            b, e = _pod_span(rec, grid, pod)
            ends = [r.finished.timestamp() for r in pod.runs]
            track(
                out,
                grid,
                "kube_pod_container_status_restarts_total",
                [*_pod_labels(pod), ("container", pod.container)],
                max(b, grid.index(pod.runs[0].started if pod.runs else pod.started, e)),
                e,
                partial(_count_before, ends),
            )


def write_nodes(out: OpenMetricsWriter, rec: Recording, grid: Grid) -> None:
    track = partial(_write_track, honor_labels=rec.ksm_honor_labels)
    end = len(grid.times)
    out.family("kube_node_spec_unschedulable", "gauge", "Whether a node can schedule new pods.")
    for node in rec.nodes:
        cordon = _ts(rec.cordoned.get(node.name))
        track(
            out,
            grid,
            "kube_node_spec_unschedulable",
            [("node", node.name)],
            0,
            grid.index(rec.node_gone.get(node.name), end),
            partial(_from, cordon),
        )
    out.family("kube_node_spec_taint", "gauge", "The taint of a cluster node.")
    for node in rec.nodes:
        stop = grid.index(rec.node_gone.get(node.name), end)
        for key, value, effect, t in rec.taints.get(node.name, []):
            labels = [("node", node.name), ("key", key), ("value", value), ("effect", effect)]
            track(out, grid, "kube_node_spec_taint", labels, grid.index(t, end), stop, lambda t: "1")
    out.family("kube_node_status_condition", "gauge", "The condition of a cluster node.")
    for node in rec.nodes:
        stop = grid.index(rec.node_gone.get(node.name), end)
        changes = rec.node_ready.get(node.name, [])
        for status in ("true", "false", "unknown"):
            track(
                out,
                grid,
                "kube_node_status_condition",
                [("node", node.name), ("condition", "Ready"), ("status", status)],
                0,
                stop,
                partial(_ready_value, changes, status),
            )
        for cond, since, active in rec.node_conditions.get(node.name, []):
            for status in ("true", "false", "unknown"):
                want = "true" if active else "false"
                track(
                    out,
                    grid,
                    "kube_node_status_condition",
                    [("node", node.name), ("condition", cond), ("status", status)],
                    0,
                    stop,
                    partial(_condition_value, since.timestamp(), want, status),
                )


def _phase_value(pod: Pod, phase: str, t: float) -> str:
    return "1" if _phase_at(pod, t) == phase else "0"


def _count_before(ends: list[float], t: float) -> str:
    return str(sum(1 for x in ends if x <= t))


def _from(since: float, t: float) -> str:
    return "1" if t >= since else "0"


def _ready_value(changes: list[tuple[datetime, str]], status: str, t: float) -> str:
    return "1" if _ready_at(changes, t) == status else "0"


def _condition_value(since: float, want: str, status: str, t: float) -> str:
    return "1" if (want if t >= since else "false") == status else "0"


def _ready_at(changes: list[tuple[datetime, str]], t: float) -> str:
    state = "true"
    for when, status in changes:
        if when.timestamp() <= t:
            state = status
    return state


def write_exporter(out: OpenMetricsWriter, rec: Recording, grid: Grid) -> None:
    end = len(grid.times)
    job = ("job", "whathappened-exporter")
    for metric in (
        "whathappened_node_maintenance_scheduled",
        "whathappened_node_maintenance_not_before_timestamp_seconds",
    ):
        out.family(metric, "gauge")
        for m in rec.maintenance:
            node = rec.node(m.node)
            labels = [
                ("node", m.node),
                ("provider", m.provider),
                ("event_id", m.event_id),
                ("event_type", m.event_type),
                ("instance", f"{node.ip}:9977"),
                job,
            ]
            value = "1" if metric.endswith("scheduled") else str(int(m.not_before.timestamp()))
            b, e = grid.index(m.seen, end), grid.index(m.until, end)
            if e > b:
                out.series(f"{metric}{{{labels_text(labels)}}} ", [value] * (e - b), grid.stamps[b:e])
    out.family("whathappened_preflight_ok", "gauge")
    for node in rec.nodes:
        stop = min(grid.index(rec.node_lost.get(node.name), end), grid.index(rec.node_gone.get(node.name), end))
        notices = [
            (m.seen.timestamp(), m.until.timestamp(), m.not_before.timestamp())
            for m in rec.maintenance
            if m.node == node.name
        ]
        values = ["0" if any(s <= t < u and nb - t <= 3600 for s, u, nb in notices) else "1" for t in grid.times[:stop]]
        out.series(
            f'whathappened_preflight_ok{{node="{node.name}",instance="{node.ip}:9977",job="whathappened-exporter"}} ',
            values,
            grid.stamps[:stop],
        )


def write_metrics(rec: Recording, path: Path, seed: int, level: int = 6) -> int:
    grid = Grid(rec.meta.start, rec.meta.end, rec.scrape_seconds)
    ksm = Grid(rec.meta.start, rec.meta.end, rec.ksm_scrape_seconds or rec.scrape_seconds)
    dcgm = DcgmWriter(rec, grid, Noise(seed))
    with OpenMetricsWriter(path, level) as out:
        for field in rec.dcgm.fields:
            dcgm.write(out, field)
        dcgm.counters(out)
        write_pods(out, rec, ksm)
        write_nodes(out, rec, ksm)
        write_exporter(out, rec, ksm)
        return out.samples
