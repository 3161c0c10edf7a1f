"""The generated dashboards: in sync with the committed JSON, valid against @grafana/schema's types (generated
JSON Schemas, see tests/fixtures/grafana_schema/regenerate.sh), naming only catalogued metrics, and never a
hard-coded data source."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from whathappened.dashboards import promql
from whathappened.dashboards.generate import FILENAMES, build, expressions, packaged_dir, render
from whathappened.exporters.catalog import known_metric_names

from tests.support import REPO

SCHEMAS = REPO / "tests" / "fixtures" / "grafana_schema"
PLUGINS = {"timeseries": "timeseries", "table": "table", "stat": "stat", "state-timeline": "statetimeline"}
PLUGINS["bargauge"] = "bargauge"
BOARDS = build()


def schema(name: str) -> jsonschema.Draft7Validator:
    loaded = json.loads((SCHEMAS / name).read_text())
    jsonschema.Draft7Validator.check_schema(loaded)
    return jsonschema.Draft7Validator(loaded)


DASHBOARD = schema("dashboard.schema.json")


def panels(board: dict[str, Any]) -> Iterator[dict[str, Any]]:
    return (p for p in board["panels"] if p["type"] != "row")


def errors(validator: jsonschema.Draft7Validator, document: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message[:200]}" for e in validator.iter_errors(document)]


# --- kept in sync -------------------------------------------------------------------------------------------


def test_committed_json_is_what_generate_writes_now(tmp_path: Path) -> None:
    code = "from whathappened.cli.main import run; run()"
    done = subprocess.run(
        [sys.executable, "-c", code, "dashboards", "generate", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    written = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.glob("*.json")}
    committed = {p.name: p.read_text(encoding="utf-8") for p in packaged_dir().glob("*.json")}
    assert set(written) == set(FILENAMES.values()) == set(committed)
    stale = [name for name in written if written[name] != committed[name]]
    assert stale == [], f"run `make dashboards` (whathappened dashboards generate --out dashboards/): {stale}"


def test_rendering_is_deterministic() -> None:
    assert all(render(board) == render(build()[name]) for name, board in BOARDS.items())


# --- Grafana's schema ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BOARDS))
def test_dashboard_validates_against_grafana_schema(name: str) -> None:
    assert errors(DASHBOARD, BOARDS[name]) == []


@pytest.mark.parametrize("name", sorted(BOARDS))
def test_panel_options_validate_against_their_plugin_schema(name: str) -> None:
    problems = []
    for panel in panels(BOARDS[name]):
        plugin = PLUGINS[panel["type"]]
        problems += [
            f"{panel['title']} options {e}"
            for e in errors(schema(f"panels/{plugin}.options.schema.json"), panel["options"])
        ]
        custom = SCHEMAS / "panels" / f"{plugin}.fieldconfig.schema.json"
        if custom.exists():
            found = errors(schema(str(custom.relative_to(SCHEMAS))), panel["fieldConfig"]["defaults"]["custom"])
            problems += [f"{panel['title']} custom {e}" for e in found]
    assert problems == []


def test_the_schema_rejects_what_grafana_would() -> None:
    board = copy.deepcopy(BOARDS["experiment.json"])
    assert errors(DASHBOARD, board) == []
    broken = [
        lambda b: b.pop("schemaVersion"),
        lambda b: b["panels"][1].update(gridPos={"h": 8, "w": "wide", "x": 0, "y": 0}),
        lambda b: b["templating"]["list"][0].update(type="dropdown"),
        lambda b: b.update(titel="typo"),
        lambda b: b["annotations"]["list"][1].pop("iconColor"),
    ]
    for breaks in broken:
        copied = copy.deepcopy(board)
        breaks(copied)
        assert errors(DASHBOARD, copied), breaks


def test_schema_files_say_where_they_came_from() -> None:
    for path in SCHEMAS.rglob("*.schema.json"):
        assert "@grafana/schema 13.2.3" in json.loads(path.read_text())["$comment"], path
    assert (SCHEMAS / "regenerate.sh").stat().st_mode & 0o111


@pytest.mark.parametrize("name", sorted(BOARDS))
def test_prometheus_annotations_carry_their_query_fields(name: str) -> None:
    # Opened in the generated schema (the type lists only the generic fields), so checked here.
    for annotation in BOARDS[name]["annotations"]["list"][1:]:
        assert annotation["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        for field in ("expr", "step", "titleFormat", "textFormat", "tagKeys"):
            assert isinstance(annotation[field], str) and annotation[field], (annotation["name"], field)
        assert set(annotation) <= {
            "datasource", "enable", "expr", "hide", "iconColor", "name", "step", "tagKeys", "textFormat",
            "titleFormat", "useValueForTime",
        }  # fmt: skip


# --- what the dashboards name -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BOARDS))
def test_every_metric_named_is_in_the_catalog(name: str) -> None:
    named = set()
    for _, expr in expressions(BOARDS[name]):
        names = promql.metric_names(expr)
        assert names, expr
        named |= names
    assert named <= known_metric_names(), named - known_metric_names()


def test_metric_name_reader_finds_names_and_ignores_the_rest() -> None:
    expr = (
        'sum by (node, gpu) (increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{pod!="x"}[5m])) > 1e3 '
        'and on (node) label_replace(up, "a", "$1", "b", "(.+)") or vector(1) unless rate(foo:bar_total[1h] offset 5m)'
    )
    assert promql.metric_names(expr) == {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "up", "foo:bar_total"}
    with pytest.raises(promql.UnknownMetric):
        promql.metric("DCGM_FI_DEV_NOT_A_METRIC")


def test_the_experiment_label_keys_are_the_contracts_in_kube_state_metrics_form() -> None:
    labels = dict(promql.EXPERIMENT_LABELS)
    assert labels["jobset.sigs.k8s.io/jobset-name"] == "label_jobset_sigs_k8s_io_jobset_name"
    assert labels["whathappened.io/experiment"] == "label_whathappened_io_experiment"
    assert len(labels) == 10
    variable = next(v for v in BOARDS["experiment.json"]["templating"]["list"] if v["name"] == "label_key")
    assert variable["includeAll"] and variable["multi"]
    assert [o["value"] for o in variable["options"][1:]] == list(labels.values())


def _datasources(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        if isinstance(node.get("datasource"), dict):
            yield node["datasource"]
        for value in node.values():
            yield from _datasources(value)
    elif isinstance(node, list):
        for value in node:
            yield from _datasources(value)


@pytest.mark.parametrize("name", sorted(BOARDS))
def test_the_datasource_is_a_variable_everywhere(name: str) -> None:
    board = BOARDS[name]
    refs = list(_datasources(board))
    assert refs
    for ref in refs:
        assert ref in ({"type": "prometheus", "uid": "${datasource}"}, {"type": "grafana", "uid": "-- Grafana --"})
    variable = board["templating"]["list"][0]
    assert (variable["name"], variable["type"], variable["query"]) == ("datasource", "datasource", "prometheus")
    assert board["id"] is None and 8 <= len(board["uid"]) <= 40


@pytest.mark.parametrize("name", sorted(BOARDS))
def test_layout_fits_the_grid_without_overlaps(name: str) -> None:
    cells: set[tuple[int, int]] = set()
    ids = []
    for panel in BOARDS[name]["panels"]:
        pos = panel["gridPos"]
        assert pos["x"] + pos["w"] <= 24
        area = {(pos["x"] + dx, pos["y"] + dy) for dx in range(pos["w"]) for dy in range(pos["h"])}
        assert not area & cells, panel["title"]
        cells |= area
        ids.append(panel["id"])
    assert len(ids) == len(set(ids))


def test_provisioning_yaml_points_grafana_at_the_files() -> None:
    config = yaml.safe_load((packaged_dir() / "provisioning.yaml").read_text())
    assert config["apiVersion"] == 1
    (provider,) = config["providers"]
    assert provider["type"] == "file" and provider["options"]["path"].startswith("/")
    assert provider["allowUiUpdates"] is False  # edits belong in the generator, not the UI


def test_readme_names_the_kube_state_metrics_flag_the_dashboard_needs() -> None:
    from whathappened.dashboards import experiment

    assert experiment.ALLOWLIST_FLAG in (packaged_dir() / "README.md").read_text()
    assert experiment.ALLOWLIST_FLAG in BOARDS["experiment.json"]["description"]


def test_grafana_interpolation_used_by_the_query_tests_follows_grafanas_rules() -> None:
    from tests.fixtures._grafana_templating import interpolate, many, single

    variables = {"ns": many(["team.a", "b"]), "one": single("llama-70b.run7"), "keys": many(["label_a", "label_b"])}
    builtins = {"__range": "7200s"}
    assert interpolate('{namespace=~"$ns"}', variables, builtins) == '{namespace=~"(team\\\\.a|b)"}'
    assert interpolate('{n="${one}"}', variables, builtins) == '{n="llama-70b.run7"}'
    assert interpolate('"${keys:regex}" ${keys:csv} [$__range] "$1"', variables, builtins) == (
        '"(label_a|label_b)" label_a,label_b [7200s] "$1"'
    )
    with pytest.raises(KeyError):
        interpolate("$missing", variables, builtins)
