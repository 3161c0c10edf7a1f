"""The Experiment dashboard: one training run's pods, their GPUs, their nodes, and what happened to them.

``$experiment`` is resolved through ``kube_pod_labels``, so pods deleted long ago still count as long as
kube-state-metrics history covers the range. Which pod label names the experiment differs between clusters:
``$label_key`` lists the contract's keys (as kube-state-metrics exports them, ``label_<sanitized key>``) and by
default tries them all, so a user picks a key only when two keys disagree.
"""

from __future__ import annotations

from whathappened.dashboards import promql as q
from whathappened.dashboards.envelope import (
    Annotation,
    Dashboard,
    custom_variable,
    dashboards_link,
    datasource_variable,
    query_variable,
)
from whathappened.dashboards.grafana import (
    Panel,
    Query,
    Row,
    merge,
    organize,
    state_timeline_options,
    table_options,
    timeseries_options,
    value_mapping,
)

UID = "whathappened-experiment"

PHASES = (("Pending", "yellow"), ("Running", "green"), ("Succeeded", "blue"), ("Failed", "red"), ("Unknown", "purple"))


def _variables() -> tuple[dict[str, object], ...]:
    namespace = query_variable(
        "namespace",
        "Namespace",
        f"label_values({q.metric('kube_pod_labels')}, namespace)",
        include_all=True,
        multi=True,
    )
    label_key = custom_variable(
        "label_key",
        "Experiment label",
        q.EXPERIMENT_LABELS,
        description="Pod label keys that name the experiment; all of them are tried unless you pick some.",
    )
    experiment = query_variable(
        "experiment",
        "Experiment",
        f"query_result({q.experiment_names()})",
        regex='/experiment="([^"]+)"/',
        description="Experiment names found under the selected label keys in the time range.",
    )
    return (datasource_variable(), namespace, label_key, experiment)


def _gpu_panel(title: str, metric: str, unit: str, description: str) -> Panel:
    options, custom = timeseries_options()
    return Panel(
        "timeseries",
        title,
        (Query(q.on_experiment_pods(q.metric(metric)), "{{pod}} · GPU {{gpu}}"),),
        description=description,
        unit=unit,
        options=options,
        custom=custom,
    )


# Panels widen counter windows with Grafana's $__rate_interval; annotation queries step every 60 s over 5 m.
PANEL_WINDOW = "$__rate_interval"
ANNOTATION_WINDOW = "5m"


def xid_expr(window: str = PANEL_WINDOW) -> str:
    """Xid codes on the experiment's nodes, one series per (node, gpu, xid), from dcgm-exporter and our exporter."""
    # DCGM_FI_DEV_XID_ERRORS holds the last Xid code as its value: count_values turns it into the xid label.
    dcgm = f'count_values by (node, gpu) ("xid", {q.with_node(q.metric("DCGM_FI_DEV_XID_ERRORS") + " > 0")})'
    ours = f"sum by (node, gpu, xid) (increase({q.metric('whathappened_gpu_xid_errors_total')}[{window}])) > 0"
    return q.on_experiment_nodes(f"(\n{dcgm}\nor\n{ours}\n)")


def ecc_expr(window: str = PANEL_WINDOW) -> str:
    dbe = q.with_node(f"increase({q.metric('DCGM_FI_DEV_ECC_DBE_VOL_TOTAL')}[{window}]) > 0")
    uncorrected = q.metric("whathappened_gpu_ecc_errors_total", 'type="uncorrected"')
    ours = f"increase({uncorrected}[{window}]) > 0"
    return q.on_experiment_nodes(f"sum by (node, gpu) (\n{dbe}\nor\n{ours}\n)")


NVLINK_COUNTERS = (
    ("crc_flit", "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL"),
    ("crc_data", "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL"),
    ("replay", "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"),
    ("recovery", "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"),
)


def nvlink_expr(window: str = PANEL_WINDOW) -> str:
    parts = [
        q.tagged(q.with_node(f"increase({q.metric(name)}[{window}]) > 0"), "counter", counter)
        for counter, name in NVLINK_COUNTERS
    ]
    return q.on_experiment_nodes("sum by (node, gpu, counter) (\n" + "\nor ".join(parts) + "\n)")


def maintenance_expr(over_range: bool) -> str:
    scheduled = q.metric("whathappened_node_maintenance_scheduled")
    value = f"max_over_time({scheduled}[$__range])" if over_range else scheduled
    notices = f"max by (node, provider, event_type, event_id) ({value}) > 0"
    return q.on_experiment_nodes(notices, over_range)


def _not_before_expr() -> str:
    not_before = q.metric("whathappened_node_maintenance_not_before_timestamp_seconds")
    expr = f"max by (node, provider, event_type, event_id) (max_over_time({not_before}[$__range])) * 1000"
    return q.on_experiment_nodes(expr, over_range=True)


def _phase_expr() -> str:
    codes = [
        q.metric("kube_pod_status_phase", f'phase="{phase}"') + f" * {code}"
        for code, (phase, _) in enumerate(PHASES, 1)
    ]
    return q.on_experiment_pods("max by (namespace, pod) (\n" + "\nor ".join(codes) + "\n)")


TERMINATION_SOURCES = (
    ("container terminated", "kube_pod_container_status_terminated_reason"),
    ("container last terminated", "kube_pod_container_status_last_terminated_reason"),
    ("pod status", "kube_pod_status_reason"),
    ("disruption", "kube_pod_status_disruption_reason"),
)


def termination_expr() -> str:
    """Why the experiment's pods and containers ended, over the whole range (deleted pods included)."""
    parts = [
        q.tagged(f"max_over_time({q.metric(name)}[$__range]) > 0", "source", source)
        for source, name in TERMINATION_SOURCES
    ]
    reasons = "max by (namespace, pod, container, source, reason) (\n" + "\nor ".join(parts) + "\n)"
    return q.on_experiment_pods(reasons, over_range=True)


def _annotations() -> tuple[Annotation, ...]:
    w = ANNOTATION_WINDOW
    return (
        Annotation("Xid errors", xid_expr(w), "Xid {{xid}}", "{{node}} GPU {{gpu}}", ("node", "gpu", "xid"), "red"),
        Annotation("ECC uncorrectable", ecc_expr(w), "ECC DBE", "{{node}} GPU {{gpu}}", ("node", "gpu"), "orange"),
        Annotation("NVLink errors", nvlink_expr(w), "NVLink {{counter}}", "{{node}} GPU {{gpu}}", ("node",), "purple"),
        Annotation(
            "Maintenance notices",
            maintenance_expr(over_range=False),
            "{{provider}} {{event_type}}",
            "{{node}} ({{event_id}})",
            ("node", "provider", "event_type"),
            "yellow",
        ),
    )


def _pod_panels() -> list[Panel | Row]:
    phase_options, phase_custom = state_timeline_options()
    mapping = value_mapping((code, phase, color) for code, (phase, color) in enumerate(PHASES, 1))
    return [
        Row("Pods"),
        Panel(
            "state-timeline",
            "Pod phases",
            (Query(_phase_expr(), "{{pod}}"),),
            description="Each pod's phase over time, from kube_pod_status_phase.",
            options=phase_options,
            custom=phase_custom,
            mappings=(mapping,),
            width=24,
        ),
        Panel(
            "table",
            "Termination reasons",
            (Query(termination_expr(), instant=True, table=True),),
            description="Container and pod termination reasons reported by kube-state-metrics in the range.",
            options=table_options(),
            transformations=(organize(exclude=("Time", "Value")),),
            width=24,
        ),
    ]


def _node_panels() -> list[Panel | Row]:
    return [
        Row("Nodes"),
        Panel(
            "table",
            "Maintenance notices on the experiment's nodes",
            (
                Query(maintenance_expr(over_range=True), instant=True, table=True),
                Query(_not_before_expr(), instant=True, table=True),
            ),
            description="Cloud maintenance and interruption notices from the whathappened exporter.",
            options=table_options(),
            transformations=(
                merge(),
                organize(exclude=("Time", "Value #A"), rename={"Value #B": "not before"}),
            ),
            width=24,
            unit="dateTimeAsIso",  # the not-before column; the others are labels
        ),
    ]


def _gpu_panels() -> list[Panel | Row]:
    xid_options, xid_custom = timeseries_options(points=True)
    return [
        Row("GPUs"),
        _gpu_panel("GPU utilization", "DCGM_FI_DEV_GPU_UTIL", "percent", "dcgm-exporter, joined on its pod label."),
        _gpu_panel("GPU memory used", "DCGM_FI_DEV_FB_USED", "decmbytes", "Framebuffer memory in use."),
        _gpu_panel("GPU temperature", "DCGM_FI_DEV_GPU_TEMP", "celsius", "GPU die temperature."),
        _gpu_panel("GPU power", "DCGM_FI_DEV_POWER_USAGE", "watt", "Power draw."),
        Panel(
            "timeseries",
            "Xid errors",
            (Query(xid_expr(), "Xid {{xid}} · {{node}} GPU {{gpu}}"),),
            description="Xid codes on the experiment's nodes (79: fallen off the bus; 48/63/64/94/95: memory).",
            options=xid_options,
            custom=xid_custom,
        ),
        Panel(
            "timeseries",
            "ECC and NVLink errors",
            (
                Query(ecc_expr(), "ECC DBE · {{node}} GPU {{gpu}}"),
                Query(nvlink_expr(), "NVLink {{counter}} · {{node}} GPU {{gpu}}"),
            ),
            description="New uncorrectable ECC errors and NVLink error counts on the experiment's nodes.",
            options=xid_options,
            custom=xid_custom,
        ),
    ]


# kube-state-metrics v2 exports no pod labels unless allowed; this is the flag that lets the contract's keys through.
ALLOWLIST_FLAG = "--metric-labels-allowlist=pods=[" + ",".join(key for key, _ in q.EXPERIMENT_LABELS) + "]"
DESCRIPTION = (
    "One training run's pods, their GPUs, their nodes, and what happened to them. $experiment is resolved through "
    f"kube_pod_labels: run kube-state-metrics with {ALLOWLIST_FLAG}. GPU panels join dcgm-exporter's pod labels "
    "(its Kubernetes mode, on by default in the GPU Operator)."
)


def dashboard() -> Dashboard:
    return Dashboard(
        uid=UID,
        title="whathappened · Experiment",
        description=DESCRIPTION,
        tags=("whathappened", "gpu", "kubernetes"),
        variables=_variables(),
        items=(*_gpu_panels(), *_pod_panels(), *_node_panels()),
        annotations=_annotations(),
        links=(dashboards_link(),),
    )
