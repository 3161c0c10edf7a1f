"""Build the dashboards, check every expression against the metric catalog, and write them as JSON files.

The committed ``dashboards/*.json`` are this module's output byte for byte (a test keeps them in sync), so the
rendering is deterministic: sorted keys, two-space indent, a final newline.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from whathappened.dashboards import experiment, fleet, maintenance
from whathappened.dashboards.envelope import dashboard_json
from whathappened.dashboards.grafana import Json
from whathappened.dashboards.promql import UnknownMetric, metric_names, variable_promql
from whathappened.exporters.catalog import known_metric_names

FILENAMES = {
    experiment.UID: "experiment.json",
    fleet.UID: "fleet-gpu-health.json",
    maintenance.UID: "maintenance-preflight.json",
}


def build() -> dict[str, Json]:
    """Every dashboard, by file name, checked against the catalog."""
    out = {}
    for module in (experiment, fleet, maintenance):
        board = dashboard_json(module.dashboard())
        check_metrics(board)
        out[FILENAMES[board["uid"]]] = board
    return out


def expressions(board: Json) -> Iterator[tuple[str, str]]:
    """(where, PromQL) for every panel target, annotation and Prometheus variable query of a dashboard."""
    for panel in board.get("panels", []):
        for target in panel.get("targets", []):
            yield f"panel {panel['title']!r} {target['refId']}", target["expr"]
    for annotation in board.get("annotations", {}).get("list", []):
        if "expr" in annotation:
            yield f"annotation {annotation['name']!r}", annotation["expr"]
    for variable in board.get("templating", {}).get("list", []):
        if variable["type"] == "query":
            yield f"variable {variable['name']!r}", variable_promql(variable["query"]["query"])


def check_metrics(board: Json) -> None:
    known = known_metric_names()
    for where, expr in expressions(board):
        unknown = metric_names(expr) - known
        if unknown:
            raise UnknownMetric(f"{board['uid']} {where} names {sorted(unknown)}, not in the metric catalog")


def render(board: Json) -> str:
    return json.dumps(board, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, board in build().items():
        path = out_dir / name
        path.write_text(render(board), encoding="utf-8")
        written.append(path)
    return written


def packaged_dir() -> Path:
    """Where the committed dashboards live (the package folder, installed as whathappened.dashboards)."""
    return Path(__file__).resolve().parent
