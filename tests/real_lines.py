"""Real failure lines (tests/data/real-lines.jsonl: verbatim from public issues and docs, each with its source, where
it appears and the cause it should get) placed in a one-pod incident the way real systems put them, written by the
project's generator as a scenario folder.

A container-log line is printed by the pod's own container just before it ends; a kernel-log line is in the kernel
log of the pod's node. The pod ended (Failed, exit 1) and nothing else about it says why: the line is the only
evidence.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from whathappened.synth.common import end, training_chatter
from whathappened.synth.ids import Ids
from whathappened.synth.spec import Recording
from whathappened.synth.story import Setup, begin, day, expect
from whathappened.synth.writer import write_recording

REAL_LINES = Path(__file__).resolve().parent / "data" / "real-lines.jsonl"
PLACED = ("container-log", "kernel-log")


@dataclass(frozen=True)
class RealLine:
    id: str
    text: str
    where: str
    k8s_reason: str | None
    expected_cause: str
    trap: bool
    source_url: str


def real_lines(where: tuple[str, ...] = PLACED) -> list[RealLine]:
    rows = [json.loads(line) for line in REAL_LINES.read_text(encoding="utf-8").splitlines() if line.strip()]
    fields = RealLine.__dataclass_fields__
    return [RealLine(**{k: v for k, v in row.items() if k in fields}) for row in rows if row["where"] in where]


def recording(line: RealLine) -> Recording:
    s = Setup(
        f"real-{line.id}",
        f"One pod ends; the only evidence is a real {line.where} line ({line.source_url}).",
        "realline-run",
        "ml",
        "experiment",
        "pytorchjob",
        "eks-p5",
        "p5-reserved",
        "ml-eks",
        day(11, 21, 6),
        1,
        hours=1.0,
    )
    ids = Ids(20261121)
    rec, nodes, pods = begin(ids, s)
    pod, node = pods[0], nodes[0]
    t = day(11, 21, 6, 40)
    training_chatter(rec, ids, pods, t - timedelta(minutes=2))
    if line.where == "kernel-log":
        rec.kernel(node, t, line.text)
    else:
        rec.say(pod, t, line.text)
    end(pod, t + timedelta(seconds=5), 1)
    return expect(rec, (pod, line.expected_cause, True, None))


def write(line: RealLine, folder: Path) -> Path:
    write_recording(recording(line), folder, seed=20261121)
    return folder
