"""The log lines other sources read are read by the log source's signatures: the containers' last lines the
Kubernetes API served (``kubectl logs --previous``) and their termination messages. Without a log store these are a
dead rank's only words; with one, the same happening is not reported twice."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from whathappened.collectors.kubernetes.container_logs import log_events
from whathappened.collectors.logs.elsewhere import MESSAGES, events_from_lines
from whathappened.collectors.logs.parse import match_line

from tests.acceptance import run_cli, scenario_args
from tests.support import load_scenario
from whathappened.kinds import Kind, severity_of
from whathappened.model import Subject, TimelineEvent

T0 = datetime(2026, 11, 20, 6, tzinfo=UTC)
RANK0 = Subject("ml", "train-master-0", "pytorch", "node-0")
SCENARIOS = Path(__file__).parents[2] / "scenarios"

OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.12 GiB. GPU 0 has a total capacity of 79.14 GiB "
    "of which 1.94 GiB is free."
)
TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/workspace/train.py", line 310, in do_train',
    "    loss = model(batch)",
    "ValueError: bad config key lr_schedule",
]


def tail(
    lines: list[str],
    subject: Subject = RANK0,
    source: str = "kubernetes",
    previous: bool = False,
    apart: timedelta = timedelta(seconds=1),
    start: datetime = T0,
) -> list[TimelineEvent]:
    """Lines as the Kubernetes collector reads ``kubectl logs --timestamps`` (a second apart unless told); with
    another ``source``, as that source would hold the same lines."""
    raw = "".join(f"{(start + apart * i).isoformat().replace('+00:00', 'Z')} {text}\n" for i, text in enumerate(lines))
    read = log_events(raw.encode(), subject, previous, "kubernetes")
    return read if source == "kubernetes" else [replace(event, source=source) for event in read]


def terminated(
    message: str, at: datetime = T0 + timedelta(minutes=5), exit_code: int = 1, subject: Subject = RANK0
) -> TimelineEvent:
    return TimelineEvent(
        at=at,
        source="kubernetes",
        kind=Kind.CONTAINER_TERMINATED,
        severity=severity_of(Kind.CONTAINER_TERMINATED),
        summary=f"previous container pytorch terminated: Error (exit code {exit_code})",
        subject=subject,
        attrs={"exit_code": exit_code, "reason": "Error", "message": message, "previous": True},
    )


def started(at: datetime, previous: bool = True) -> TimelineEvent:
    return TimelineEvent(
        at=at,
        source="kubernetes",
        kind=Kind.CONTAINER_STARTED,
        severity=severity_of(Kind.CONTAINER_STARTED),
        summary="container pytorch started",
        subject=RANK0,
        attrs={"previous": previous},
    )


def store_event(kind: Kind, at: datetime, container: str | None = "pytorch") -> TimelineEvent:
    """The log store's report of a happening in the rank's container (its shipper may name no container)."""
    return TimelineEvent(
        at=at,
        source="logs",
        kind=kind,
        severity=severity_of(kind),
        summary=str(kind),
        subject=Subject(RANK0.namespace, RANK0.pod, container, RANK0.node),
        attrs={"signature": str(kind)},
    )


def test_the_lines_the_api_served_are_read_by_the_signatures_and_keep_their_source() -> None:
    found = events_from_lines(tail(["step=14600 loss=2.3551", OOM]))
    assert [(e.kind, e.source, e.at, e.subject) for e in found] == [
        (Kind.CUDA_OOM, "kubernetes", T0 + timedelta(seconds=1), RANK0)
    ]
    assert found[0].attrs["signature"] and found[0].raw == {"line": OOM}  # a log line's event (fates.from_log)


def test_a_traceback_is_read_whole_and_a_ranks_prefix_is_taken_off() -> None:
    lines = [f"[rank0]: {line}" for line in TRACEBACK]
    (found,) = events_from_lines(tail(["[rank0]: epoch 3", *lines]))
    assert found.kind == Kind.APP_EXCEPTION and found.at == T0 + timedelta(seconds=4)
    assert (found.attrs["exception"], found.attrs["file"], found.attrs["line"]) == (
        "ValueError",
        "/workspace/train.py",
        310,
    )


def test_a_traceback_cut_off_or_broken_into_is_read_line_by_line() -> None:
    def one_by_one(lines: list[str]) -> list[Kind | None]:  # what the log store makes of them as single lines
        return [hit.signature.kind for text in lines if (hit := match_line(text)) and hit.signature.kind]

    cut = [OOM, *TRACEBACK[:2]]  # the tail ends in it
    assert [e.kind for e in events_from_lines(tail(cut))] == one_by_one(cut)
    # another rank's line in the middle: the traceback is given up and the line after it is still read
    broken = [*(f"[rank0]: {line}" for line in TRACEBACK[:2]), f"[rank1]: {OOM}"]
    assert [e.kind for e in events_from_lines(tail(broken))] == one_by_one(broken)
    assert Kind.CUDA_OOM in one_by_one(broken)


def test_lines_written_at_once_keep_their_order_though_they_share_a_stamp() -> None:
    # the timeline orders ties by their text ("    loss" < "  File" < "Traceback" < "ValueError"): read by seq
    lines = tail(TRACEBACK, apart=timedelta(0))
    (found,) = events_from_lines(sorted(lines, key=lambda e: e.summary))
    assert (found.kind, found.attrs["file"], found.attrs["line"]) == (Kind.APP_EXCEPTION, "/workspace/train.py", 310)


def test_a_launchers_line_inside_a_traceback_is_read_on_its_own() -> None:
    lines = [*TRACEBACK[:3], "failed (exitcode: 1) local_rank: 0 (pid: 4000) of binary: /usr/bin/python", OOM]
    kinds = [e.kind for e in events_from_lines(tail(lines))]
    assert Kind.LAUNCHER_TEARDOWN in kinds and kinds[-1] == Kind.CUDA_OOM


def test_the_previous_container_is_told_apart_from_the_current_one() -> None:
    """The store's report of the current container's happening does not hide the previous container's, an attempt
    earlier: a served line is the store's own only within a minute of it, in the same container."""
    later = T0 + timedelta(minutes=40)
    found = events_from_lines([store_event(Kind.CUDA_OOM, later), *tail([OOM], previous=True)])
    assert [e.kind for e in found] == [Kind.CUDA_OOM]
    assert events_from_lines([store_event(Kind.CUDA_OOM, T0 + timedelta(seconds=20)), *tail([OOM])]) == []
    assert events_from_lines([store_event(Kind.CUDA_OOM, T0, container=None), *tail([OOM])]) == []  # no container named
    sidecar = store_event(Kind.CUDA_OOM, T0, container="metrics-agent")
    assert [e.kind for e in events_from_lines([sidecar, *tail([OOM])])] == [Kind.CUDA_OOM]


def test_a_termination_message_is_the_stores_copy_anywhere_in_its_containers_life() -> None:
    """A message is not stamped (placed at the container's end): the store's copy of its line may be half an hour
    earlier (a rank that printed its error and then waited on a collective until the watchdog ended it)."""
    end = T0 + timedelta(hours=1)
    life = [started(T0), terminated(OOM, end)]
    assert events_from_lines([store_event(Kind.CUDA_OOM, T0 + timedelta(minutes=20)), *life]) == []
    before = store_event(Kind.CUDA_OOM, T0 - timedelta(minutes=30))  # an earlier container instance's
    assert [e.kind for e in events_from_lines([before, *life])] == [Kind.CUDA_OOM]


def test_a_finish_line_in_a_failed_containers_message_is_no_completion() -> None:
    finished = "Training completed. Do not forget to share your model on huggingface.co/models =)"
    assert events_from_lines([terminated("\n".join([finished, "saving to /ckpt", *TRACEBACK]))])[0].kind == (
        Kind.APP_EXCEPTION
    )
    assert all(e.kind != Kind.JOB_COMPLETED for e in events_from_lines([terminated(finished)]))


def test_only_failed_containers_messages_are_read_and_only_the_earliest_ones() -> None:
    assert events_from_lines([terminated(OOM, exit_code=0)]) == []
    pods = [Subject("ml", f"train-worker-{i}", "pytorch", f"node-{i}") for i in range(MESSAGES + 10)]
    ends = [terminated(OOM, T0 + timedelta(seconds=i), subject=pod) for i, pod in enumerate(pods)]
    assert [e.subject for e in events_from_lines(ends)] == pods[:MESSAGES]


def test_a_happening_the_log_store_reported_is_not_reported_again() -> None:
    store = [store_event(Kind.CUDA_OOM, T0)]
    assert events_from_lines([*store, *tail([OOM])]) == []
    other_pod = Subject("ml", "train-worker-0", "pytorch", "node-1")
    assert [e.subject for e in events_from_lines([*store, *tail([OOM], subject=other_pod)])] == [other_pod]
    later = tail([OOM], start=T0 + timedelta(minutes=30))
    assert [e.kind for e in events_from_lines([*store, *later])] == [Kind.CUDA_OOM]  # another happening


def test_a_termination_message_is_read_as_the_containers_last_lines_just_before_it_ended() -> None:
    end = T0 + timedelta(minutes=5)
    found = events_from_lines([terminated("\n".join(["epoch 3 step 100", *TRACEBACK, ""]), end)])
    assert [(e.kind, e.attrs["exception"]) for e in found] == [(Kind.APP_EXCEPTION, "ValueError")]
    assert end - timedelta(seconds=1) < found[0].at < end
    # the same words in the tail the API served are one happening
    assert len(events_from_lines([*tail(TRACEBACK), terminated("\n".join(TRACEBACK), end)])) == 1


def test_the_log_stores_own_lines_and_lines_without_meaning_give_nothing() -> None:
    assert events_from_lines(tail([OOM], source="logs")) == []
    assert events_from_lines(tail(["step=1 loss=2.0", "saving checkpoint"])) == []
    assert events_from_lines([terminated("   \n")]) == []


# --- end to end: a snapshot without a log store ---------------------------------------------------------------


def _without_log_store(scenario: str, folder: Path, previous_before: dict[str, str] | None = None) -> Path:
    """The scenario with its log store's container lines served by the API instead (``kubectl logs --timestamps``,
    one file per container, the lines before a container's restart in its ``.previous.log``), and no store."""
    shutil.copytree(SCENARIOS / scenario, folder)
    store = folder / "logs.ndjson"
    files: dict[Path, list[str]] = defaultdict(list)
    for raw in store.read_text(encoding="utf-8").splitlines()[1::2]:
        doc = json.loads(raw)
        k8s = doc.get("kubernetes") or {}
        if "pod" not in k8s:
            continue  # a node's kernel line: not the API's to serve
        pod, container = k8s["pod"]["name"], k8s["container"]["name"]
        stamp = doc["@timestamp"]
        previous = stamp < (previous_before or {}).get(pod, "")
        path = (
            folder
            / "kubernetes"
            / "logs"
            / k8s["namespace"]
            / pod
            / f"{container}{'.previous' if previous else ''}.log"
        )
        files[path] += [f"{stamp} {line}" for line in doc["message"].split("\n")]
    for path, lines in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    store.unlink()
    return folder


def _explained(folder: Path) -> dict[str, Any]:
    scenario = load_scenario(folder)
    _code, document, err = run_cli(*scenario_args(scenario), "--snapshot", str(folder))
    assert document is not None, err
    return document


def test_without_a_log_store_the_api_served_lines_name_the_cause(tmp_path: Path) -> None:
    document = _explained(_without_log_store("cuda-oom", tmp_path / "incident"))
    assert document["outcome"] == "explained"
    assert (document["root_cause"]["pod"], document["root_cause"]["cause"]) == (
        "dinov2-g14-bs2048-master-0",
        "cuda-oom",
    )
    oom = [e for e in document["timeline"] if e["kind"] == "cuda-oom"]
    assert [e["source"] for e in oom] == ["kubernetes"]


def test_with_the_log_store_too_each_line_is_reported_once(tmp_path: Path) -> None:
    folder = _without_log_store("cuda-oom", tmp_path / "incident")
    shutil.copy(SCENARIOS / "cuda-oom" / "logs.ndjson", folder / "logs.ndjson")
    document = _explained(folder)
    assert [e["source"] for e in document["timeline"] if e["kind"] == "cuda-oom"] == ["logs"]
    assert document["root_cause"]["cause"] == "cuda-oom"


def test_a_termination_message_alone_names_the_cause(tmp_path: Path) -> None:
    folder = tmp_path / "incident"
    shutil.copytree(SCENARIOS / "cuda-oom", folder)
    (folder / "logs.ndjson").unlink()
    pods_path = folder / "kubernetes" / "pods.json"
    pods = json.loads(pods_path.read_text(encoding="utf-8"))
    (master,) = [p for p in pods["items"] if p["metadata"]["name"] == "dinov2-g14-bs2048-master-0"]
    (status,) = master["status"]["containerStatuses"]
    status["state"]["terminated"]["message"] = "\n".join(["step=14600 loss=2.3551", *TRACEBACK[:3], OOM])
    pods_path.write_text(json.dumps(pods), encoding="utf-8")
    document = _explained(folder)
    assert (document["root_cause"]["pod"], document["root_cause"]["cause"]) == (
        "dinov2-g14-bs2048-master-0",
        "cuda-oom",
    )


def test_a_restarted_pods_previous_container_explains_the_attempt_it_ended(tmp_path: Path) -> None:
    restarted = {  # the containers' last starts in pods.json: the lines before them are the previous container's
        "llava-next-34b-sft-master-0": "2026-11-23T09:32:16Z",
        "llava-next-34b-sft-worker-0": "2026-11-23T09:32:04Z",
        "llava-next-34b-sft-worker-1": "2026-11-23T09:32:18Z",
    }
    folder = _without_log_store("restarted-in-place", tmp_path / "incident", restarted)
    assert (folder / "kubernetes/logs/multimodal/llava-next-34b-sft-master-0/pytorch.previous.log").exists()
    document = _explained(folder)
    assert [(a["root_cause"] or {}).get("cause") for a in document["attempts"]] == [
        "gpu-memory-error",
        "application-error",
    ]
    assert document["root_cause"]["summary"].endswith("with KeyError: 'image' at line 218 of dataset.py.")
