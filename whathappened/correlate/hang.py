"""The hang analysis: when the ranks died of NCCL watchdog timeouts and nothing decides why, what the timeouts
themselves tell. torch's watchdog prints the work it waited on (``WorkNCCL(SeqNum=99120, OpType=ALLTOALL_BASE,
... Timeout(ms)=1800000) ran for 1800091 milliseconds``), so:
- every rank waiting on the same SeqNum/OpType means the job froze in that one collective, at the first report
  minus the timeout;
- a rank whose timeout names an earlier SeqNum is behind the others (it never reached the collective they wait
  in), and a rank of a known world that never reported is the likelier culprit still: it is stuck elsewhere;
- the last progress line before the freeze says how far training got.
What to run next comes from torch's own debugging tools (its ProcessGroupNCCL environment variables).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta

from whathappened.correlate.facts_run import text_of
from whathappened.correlate.facts_text import global_rank_in, world_size_in
from whathappened.kinds import Kind
from whathappened.model import Hang, TimelineEvent

# a training loop's progress line: "step=12300 loss=2.18", "iteration 1200/5000 | lm loss: 2.1", HF's
# "{'loss': 2.1, ..., 'epoch': 0.4}", Lightning's "Epoch 3: 45%|... loss=2.1"
# Two searches per line, not one regex with ".*" between the words: that retried the rest of the line from
# every "step" of a line that never says loss (quadratic); the first counter of a line is the only one to try.
_COUNTER = re.compile(r"\b(?:global[_ ]step|step|iteration|iter)\b\s{0,8}[=:]?\s{0,8}\d", re.IGNORECASE)
_LOSS = re.compile(r"\bloss\b", re.IGNORECASE)
_AFTER_LOSS = re.compile(r"\b(?:step|iteration|epoch)\b", re.IGNORECASE)


def is_progress(text: str) -> bool:
    for line in text.split("\n"):
        counter = _COUNTER.search(line)
        if counter and _LOSS.search(line, counter.end()):
            return True
        loss = _LOSS.search(line)
        if loss and _AFTER_LOSS.search(line, loss.end()):
            return True
    return False


# a silent rank is named only when few are missing: when most of a world never logs (rank 0 of each node only,
# say), the silence says nothing about who hung
MAX_SILENT = 2

STEPS = (
    "while it hangs, run py-spy dump --native --pid <trainer pid> in each rank's container to see the Python and "
    "C++ stack each rank waits in",
    "rerun with TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 (the flight recorder dumps every "
    "rank's last collectives at the timeout, to TORCH_NCCL_DEBUG_INFO_TEMP_FILE) and NCCL_DEBUG=INFO "
    "NCCL_DEBUG_SUBSYS=INIT,NET to see which rank never entered the collective",
)


def analyze(timeline: Sequence[TimelineEvent]) -> Hang | None:
    timeouts = [e for e in timeline if e.kind == Kind.NCCL_TIMEOUT]
    if not timeouts:
        return None
    ops = Counter(str(e.attrs["op"]) for e in timeouts if e.attrs.get("op"))
    op = ops.most_common(1)[0][0] if ops else None
    last_seq: dict[int, int] = {}
    seqs: set[int] = set()
    for event in timeouts:
        seq = _int(event.attrs.get("seq"))
        rank = _rank(event)
        if seq is not None:
            seqs.add(seq)
        if rank is not None and seq is not None:
            last_seq[rank] = max(seq, last_seq.get(rank, seq))
    reported = tuple(sorted({r for e in timeouts if (r := _rank(e)) is not None}))
    top = max(seqs) if seqs else None
    behind = tuple(sorted(r for r, s in last_seq.items() if top is not None and s < top))
    timeout_s = _timeout_s(timeouts)
    first = min(e.at for e in timeouts)
    froze_at = first - timedelta(seconds=timeout_s) if timeout_s is not None else None
    world = next((w for e in timeline if (w := world_size_in(text_of(e))) is not None), None)
    silent: tuple[int, ...] = ()
    if world is not None and reported:
        missing = tuple(r for r in range(world) if r not in reported)
        silent = missing if 0 < len(missing) <= MAX_SILENT else ()
    progress_at, progress = _last_progress(timeline, froze_at or first)
    steps = list(STEPS)
    suspects = silent or behind
    if suspects:
        named = ", ".join(str(r) for r in suspects)
        steps.insert(0, f"look first at rank {named}: its logs and its node's GPUs and network at the freeze")
    return Hang(
        op=op,
        seq=top if len(seqs) == 1 else None,
        timeout_s=timeout_s,
        froze_at=froze_at,
        reported=reported,
        silent=silent,
        behind=behind,
        world_size=world,
        last_progress=progress,
        last_progress_at=progress_at,
        next_steps=tuple(steps),
    )


def sentence(hang: Hang) -> str:
    """The analysis in one paragraph, for every form."""
    ranks = f"{len(hang.reported)} ranks" if len(hang.reported) != 1 else "1 rank"
    seq = f" SeqNum {hang.seq}" if hang.seq is not None else ""
    what = f"{hang.op or 'a collective'}{seq}"
    parts = [f"{ranks} timed out waiting in {what}"]
    if hang.timeout_s is not None:
        parts[0] += f" after {hang.timeout_s:,.0f} s"
    if hang.froze_at is not None:
        parts.append(f"the job froze at {_clock(hang.froze_at)}")
    if hang.last_progress is not None and hang.last_progress_at is not None:
        parts.append(f"last progress {_clock(hang.last_progress_at)}: {hang.last_progress}")
    if hang.silent:
        parts.append(f"rank {', '.join(map(str, hang.silent))} of {hang.world_size} never reported (likely culprit)")
    elif hang.behind:
        parts.append(f"rank {', '.join(map(str, hang.behind))} waited on an earlier collective (likely culprit)")
    else:
        parts.append("the logs do not tell which rank stopped first")
    return "; ".join(parts) + "."


def _rank(event: TimelineEvent) -> int | None:
    rank = _int(event.attrs.get("rank"))
    return rank if rank is not None else global_rank_in(text_of(event))


def _timeout_s(timeouts: Sequence[TimelineEvent]) -> float | None:
    values = Counter(ms for e in timeouts if (ms := _int(e.attrs.get("timeout_ms"))) is not None)
    return values.most_common(1)[0][0] / 1000 if values else None


def _last_progress(timeline: Sequence[TimelineEvent], until: datetime) -> tuple[datetime | None, str | None]:
    best: TimelineEvent | None = None
    for event in timeline:
        later = best is None or event.at >= best.at
        if later and event.at <= until and event.source != "prometheus" and is_progress(text_of(event)):
            best = event
    if best is None:
        return None, None
    return best.at, " ".join(text_of(best).split())[:120]


def _clock(at: datetime) -> str:
    return at.strftime("%H:%M:%S UTC")


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        return int(str(value)) if value is not None else None
    except ValueError:
        return None
