"""Failure is data: 406, 401, 403, 429, a hanging server and an unreachable one become SourceErrors with the
contract's statuses and one scrubbed line; the client speaks plain JSON and skips the product check only for
OpenSearch."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from elasticsearch import Elasticsearch
from whathappened.collectors.logs.elasticsearch.collector import LogCollector, detect_flavor, make_client

from tests.collectors.logs.elasticsearch.test_live import query_of
from tests.fixtures.search import FaultServer, SearchServer
from tests.support import all_scenarios, free_port
from whathappened.config import ElasticsearchSettings, Secret
from whathappened.errors import SourceError, SourceForbidden, SourceTimeout, SourceUnreachable
from whathappened.model import PodInfo, Window
from whathappened.scope import Query, Scope

QUERY = Query("exp", "ns", Window(datetime(2026, 11, 20, 6, tzinfo=UTC), datetime(2026, 11, 20, 8, tzinfo=UTC)))
SECRETS = ("hunter2", "sekrit-api-key", "bearer-xyz")


def settings_for(url: str, **extra: object) -> ElasticsearchSettings:
    return ElasticsearchSettings(url=url, api_key=Secret("sekrit-api-key"), **extra)  # type: ignore[arg-type]


def failure(collector: LogCollector) -> SourceError:
    with pytest.raises(SourceError) as caught:
        collector.discover(QUERY)
    message = str(caught.value)
    assert not any(secret in message for secret in SECRETS), message
    assert "\n" not in message
    return caught.value


@pytest.mark.servers
@pytest.mark.parametrize(
    ("status", "error", "contract", "words"),
    [
        (401, SourceForbidden, "forbidden", "401"),
        (403, SourceForbidden, "forbidden", "403"),
        (406, SourceError, "failed", "406"),
        (429, SourceError, "failed", "429"),
        (500, SourceError, "failed", "500"),
    ],
)
def test_http_faults_become_source_statuses(
    fault: FaultServer, status: int, error: type, contract: str, words: str
) -> None:
    fault.status = status
    url = fault.url.replace("http://", "http://elastic:hunter2@")
    settings = settings_for(url)
    collector = LogCollector(make_client(settings, flavor="elasticsearch", timeout_s=5), settings)
    caught = failure(collector)
    assert isinstance(caught, error) and caught.status == contract and words in str(caught)
    assert collector.requests == 1  # no silent retries: a 429 is reported, not hammered


@pytest.mark.servers
def test_a_hanging_server_is_a_timeout(fault: FaultServer) -> None:
    fault.hang = True
    settings = settings_for(fault.url)
    caught = failure(LogCollector(make_client(settings, flavor="elasticsearch", timeout_s=0.3), settings))
    assert isinstance(caught, SourceTimeout) and caught.status == "timeout"


def test_nothing_listening_is_unreachable() -> None:
    settings = ElasticsearchSettings(url=f"http://127.0.0.1:{free_port()}", password=Secret("hunter2"), username="u")
    caught = failure(LogCollector(make_client(settings, flavor="elasticsearch", timeout_s=2), settings))
    assert isinstance(caught, SourceUnreachable) and caught.status == "unreachable"
    assert "127.0.0.1" in str(caught)


def test_auto_flavor_probe_failure_is_a_source_error_too() -> None:
    settings = ElasticsearchSettings(url=f"http://127.0.0.1:{free_port()}", bearer_token=Secret("bearer-xyz"))
    collector = LogCollector.from_settings(settings, timeout_s=2)
    caught = failure(collector)
    assert isinstance(caught, SourceUnreachable) and collector.requests == 1


@pytest.mark.servers
def test_plain_json_goes_out_and_the_compatible_with_header_gets_406(
    search_server: SearchServer, fault: FaultServer
) -> None:
    scenario = next(s for s in all_scenarios() if s.name == "ecc-dbe")
    indices = search_server.load_scenario(scenario)
    settings = ElasticsearchSettings(
        url=search_server.url, log_index=indices.log_index, event_index=indices.event_index
    )
    stock = LogCollector(Elasticsearch(search_server.url), settings)  # the client as shipped: compatible-with=N
    with pytest.raises(SourceError, match="406"):
        stock.discover(query_of(scenario))
    ours = LogCollector(make_client(settings, flavor="opensearch"), settings)
    assert ours.discover(query_of(scenario)).pods

    fault.body = {"hits": {"hits": []}, "aggregations": {}, "fields": {}}
    settings = settings_for(fault.url)
    LogCollector(make_client(settings, flavor="elasticsearch"), settings).discover(QUERY)
    with_body = [h for h in fault.seen_headers if "content-type" in h]
    assert with_body and all(h["content-type"] == "application/json" for h in with_body)
    assert all("compatible-with" not in h.get("accept", "") for h in fault.seen_headers)
    assert all(h["authorization"] == "ApiKey sekrit-api-key" for h in fault.seen_headers)


@pytest.mark.servers
def test_product_check_is_skipped_only_for_opensearch(fault: FaultServer) -> None:
    fault.body = {"hits": {"hits": []}, "aggregations": {}, "fields": {}}
    fault.product_header = False
    settings = settings_for(fault.url)
    elastic = LogCollector(make_client(settings, flavor="elasticsearch"), settings)
    assert "neither Elasticsearch nor OpenSearch" in str(failure(elastic))
    opensearch = LogCollector(make_client(settings, flavor="opensearch"), settings)
    assert opensearch.discover(QUERY).pods == ()


@pytest.mark.servers
def test_auto_flavor_detects_opensearch(search_server: SearchServer) -> None:
    settings = ElasticsearchSettings(url=search_server.url)
    assert detect_flavor(make_client(settings, flavor="elasticsearch")) == "opensearch"
    collector = LogCollector.from_settings(settings)
    assert collector.discover(QUERY).pods == () and collector.requests >= 2


def test_tls_verification_is_on_by_default() -> None:
    settings = ElasticsearchSettings(url="https://logs.example.internal:9200", ca_file="/etc/ssl/ca.pem")
    client = make_client(settings, flavor="elasticsearch")
    node = next(iter(client.transport.node_pool.all()))
    assert node.config.verify_certs is True and node.config.ca_certs == "/etc/ssl/ca.pem"


def test_a_missing_url_is_not_configured() -> None:
    with pytest.raises(SourceError) as caught:
        make_client(ElasticsearchSettings(), flavor="elasticsearch")
    assert caught.value.status == "not_configured"


@pytest.mark.servers
def test_an_msearch_answer_that_does_not_match_its_searches_is_a_source_error(fault: FaultServer) -> None:
    fault.body = {"responses": [{"hits": {"hits": []}}], "hits": {"hits": ["junk", 3]}, "fields": {}}
    settings = settings_for(fault.url)
    collector = LogCollector(make_client(settings, flavor="elasticsearch"), settings)
    assert collector.discover(QUERY).pods == ()  # junk hits are no documents
    scope = Scope(QUERY, (PodInfo(name="p", namespace="ns", node="n", phase="Failed"),))
    with pytest.raises(SourceError, match="does not match its searches") as caught:
        collector.collect(scope)
    assert caught.value.status == "failed" and "sekrit" not in str(caught.value)
