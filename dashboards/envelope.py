"""The parts of a dashboard around its panels: template variables, annotation queries, and the dashboard itself."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from whathappened.dashboards.grafana import SCHEMA_VERSION, Json, Panel, Row, layout
from whathappened.dashboards.promql import PROM_DATASOURCE

REFRESH_ON_TIME_RANGE = 2  # Grafana VariableRefresh.onTimeRangeChanged


def datasource_variable() -> Json:
    """``$datasource``: any Prometheus-compatible data source; Grafana starts with the default one."""
    return {
        "hide": 0,
        "includeAll": False,
        "label": "Prometheus",
        "multi": False,
        "name": "datasource",
        "options": [],
        "query": "prometheus",
        "refresh": 1,
        "regex": "",
        "type": "datasource",
    }


def query_variable(
    name: str,
    label: str,
    query: str,
    *,
    regex: str = "",
    include_all: bool = False,
    multi: bool = False,
    description: str = "",
) -> Json:
    variable: Json = {
        "datasource": dict(PROM_DATASOURCE),
        "description": description,
        "hide": 0,
        "includeAll": include_all,
        "label": label,
        "multi": multi,
        "name": name,
        "options": [],
        "query": {"query": query, "refId": "PrometheusVariableQueryEditor-VariableQuery"},
        "refresh": REFRESH_ON_TIME_RANGE,
        "regex": regex,
        "sort": 1,
        "type": "query",
    }
    if include_all:
        variable["allValue"] = ".*"
    return variable


def custom_variable(name: str, label: str, choices: Sequence[tuple[str, str]], *, description: str = "") -> Json:
    """A multi-select list of (text, value) choices, all selected by default."""
    options = [{"selected": False, "text": text, "value": value} for text, value in choices]
    return {
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        "description": description,
        "hide": 0,
        "includeAll": True,
        "label": label,
        "multi": True,
        "name": name,
        "options": [{"selected": True, "text": "All", "value": "$__all"}, *options],
        # Grafana's custom-variable syntax: "text : value" pairs separated by commas.
        "query": ",".join(f"{text} : {value}" for text, value in choices),
        "type": "custom",
    }


@dataclass(frozen=True, slots=True)
class Annotation:
    """A Prometheus annotation query: every step where ``expr`` returns a series becomes an event."""

    name: str
    expr: str
    title: str
    text: str
    tags: tuple[str, ...]
    color: str
    step: str = "60s"


def builtin_annotation() -> Json:
    return {
        "builtIn": 1,
        "datasource": {"type": "grafana", "uid": "-- Grafana --"},
        "enable": True,
        "hide": True,
        "iconColor": "rgba(0, 211, 255, 1)",
        "name": "Annotations & Alerts",
        "type": "dashboard",
    }


def _annotation_json(annotation: Annotation) -> Json:
    # The Prometheus data source's annotation fields sit beside the generic ones (Grafana moves expr and step
    # into `target` when it loads the dashboard).
    return {
        "datasource": dict(PROM_DATASOURCE),
        "enable": True,
        "expr": annotation.expr,
        "hide": False,
        "iconColor": annotation.color,
        "name": annotation.name,
        "step": annotation.step,
        "tagKeys": ",".join(annotation.tags),
        "textFormat": annotation.text,
        "titleFormat": annotation.title,
        "useValueForTime": False,
    }


@dataclass(frozen=True, slots=True)
class Dashboard:
    uid: str
    title: str
    description: str
    tags: tuple[str, ...]
    variables: tuple[Json, ...]
    items: tuple[Panel | Row, ...]
    annotations: tuple[Annotation, ...] = ()
    time_from: str = "now-6h"
    links: tuple[Json, ...] = ()


def dashboard_json(dashboard: Dashboard) -> Json:
    """The classic dashboard JSON; ``id`` is null so Grafana matches on ``uid`` alone."""
    return {
        "annotations": {"list": [builtin_annotation(), *(_annotation_json(a) for a in dashboard.annotations)]},
        "description": dashboard.description,
        "editable": True,
        "fiscalYearStartMonth": 0,
        "graphTooltip": 1,
        "id": None,
        "links": list(dashboard.links),
        "liveNow": False,
        "panels": layout(dashboard.items),
        "refresh": "",
        "schemaVersion": SCHEMA_VERSION,
        "tags": list(dashboard.tags),
        "templating": {"list": list(dashboard.variables)},
        "time": {"from": dashboard.time_from, "to": "now"},
        "timepicker": {},
        "timezone": "utc",
        "title": dashboard.title,
        "uid": dashboard.uid,
        "version": 1,
        "weekStart": "",
    }


def dashboards_link() -> Json:
    """A link bar to the other whathappened dashboards, keeping the time range and variables."""
    return {
        "asDropdown": False,
        "icon": "external link",
        "includeVars": True,
        "keepTime": True,
        "tags": ["whathappened"],
        "targetBlank": False,
        "title": "whathappened",
        "tooltip": "",
        "type": "dashboards",
        "url": "",
    }
