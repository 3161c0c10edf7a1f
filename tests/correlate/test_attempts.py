"""An experiment's attempts (CONTRACT.md section 2): grouped by JobSet's restart-attempt label or by the owner's
UID generations, each explained on its own; the answer is the latest attempt's, in every form."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

from tests.correlate.builders import START, at, ev, exited, pod, scope_of, timeline_of
from whathappened.correlate.incidents import INDEX_LABEL, RESTART_LABEL, attempts_of, restart_waves
from whathappened.explain import assemble
from whathappened.gather import Gathered
from whathappened.kinds import Kind
from whathappened.model import SourceReport, SourceStatus
from whathappened.render.jsonout import render_json, schema
from whathappened.render.markdown import render_markdown


def labelled(name: str, attempt: int | None, minutes: float, node: str = "node-a"):
    started = START + timedelta(minutes=minutes)
    one = pod(name, node, started=started)
    return replace(one, labels={RESTART_LABEL: str(attempt)} if attempt is not None else {})


def test_jobset_restart_labels_make_attempts_and_unlabelled_pods_join_the_one_begun() -> None:
    first = [labelled("w-0-a", 0, 0), labelled("w-1-a", 0, 0)]
    second = [labelled("w-0-b", 1, 60), labelled("w-1-b", 1, 60)]
    late = labelled("w-2-b", None, 61)  # known only from a source without labels
    groups = attempts_of([*second, late, *first])
    assert [sorted(p.name for p in g) for g in groups] == [["w-0-a", "w-1-a"], ["w-0-b", "w-1-b", "w-2-b"]]


def test_the_restart_label_as_metrics_and_log_shippers_spell_it() -> None:
    """kube-state-metrics (its allowlist exporting the label) names it label_jobset_sigs_k8s_io_restart_attempt,
    read back without the prefix; a de-dotting shipper writes jobset_sigs_k8s_io/restart-attempt; the API the key
    itself. Pods known each way are grouped by it alike."""
    ksm = [replace(labelled(f"w-{i}-a", None, 0), labels={"jobset_sigs_k8s_io_restart_attempt": "0"}) for i in (0, 1)]
    shipped = replace(labelled("w-0-b", None, 0), labels={"jobset_sigs_k8s_io/restart-attempt": "1"})
    api = labelled("w-1-b", 1, 0)  # created at the same time as the others: only the labels tell them apart
    groups = attempts_of([api, shipped, *ksm])
    assert [sorted(p.name for p in g) for g in groups] == [["w-0-a", "w-1-a"], ["w-0-b", "w-1-b"]]
    index = replace(pod("j-0-x"), labels={"batch_kubernetes_io_job_completion_index": "3"})
    assert index.label(INDEX_LABEL) == "3" and index.label("missing/key") == ""


def test_a_resubmission_is_a_new_owner_uid_under_the_same_name() -> None:
    old = [replace(pod(f"job-{i}-x", started=at(5)), owner_name="job", owner_uid="uid-1") for i in range(2)]
    new = [replace(pod(f"job-{i}-y", started=at(50)), owner_name="job", owner_uid="uid-2") for i in range(2)]
    groups = attempts_of([*new, *old])
    assert [[p.owner_uid for p in g] for g in groups] == [["uid-1", "uid-1"], ["uid-2", "uid-2"]]


def submitted(name: str, owner: str, created: float, ended: float | None, phase: str = "Failed", kind: str = "Job"):
    """A pod of one submission (its owner named anew each time, as a launcher names them)."""
    one = replace(pod(name, phase=phase, started=at(created)), owner_kind=kind, owner_name=owner, owner_uid=owner)
    return replace(one, ended=at(ended) if ended is not None else None)


def test_a_resubmission_under_another_name_is_the_next_attempt() -> None:
    """``train-0412`` failed; the launcher submitted ``train-0412-retry`` (same labels, another name) after every
    pod of the first had ended, and then a third: three attempts, oldest first. Pods known without an owner join
    the attempt begun when they were created."""
    first = [submitted(f"train-0412-{i}-a", "train-0412", 0, 30) for i in range(2)]
    second = [submitted(f"train-0412-retry-{i}-b", "train-0412-retry", 35, 70) for i in range(2)]
    third = [submitted(f"train-0412-retry2-{i}-c", "train-0412-retry2", 75, None, "Running") for i in range(2)]
    ownerless = replace(submitted("train-0412-retry-2-b", "x", 36, 70), owner_name=None, owner_uid=None)
    groups = attempts_of([*third, ownerless, *second, *first])
    assert [sorted(p.name for p in g) for g in groups] == [
        ["train-0412-0-a", "train-0412-1-a"],
        ["train-0412-retry-0-b", "train-0412-retry-1-b", "train-0412-retry-2-b"],
        ["train-0412-retry2-0-c", "train-0412-retry2-1-c"],
    ]


def test_owners_under_other_names_that_overlap_succeed_or_differ_in_kind_are_one_run() -> None:
    """Not resubmissions: a driver Job created while the workers' Job still ran; a data-preparation Job that
    succeeded before training began; an evaluation Job after a failed PyTorchJob; a second owner created while
    one pod of the first had no known end."""
    workers = [submitted(f"js-workers-0-{i}", "js-workers-0", 0, 30) for i in range(2)]
    driver = submitted("js-driver-0-0", "js-driver-0", 10, 30)
    assert [len(g) for g in attempts_of([*workers, driver])] == [3]
    prep = submitted("prep-0", "prep", 0, 10, phase="Succeeded")
    train = [submitted(f"train-{i}", "train", 12, 40) for i in range(2)]
    assert [len(g) for g in attempts_of([prep, *train])] == [3]
    torch = [submitted(f"pt-worker-{i}", "pt", 0, 30, kind="PyTorchJob") for i in range(2)]
    evaluation = submitted("eval-0", "eval", 35, 40)
    assert [len(g) for g in attempts_of([*torch, evaluation])] == [3]
    unended = [submitted("a-0", "a", 0, 30), submitted("a-1", "a", 0, None)]
    assert [len(g) for g in attempts_of([*unended, submitted("b-0", "b", 35, None)])] == [3]


def job_pod(name: str, index: str | None, created: float, ended: float | None):
    one = replace(pod(name, started=at(created)), owner_kind="Job", owner_name="job", owner_uid="uid-1")
    return replace(
        one,
        ended=at(ended) if ended is not None else None,
        labels={INDEX_LABEL: index} if index is not None else {},
    )


def test_a_jobs_replacements_of_failed_pods_are_its_next_attempts() -> None:
    """An indexed Job replaces each failed pod (same Job, same index, a new pod): per index, a replacement created
    after an earlier pod of its index ended is the next attempt; an index that never failed stays in the first."""
    first = [job_pod("job-0-a", "0", 0, 30), job_pod("job-1-a", "1", 0, 30.2), job_pod("job-2-a", "2", 0, None)]
    second = [job_pod("job-0-b", "0", 31, 70), job_pod("job-1-b", "1", 31, 70)]
    third = [job_pod("job-0-c", "0", 71, None)]
    groups = attempts_of([*third, *second, *first])
    assert [sorted(p.name for p in g) for g in groups] == [
        ["job-0-a", "job-1-a", "job-2-a"],
        ["job-0-b", "job-1-b"],
        ["job-0-c"],
    ]


def test_a_job_without_indexes_counts_the_waves_of_ends_before_each_pod() -> None:
    """A Job without completion indexes: its pods that ended together (within two minutes) are one wave, and a pod
    created after n waves is attempt n + 1."""
    first = [job_pod("job-a", None, 0, 30), job_pod("job-b", None, 0, 31)]
    second = [job_pod("job-c", None, 32, None), job_pod("job-d", None, 32, None)]
    assert [sorted(p.name for p in g) for g in attempts_of([*second, *first])] == [
        ["job-a", "job-b"],
        ["job-c", "job-d"],
    ]
    # nothing ended before any pod was created: one run
    assert [len(g) for g in attempts_of([job_pod("job-a", None, 0, 30), job_pod("job-b", None, 1, None)])] == [2]


def test_a_jobset_child_job_that_replaced_its_pods_within_one_restart_attempt_ran_it_twice() -> None:
    """Kueue suspended the JobSet to make room (its pods deleted) and resumed it later: the child Job made new pods
    under the same restart-attempt label. Each wave is an attempt; the JobSet's own restart after it is the next."""

    def child(name: str, index: str, attempt: int, created: float, deleted: float | None, uid: str = "job-uid-1"):
        one = replace(job_pod(name, index, created, None), owner_uid=uid, owner_name="js-workers-0")
        one = replace(one, labels={**one.labels, RESTART_LABEL: str(attempt)})
        return replace(one, deleted=at(deleted) if deleted is not None else None)

    preempted = [child("js-workers-0-0-a", "0", 0, 0, 20), child("js-workers-0-1-a", "1", 0, 0, 20)]
    resumed = [child("js-workers-0-0-b", "0", 0, 45, 80), child("js-workers-0-1-b", "1", 0, 45, 80)]
    restarted = [child(f"js-workers-0-{i}-c", str(i), 1, 81, None, uid="job-uid-2") for i in (0, 1)]
    groups = attempts_of([*restarted, *resumed, *preempted])
    assert [sorted(p.name for p in g) for g in groups] == [
        ["js-workers-0-0-a", "js-workers-0-1-a"],
        ["js-workers-0-0-b", "js-workers-0-1-b"],
        ["js-workers-0-0-c", "js-workers-0-1-c"],
    ]


def test_one_run_is_one_attempt_even_with_several_owners() -> None:
    """A JobSet's replicated Jobs are different owners (names and UIDs): still one run."""
    pods = [replace(pod(f"js-workers-{i}-0-x"), owner_name=f"js-workers-{i}", owner_uid=f"u{i}") for i in range(3)]
    assert [len(g) for g in attempts_of(pods)] == [3]
    assert attempts_of([]) == ()


def test_restarts_close_together_are_one_wave_and_a_restart_nothing_followed_is_none() -> None:
    """A gang's containers restart within minutes of each other: one wave. A restart counter that moved when a
    container died for the last time (it backs off and never starts again) begins no attempt."""
    a, b = pod("w-0", phase="Running"), pod("w-1", phase="Running")
    events = [
        ev(Kind.CONTAINER_RESTARTED, at(20), a.name, "node-a", restarts=1),
        ev(Kind.CONTAINER_RESTARTED, at(21), b.name, "node-a", restarts=1),
        ev(Kind.CONTAINER_STARTED, at(21, 10), a.name, "node-a"),
        ev(Kind.CONTAINER_RESTARTED, at(50), a.name, "node-a", restarts=2),
        ev(Kind.CONTAINER_RESTARTED, at(60), pod("other").name, "node-a", restarts=1),  # not the experiment's
    ]
    assert restart_waves([a, b], timeline_of(events)) == (at(20),)
    assert restart_waves([a, b], timeline_of([*events, ev(Kind.CONTAINER_STARTED, at(50, 10), b.name, "node-a")])) == (
        at(20),
        at(50),
    )


def test_containers_restarted_in_place_are_attempts_of_the_same_pods() -> None:
    """The same two pods, their containers restarted in place after attempt 1's GPU fault; attempt 2 ends in a
    CUDA OOM: each attempt has its own root cause and span, the answer is attempt 2's, one verdict per pod."""
    a, b = replace(pod("w-0"), started=at(30, 10)), replace(pod("w-1"), started=at(30, 10))
    events = [
        ev(Kind.CONTAINER_STARTED, START, a.name, "node-a", previous=True),
        ev(Kind.CONTAINER_STARTED, START, b.name, "node-b", previous=True),
        ev(Kind.GPU_XID, at(29), node="node-a", gpu="3", source="logs", xid=48),
        ev(Kind.CUDA_ERROR, at(29, 2), a.name, "node-a", source="logs", error="uncorrectable ECC error encountered"),
        ev(Kind.CONTAINER_TERMINATED, at(29, 9), a.name, "node-a", exit_code=1, reason="Error", previous=True),
        ev(Kind.NCCL_ERROR, at(29, 20), b.name, "node-b", source="logs"),
        ev(Kind.CONTAINER_TERMINATED, at(29, 26), b.name, "node-b", exit_code=1, reason="Error", previous=True),
        ev(Kind.CONTAINER_RESTARTED, at(30), a.name, "node-a", source="prometheus", restarts=1),
        ev(Kind.CONTAINER_RESTARTED, at(30), b.name, "node-b", source="prometheus", restarts=1),
        ev(Kind.CONTAINER_STARTED, at(30, 10), a.name, "node-a"),
        ev(Kind.CONTAINER_STARTED, at(30, 10), b.name, "node-b"),
        ev(Kind.CUDA_OOM, at(70), b.name, "node-b", source="logs", tried="2.00 GiB", gpu="0"),
        exited(b.name, "node-b", at(70, 8), 1),
        ev(Kind.LAUNCHER_TEARDOWN, at(70, 9), a.name, "node-a", source="logs"),
        exited(a.name, "node-a", at(70, 14), 143),
    ]
    pods = [replace(a, node="node-a"), replace(b, node="node-b")]
    report = assemble(gathered(pods, events))
    assert [t.root_cause.cause if t.root_cause else None for t in report.attempts] == ["gpu-memory-error", "cuda-oom"]
    assert [(t.root_cause.pod if t.root_cause else None) for t in report.attempts] == ["w-0", "w-1"]
    assert [(t.start, t.end) for t in report.attempts] == [(a.created, at(30)), (at(30), at(70, 14))]
    assert report.root_cause is not None and (report.root_cause.pod, report.root_cause.cause) == ("w-1", "cuda-oom")
    assert sorted(v.pod for v in report.verdicts) == ["w-0", "w-1"]
    chain = [report.timeline[i] for i in report.chain]
    assert chain and all(e.at >= at(30) for e in chain)  # the latest attempt's own evidence, whole-timeline indexes
    assert report.timeline[report.root_cause.evidence[0]].kind == Kind.CUDA_OOM


def gathered(pods, events) -> Gathered:
    source = SourceReport(name="kubernetes", status=SourceStatus.OK, detail="")
    return Gathered(scope=scope_of(pods), timeline=timeline_of(events), sources=(source,))


def test_each_attempt_is_explained_and_the_answer_is_the_latest() -> None:
    """Attempt 1 was OOM-killed; JobSet restarted it; attempt 2 died of CUDA OOM: the answer is attempt 2's, and
    the history names both."""
    a, b = labelled("w-0-a", 0, 0), labelled("w-0-b", 1, 30)
    events = [
        ev(Kind.CONTAINER_STARTED, START + timedelta(seconds=20), a.name, "node-a"),
        ev(Kind.OOM_KILLED, at(20), a.name, "node-a", exit_code=137, reason="OOMKilled"),
        exited(a.name, "node-a", at(20), 137, "OOMKilled"),
        ev(Kind.CONTAINER_STARTED, START + timedelta(minutes=30, seconds=20), b.name, "node-a"),
        ev(Kind.CUDA_OOM, at(50), b.name, "node-a", source="logs", tried="2.00 GiB", gpu="0"),
        exited(b.name, "node-a", at(50, 8), 1),
    ]
    report = assemble(gathered([a, b], events))
    assert [(t.number, [p.name for p in t.pods]) for t in report.attempts] == [(1, ["w-0-a"]), (2, ["w-0-b"])]
    assert [t.root_cause.cause if t.root_cause else None for t in report.attempts] == ["oom-killed", "cuda-oom"]
    assert report.root_cause is not None and report.root_cause.pod == "w-0-b"
    assert {v.pod for v in report.verdicts} == {"w-0-a", "w-0-b"}
    document = json.loads(render_json(report))
    assert [x["root_cause"]["cause"] for x in document["attempts"]] == ["oom-killed", "cuda-oom"]
    assert document["root_cause"]["pod"] == "w-0-b"
    assert set(schema()["required"]) <= set(document)
    text = render_markdown(report)
    assert "## Attempts" in text and "attempt 1 (" in text and "attempt 2 (" in text


def test_a_single_run_has_one_attempt_in_json() -> None:
    a = labelled("w-0-a", None, 0)
    events = [exited(a.name, "node-a", at(20), 137, "OOMKilled")]
    document = json.loads(render_json(assemble(gathered([a], events))))
    assert [(x["attempt"], x["pods"]) for x in document["attempts"]] == [(1, ["w-0-a"])]


def test_a_restarted_jobset_from_its_snapshot_shows_both_attempts_and_the_repeat_offender() -> None:
    """The generated JobSet restart (tests/scenarios/jobset-restarted): attempt 1's pods are gone from the API
    and known without their labels; they are still attempt 1, explained on their own."""
    import subprocess

    from tests.acceptance import BIN
    from tests.support import SCENARIOS_DIR

    folder = SCENARIOS_DIR / "jobset-restarted"
    args = [str(BIN), "qwen-32b-sft-r3", "-n", "posttrain", "--snapshot", str(folder)]
    document = json.loads(subprocess.run([*args, "-o", "json"], capture_output=True, text=True, timeout=120).stdout)
    roots = [(a["attempt"], a["root_cause"]["cause"], len(a["pods"])) for a in document["attempts"]]
    assert roots == [(1, "gpu-fallen-off-bus", 3), (2, "gpu-memory-error", 3)]
    assert document["root_cause"]["cause"] == "gpu-memory-error"
    text = subprocess.run([*args, "-o", "markdown"], capture_output=True, text=True, timeout=120).stdout
    assert "caused attempts 1, 2: keep it out of the next attempt" in text
    terminal = subprocess.run([*args, "-o", "rich"], capture_output=True, text=True, timeout=120).stdout
    assert (
        -1
        < terminal.find("history     attempt 1 (")
        < terminal.find("history     attempt 2 (")
        < terminal.find("ROOT CAUSE")
    ), terminal


def test_a_pod_created_a_moment_before_its_labelled_siblings_is_theirs() -> None:
    """Known only from metrics (no labels), created two seconds before the labelled pods and still running when
    they started: the same attempt, not an earlier one."""
    labelled_pods = [labelled("w-0", 0, 0), labelled("w-1", 0, 0)]
    early = replace(labelled("w-2", None, 0), created=labelled_pods[0].created - timedelta(seconds=2), ended=None)
    assert [len(g) for g in attempts_of([*labelled_pods, early])] == [3]


def gone(name: str, created: float | None, ended: float):
    """A pod known only from metrics: no labels, no owner UID; ``created`` None when it was there before the window."""
    one = replace(labelled(name, None, created if created is not None else 0), ended=at(ended))
    return replace(one, created=at(created) if created is not None else None)


def test_a_jobset_restarted_twice_before_its_api_pods_keeps_each_earlier_attempt_apart() -> None:
    """The API holds only the third attempt (restart-attempt 2); the first two are known from metrics alone: the
    first was there before the window (its creation unseen), the second created after every pod of the first had
    ended. Each is an attempt of its own, oldest first."""
    first = [gone("w-0-a", None, 26), gone("w-1-a", None, 26.2)]
    second = [gone("w-0-b", 26.5, 59), gone("w-1-b", 26.5, 59.1)]
    third = [labelled("w-0-c", 2, 60), labelled("w-1-c", 2, 60)]
    groups = attempts_of([*third, *second, *first])
    assert [sorted(p.name for p in g) for g in groups] == [["w-0-a", "w-1-a"], ["w-0-b", "w-1-b"], ["w-0-c", "w-1-c"]]


def test_pods_created_together_or_before_their_siblings_ended_are_one_earlier_attempt() -> None:
    """Without labels, a pod begins an earlier attempt only when it was created well after the one before and
    after every pod of the attempt before had ended: a staggered start or a pod replaced while its siblings ran is
    not a restart."""
    staggered = [gone("w-0-a", 10, 30), gone("w-1-a", 10.5, 30), gone("w-2-a", 11, 30)]
    replaced_early = gone("w-3-a", 20, 30)  # created while the others still ran
    latest = [labelled("w-0-b", 1, 40)]
    groups = attempts_of([*latest, *staggered, replaced_early])
    assert [len(g) for g in groups] == [4, 1]


def test_the_html_picture_marks_where_each_later_attempt_began() -> None:
    import subprocess

    from tests.acceptance import BIN
    from tests.support import SCENARIOS_DIR

    folder = SCENARIOS_DIR / "jobset-restarted"
    args = [str(BIN), "qwen-32b-sft-r3", "-n", "posttrain", "--snapshot", str(folder), "-o", "html"]
    page = subprocess.run(args, capture_output=True, text=True, timeout=120).stdout
    assert '<section class="attempts"><h2>Attempts</h2><ol>' in page
    assert page.count('data-attempt="2"') >= 1 and 'data-attempt="1"' not in page  # the first needs no line


def test_a_long_history_lists_the_first_and_the_latest_attempts_and_counts_the_others() -> None:
    """Hundreds of attempts (a day of a crash loop) in a terminal or markdown report: the first, a count, the
    latest seven; the HTML report lists every one."""
    from whathappened.model import Attempt
    from whathappened.render.answer import HISTORY_LINES, attempt_history

    a = pod("w-0")
    report = assemble(gathered([a], [exited(a.name, "node-a", at(20), 1)]))
    many = replace(
        report, attempts=tuple(Attempt(n, (a,), None, began=at(n), finished=at(n, 30)) for n in range(1, 41))
    )
    lines = attempt_history(many)
    assert len(lines) == HISTORY_LINES + 1
    assert (
        lines[0].startswith("attempt 1 ")
        and lines[1] == "... 32 more attempts (the JSON and HTML reports list every one)"
    )
    assert [line.split()[1] for line in lines[2:]] == [str(n) for n in range(34, 41)]
    assert len(attempt_history(many, limit=None)) == 40
    # an attempt already running when the window began: its start is unknown, and said to be before the window
    there = replace(a, created=None)
    unknown = replace(report, attempts=(Attempt(1, (there,), None, finished=at(5)), *many.attempts[1:2]))
    assert attempt_history(unknown)[0].startswith(f"attempt 1 (before {report.window.start:%H:%M:%S} UTC-")


def test_pods_created_again_under_their_names_are_the_next_attempt() -> None:
    """A Volcano job's RestartJob, a PyTorchJob's ExitCode policy: the failed pods deleted and created again under
    the same names. Attempt 1 ends in the GPU fault, attempt 2 runs; the answer is the last failure's, not
    "no failure", and attempt 1's start is not the new pods' creation."""
    a = replace(pod("w-0", "node-a", started=at(31, 20)), created=at(31), phase="Running")
    b = replace(pod("w-1", "node-b", started=at(31, 20)), created=at(31), phase="Running")
    events = [
        ev(Kind.CONTAINER_STARTED, START, a.name, "node-a"),
        ev(Kind.CONTAINER_STARTED, START, b.name, "node-b"),
        ev(Kind.GPU_XID, at(29), node="node-a", gpu="3", source="logs", xid=79),
        exited(a.name, "node-a", at(29, 9), 1),
        ev(Kind.POD_PHASE, at(29, 10), a.name, "node-a", source="prometheus", phase="Failed"),
        ev(Kind.NCCL_ERROR, at(29, 20), b.name, "node-b", source="logs"),
        exited(b.name, "node-b", at(29, 26), 1),
        ev(Kind.POD_DELETED, at(29, 40), b.name, "node-b"),
        ev(Kind.POD_CREATED, at(31), a.name, "node-a"),
        ev(Kind.POD_PHASE, at(31), b.name, "node-b", source="prometheus", phase="Pending"),
        ev(Kind.CONTAINER_STARTED, at(31, 20), a.name, "node-a"),
        ev(Kind.CONTAINER_STARTED, at(31, 20), b.name, "node-b"),
    ]
    assert restart_waves([a, b], timeline_of(events)) == (at(31),)
    report = assemble(gathered([a, b], events))
    assert [(t.start, t.end) for t in report.attempts] == [(None, at(31)), (at(31), None)]
    assert [t.root_cause.cause if t.root_cause else None for t in report.attempts] == ["gpu-fallen-off-bus", None]
    assert report.root_cause is not None and (report.root_cause.pod, report.root_cause.cause) == (
        "w-0",
        "gpu-fallen-off-bus",
    )
    assert report.outcome == "explained"
    assert {(v.pod, v.cause) for v in report.verdicts} == {("w-0", "gpu-fallen-off-bus"), ("w-1", "nccl-error")}
    # a pod that ended once and was never created again, or an init container's end, begins no attempt
    single = [e for e in events if e.at < at(31)]
    assert restart_waves([a, b], timeline_of(single)) == ()
