"""The regexes that read source text besides the signature table (ranks, traceback frames, OOM sizes, progress
lines, durations, Kubernetes event texts, GPU model names) answer in time linear in the text, and the Kubernetes
log reader reads a redrawn progress bar as its last frame."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from whathappened.collectors.logs import parse as log_parse

from whathappened.errors import UsageError
from whathappened.timeutils import parse_duration

MB = 1_000_000
UNITS = (
    "0123456789", "0123456789abcdef", "QUJDREVGSElKS0xNTk9QUVJTVFVWV1hZWjAxMjM0NTY3ODkrLw==", "a.b-c_d", "abc",
    " ", "\t", "\n", " \n", "(((", ")", "'", '"', ":", ": ", "=", "[", "\\", "ÿ", "\x1b[3", "\r",
    '{"a":[1,2,{"b":"c"}],"d":', "tensor([[ 0.1234, -0.5678,", "45%|████▌     | 450/1000 [00:12<00:15]\r",
)  # fmt: skip
RATIO = 400  # to a plain substring scan of the same text: generous, a loaded 2-core machine varies by 10x
FLOOR_S = 0.25  # below this, a ratio says nothing (short texts, timer resolution)


def _best(call: Callable[[], object], runs: int = 3) -> float:
    took = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        took.append(time.perf_counter() - start)
    return min(took)


def _line(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


# --- every regex that reads source text -----------------------------------------------------------------


def _source_regexes() -> list[tuple[str, re.Pattern[str]]]:
    from whathappened.collectors.kube_objects import parse as kube_parse
    from whathappened.collectors.kube_objects import text as kube_text
    from whathappened.collectors.logs import extractors, signatures
    from whathappened.collectors.prometheus import signals as prom_signals

    from whathappened.correlate import facts_text, hang

    found: list[tuple[str, re.Pattern[str]]] = []
    for module in (signatures, extractors, facts_text, hang, kube_text, kube_parse, prom_signals):
        for name, value in vars(module).items():
            values = value if isinstance(value, tuple | list) else (value,)
            if isinstance(value, dict):
                values = tuple(p for group in value.values() if isinstance(group, tuple) for p in group)
            for item in values:
                item = item[1] if isinstance(item, tuple) and len(item) > 1 else item
                if isinstance(item, re.Pattern):
                    found.append((f"{module.__name__}.{name}", item))
    return found


SOURCE_REGEXES = _source_regexes()


def test_the_source_regexes_are_found() -> None:
    names = {name.rsplit(".", 1)[1] for name, _ in SOURCE_REGEXES}
    assert {"_FRAME", "FINAL", "_GLOBAL_RANK", "_WORLD_SIZE", "_COUNTER", "_OOM_PROCESS", "_PREEMPTOR"} <= names
    assert len(SOURCE_REGEXES) >= 30


@pytest.mark.parametrize(("name", "regex"), SOURCE_REGEXES, ids=[n for n, _ in SOURCE_REGEXES])
def test_every_source_regex_is_linear(name: str, regex: re.Pattern[str]) -> None:
    size = 128 * 1024  # enough for a quadratic search to take seconds
    heads = ("step 1 ", 'File "x', "  rank : 1", "Killed process 1 (", "Preempted by ", "1.5", "[rank1]: ", "loss ")
    for unit in UNITS:
        for line in (_line(unit, size), *(_line(head + unit, size) for head in heads)):
            took = _best(lambda line=line: regex.search(line), runs=1)
            scan = _best(lambda line=line: "\x07never printed\x07" in line)
            assert took <= max(RATIO * scan, FLOOR_S), (name, unit, took, scan)


def test_progress_lines_are_found_in_linear_time() -> None:
    from whathappened.correlate.hang import is_progress

    assert is_progress(" iteration     1200/    5000 | consumed samples: 76800 | lm loss: 2.1E+00 |")
    assert is_progress("{'loss': 2.1, 'grad_norm': 0.9, 'learning_rate': 1e-05, 'epoch': 0.4}")
    assert not is_progress("step 12 started\nloss of connection")
    line = _line("step 1 ", MB)
    assert _best(lambda: is_progress(line)) < FLOOR_S and not is_progress(line)


def test_a_duration_of_a_megabyte_of_digits_is_refused_at_once() -> None:
    start = time.perf_counter()
    with pytest.raises(UsageError):
        parse_duration("1" * MB)
    assert time.perf_counter() - start < FLOOR_S


def test_the_kubernetes_log_reader_keeps_a_line_printed_over_a_progress_bar() -> None:
    from whathappened.collectors.kubernetes.container_logs import log_events

    from whathappened.model import Subject

    raw = (
        b"2026-11-20T06:00:01.000000000Z  10%|\xe2\x96\x88  | 1/10\r 20%|\xe2\x96\x88\xe2\x96\x88 | 2/10\r"
        b"RuntimeError: CUDA error: unspecified launch failure\r\n"
        b"2026-11-20T06:00:02.000000000Z \xff\x00ok\n"
    )
    events = log_events(raw, Subject(namespace="ml", pod="p-0"), previous=False, source="kubernetes")
    assert events[0].attrs["line"] == "RuntimeError: CUDA error: unspecified launch failure"
    assert len(events) == 2
    found = log_parse.match_line(events[0].attrs["line"])
    assert found is not None and found.attrs["error"] == "unspecified launch failure"
