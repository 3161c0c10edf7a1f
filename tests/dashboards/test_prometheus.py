"""Every dashboard query, interpolated as Grafana would, parses (promtool) and runs against a real Prometheus
loaded with a recorded scenario, at the scenario's window; the ones that should show something do.

Range targets and annotations run as range queries over the window (2-minute steps), instant targets once at its end
with ``$__range`` the window's length, the ``experiment`` variable as Grafana's ``query_result`` does.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest
from whathappened.dashboards.generate import build
from whathappened.dashboards.promql import EXPERIMENT_LABELS, ksm_label, variable_promql

from tests.fixtures import _dashboard_series as synth
from tests.fixtures._grafana_templating import Value, interpolate, many, single
from tests.fixtures.prometheus import PrometheusServers, VictoriaServers
from tests.support import Scenario, all_scenarios

STEP = 120  # Grafana picks the step from the panel width; any step inside the window will do
ALL_KEYS = many([label for _, label in EXPERIMENT_LABELS])


@dataclass(frozen=True)
class DashQuery:
    board: str
    where: str  # "panel <title> <ref>", "annotation <name>", "variable <name>"
    expr: str
    instant: bool
    label_values: str = ""  # a label_values(expr, label) variable: Grafana asks the label-values API

    @property
    def id(self) -> str:
        return f"{self.board}:{self.where}"


def dashboard_queries() -> list[DashQuery]:
    out = []
    for name, board in build().items():
        for panel in board["panels"]:
            for target in panel.get("targets", []):
                where = f"panel {panel['title']} {target['refId']}"
                out.append(DashQuery(name, where, target["expr"], target["instant"]))
        for annotation in board["annotations"]["list"]:
            if "expr" in annotation:
                out.append(DashQuery(name, f"annotation {annotation['name']}", annotation["expr"], False))
        for variable in board["templating"]["list"]:
            if variable["type"] == "query":
                query = variable["query"]["query"]
                label = match.group(1) if (match := re.search(r",\s*(\w+)\s*\)\s*$", query)) else ""
                label = label if query.startswith("label_values(") else ""
                where = f"variable {variable['name']}"
                out.append(DashQuery(name, where, variable_promql(query), True, label))
    return out


QUERIES = dashboard_queries()


def find(board: str, where: str) -> DashQuery:
    matches = [q for q in QUERIES if q.board == board and q.where == where]
    assert len(matches) == 1, f"{board} {where}: {[q.where for q in QUERIES if q.board == board]}"
    return matches[0]


@cache
def scenario(name: str) -> Scenario:
    return next(s for s in all_scenarios() if s.name == name)


def variables_for(s: Scenario, label_key: Value = ALL_KEYS) -> dict[str, Value]:
    return {
        "datasource": single("prometheus"),
        "namespace": single(s.namespace),
        "label_key": label_key,
        "experiment": single(s.experiment),
        "provider": Value((".*",), multi=False),  # All, allValue ".*"
    }


def builtins_for(s: Scenario) -> dict[str, str]:
    seconds = int((s.end - s.start).total_seconds())
    return {"__range": f"{seconds}s", "__interval": f"{STEP}s", "__rate_interval": "2m"}


def run(url: str, q: DashQuery, s: Scenario, label_key: Value = ALL_KEYS) -> list[dict[str, Any]]:
    """The query's result series (``metric`` and ``values`` or ``value``); a Prometheus error fails the test."""
    expr = interpolate(q.expr, variables_for(s, label_key), builtins_for(s))
    if q.label_values:  # label_values(expr, label): Grafana asks for the label's values over the range
        params = {"match[]": expr, "start": s.start.timestamp(), "end": s.end.timestamp()}
        response = httpx.get(f"{url}/api/v1/label/{q.label_values}/values", params=params, timeout=60.0)
        body = response.json()
        assert body.get("status") == "success", f"{q.id} on {s.name}: {body.get('error')}\n{expr}"
        return [{"metric": {q.label_values: value}} for value in body["data"]]
    if q.instant:
        params = {"query": expr, "time": s.end.timestamp()}
        response = httpx.get(f"{url}/api/v1/query", params=params, timeout=60.0)
    else:
        params = {"query": expr, "start": s.start.timestamp(), "end": s.end.timestamp(), "step": STEP}
        response = httpx.get(f"{url}/api/v1/query_range", params=params, timeout=60.0)
    body = response.json()
    assert body.get("status") == "success", f"{q.id} on {s.name}: {body.get('error')}\n{expr}"
    return list(body["data"]["result"])


def labels(result: list[dict[str, Any]]) -> list[dict[str, str]]:
    return [series["metric"] for series in result]


@pytest.fixture(scope="module")
def prom(prometheus_servers: PrometheusServers) -> PrometheusServers:
    return prometheus_servers


# --- running against real Prometheus ------------------------------------------------------------------------

SYNTHETIC = "dashboards-synthetic"
FULL = ("xid79-fallen-off-bus", "maintenance-eviction", SYNTHETIC)  # every query runs on these


class Datasets:
    """Scenario histories in real Prometheus servers (started on first use) and cached query results."""

    def __init__(self, prom: PrometheusServers, folder: Path) -> None:
        self._prom, self._folder = prom, folder
        self._results: dict[tuple[str, str], list[dict[str, Any]]] = {}

    def get(self, name: str) -> tuple[Scenario, str]:
        if name != SYNTHETIC:
            return scenario(name), self._prom.url_for(name)
        synthetic = Scenario(
            name=SYNTHETIC,
            path=self._folder,
            experiment=synth.EXPERIMENT,
            namespace=synth.NAMESPACE,
            label_key="ray.io/cluster",
            start=synth.START,
            end=synth.END,
            captured_at=synth.END,
            expected=(),
        )
        source = self._folder / "prometheus.om.gz"
        if not source.exists():
            synth.write(source)
        return synthetic, self._prom.url_for(SYNTHETIC, source)

    def result(self, name: str, query_id: str) -> list[dict[str, Any]]:
        if (name, query_id) not in self._results:
            s, url = self.get(name)
            q = next(q for q in QUERIES if q.id == query_id)
            self._results[name, query_id] = run(url, q, s)
        return self._results[name, query_id]

    def view(self, name: str) -> _View:
        return _View(self, name)

    def run_all(self, name: str) -> dict[str, list[dict[str, Any]]]:
        self.get(name)  # start the server before the threads ask for it
        with ThreadPoolExecutor(max_workers=4) as pool:
            found = dict(
                zip([q.id for q in QUERIES], pool.map(lambda q: self.result(name, q.id), QUERIES), strict=True)
            )
        return found


@dataclass(frozen=True)
class _View:
    """``view[query_id]``: one dataset's result for a query."""

    data: Datasets
    name: str

    def __getitem__(self, query_id: str) -> list[dict[str, Any]]:
        return self.data.result(self.name, query_id)


@pytest.fixture(scope="module")
def data(prom: PrometheusServers, tmp_path_factory: pytest.TempPathFactory) -> Datasets:
    return Datasets(prom, tmp_path_factory.mktemp("dashboards"))


def test_query_ids_are_unique() -> None:
    ids = [q.id for q in QUERIES]
    assert len(ids) == len(set(ids))


@pytest.mark.servers
def test_every_query_runs_and_returns_data_on_some_dataset(data: Datasets) -> None:
    found = {name: data.run_all(name) for name in FULL}  # a Prometheus error fails here, naming the query
    silent = [q.id for q in QUERIES if not any(found[name][q.id] for name in FULL)]
    assert silent == []
    for name in FULL[:2]:  # the recorded incidents alone fill a good part of the panels
        assert sum(bool(r) for r in found[name].values()) >= len(QUERIES) // 3, name


def expected_pods(name: str) -> set[str]:
    return {entry["pod"] for entry in scenario(name).expected}


def root_pod(name: str) -> str:
    return next(entry["pod"] for entry in scenario(name).expected if entry["root"])


def node_of(name: str, pod: str) -> str:
    items = json.loads((scenario(name).path / "kubernetes" / "pods.json").read_text())["items"]
    return str(next(p["spec"]["nodeName"] for p in items if p["metadata"]["name"] == pod))


XID79_NODE = node_of("xid79-fallen-off-bus", root_pod("xid79-fallen-off-bus"))
XID79_GPU = "5"  # the GPU the project's story drops off the bus
MAINTENANCE_NODE = node_of("maintenance-eviction", root_pod("maintenance-eviction"))


@pytest.mark.servers
def test_xid_panel_shows_xid_79_on_the_gpu_that_fell_off(data: Datasets) -> None:
    by_query = data.view("xid79-fallen-off-bus")
    for where in ("panel Xid errors A", "annotation Xid errors"):
        shown = labels(by_query[f"experiment.json:{where}"])
        assert {"xid": "79", "node": XID79_NODE, "gpu": XID79_GPU} in [
            {k: m.get(k) for k in ("xid", "node", "gpu")} for m in shown
        ], where
        assert {m["xid"] for m in shown} == {"79"}, where
    fleet = labels(
        data.result(
            "xid79-fallen-off-bus", "fleet-gpu-health.json:panel GPUs with Xid, ECC, row-remap or thermal events A"
        )
    )
    assert fleet == [{"node": XID79_NODE, "gpu": XID79_GPU, "event": "xid", "xid": "79"}]
    ranked = data.result("xid79-fallen-off-bus", "fleet-gpu-health.json:panel Nodes ranked by failures A")
    assert ranked[0]["metric"]["node"] == XID79_NODE


@pytest.mark.servers
@pytest.mark.parametrize("title", ["GPU utilization", "GPU memory used", "GPU temperature", "GPU power"])
def test_gpu_panels_show_the_experiments_pods_only(data: Datasets, title: str) -> None:
    for name in ("xid79-fallen-off-bus", "maintenance-eviction", "ecc-dbe"):
        shown = labels(data.result(name, f"experiment.json:panel {title} A"))
        assert {m["pod"] for m in shown} == expected_pods(name), name
        assert all(m["namespace"] == scenario(name).namespace for m in shown)


@pytest.mark.servers
def test_pod_phases_and_termination_reasons(data: Datasets) -> None:
    for name in ("xid79-fallen-off-bus", "maintenance-eviction", "history-after-deletion"):
        phases = data.result(name, "experiment.json:panel Pod phases A")
        assert {m["pod"] for m in labels(phases)} == expected_pods(name), name
        assert all(float(v) in (1, 2, 3, 4, 5) for series in phases for _, v in series["values"])
    ended = labels(data.result("xid79-fallen-off-bus", "experiment.json:panel Termination reasons A"))
    assert {"pod": root_pod("xid79-fallen-off-bus"), "source": "container terminated", "reason": "Error"} in [
        {k: m.get(k) for k in ("pod", "source", "reason")} for m in ended
    ]
    evicted = labels(data.result("maintenance-eviction", "experiment.json:panel Termination reasons A"))
    assert {"pod": root_pod("maintenance-eviction"), "source": "disruption", "reason": "EvictionByEvictionAPI"} in [
        {k: m.get(k) for k in ("pod", "source", "reason")} for m in evicted
    ]


@pytest.mark.servers
def test_maintenance_panels_show_the_notice(data: Datasets) -> None:
    by_query = data.view("maintenance-eviction")
    notice = {"node": MAINTENANCE_NODE, "provider": "azure", "event_type": "Reboot"}

    def notices(query_id: str) -> list[dict[str, str]]:
        return [{k: m.get(k) for k in notice} for m in labels(by_query[query_id])]

    assert notices("experiment.json:panel Maintenance notices on the experiment's nodes A") == [notice]
    assert notice in notices("experiment.json:annotation Maintenance notices")
    assert notices("maintenance-preflight.json:panel Notices in the range A") == [notice]
    assert notices("fleet-gpu-health.json:panel Nodes with maintenance notices A") == [notice]
    by_type = labels(by_query["maintenance-preflight.json:panel Notices by provider and type A"])
    assert by_type == [{"provider": "azure", "event_type": "Reboot"}]
    not_before = by_query["experiment.json:panel Maintenance notices on the experiment's nodes B"]
    assert scenario("maintenance-eviction").start.timestamp() * 1000 < float(not_before[0]["value"][1])
    countdown = by_query["maintenance-preflight.json:panel Time to not-before A"][0]["values"]
    assert float(countdown[0][1]) > float(countdown[-1][1])  # it counts down
    cordoned = labels(by_query["fleet-gpu-health.json:panel Cordoned or NotReady nodes A"])
    assert {"node": MAINTENANCE_NODE, "state": "cordoned"} in cordoned
    # no notice in a scenario without one
    assert (
        data.result("xid79-fallen-off-bus", "experiment.json:panel Maintenance notices on the experiment's nodes A")
        == []
    )


@pytest.mark.servers
def test_fleet_panels_show_the_uncorrectable_ecc_gpu(data: Datasets) -> None:
    ecc = labels(
        data.result("ecc-dbe", "fleet-gpu-health.json:panel GPUs with Xid, ECC, row-remap or thermal events B")
    )
    assert ecc and all(m["event"] == "ecc-uncorrectable" for m in ecc)
    xid = labels(data.result("ecc-dbe", "experiment.json:panel Xid errors A"))
    assert {m["xid"] for m in xid} == {"48"}


@pytest.mark.servers
def test_synthetic_history_fills_the_panels_no_scenario_can(data: Datasets) -> None:
    by_query = data.view(SYNTHETIC)
    idle = labels(by_query["fleet-gpu-health.json:panel Idle GPUs held by pods A"])
    assert [(m["node"], m["pod"]) for m in idle] == [(synth.NODE, synth.POD)]  # lowercase hostname -> node
    not_ready = labels(by_query["fleet-gpu-health.json:panel Cordoned or NotReady nodes B"])
    assert not_ready == [{"node": synth.OTHER_NODE, "state": "not-ready"}]
    events = {
        m["event"]
        for ref in "ABCD"
        for m in labels(by_query[f"fleet-gpu-health.json:panel GPUs with Xid, ECC, row-remap or thermal events {ref}"])
    }
    assert events == {"xid", "ecc-uncorrectable", "row-remap", "thermal"}
    assert {m["xid"] for m in labels(by_query["experiment.json:panel Xid errors A"])} == {"94"}
    preflight = by_query["maintenance-preflight.json:panel preflight_ok by node A"][0]["values"]
    assert {v for _, v in preflight} == {"0", "1"}


def query_result_options(result: list[dict[str, Any]], regex: str) -> set[str]:
    """What Grafana's ``query_result`` variable offers: each series as text, then the variable's regex."""
    pattern = re.compile(regex.strip("/"))
    options = set()
    for series in result:
        text = "{" + ", ".join(f'{k}="{v}"' for k, v in series["metric"].items()) + "} " + series["value"][1]
        if match := pattern.search(text):
            options.add(match.group(1))
    return options


@pytest.mark.servers
def test_experiment_variable_lists_the_experiment_under_any_label_key(data: Datasets) -> None:
    variable = next(v for v in build()["experiment.json"]["templating"]["list"] if v["name"] == "experiment")
    for name in (*FULL, "history-after-deletion"):  # jobset, kubeflow and ray.io keys; a deleted experiment
        s, _ = data.get(name)
        options = query_result_options(data.result(name, "experiment.json:variable experiment"), variable["regex"])
        assert s.experiment in options, (name, options)
        namespaces = {m["namespace"] for m in labels(data.result(name, "experiment.json:variable namespace"))}
        assert s.namespace in namespaces


@pytest.mark.servers
def test_label_key_variable_picks_the_key(data: Datasets) -> None:
    gpu = find("experiment.json", "panel GPU utilization A")
    for name in FULL:
        s, url = data.get(name)
        right = many([ksm_label(s.label_key)])
        wrong = many([label for key, label in EXPERIMENT_LABELS if key != s.label_key])
        assert run(url, gpu, s, label_key=right), name
        assert run(url, gpu, s, label_key=wrong) == [], name


def run_all(url: str, s: Scenario) -> dict[str, list[dict[str, Any]]]:
    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip([q.id for q in QUERIES], pool.map(lambda q: run(url, q, s), QUERIES), strict=True))


@pytest.mark.servers
def test_every_query_also_runs_on_victoriametrics(victoria_servers: VictoriaServers) -> None:
    """The second PromQL backend users point Grafana at: every query runs, the named facts come out the same."""
    xid79 = scenario("xid79-fallen-off-bus")
    found = run_all(victoria_servers.url_for(xid79.name), xid79)
    xid = labels(found["experiment.json:panel Xid errors A"])
    assert [{k: m[k] for k in ("xid", "node", "gpu")} for m in xid] == [
        {"xid": "79", "node": XID79_NODE, "gpu": XID79_GPU}
    ]
    assert {m["pod"] for m in labels(found["experiment.json:panel GPU utilization A"])} == expected_pods(xid79.name)

    maintenance = scenario("maintenance-eviction")
    url = victoria_servers.url_for(maintenance.name)
    notices = labels(
        run(url, find("experiment.json", "panel Maintenance notices on the experiment's nodes A"), maintenance)
    )
    assert [(m["node"], m["event_type"]) for m in notices] == [(MAINTENANCE_NODE, "Reboot")]
