"""The Fleet GPU health dashboard: which GPUs and nodes are failing, cordoned, under maintenance, or idle.

Tables query one instant at the end of the range over the whole range (``[$__range]``), so "in the range" means
the dashboard's time picker; the utilization graphs are ordinary range queries.
"""

from __future__ import annotations

from whathappened.dashboards import promql as q
from whathappened.dashboards.envelope import Dashboard, dashboards_link, datasource_variable
from whathappened.dashboards.grafana import (
    Panel,
    Query,
    Row,
    bargauge_options,
    merge,
    organize,
    stat_options,
    table_options,
    timeseries_options,
)

UID = "whathappened-fleet-gpu-health"
IDLE_PERCENT = 5  # a GPU held by a pod and busier than this on average over the range is not idle
THERMAL_REASONS = "sw_thermal_slowdown|hw_thermal_slowdown"
# Grafana names a table's value column "Value", or "Value #<refId>" when the panel has several queries.
VALUE_COLUMNS = ("Value", "Value #A", "Value #B", "Value #C", "Value #D")


def _gpu_event(expr: str, event: str, by: str = "node, gpu") -> str:
    return q.tagged(f"max by ({by}) ({expr})", "event", event)


def _over_range(function: str, name: str, matchers: str = "", test: str = "> 0") -> str:
    return f"{function}({q.metric(name, matchers)}[$__range]) {test}".rstrip()


def xid_gpus_expr() -> str:
    return q.with_node(_over_range("max_over_time", "DCGM_FI_DEV_XID_ERRORS"))


def ecc_gpus_expr() -> str:
    return q.with_node(_over_range("increase", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"))


def gpu_event_exprs() -> dict[str, str]:
    """GPUs with an event of each family in the range, each as (node, gpu, event) series."""
    xid_ours = _over_range("increase", "whathappened_gpu_xid_errors_total")
    ecc_ours = _over_range("increase", "whathappened_gpu_ecc_errors_total", 'type="uncorrected"')
    remap = q.with_node(
        _over_range("max_over_time", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS")
        + " or "
        + _over_range("max_over_time", "DCGM_FI_DEV_ROW_REMAP_FAILURE")
    )
    remap_ours = _over_range("max_over_time", "whathappened_gpu_remapped_rows", 'type=~"uncorrectable|pending|failure"')
    thermal = q.with_node(_over_range("increase", "DCGM_FI_DEV_THERMAL_VIOLATION"))
    thermal_ours = _over_range("max_over_time", "whathappened_gpu_throttle_active", f'reason=~"{THERMAL_REASONS}"')
    return {
        # the Xid code as a label: dcgm-exporter keeps the last code as the value, our exporter as a label
        "xid": _gpu_event(
            f'count_values by (node, gpu) ("xid", {xid_gpus_expr()}) or {xid_ours}', "xid", "node, gpu, xid"
        ),
        "ecc": _gpu_event(f"{ecc_gpus_expr()} or {ecc_ours}", "ecc-uncorrectable"),
        "row-remap": _gpu_event(f"{remap} or {remap_ours}", "row-remap"),
        "thermal": _gpu_event(f"{thermal} or {thermal_ours}", "thermal"),
    }


def maintenance_nodes_expr() -> str:
    scheduled = q.metric("whathappened_node_maintenance_scheduled")
    return f"max by (node, provider, event_type, event_id) (max_over_time({scheduled}[$__range])) > 0"


def cordoned_expr() -> str:
    return f"max by (node) (max_over_time({q.metric('kube_node_spec_unschedulable')}[$__range])) > 0"


def not_ready_expr() -> str:
    ready = _over_range("max_over_time", "kube_node_status_condition", 'condition="Ready", status=~"false|unknown"', "")
    return f"max by (node) ({ready}) > 0"


def idle_expr() -> str:
    util = q.metric("DCGM_FI_DEV_GPU_UTIL", 'pod!=""')
    return q.with_node(f"avg_over_time({util}[$__range]) < {IDLE_PERCENT}")


def failures_by_node_expr() -> str:
    """Nodes ranked by failure signals in the range: GPUs with Xid or ECC, NotReady, maintenance notices."""
    parts = {
        "xid-gpus": f"count by (node) ({xid_gpus_expr()})",
        "ecc-gpus": f"count by (node) ({ecc_gpus_expr()})",
        "not-ready": f"count by (node) ({not_ready_expr()})",
        "maintenance": f"count by (node) ({maintenance_nodes_expr()})",
    }
    tagged = [q.tagged(expr, "failure", name) for name, expr in parts.items()]
    return "sort_desc(sum by (node) (\n" + "\nor ".join(tagged) + "\n))"


def _stats() -> list[Panel | Row]:
    gpus = q.metric("DCGM_FI_DEV_GPU_UTIL")
    return [
        Panel("stat", "GPUs reporting", (Query(f"count({gpus})"),), width=6, height=4, options=stat_options()),
        Panel(
            "stat",
            "Average GPU utilization",
            (Query(f"avg({gpus})"),),
            unit="percent",
            width=6,
            height=4,
            options=stat_options(),
        ),
        Panel(
            "stat",
            "Cordoned nodes",
            (Query(f"sum({q.metric('kube_node_spec_unschedulable')})"),),
            width=6,
            height=4,
            options=stat_options(),
            thresholds=((None, "green"), (1, "orange")),
        ),
        Panel(
            "stat",
            "Nodes under a maintenance notice",
            (Query(f"count(max by (node) ({q.metric('whathappened_node_maintenance_scheduled')}) > 0) or vector(0)"),),
            width=6,
            height=4,
            options=stat_options(),
            thresholds=((None, "green"), (1, "orange")),
        ),
    ]


def _utilization() -> Panel:
    options, custom = timeseries_options()
    util = q.metric("DCGM_FI_DEV_GPU_UTIL")
    held = q.metric("DCGM_FI_DEV_GPU_UTIL", 'pod!=""')
    return Panel(
        "timeseries",
        "Fleet GPU utilization",
        (
            Query(f"avg({util})", "all GPUs"),
            Query(f"avg({held})", "GPUs held by pods"),
            Query(f"quantile(0.1, {held})", "p10 of GPUs held by pods"),
        ),
        unit="percent",
        width=24,
        options=options,
        custom=custom,
    )


def _tables() -> list[Panel | Row]:
    events = [Query(expr, instant=True, table=True) for expr in gpu_event_exprs().values()]
    return [
        Row("Failures in the range"),
        Panel(
            "table",
            "GPUs with Xid, ECC, row-remap or thermal events",
            tuple(events),
            options=table_options(),
            transformations=(merge(), organize(exclude=("Time", *VALUE_COLUMNS))),
            width=12,
            height=10,
        ),
        Panel(
            "bargauge",
            "Nodes ranked by failures",
            (Query(failures_by_node_expr(), "{{node}}", instant=True),),
            description="GPUs with Xid, GPUs with new uncorrectable ECC errors, NotReady, and maintenance notices.",
            options=bargauge_options(),
            thresholds=((None, "orange"), (3, "red")),
            width=12,
            height=10,
        ),
        Panel(
            "table",
            "Nodes with maintenance notices",
            (Query(maintenance_nodes_expr(), instant=True, table=True),),
            options=table_options(),
            transformations=(organize(exclude=("Time", "Value")),),
            width=8,
        ),
        Panel(
            "table",
            "Cordoned or NotReady nodes",
            (
                Query(q.tagged(cordoned_expr(), "state", "cordoned"), instant=True, table=True),
                Query(q.tagged(not_ready_expr(), "state", "not-ready"), instant=True, table=True),
            ),
            options=table_options(),
            transformations=(merge(), organize(exclude=("Time", *VALUE_COLUMNS))),
            width=8,
        ),
        Panel(
            "table",
            "Idle GPUs held by pods",
            (Query(idle_expr(), instant=True, table=True),),
            description=f"GPUs attributed to a pod whose average utilization over the range is under {IDLE_PERCENT}%.",
            options=table_options(),
            transformations=(organize(rename={"Value": "avg utilization %"}),),
            width=8,
        ),
    ]


def _failures() -> list[Panel | Row]:
    """What whathappened watch explained: pod deaths by cause over time, and how many a resubmission can fix."""
    options, custom = timeseries_options()
    failures = q.metric("whathappened_pod_failures_total")
    return [
        Panel(
            "timeseries",
            "Failures by cause (whathappened watch)",
            (Query(f"sum by (cause) (increase({failures}[$__rate_interval]))", "{{cause}}"),),
            width=12,
            options=options,
            custom=custom,
        ),
        Panel(
            "timeseries",
            "Retryable vs not (whathappened watch)",
            (Query(f"sum by (retryable) (increase({failures}[$__rate_interval]))", "retryable={{retryable}}"),),
            width=12,
            options=options,
            custom=custom,
        ),
    ]


def dashboard() -> Dashboard:
    return Dashboard(
        uid=UID,
        title="whathappened · Fleet GPU health",
        description=__doc__.strip().splitlines()[0] if __doc__ else "",
        tags=("whathappened", "gpu", "fleet"),
        variables=(datasource_variable(),),
        items=(*_stats(), _utilization(), *_failures(), *_tables()),
        time_from="now-24h",
        links=(dashboards_link(),),
    )
