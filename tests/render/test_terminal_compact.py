"""The compact terminal report through the installed CLI (the bundled demo, piped, width from COLUMNS) and on
hand-built reports: answer first and within 25 lines, no word broken, one row per happening, collateral folded."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.correlate.builders import at, ev, exited, ran
from tests.correlate.test_hang import report_of
from whathappened.kinds import Kind
from whathappened.render.terminal import render_terminal
from whathappened.render.terminal_compact import clip, merged_rows, wrap

ANSWER_LABELS = ("where", "retryable", "next", "lost work", "checkpoint", "trained")


def cli(*args: str, columns: int | None = None) -> str:
    path = Path(sys.executable).parent / "whathappened"
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    result = subprocess.run([str(path), *args], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def demo_json() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(cli("demo", "-o", "json"))
    return document


def words_of(document: dict[str, Any]) -> set[str]:
    """Every word the report must show whole: names, and the words of the answer's sentences."""
    names = {p["name"] for p in document["pods"]} | {p["node"] for p in document["pods"] if p["node"]}
    root = document["root_cause"]
    said = " ".join([root["summary"], document["next_step"]])
    return names | {w.strip(".,;:()") for w in said.split() if len(w.strip(".,;:()")) > 2}


@pytest.mark.parametrize("columns", [80, 100, 160])
def test_demo_answer_first_within_the_width_and_no_word_broken(columns: int, demo_json: dict[str, Any]) -> None:
    text = cli("demo", columns=columns)
    lines = text.splitlines()
    tokens = {t.strip(".,;:()[]") for t in text.split()}
    broken = sorted(w for w in words_of(demo_json) if w not in tokens)
    assert broken == [], f"words split across lines at {columns} columns: {broken}"
    assert max(len(x) for x in lines) <= columns
    if columns == 160:
        assert max(len(x) for x in lines) > 100  # the width was taken from COLUMNS, though piped
    # the answer block comes first and alone: title, sentence, then its labelled lines, before anything else
    starts = [i for i, x in enumerate(lines) if x.startswith("ROOT CAUSE  GPU fell off the bus")]
    assert starts == [4] and lines[3].startswith("outcome: explained")  # what kind of answer, then the answer
    labels = [i for i, x in enumerate(lines) if re.match(r"  (" + "|".join(ANSWER_LABELS) + r")\s", x)]
    assert [lines[i].split("  ")[1].strip() for i in labels] == list(ANSWER_LABELS)
    assert labels[-1] < lines.index("How it happened") < lines.index("Verdicts")
    if columns == 100:
        assert labels[-1] < 25  # the whole answer on the first screen
    answer = " ".join(" ".join(lines[: labels[-1] + 1]).split())
    assert "(rank 11)" in answer and "PCI 0004:00:00" in answer and "GPU-061509d3" in answer
    assert "step 13150 at 06:36:50 UTC" in answer and "2.8 of them by ranks hung" in answer
    assert "GPU GPU" not in text


def test_demo_timeline_one_row_per_happening_and_node_named_once(demo_json: dict[str, Any]) -> None:
    text = cli("demo", columns=100)
    timeline = text.split("Timeline by node")[1]
    for node in sorted({p["node"] for p in demo_json["pods"]}):
        assert timeline.count(node) == 1 + timeline.count(f"on {node}")  # its heading, and only where a message says it
    # the container's end came from the API and from kube-state-metrics: one row naming both
    ended = [x for x in timeline.splitlines() if "container pytorch terminated" in x]
    assert len(ended) == 3 and all(x.endswith("[kubernetes+prometheus]") for x in ended)


def test_verbose_gives_the_long_tables() -> None:
    text = cli("demo", "--verbose", columns=100)
    assert "Root cause: GPU fell off the bus" in text and "┃ pod" in text


def test_many_collateral_deaths_fold_into_a_count() -> None:
    pods, events = [], []
    for i in range(12):
        pod, starts = ran(f"job-worker-{i}", f"n{i}")
        pods.append(pod)
        events += starts
    events += [
        ev(Kind.GPU_XID, at(40), node="n0", gpu="2", xid=79, source="logs"),
        exited("job-worker-0", "n0", at(40, 10), 1),
    ]
    for i in range(1, 12):
        events += [
            ev(Kind.NCCL_TIMEOUT, at(50, i), f"job-worker-{i}", f"n{i}", source="logs", timeout_ms=600000),
            exited(f"job-worker-{i}", f"n{i}", at(50, 10 + i), 134),
        ]
    report = report_of(pods, events)
    buffer = io.StringIO()
    render_terminal(report, buffer, width=100, color=False)
    verdicts = buffer.getvalue().split("Verdicts\n")[1].split("\n\n")[0].splitlines()
    assert verdicts[0].startswith("  job-worker-0  ") and "root" in verdicts[0]
    assert verdicts[1] == "  + 11 collateral pods (11 nccl-timeout), caused by job-worker-0; --verbose lists them"
    assert len(verdicts) == 2


def test_rows_of_one_happening_merge_across_sources_only() -> None:
    pod, starts = ran("w-0", "n0")
    events = [
        *starts,
        ev(Kind.CUDA_ERROR, at(40), "w-0", "n0", source="logs"),
        exited("w-0", "n0", at(40, 5), 1),
        replace(exited("w-0", "n0", at(40, 41), 1), source="prometheus"),  # kube-state-metrics, a scrape later
        replace(exited("w-0", "n0", at(52), 1), source="prometheus"),  # minutes later: another happening
    ]
    rows = merged_rows(report_of([pod], events))
    ends = [(e.at, sources) for _, e, sources in rows if e.kind == Kind.CONTAINER_TERMINATED]
    assert ends == [(at(40, 5), ("kubernetes", "prometheus")), (at(52), ("prometheus",))]


def test_clip_ends_with_an_ellipsis_at_a_word_boundary() -> None:
    message = "0/64 nodes are available: 64 Insufficient nvidia.com/gpu. preemption: 0/64 nodes are available"
    cut = clip(message, 60)
    assert cut.endswith("…") and len(cut) <= 60 and message.startswith(cut[:-1])
    assert message[len(cut) - 1] == " "  # the cut fell between words
    assert clip("short", 60) == "short"


def test_wrap_keeps_long_names_whole_and_indents() -> None:
    name = "llama-70b-pretrain-r9-worker-0-with-a-very-long-suffix-that-is-wider-than-the-line"
    lines = wrap(f"pod {name} failed at 06:41:24 UTC", 40, "  where  ", "         ")
    assert lines[0] == "  where  pod" and lines[1] == f"         {name}" and lines[2].startswith("         failed")


def test_a_timeline_event_is_shown_relative_to_the_freeze_of_a_hang() -> None:
    from tests.correlate.test_hang import hung_job

    report = report_of(*hung_job(ranks=range(2), world=2))
    buffer = io.StringIO()
    render_terminal(report, buffer, width=120, color=False)
    row = next(x for x in buffer.getvalue().splitlines() if "[rank0]" in x and "Watchdog caught" in x)
    assert "+30m00s" in row and at(95).strftime("%H:%M:%S") in row
