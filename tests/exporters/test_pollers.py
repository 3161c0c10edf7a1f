"""Each poller against the loopback metadata server, through real HTTP: sequences, faults, detection, events."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from whathappened.exporters import aws, azure, gcp
from whathappened.exporters._metadata_http import MetadataFormatError, make_client
from whathappened.exporters.detect import detect_provider, node_name
from whathappened.exporters.metrics import ExporterState
from whathappened.exporters.node_events import NodeEventRecorder, event_body, in_cluster
from whathappened.exporters.runner import Backoff, PollLoop

from tests.doubles.metadata import MetadataServer, samples
from whathappened.errors import ConfigError, SourceError, SourceTimeout, SourceUnreachable


class Clock:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


NOW = datetime(2026, 4, 11, 22, 0, tzinfo=UTC)


@pytest.fixture
def client() -> httpx.Client:
    return make_client(httpx.Timeout(0.5, connect=0.5))


def test_azure_sequence_over_http(metadata: MetadataServer, client: httpx.Client) -> None:
    poller = azure.AzurePoller(client, Clock(NOW), metadata.url)
    sequence = samples()["azure"]["example_sequence_Z1_live_migration"]
    counts = []
    for document in sequence:
        metadata.state.azure_document = document
        notices = poller.poll()
        counts.append((poller.incarnation, [(n.event_type, n.status) for n in notices]))
    assert counts == [(1, []), (2, [("Freeze", "Scheduled")]), (3, [("Freeze", "Started")]), (4, [])]
    assert ("GET", "/metadata/instance/compute") in metadata.state.requests
    assert metadata.state.azure_approvals == []  # acknowledgement is off by default


def test_azure_other_vm_and_acknowledgement(metadata: MetadataServer, client: httpx.Client) -> None:
    metadata.state.azure_document = samples()["azure"]["spot_preempt_example_Z5"]
    metadata.state.azure_vm_name = "vm-other"
    assert azure.AzurePoller(client, Clock(NOW), metadata.url).poll() == ()
    metadata.state.azure_vm_name = "vm-spot"
    poller = azure.AzurePoller(client, Clock(NOW), metadata.url, acknowledge=True)
    assert len(poller.poll()) == 1 and len(poller.poll()) == 1
    assert metadata.state.azure_approvals == [
        {"StartRequests": [{"EventId": "C1BF8322-4CBF-4FC4-9C45-B40CF3106D0E"}]}
    ]  # approved once, not on every poll


def test_aws_imdsv2_token_then_events(metadata: MetadataServer, client: httpx.Client) -> None:
    a = samples()["aws"]
    poller = aws.AwsPoller(client, Clock(NOW), metadata.url)
    assert poller.poll() == ()  # every path 404: no event
    metadata.state.aws_scheduled = a["scheduled_maintenance_example_A1_comment_in_ec2metadata.go"]
    metadata.state.aws_spot = a["spot_instance_action_example_A2_AEMM_README"]
    metadata.state.aws_rebalance = a["rebalance_recommendation_example_A2"]
    types = sorted(n.event_type for n in poller.poll())
    assert types == ["rebalance-recommendation", "spot-interruption", "system-reboot"]
    assert metadata.state.aws_token_puts == 1  # the session token is reused


def test_aws_token_renewed_after_expiry(metadata: MetadataServer, client: httpx.Client) -> None:
    clock = Clock(NOW)
    poller = aws.AwsPoller(client, clock, metadata.url)
    poller.poll()
    clock.at = NOW + timedelta(hours=6)
    poller.poll()
    assert metadata.state.aws_token_puts == 2


def test_gcp_wait_for_change_returns_on_transition(metadata: MetadataServer, client: httpx.Client) -> None:
    clock = Clock(NOW)
    poller = gcp.GcpPoller(client, clock, metadata.url, wait_seconds=20)
    assert poller.poll() == ()  # NONE; the first read also learns the ETag
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(poller.poll()))
    thread.start()
    metadata.state.set_gcp_maintenance("TERMINATE_ON_HOST_MAINTENANCE")
    thread.join(timeout=10)
    assert not thread.is_alive(), "the hanging GET did not return on the change"
    (notice,) = result[0]  # type: ignore[misc]
    assert notice.event_type == "TERMINATE_ON_HOST_MAINTENANCE" and notice.not_before == NOW + timedelta(seconds=60)
    gets = [p for m, p in metadata.state.requests if p.endswith("maintenance-event")]
    assert len(gets) == 2
    metadata.state.set_gcp_maintenance("NONE")
    assert poller.poll() == ()


def test_gcp_preempted_and_upcoming(metadata: MetadataServer, client: httpx.Client) -> None:
    metadata.state.gcp_preempted = "TRUE"
    metadata.state.gcp_upcoming = {
        "type": "SCHEDULED",
        "maintenance_status": "PENDING",
        "window_start_time": "2026-04-12T03:00:00Z",
        "window_end_time": "2026-04-12T07:00:00Z",
    }
    notices = gcp.GcpPoller(client, Clock(NOW), metadata.url).poll()
    assert sorted(n.event_type for n in notices) == ["preempted", "upcoming-maintenance"]


@pytest.mark.parametrize("provider", ["azure", "aws", "gcp"])
def test_detection(metadata: MetadataServer, client: httpx.Client, provider: str) -> None:
    metadata.state.providers = {provider}
    assert detect_provider(client, metadata.url) == provider


def test_detection_nothing_listening(dead_url: str, client: httpx.Client) -> None:
    with pytest.raises(SourceUnreachable):
        detect_provider(client, dead_url)


def test_node_name_order() -> None:
    assert node_name("flag", {"NODE_NAME": "env"}, lambda: "host") == "flag"
    assert node_name(None, {"NODE_NAME": "env"}, lambda: "host") == "env"
    assert node_name(None, {}, lambda: "host") == "host"


def _pollers(client: httpx.Client, url: str) -> list[object]:
    clock = Clock(NOW)
    return [azure.AzurePoller(client, clock, url), aws.AwsPoller(client, clock, url), gcp.GcpPoller(client, clock, url)]


def test_faults_down(dead_url: str, client: httpx.Client) -> None:
    for poller in _pollers(client, dead_url):
        with pytest.raises(SourceUnreachable):
            poller.poll()  # type: ignore[attr-defined]


def test_faults_slow(metadata: MetadataServer, client: httpx.Client) -> None:
    metadata.state.delay = 1.5  # client read timeout is 0.5 s
    for poller in _pollers(client, metadata.url):
        with pytest.raises(SourceTimeout):
            poller.poll()  # type: ignore[attr-defined]


def test_faults_malformed_json(metadata: MetadataServer, client: httpx.Client) -> None:
    metadata.state.malformed = True
    metadata.state.azure_document = samples()["azure"]["spot_preempt_example_Z5"]
    metadata.state.aws_spot = samples()["aws"]["spot_instance_action_example_A2_AEMM_README"]
    for poller in _pollers(client, metadata.url)[:2]:
        with pytest.raises(MetadataFormatError):
            poller.poll()  # type: ignore[attr-defined]


def test_poll_loop_counts_errors_backs_off_and_recovers(metadata: MetadataServer, client: httpx.Client) -> None:
    clock = Clock(NOW)
    state = ExporterState("aws")
    loop = PollLoop(
        aws.AwsPoller(client, clock, metadata.url), state, clock, Backoff(timedelta(seconds=10)), jitter=lambda: 1.0
    )
    metadata.state.malformed = True
    metadata.state.aws_spot = samples()["aws"]["spot_instance_action_example_A2_AEMM_README"]
    delays = []
    for _ in range(3):
        assert loop.poll_once().last_success is None
        delays.append(loop.next_delay())
    assert delays == [10.0, 20.0, 40.0] and state.snapshot().errors == 3
    metadata.state.malformed = False
    clock.at = NOW + timedelta(seconds=70)
    recovered = loop.poll_once()
    assert recovered.last_success == clock.at and recovered.errors == 3 and loop.next_delay() == 10.0
    assert [n.event_type for n in recovered.notices] == ["spot-interruption"]


def test_node_events_recorded_once(metadata: MetadataServer, client: httpx.Client) -> None:
    notices = aws.parse_scheduled(samples()["aws"]["scheduled_maintenance_example_A1_comment_in_ec2metadata.go"])
    recorder = NodeEventRecorder(client, metadata.url, lambda: "test-sa-token", "ip-10-0-12-34", Clock(NOW))
    recorder(notices)
    recorder(notices)
    (event,) = metadata.state.node_events
    assert event["involvedObject"] == {
        "apiVersion": "v1",
        "kind": "Node",
        "name": "ip-10-0-12-34",
        "uid": "ip-10-0-12-34",
    }
    assert event["reason"] == "ScheduledEvent" and "system-reboot" in event["message"]
    bad = NodeEventRecorder(client, metadata.url, lambda: "wrong", "n", Clock(NOW))
    bad(notices)  # 401: logged, not raised, retried on the next poll
    assert len(metadata.state.node_events) == 1
    assert event_body(notices[0], "n", Clock(NOW))["metadata"]["namespace"] == "default"


def test_source_errors_never_leak_query_strings(dead_url: str, client: httpx.Client) -> None:
    with pytest.raises(SourceError) as caught:
        azure.AzurePoller(client, Clock(NOW), dead_url, vm_name="x").poll()
    assert "api-version" not in str(caught.value) and "/metadata/scheduledevents" in str(caught.value)


def test_exporter_survives_a_dead_metadata_service(dead_url: str) -> None:
    from prometheus_client import CollectorRegistry, generate_latest
    from whathappened.exporters.app import Exporter, ExporterConfig

    config = ExporterConfig(metadata_url=dead_url, node="n", port=0, host="127.0.0.1", gpu=False)
    registry = CollectorRegistry()
    exporter = Exporter(config, clock=Clock(NOW), registry=registry)
    state = exporter.loop.poll_once()  # what the loop thread does, once, without waiting for it
    assert state.provider == "unknown" and state.errors == 1 and "unreachable" in (state.last_error or "")
    text = generate_latest(registry).decode()
    assert 'whathappened_poll_errors_total{provider="unknown"} 1.0' in text
    # no answer is neither "nothing due" nor "maintenance due": the ok gauge is absent, unknown is 1
    assert 'whathappened_preflight_ok{node="n"}' not in text
    assert 'whathappened_preflight_unknown{node="n"} 1.0' in text
    exporter.start()
    try:
        health = httpx.get(f"http://127.0.0.1:{exporter.server.port}/healthz")
        assert health.status_code == 200 and "provider=unknown" in health.text  # an outage is data, not a restart
    finally:
        exporter.stop()


def test_in_cluster_config(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        in_cluster({}, tmp_path)
    (tmp_path / "token").write_text("t")
    cluster = in_cluster({"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"}, tmp_path)
    assert cluster.api_url == "https://[fd00::1]:443" and cluster.token_file == tmp_path / "token"


def test_the_node_label_follows_the_preflight_window(metadata: MetadataServer, client: httpx.Client) -> None:
    """Set while a notice may start within the window, removed when none may, one PATCH per change; a refused
    PATCH is retried at the next poll."""
    from whathappened.exporters.node_labels import LABEL, NodeLabeler
    from whathappened.exporters.notices import Notice

    clock = Clock(NOW)
    later = Notice("aws", "instance-event-0a1b", "system-reboot", "scheduled", NOW + timedelta(hours=3))
    labeler = NodeLabeler(client, metadata.url, lambda: "test-sa-token", "ip-10-0-12-34", clock, timedelta(minutes=60))
    labeler([later])  # three hours away: not due, and the first poll says so
    assert metadata.state.node_labels == {"ip-10-0-12-34": {}} and metadata.state.patches == 1
    clock.at = NOW + timedelta(hours=2, minutes=30)  # now within the hour
    labeler([later])
    labeler([later])
    assert metadata.state.node_labels["ip-10-0-12-34"] == {LABEL: "true"} and metadata.state.patches == 2
    labeler([])  # the notice is gone: the label goes
    assert metadata.state.node_labels["ip-10-0-12-34"] == {} and metadata.state.patches == 3
    refused = NodeLabeler(client, metadata.url, lambda: "wrong", "n", clock, timedelta(minutes=60))
    refused([later])  # 401: logged, not raised
    assert "n" not in metadata.state.node_labels and metadata.state.patches == 3
