"""Small builders for Grafana's dashboard JSON model (the classic model ``POST /api/dashboards/db`` accepts).

Panels are described as frozen values and laid out on Grafana's 24-column grid by ``layout()``, which also gives
them their ids, so the dashboard modules say only what each panel shows. Every Prometheus reference goes through
the ``$datasource`` variable: no datasource uid is ever written into a dashboard.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from whathappened.dashboards.promql import PROM_DATASOURCE

Json = dict[str, Any]

SCHEMA_VERSION = 39  # Grafana 10.4 / 11.x classic dashboard JSON
GRID_COLUMNS = 24
TABLE_CUSTOM: Json = {"align": "auto", "cellOptions": {"type": "auto"}, "inspect": False}


@dataclass(frozen=True, slots=True)
class Query:
    """One PromQL query of a panel. ``instant`` queries run once at the end of the dashboard's range."""

    expr: str
    legend: str = ""
    instant: bool = False
    table: bool = False


@dataclass(frozen=True, slots=True)
class Panel:
    kind: str  # Grafana panel plugin id: timeseries, table, state-timeline, stat, bargauge
    title: str
    queries: tuple[Query, ...]
    description: str = ""
    unit: str = ""
    width: int = 12
    height: int = 8
    options: Json = field(default_factory=dict)
    custom: Json = field(default_factory=dict)
    mappings: tuple[Json, ...] = ()
    transformations: tuple[Json, ...] = ()
    thresholds: tuple[tuple[float | None, str], ...] = ((None, "green"),)


@dataclass(frozen=True, slots=True)
class Row:
    title: str


def _target(query: Query, ref_id: str) -> Json:
    return {
        "datasource": dict(PROM_DATASOURCE),
        "editorMode": "code",
        "expr": query.expr,
        "format": "table" if query.table else "time_series",
        "instant": query.instant,
        "legendFormat": query.legend or "__auto",
        "range": not query.instant,
        "refId": ref_id,
    }


def _field_config(panel: Panel) -> Json:
    defaults: Json = {
        "color": {"mode": "thresholds" if panel.kind in ("stat", "bargauge") else "palette-classic"},
        "custom": {**(TABLE_CUSTOM if panel.kind == "table" else {}), **panel.custom},
        "mappings": list(panel.mappings),
        "thresholds": {
            "mode": "absolute",
            "steps": [{"color": color, "value": value} for value, color in panel.thresholds],
        },
    }
    if panel.unit:
        defaults["unit"] = panel.unit
    return {"defaults": defaults, "overrides": []}


def _panel_json(panel: Panel, panel_id: int, x: int, y: int) -> Json:
    refs = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return {
        "datasource": dict(PROM_DATASOURCE),
        "description": panel.description,
        "fieldConfig": _field_config(panel),
        "gridPos": {"h": panel.height, "w": panel.width, "x": x, "y": y},
        "id": panel_id,
        "options": dict(panel.options),
        "targets": [_target(q, refs[i]) for i, q in enumerate(panel.queries)],
        "title": panel.title,
        "transformations": list(panel.transformations),
        "type": panel.kind,
    }


def layout(items: Sequence[Panel | Row]) -> list[Json]:
    """Place panels left to right, wrapping at 24 columns; a Row starts a new full-width band."""
    out: list[Json] = []
    x = y = line_height = 0
    for panel_id, item in enumerate(items, start=1):
        if isinstance(item, Row) or x + item.width > GRID_COLUMNS:
            x, y, line_height = 0, y + line_height, 0
        if isinstance(item, Row):
            out.append(_row_json(item, panel_id, y))
            y += 1
            continue
        out.append(_panel_json(item, panel_id, x, y))
        x, line_height = x + item.width, max(line_height, item.height)
    return out


def _row_json(row: Row, panel_id: int, y: int) -> Json:
    return {
        "collapsed": False,
        "gridPos": {"h": 1, "w": GRID_COLUMNS, "x": 0, "y": y},
        "id": panel_id,
        "panels": [],
        "title": row.title,
        "type": "row",
    }


# --- panel option presets -----------------------------------------------------------------------------------


def timeseries_options(points: bool = False, stacked: bool = False) -> tuple[Json, Json]:
    """(options, fieldConfig.defaults.custom) for a time series panel."""
    options = {
        "legend": {"calcs": ["max", "lastNotNull"], "displayMode": "table", "placement": "right", "showLegend": True},
        "tooltip": {"mode": "multi", "sort": "desc"},
    }
    custom: Json = {
        "drawStyle": "points" if points else "line",
        "fillOpacity": 60 if stacked else 0,
        "lineWidth": 1,
        "pointSize": 8 if points else 4,
        "showPoints": "always" if points else "never",
        "spanNulls": False,
        "stacking": {"group": "A", "mode": "normal" if stacked else "none"},
    }
    if stacked:
        custom["drawStyle"] = "bars"
    return options, custom


def table_options(sort_by: str = "") -> Json:
    options: Json = {"cellHeight": "sm", "frameIndex": 0, "showHeader": True}
    if sort_by:
        options["sortBy"] = [{"desc": True, "displayName": sort_by}]
    return options


def stat_options() -> Json:
    return {
        "colorMode": "value",
        "graphMode": "area",
        "justifyMode": "auto",
        "orientation": "auto",
        "percentChangeColorMode": "standard",
        "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
        "showPercentChange": False,
        "textMode": "auto",
        "wideLayout": True,
    }


def state_timeline_options() -> tuple[Json, Json]:
    options = {
        "alignValue": "left",
        "legend": {"calcs": [], "displayMode": "list", "placement": "bottom", "showLegend": True},
        "mergeValues": True,
        "rowHeight": 0.9,
        "showValue": "auto",
        "tooltip": {"mode": "single", "sort": "none"},
    }
    return options, {"fillOpacity": 80, "lineWidth": 0}


def bargauge_options() -> Json:
    return {
        "displayMode": "gradient",
        "legend": {"calcs": [], "displayMode": "list", "placement": "bottom", "showLegend": False},
        "maxVizHeight": 300,
        "minVizHeight": 16,
        "minVizWidth": 8,
        "namePlacement": "auto",
        "orientation": "horizontal",
        "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": True},
        "showUnfilled": True,
        "sizing": "auto",
        "valueMode": "color",
    }


def value_mapping(pairs: Iterable[tuple[float | str, str, str]]) -> Json:
    """A Grafana value mapping from (value, text, color) triples."""
    options = {str(value): {"color": color, "index": i, "text": text} for i, (value, text, color) in enumerate(pairs)}
    return {"options": options, "type": "value"}


def merge() -> Json:
    return {"id": "merge", "options": {}}


def organize(exclude: Sequence[str] = (), rename: dict[str, str] | None = None) -> Json:
    return {
        "id": "organize",
        "options": {"excludeByName": {name: True for name in exclude}, "renameByName": dict(rename or {})},
    }
