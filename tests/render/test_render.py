"""Renderers on a hand-built report: the JSON validates against the shipped schema; text outputs say the answer."""

import io
import json
from datetime import UTC, datetime, timedelta

import jsonschema

from whathappened.kinds import Kind
from whathappened.model import (
    LostWork,
    PodInfo,
    Report,
    Severity,
    SourceReport,
    SourceStatus,
    Subject,
    TimelineEvent,
    Verdict,
    Window,
)
from whathappened.render.jsonout import render_json, schema
from whathappened.render.markdown import render_markdown
from whathappened.render.terminal import render_terminal

T0 = datetime(2026, 11, 20, 6, tzinfo=UTC)


def _report() -> Report:
    timeline = (
        TimelineEvent(
            T0 + timedelta(minutes=58),
            "prometheus",
            Kind.GPU_XID,
            Severity.CRITICAL,
            "Xid 79: GPU has fallen off the bus",
            Subject(node="node-a", gpu="5"),
            {"xid": 79},
        ),
        TimelineEvent(
            T0 + timedelta(minutes=58, seconds=4),
            "logs",
            Kind.CUDA_ERROR,
            Severity.ERROR,
            "CUDA error: unspecified launch failure | <b>pipe</b>",
            Subject(namespace="ns", pod="w-1", node="node-a"),
            {"at": T0},
        ),
        TimelineEvent(
            T0 + timedelta(minutes=59),
            "logs",
            Kind.LOG_LINE,
            Severity.INFO,
            "context line",
            Subject(namespace="ns", pod="w-1", node="node-a"),
        ),
        TimelineEvent(
            T0 + timedelta(minutes=88),
            "logs",
            Kind.NCCL_TIMEOUT,
            Severity.ERROR,
            "watchdog timeout",
            Subject(namespace="ns", pod="w-0", node="node-b"),
            {"timeout_ms": 1800000},
        ),
    )
    root = Verdict(
        "w-1",
        "ns",
        "node-a",
        "gpu-fallen-off-bus",
        "infrastructure",
        True,
        True,
        None,
        0.95,
        "GPU 5 on node-a fell off the bus.",
        (0, 1),
        "cordon node-a; resubmitting is safe",
        "5",
        T0 + timedelta(minutes=58, seconds=5),
    )
    collateral = Verdict(
        "w-0", "ns", "node-b", "nccl-timeout", "unknown", True, False, "w-1", 0.8, "Timed out waiting for w-1.", (3,)
    )
    return Report(
        experiment="exp",
        namespace="ns",
        window=Window(T0, T0 + timedelta(hours=2)),
        sources=(
            SourceReport("kubernetes", SourceStatus.OK, "2 pods", 3),
            SourceReport("logs", SourceStatus.TIMEOUT, "no answer within the deadline", 1),
        ),
        pods=(PodInfo("w-0", "ns", "node-b"), PodInfo("w-1", "ns", "node-a", gpus_requested=8)),
        nodes=(),
        timeline=timeline,
        verdicts=(root, collateral),
        root_cause=root,
        next_step="cordon node-a; resubmitting is safe",
        lost_work=LostWork(3.5, T0, T0 + timedelta(minutes=58), "checkpoint"),
        chain=(0, 1),
    )


def test_json_validates_and_indexes_point_into_the_timeline():
    document = json.loads(render_json(_report()))
    jsonschema.validate(document, schema())
    assert document["schema"] == "whathappened/v1"
    assert document["root_cause"]["cause"] == "gpu-fallen-off-bus"
    assert [e["time"] for e in document["timeline"]] == sorted(e["time"] for e in document["timeline"])
    for verdict in document["verdicts"]:
        assert all(0 <= i < len(document["timeline"]) for i in verdict["evidence"])
    assert document["timeline"][1]["attrs"]["at"] == "2026-11-20T06:00:00Z"
    assert document["sources"][1]["status"] == "timeout"


def test_schema_rejects_a_wrong_cause():
    document = json.loads(render_json(_report()))
    document["verdicts"][0]["cause"] = "cosmic-rays"
    try:
        jsonschema.validate(document, schema())
    except jsonschema.ValidationError:
        return
    raise AssertionError("the schema accepted an unknown cause code")


def test_markdown_carries_the_answer_and_escapes_pipes():
    text = render_markdown(_report())
    assert "## Root cause: GPU fell off the bus" in text
    assert "cordon node-a" in text
    assert "\\| <b>pipe</b>" in text  # a pipe in a log line must not break the table
    assert "context line" not in text  # context lines stay out of the main timeline
    assert "logs**: timeout" in text


def test_terminal_report_has_panel_timeline_and_sources():
    buffer = io.StringIO()
    render_terminal(_report(), buffer, width=160, color=False, verbose=True)
    text = buffer.getvalue()
    assert "Root cause: GPU fell off the bus" in text
    assert "node-a" in text and "GPU 5" in text
    assert "sources: kubernetes ok" in text and "logs timeout" in text
    assert "+29m55s" in text  # the NCCL timeout, relative to the root failure (06:58:05)


def test_chain_shows_a_happening_reported_twice_once():
    from dataclasses import replace

    from whathappened.render.common import chain_steps

    report = _report()
    twice = TimelineEvent(
        report.timeline[1].at + timedelta(seconds=20),
        "prometheus",
        Kind.CUDA_ERROR,
        Severity.ERROR,
        "the same error seen again",
        report.timeline[1].subject,
    )
    report = replace(report, timeline=(*report.timeline, twice), chain=(0, 1, 4))
    assert [index for index, _ in chain_steps(report)] == [0, 1]
    assert "the same error seen again" not in render_markdown(report).split("## Verdicts")[0]


def test_terminal_folds_a_big_experiment_and_json_keeps_every_record_on_its_own_line():
    from dataclasses import replace

    base = _report()
    root, collateral = base.verdicts
    many = tuple(replace(collateral, pod=f"w-{i}", summary=f"Timed out waiting for w-1 ({i}).") for i in range(2, 102))
    deaths = tuple(
        TimelineEvent(
            T0 + timedelta(minutes=60, seconds=i),
            "logs",
            Kind.NCCL_TIMEOUT,
            Severity.ERROR,
            f"watchdog timeout {i}",
            Subject(namespace="ns", pod=f"w-{i}", node=f"node-{i}"),
        )
        for i in range(2, 102)
    )
    timeline = (*base.timeline, *deaths)
    chain = (0, 1, *range(len(base.timeline), len(timeline)))
    report = replace(base, timeline=timeline, verdicts=(*many, root), chain=chain)
    buffer = io.StringIO()
    render_terminal(report, buffer, width=200, color=False, verbose=True)
    text = buffer.getvalue()
    assert "GPU 5 on node-a fell off the bus." in text  # the root comes first though it was listed last
    assert "61 more verdicts (61 nccl-timeout, collateral of w-1)" in text
    assert "... 87 more steps" in text and "watchdog timeout 99" not in text.split("Verdicts")[0]
    text = render_json(report)
    records = [json.loads(line.strip().rstrip(",")) for line in text.splitlines() if line.startswith("    {")]
    assert len(records) == 2 + 2 + len(timeline) + len(report.verdicts)  # sources, pods, events, verdicts
    assert sum(1 for r in records if "time" in r) == len(timeline)
    assert len(text.splitlines()) == 1 + 16 + len(records) + 4 + 1  # keys, records, four closing brackets


def test_json_writes_values_the_fast_encoder_refuses_as_text():
    from dataclasses import replace

    base = _report()
    odd = replace(base.timeline[0], attrs={"ratio": float("nan"), "seen": frozenset({"a"}), "at": T0, 3: "three"})
    document = json.loads(render_json(replace(base, timeline=(odd, *base.timeline[1:]))))
    assert document["timeline"][0]["attrs"] == {
        "ratio": "nan",
        "seen": ["a"],
        "at": "2026-11-20T06:00:00Z",
        "3": "three",
    }
    jsonschema.validate(document, schema())


def test_a_long_timeline_keeps_the_root_evidence_not_just_the_last_rows():
    from dataclasses import replace

    from whathappened.render.common import MAX_TIMELINE_ROWS, shown_events

    base = _report()
    later = tuple(
        TimelineEvent(
            T0 + timedelta(minutes=90, seconds=i),
            "kubernetes",
            Kind.CONTAINER_TERMINATED,
            Severity.ERROR,
            f"container of rank {i} terminated",
            Subject(namespace="ns", pod=f"w-{i + 2}", node=f"node-{i}"),
        )
        for i in range(MAX_TIMELINE_ROWS + 100)
    )
    report = replace(base, timeline=(*base.timeline, *later))
    rows = shown_events(report)
    shown = [index for index, _ in rows]
    assert len(rows) == MAX_TIMELINE_ROWS
    assert 0 in shown and 1 in shown  # the Xid and the CUDA error the root verdict cites
    assert shown == sorted(shown)  # still in time order
    assert len(base.timeline) + MAX_TIMELINE_ROWS + 99 not in shown  # the deaths furthest from the failure go
    assert "Xid 79: GPU has fallen off the bus" in render_markdown(report)
