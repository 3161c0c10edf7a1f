"""The live collector against real Prometheus and real VictoriaMetrics, for every recorded scenario.

For each scenario and backend: discovery finds the experiment's pods through kube-state-metrics history, and
the events the server-side edge queries yield equal what the offline analysis finds in the raw OpenMetrics file
for the same scope (the snapshot path), timestamps included.
"""

from __future__ import annotations

import gzip
from functools import cache

import pytest
from whathappened.collectors._openmetrics import parse_openmetrics
from whathappened.collectors._prom_series import Series, discover_from_series, events_from_series
from whathappened.collectors.prometheus import PrometheusCollector

from tests.support import Scenario, all_scenarios
from whathappened.config import PrometheusSettings
from whathappened.model import Window
from whathappened.scope import Query, Scope

SCENARIOS = {s.name: s for s in all_scenarios()}
BACKENDS = ("prometheus", "victoria")


@cache
def recorded(name: str) -> tuple[Series, ...]:
    series, problems = parse_openmetrics(
        gzip.decompress((SCENARIOS[name].path / "prometheus.om.gz").read_bytes()).decode()
    )
    assert problems == []
    return tuple(series)


def query_of(scenario: Scenario) -> Query:
    return Query(scenario.experiment, scenario.namespace, Window(scenario.start, scenario.end))


@pytest.fixture
def live(request, prometheus_servers, victoria_servers):
    def make(name: str, backend: str) -> PrometheusCollector:
        servers = prometheus_servers if backend == "prometheus" else victoria_servers
        return PrometheusCollector(PrometheusSettings(url=servers.url_for(name)))

    return make


def run(collector: PrometheusCollector, scenario: Scenario):
    query = query_of(scenario)
    discovery = collector.discover(query)
    scope = Scope(query, discovery.pods, discovery.nodes)
    return discovery, scope, list(collector.collect(scope))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_live_equals_offline_analysis(live, name: str, backend: str) -> None:
    scenario = SCENARIOS[name]
    collector = live(name, backend)
    discovery, scope, events = run(collector, scenario)
    offline = discover_from_series(recorded(name), query_of(scenario))
    assert [p.name for p in discovery.pods] == [p.name for p in offline.pods]
    assert {e["pod"] for e in scenario.expected} <= {p.name for p in discovery.pods}
    assert [(p.node, p.created, p.started, p.ended, p.deleted) for p in discovery.pods] == [
        (p.node, p.created, p.started, p.ended, p.deleted) for p in offline.pods
    ]
    expected = events_from_series(recorded(name), scope)
    assert [e.identity for e in events] == [e.identity for e in expected]
    assert collector.requests <= 15
