"""The Maintenance and preflight dashboard: cloud notices by provider and type, time left before each one may
start, ``whathappened_preflight_ok`` by node, and whether the exporters are polling their metadata services."""

from __future__ import annotations

from whathappened.dashboards import promql as q
from whathappened.dashboards.envelope import Dashboard, dashboards_link, datasource_variable, query_variable
from whathappened.dashboards.grafana import (
    Panel,
    Query,
    Row,
    merge,
    organize,
    stat_options,
    state_timeline_options,
    table_options,
    timeseries_options,
    value_mapping,
)

UID = "whathappened-maintenance-preflight"
NOTICE_LABELS = "node, provider, event_type, event_id"
PROVIDER = 'provider=~"$provider"'


def notices_by_type_expr() -> str:
    return f"sum by (provider, event_type) ({q.metric('whathappened_node_maintenance_scheduled', PROVIDER)})"


def active_notices_expr() -> str:
    scheduled = q.metric("whathappened_node_maintenance_scheduled", PROVIDER)
    return f"max by ({NOTICE_LABELS}) (max_over_time({scheduled}[$__range])) > 0"


def not_before_expr() -> str:
    not_before = q.metric("whathappened_node_maintenance_not_before_timestamp_seconds", PROVIDER)
    return f"max by ({NOTICE_LABELS}) (max_over_time({not_before}[$__range])) * 1000"


def time_to_not_before_expr() -> str:
    """Seconds until each active notice may start (negative once it may have started)."""
    not_before = q.metric("whathappened_node_maintenance_not_before_timestamp_seconds", PROVIDER)
    scheduled = q.metric("whathappened_node_maintenance_scheduled", PROVIDER)
    return f"(max by ({NOTICE_LABELS}) ({not_before}) - time())\nand on ({NOTICE_LABELS}) ({scheduled} == 1)"


def preflight_expr() -> str:
    return f"min by (node) ({q.metric('whathappened_preflight_ok')})"


def poll_errors_expr() -> str:
    return f"sum by (provider) (increase({q.metric('whathappened_poll_errors_total', PROVIDER)}[$__rate_interval]))"


def poll_age_expr() -> str:
    last = q.metric("whathappened_last_poll_success_timestamp_seconds", PROVIDER)
    return f"time() - max by (provider, instance) ({last})"


def _variables() -> tuple[dict[str, object], ...]:
    provider = query_variable(
        "provider",
        "Provider",
        f"label_values({q.metric('whathappened_last_poll_success_timestamp_seconds')}, provider)",
        include_all=True,
        multi=True,
    )
    return (datasource_variable(), provider)


def _notice_panels() -> list[Panel | Row]:
    bars, bar_custom = timeseries_options(stacked=True)
    lines, line_custom = timeseries_options()
    return [
        Row("Maintenance notices"),
        Panel(
            "timeseries",
            "Notices by provider and type",
            (Query(notices_by_type_expr(), "{{provider}} {{event_type}}"),),
            description="Hosts with an active maintenance or interruption notice, by cloud and event type.",
            options=bars,
            custom=bar_custom,
        ),
        Panel(
            "timeseries",
            "Time to not-before",
            (Query(time_to_not_before_expr(), "{{node}} {{event_type}}"),),
            description="How long until each noticed maintenance may start; below zero it may already have.",
            unit="s",
            options=lines,
            custom=line_custom,
            thresholds=((None, "red"), (900, "orange"), (3600, "green")),
        ),
        Panel(
            "table",
            "Notices in the range",
            (
                Query(active_notices_expr(), instant=True, table=True),
                Query(not_before_expr(), instant=True, table=True),
            ),
            options=table_options(),
            transformations=(merge(), organize(exclude=("Time", "Value #A"), rename={"Value #B": "not before"})),
            unit="dateTimeAsIso",
            width=24,
        ),
    ]


def _preflight_panels() -> list[Panel | Row]:
    options, custom = state_timeline_options()
    lines, line_custom = timeseries_options()
    mapping = value_mapping(((1, "ok", "green"), (0, "maintenance due", "red")))
    return [
        Row("Preflight and exporter health"),
        Panel(
            "state-timeline",
            "preflight_ok by node",
            (Query(preflight_expr(), "{{node}}"),),
            description="1 when no maintenance is due within the preflight window (default 60 minutes).",
            options=options,
            custom=custom,
            mappings=(mapping,),
            width=24,
        ),
        Panel(
            "stat",
            "Nodes failing preflight",
            (Query(f"count({q.metric('whathappened_preflight_ok')} == 0) or vector(0)"),),
            options=stat_options(),
            thresholds=((None, "green"), (1, "red")),
            width=6,
        ),
        Panel(
            "stat",
            "Nodes with preflight unknown",
            (Query(f"count({q.metric('whathappened_preflight_unknown')} == 1) or vector(0)"),),
            description="No fresh answer from the cloud metadata service (or none, as on premises): neither ok nor due.",
            options=stat_options(),
            thresholds=((None, "green"), (1, "orange")),
            width=6,
        ),
        Panel(
            "stat",
            "Exporters with GPU health",
            (Query(f"sum({q.metric('whathappened_gpu_health_enabled')})"),),
            options=stat_options(),
            width=6,
        ),
        Panel(
            "timeseries",
            "Metadata poll errors",
            (Query(poll_errors_expr(), "{{provider}}"),),
            options=lines,
            custom=line_custom,
            width=6,
        ),
        Panel(
            "timeseries",
            "Seconds since last successful poll",
            (Query(poll_age_expr(), "{{provider}} {{instance}}"),),
            unit="s",
            options=lines,
            custom=line_custom,
            thresholds=((None, "green"), (120, "red")),
            width=6,
        ),
    ]


def dashboard() -> Dashboard:
    return Dashboard(
        uid=UID,
        title="whathappened · Maintenance and preflight",
        description="Cloud maintenance notices, time to not-before, preflight by node, and exporter poll health.",
        tags=("whathappened", "maintenance"),
        variables=_variables(),
        items=(*_notice_panels(), *_preflight_panels()),
        time_from="now-24h",
        links=(dashboards_link(),),
    )
