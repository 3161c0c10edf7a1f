"""The hang analysis: every rank timed out in one collective and nothing decides why. Incidents are built from
torch's own watchdog lines (ProcessGroupNCCL's format) through the log signatures, and rendered in every form."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from datetime import datetime, timedelta

from tests.correlate.builders import T0, at, exited, ran, scope_of, timeline_of
from tests.correlate.test_facts import line, logged
from whathappened.correlate import correlate
from whathappened.correlate.hang import analyze
from whathappened.model import PodInfo, Report, SourceReport, SourceStatus, TimelineEvent, Window
from whathappened.render.html import render_html
from whathappened.render.jsonout import render_json
from whathappened.render.markdown import render_markdown
from whathappened.render.terminal import render_terminal

TIMEOUT_MS = 1_800_000
REPORTED = at(95)  # the first watchdog report; the job froze 30 minutes before


def watchdog(rank: int, seq: int = 99120, op: str = "ALLTOALL_BASE") -> str:
    stamp = REPORTED.strftime("%m%d %H:%M:%S")
    return (
        f"[rank{rank}]:[E{stamp}.000 ProcessGroupNCCL.cpp:632] [Rank {rank}] Watchdog caught collective operation "
        f"timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn=8388608, NumelOut=8388608, "
        f"Timeout(ms)={TIMEOUT_MS}) ran for 1800091 milliseconds before timing out."
    )


def hung_job(
    ranks: Sequence[int], world: int, seqs: dict[int, int] | None = None
) -> tuple[list[PodInfo], list[TimelineEvent]]:
    """One rank per pod (``world`` pods); the ranks in ``ranks`` report the timeout and die, the others do not."""
    pods: list[PodInfo] = []
    events: list[TimelineEvent] = []
    for rank in range(world):
        name, node = f"w-{rank}", f"n{rank}"
        pod, starts = ran(name, node, gpus=8)
        pods.append(pod)
        events += starts
        events.append(
            line(f"[rank{rank}]: Initializing process group: backend=nccl world_size={world}", at(3), name, node)
        )
        if rank == 0:  # rank 0 logs progress; its last line before the freeze is where training got
            for minute, step in ((50, 12250), (60, 12275), (63, 12300)):
                events.append(
                    line(f"step={step} loss=2.18 lr=3.0e-04 tokens_per_sec=406265 mfu=0.41", at(minute), name, node)
                )
        if rank in ranks:
            seq = (seqs or {}).get(rank, 99120)
            events.append(logged(watchdog(rank, seq), REPORTED + timedelta(seconds=2 * rank), name, node))
            events.append(exited(name, node, REPORTED + timedelta(seconds=10 + 2 * rank), 134))
    return pods, events


def report_of(pods: list[PodInfo], events: list[TimelineEvent]) -> Report:
    timeline = timeline_of(events)
    scope = scope_of(pods)
    result = correlate(scope, timeline)
    return Report(
        experiment="exp",
        namespace="ml",
        window=Window(T0, T0 + timedelta(hours=2)),
        sources=(SourceReport("logs", SourceStatus.OK),),
        pods=tuple(pods),
        nodes=(),
        timeline=timeline,
        verdicts=result.verdicts,
        root_cause=result.root_cause,
        next_step=result.next_step,
        lost_work=result.lost_work,
        chain=result.chain,
        hang=result.hang,
    )


def clock(at_: datetime) -> str:
    return at_.strftime("%H:%M:%S UTC")


def test_every_rank_in_one_collective_gives_the_freeze_and_the_last_progress() -> None:
    report = report_of(*hung_job(ranks=range(4), world=4))
    assert report.root_cause is None and {v.root for v in report.verdicts} == {None}
    hang = report.hang
    assert hang is not None
    assert (hang.op, hang.seq, hang.timeout_s) == ("ALLTOALL_BASE", 99120, 1800.0)
    assert hang.froze_at == REPORTED - timedelta(minutes=30) == at(65)
    assert hang.reported == (0, 1, 2, 3) and hang.silent == () and hang.behind == () and hang.world_size == 4
    assert hang.last_progress_at == at(63) and hang.last_progress is not None and "step=12300" in hang.last_progress
    assert any("TORCH_NCCL_DUMP_ON_TIMEOUT=1" in step for step in hang.next_steps)
    assert any("py-spy dump" in step for step in hang.next_steps)
    # the work lost stops at the freeze, and the 30 minutes every rank sat hung count too
    lost = report.lost_work
    assert lost is not None and lost.until == at(65) and lost.collateral_gpu_hours > 4 * 8 * 0.5


def test_a_rank_that_never_reported_is_the_likely_culprit() -> None:
    report = report_of(*hung_job(ranks=(0, 1, 2), world=4))
    assert report.hang is not None and report.hang.silent == (3,)
    assert report.hang.next_steps[0].startswith("look first at rank 3")


def test_a_rank_waiting_on_an_earlier_collective_is_behind() -> None:
    hang = analyze(timeline_of(hung_job(ranks=range(4), world=4, seqs={2: 99119})[1]))
    assert hang is not None and hang.behind == (2,) and hang.seq is None and hang.silent == ()


def test_silence_of_most_of_the_world_names_no_one() -> None:
    # rank 0 of each 8-GPU node logs alone (ranks 0, 8, 16, 24 of 32): the 28 others' silence says nothing
    _pods, events = hung_job(ranks=range(4), world=4)
    events = [
        e
        if "world_size" not in e.summary
        else line(e.summary.replace("world_size=4", "world_size=32"), e.at, e.subject.pod or "", e.subject.node or "")
        for e in events
    ]
    hang = analyze(timeline_of(events))
    assert hang is not None and hang.world_size == 32 and hang.silent == ()


def test_no_hang_without_watchdog_timeouts() -> None:
    _pods, events = hung_job(ranks=(), world=2)
    assert analyze(timeline_of(events)) is None


def test_every_form_says_retryable_next_step_and_the_hang() -> None:
    report = report_of(*hung_job(ranks=range(4), world=4))
    buffer = io.StringIO()
    render_terminal(report, buffer, width=100, color=False)
    terminal = buffer.getvalue()
    froze = clock(at(65))
    for text in (terminal, render_markdown(report), render_html(report)):
        assert "ALLTOALL_BASE SeqNum 99120" in text and froze in text
        assert "step=12300" in text and "TORCH_NCCL_DUMP_ON_TIMEOUT" in text
        assert "no fault found behind the NCCL timeout" in text  # the next step
    assert "retryable   yes" in terminal and "- Retryable: yes" in render_markdown(report)
    assert "trained     1h 03m before the failure" in terminal  # from the pods' start (06:02) to the freeze
    assert "<dt>Retryable</dt><dd>yes" in render_html(report)
    document = json.loads(render_json(report))
    assert document["retryable"] is True and document["next_step"]
    assert document["hang"]["seq"] == 99120 and document["hang"]["froze_at"] == "2026-11-20T07:05:00Z"
    assert document["hang"]["last_progress_at"] == "2026-11-20T07:03:00Z"
    # the answer block comes before the verdicts, and the undecided answer says so
    assert terminal.index("ANSWER  Undecided") < terminal.index("hang ") < terminal.index("Verdicts")
