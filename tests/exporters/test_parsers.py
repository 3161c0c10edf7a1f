"""The pure parsers and the preflight rule, on the verbatim reference payloads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from whathappened.exporters import aws, azure, gcp
from whathappened.exporters._metadata_http import MetadataFormatError
from whathappened.exporters.notices import evaluate

from tests.doubles.metadata import samples

NOW = datetime(2026, 4, 11, 22, 0, 0, tzinfo=UTC)


def test_azure_live_migration_sequence_keeps_not_before_after_start() -> None:
    sequence = samples()["azure"]["example_sequence_Z1_live_migration"]
    remembered: dict[str, datetime] = {}
    seen = []
    for document in sequence:
        parsed = azure.parse_scheduled_events(document, "WestNO_0", remembered, NOW)
        remembered = {n.event_id: n.not_before for n in parsed.notices if n.not_before}
        seen.append(parsed)
    assert [p.incarnation for p in seen] == [1, 2, 3, 4]
    assert [len(p.notices) for p in seen] == [0, 1, 1, 0]
    scheduled, started = seen[1].notices[0], seen[2].notices[0]
    assert scheduled.event_type == "Freeze" and scheduled.status == "Scheduled"
    assert scheduled.not_before == datetime(2026, 4, 11, 22, 26, 58, tzinfo=UTC)
    assert started.status == "Started" and started.not_before == scheduled.not_before  # NotBefore went blank


def test_azure_resources_filter_to_this_vm() -> None:
    document = samples()["azure"]["example_sequence_Z1_live_migration"][1]
    assert azure.parse_scheduled_events(document, "WestNO_1", {}, NOW).notices
    assert azure.parse_scheduled_events(document, "westno_0", {}, NOW).notices  # Azure names are case-insensitive
    assert not azure.parse_scheduled_events(document, "WestNO_7", {}, NOW).notices


def test_azure_started_without_known_time_is_due_now() -> None:
    document = samples()["azure"]["example_sequence_Z1_live_migration"][2]
    (notice,) = azure.parse_scheduled_events(document, None, {}, NOW).notices
    assert notice.not_before == NOW


def test_azure_spot_preempt_and_approval_body() -> None:
    z = samples()["azure"]
    (notice,) = azure.parse_scheduled_events(z["spot_preempt_example_Z5"], "vm-spot", {}, NOW).notices
    assert (notice.event_type, notice.event_id) == ("Preempt", "C1BF8322-4CBF-4FC4-9C45-B40CF3106D0E")
    assert notice.not_before == datetime(2022, 8, 9, 17, 7, 32, tzinfo=UTC)
    expected = z["approve_request_body_Z1"]["StartRequests"][0]["EventId"]
    assert azure.approval_body([expected]) == z["approve_request_body_Z1"]


@pytest.mark.parametrize("document", [[], {"Events": "nope"}, "text"])
def test_azure_malformed_documents_raise(document: object) -> None:
    with pytest.raises(MetadataFormatError):
        azure.parse_scheduled_events(document, None, {}, NOW)


def test_aws_scheduled_event_go_time_format_and_states() -> None:
    a = samples()["aws"]
    active = a["scheduled_maintenance_example_A1_comment_in_ec2metadata.go"]
    (notice,) = aws.parse_scheduled(active)
    assert (notice.event_id, notice.event_type, notice.status) == (
        "instance-event-0d59937288b749b32",
        "system-reboot",
        "active",
    )
    assert notice.not_before == datetime(2019, 1, 21, 9, 0, 43, tzinfo=UTC)
    assert notice.not_after == datetime(2019, 1, 21, 9, 17, 23, tzinfo=UTC)
    # "1 Jan 2020": Go's unpadded day; a completed event is history, not a notice.
    completed = a["scheduled_maintenance_example_A2_AEMM_README"]
    assert aws.parse_scheduled([completed]) == ()
    reopened = aws.parse_scheduled([{**completed, "State": "active"}])
    assert reopened[0].not_before == datetime(2020, 1, 1, 1, 3, 47, tzinfo=UTC)


def test_aws_spot_action_and_rebalance() -> None:
    a = samples()["aws"]
    spot = aws.parse_spot_action(a["spot_instance_action_example_A2_AEMM_README"])
    assert spot.event_type == "spot-interruption" and spot.status == "terminate"
    assert spot.event_id.startswith("spot-itn-") and spot.event_id == aws.parse_spot_action(dict(spot.raw)).event_id
    assert spot.not_before == datetime(2020, 4, 24, 17, 11, 44, tzinfo=UTC)
    rebalance = aws.parse_rebalance(a["rebalance_recommendation_example_A2"])
    assert rebalance.event_type == "rebalance-recommendation"
    assert rebalance.not_before == datetime(2020, 10, 16, 19, 18, 24, tzinfo=UTC)
    with pytest.raises(MetadataFormatError):
        aws.parse_scheduled(
            [{**a["scheduled_maintenance_example_A1_comment_in_ec2metadata.go"][0], "NotBefore": "soon"}]
        )


def test_gcp_maintenance_event_values() -> None:
    values = samples()["gcp"]["maintenance_event_values"]
    assert gcp.parse_maintenance_event("NONE", "abc", NOW) is None
    for value in ("MIGRATE_ON_HOST_MAINTENANCE", "TERMINATE_ON_HOST_MAINTENANCE"):
        assert value in values
        notice = gcp.parse_maintenance_event(value, "e1", NOW)
        assert notice is not None and notice.event_type == value
        assert notice.not_before == NOW + timedelta(seconds=60)  # the documented 60-second lead
    assert gcp.parse_preempted("TRUE", NOW) is not None and gcp.parse_preempted("FALSE", NOW) is None


def test_gcp_upcoming_maintenance_both_spellings() -> None:
    snake = {
        "type": "SCHEDULED",
        "maintenance_status": "PENDING",
        "window_start_time": "2026-04-12T03:00:00Z",
        "window_end_time": "2026-04-12T07:00:00Z",
        "can_reschedule": True,
        "maintenance_reasons": ["FAILURE_GPU_XID"],
    }
    camel = {
        "type": "SCHEDULED",
        "maintenanceStatus": "PENDING",
        "windowStartTime": "2026-04-12T03:00:00Z",
        "windowEndTime": "2026-04-12T07:00:00Z",
    }
    one, two = gcp.parse_upcoming(snake), gcp.parse_upcoming(camel)
    assert one is not None and two is not None
    assert one.not_before == two.not_before == datetime(2026, 4, 12, 3, 0, tzinfo=UTC)
    assert "FAILURE_GPU_XID" in one.description
    assert gcp.parse_upcoming({}) is None


def test_preflight_rule_window_edges() -> None:
    (notice,) = azure.parse_scheduled_events(samples()["azure"]["spot_preempt_example_Z5"], None, {}, NOW).notices
    start = notice.not_before
    assert start is not None
    assert evaluate([notice], start - timedelta(minutes=61), timedelta(minutes=60)).ok
    due = evaluate([notice], start - timedelta(minutes=59), timedelta(minutes=60))
    assert not due.ok and "Preempt" in due.line() and "in 59 min" in due.line()
    assert not evaluate([notice], start + timedelta(hours=1), timedelta(minutes=60)).ok  # past start: still due
    assert evaluate([], NOW, timedelta(minutes=60)).line().startswith("preflight ok")
