"""The answer block every form opens with, as data: a title, one sentence, then labelled lines (where, retryable,
next step, lost work, last checkpoint, ...). Renderers lay it out; none of them decides what it says.

An undecided report is still an answer: its retryable line and next step come from the verdicts (every death
retryable: retrying is safe), and a hang analysis adds what the collectives' timeouts tell.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from whathappened.correlate.facts_run import describe_gpu
from whathappened.correlate.facts_text import size
from whathappened.correlate.hang import sentence
from whathappened.model import Attempt, Outcome, Report, SourceStatus, Verdict, Window
from whathappened.render.common import title_of, when


@dataclass(frozen=True, slots=True)
class Line:
    label: str
    text: str


@dataclass(frozen=True, slots=True)
class Answer:
    title: str
    sentence: str
    lines: tuple[Line, ...]
    tone: str  # "failure" | "undecided" | "none" | "no-evidence": the renderers' colour
    next_steps: tuple[str, ...] = ()  # further steps after the main one (a hang's what-to-run-next)

    def line(self, label: str) -> str | None:
        return next((line.text for line in self.lines if line.label == label), None)


def retryable(report: Report) -> bool | None:
    """Whether resubmitting as it is can work: the root's answer, else every failed pod's, None if nothing failed."""
    if report.root_cause is not None:
        return report.root_cause.retryable
    if not report.verdicts:
        return None
    return all(v.retryable for v in report.verdicts)


OUTCOME_WORDS = {
    Outcome.EXPLAINED: "explained: a root cause was found",
    Outcome.UNDECIDED: "undecided: pods failed, the evidence does not decide where it began",
    Outcome.NO_FAILURE: "no failure: the sources answered and nothing failed",
    Outcome.NO_EVIDENCE: "no answer: no source could be read",
}


HISTORY_LINES = 8  # attempts a terminal or markdown history lists; more are counted


def attempt_history(report: Report, limit: int | None = HISTORY_LINES) -> list[str]:
    """A restarted or resubmitted experiment's attempts, oldest first, one short line each (none when it ran
    once): "attempt 1 (06:02-06:48): GPU fallen off the bus, pod x on node-19". Past ``limit`` (a day of a crash
    loop is hundreds of attempts) the first and the latest are listed and the others counted."""
    if len(report.attempts) < 2:
        return []
    shown = list(report.attempts)
    hidden = len(shown) - limit if limit is not None and len(shown) > limit else 0
    if hidden:
        shown = [shown[0], *shown[-(limit - 1) :]] if limit is not None else shown
    lines = [_attempt_line(attempt, report.window) for attempt in shown]
    if hidden:
        lines.insert(1, f"... {hidden} more attempts (the JSON and HTML reports list every one)")
    return lines + _repeat_offenders(report)


def _attempt_line(attempt: Attempt, window: Window) -> str:
    # an attempt whose pods were there when the window began (known from metrics alone): its start is not known
    start = _clock(attempt.start, window) if attempt.start else f"before {_clock(window.start, window)}"
    end = _clock(attempt.end, window) if attempt.end else "running"
    root = attempt.root_cause
    said = (
        f"{title_of(root.cause)}, pod {root.pod}" + (f" on {root.node}" if root.node else "")
        if root
        else ("no failure" if attempt.end is None else "undecided")
    )
    return f"attempt {attempt.number} ({start}-{end}, {len(attempt.pods)} pods): {said}"


def _repeat_offenders(report: Report) -> list[str]:
    """A node in more than one attempt's root cause: the thing to take out before resubmitting again."""
    seen: dict[str, list[int]] = {}
    for attempt in report.attempts:
        root = attempt.root_cause
        if root is not None and root.node and root.category == "infrastructure":
            seen.setdefault(root.node, []).append(attempt.number)
    return [
        f"node {node} caused attempts {', '.join(map(str, numbers))}: keep it out of the next attempt"
        for node, numbers in seen.items()
        if len(numbers) > 1
    ]


def outcome_line(report: Report) -> str:
    """One line saying which kind of answer this is, the same in every form."""
    return f"outcome: {OUTCOME_WORDS[report.outcome]}"


def answer(report: Report) -> Answer:
    root = report.root_cause
    if report.outcome is Outcome.NO_EVIDENCE:
        return _no_evidence(report)
    if report.outcome is Outcome.NO_FAILURE:
        answered = ", ".join(s.name for s in report.sources if s.status is SourceStatus.OK)
        finished = sum(1 for v in report.verdicts if v.cause == "completed")
        said = f"No failure found in the window; {answered} answered."
        if finished:
            said = f"{finished} pods finished successfully; no failure found in the window; {answered} answered."
        failed = [Line(s.name, f"{s.status.value}: {s.detail}") for s in report.sources if s.failed]
        if report.next_step:
            failed.append(Line("next", report.next_step))
        return Answer("No failure found", said, tuple(failed), "none")
    lines: list[Line] = []
    if root is not None:
        title, said, tone = title_of(root.cause), root.summary, "failure"
        lines.append(Line("where", _where(root)))
    else:
        causes = sorted({title_of(v.cause) for v in report.verdicts})
        title, tone = "Undecided", "undecided"
        said = (
            f"{len(report.verdicts)} pods failed ({', '.join(causes)}); "
            "the evidence does not decide where the failure began."
        )
        if report.hang is not None:
            lines.append(Line("hang", sentence(report.hang)))
    again = retryable(report)
    if again is not None:
        lines.append(Line("retryable", _retryable_text(again, root)))
    if report.next_step:
        lines.append(Line("next", report.next_step))
    steps = report.hang.next_steps if report.hang is not None else ()
    facts = root.facts if root is not None else _undecided_facts(report)
    for label, text in _fact_lines(report, facts):
        lines.append(Line(label, text))
    return Answer(title, said, tuple(lines), tone, tuple(steps))


def _no_evidence(report: Report) -> Answer:
    """Nothing can be said: never worded as good news. Each configured source says why it gave nothing."""
    configured = [s for s in report.sources if s.status is not SourceStatus.NOT_CONFIGURED]
    if any(s.status is SourceStatus.OK for s in configured):
        sentence = (
            "No answer: the sources that answered hold nothing of this experiment within the window "
            "(its events, if any, fall outside it; widen the window)."
        )
    else:
        sentence = "No answer: no source could be read."
    lines = [Line(s.name, f"{s.status.value}" + (f": {s.detail}" if s.detail else "")) for s in configured]
    if report.next_step:
        lines.append(Line("next", report.next_step))
    return Answer("No answer", sentence, tuple(lines), "no-evidence")


def _undecided_facts(report: Report) -> dict[str, Any]:
    """With no root, how long the job trained counts to when a hang froze it, from its first pod's start."""
    starts = [p.started for p in report.pods if p.started is not None]
    froze = report.hang.froze_at if report.hang is not None else None
    if not starts or froze is None or froze <= min(starts):
        return {}
    return {"trained_s": round((froze - min(starts)).total_seconds())}


def _where(root: Verdict) -> str:
    rank = root.facts.get("rank")
    place = f"pod {root.pod}" + (f" (rank {rank})" if rank is not None else "")
    place += f" on node {root.node or 'unknown'}"
    identity = root.facts.get("gpu_identity")
    if isinstance(identity, Mapping) and identity:
        place += f", {describe_gpu(identity)}"
    elif root.gpu is not None:
        place += f", GPU {root.gpu}"
    return place


def _retryable_text(again: bool, root: Verdict | None) -> str:
    if root is None:
        return "yes: no fault was found that a retry would meet again" if again else "no: fix the cause first"
    confidence = f" (confidence {root.confidence:.0%})"
    return ("yes" if again else "no: fix the cause first") + confidence


def _fact_lines(report: Report, facts: Mapping[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    lost = report.lost_work
    if lost is not None:
        text = f"~{lost.gpu_hours:.1f} GPU-hours since the {lost.basis} at {_clock(lost.since, report.window)}"
        if lost.collateral_gpu_hours:
            text += f", {lost.collateral_gpu_hours:.1f} of them by ranks hung until the watchdog fired"
        out.append(("lost work", text))
    checkpoint = facts.get("checkpoint")
    if isinstance(checkpoint, Mapping):
        step = checkpoint.get("step")
        out.append(
            ("checkpoint", (f"step {step} at " if step is not None else "") + _clock(checkpoint["at"], report.window))
        )
    elif lost is not None and lost.basis == "checkpoint":
        step_text = f"step {lost.checkpoint_step} at " if lost.checkpoint_step is not None else ""
        out.append(("checkpoint", step_text + _clock(lost.since, report.window)))
    elif lost is not None:
        out.append(("checkpoint", "none seen in the logs: the job restarts from its start"))
    trained = facts.get("trained_s")
    if isinstance(trained, int):
        out.append(("trained", f"{_duration(trained)} before the failure"))
    oom = facts.get("oom")
    if isinstance(oom, Mapping):
        out.append(("memory", f"{oom.get('text')}; {oom.get('advice')}"))
    frames = facts.get("frames")
    if isinstance(frames, list) and frames:
        out.append(("traceback", " ← ".join(str(f) for f in reversed(frames))))
    return out


def frames_of(verdict: Verdict) -> list[str]:
    frames = verdict.facts.get("frames")
    return [str(f) for f in frames] if isinstance(frames, list) else []


def _clock(at: datetime, window: Window | None = None) -> str:
    return (when(at, window) if window is not None else at.strftime("%H:%M:%S")) + " UTC"


def _duration(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    minutes = rest // 60
    if hours >= 24:
        return f"{hours // 24}d {hours % 24}h"
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {seconds % 60:02d}s"


__all__ = ["OUTCOME_WORDS", "Answer", "Line", "answer", "frames_of", "outcome_line", "retryable", "size"]
