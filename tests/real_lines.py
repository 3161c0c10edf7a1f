"""Real failure lines (tests/data/real-lines.jsonl: verbatim from public issues and docs, each with its source, where
it appears and the cause it should get) placed in a one-pod incident the way real systems put them, written by the
project's generator as a scenario folder.

A container-log line is printed by the pod's own container just before it ends; a kernel-log line is in the kernel
log of the pod's node. A Kubernetes event becomes the Event its columns describe (its reason and message, about the
pod, its node or its Job); a pod or container status becomes the pod's status (reason and message, a
DisruptionTarget condition, the Job's condition as the Job controller's Event, a terminated container's reason and
exit code). The pod ended (Failed, exit 1, unless the status says otherwise; never started when the scheduler
could not place it) and nothing else about it says why: the line is the only evidence.
"""

from __future__ import annotations

import dataclasses
import json
import re
import textwrap
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import takewhile
from pathlib import Path

from whathappened.collectors.logs.extractors import named_nodes

from synth.common import end, training_chatter
from synth.ids import Ids
from synth.spec import KEvent, Node, Pod, Recording
from synth.story import Setup, begin, day, expect
from synth.writer import METRICS_FILE, write_recording

SEED = 20261121

REAL_LINES = Path(__file__).resolve().parent / "data" / "real-lines.jsonl"
# More gathered the same way (verbatim, each with its public source): other versions, prefixes and shapes of the
# same families, and more traps; kept apart from the shared reference's copy above.
MORE_REAL_LINES = REAL_LINES.with_name("real-lines-more.jsonl")
# What the stack printed on a real GPU (bench/device/check.sh: PyTorch, CUDA, NCCL and torchrun failing on an H100)
DEVICE_REAL_LINES = REAL_LINES.with_name("device-lines.jsonl")
PLACED = ("container-log", "kernel-log", "k8s-event", "pod-status", "container-status")
NODE_REASONS = frozenset(
    {
        "RebootScheduled",
        "FreezeScheduled",
        "RedeployScheduled",
        "TerminateScheduled",
        "PreemptScheduled",
        "PreemptionScheduled",
        "SpotEvictionIncoming",
        "NodeStatusUnknown",
        "EvictionThresholdMet",
        "NodeHasInsufficientMemory",
        "VMEventScheduled",
        "SystemOOM",
        "KernelPanic",
        # AKS node auto-repair (its reboot, redeploy and reimage actions, each a start and an end)
        *(f"Node{action}{phase}" for action in ("Reboot", "Redeploy", "Reimage") for phase in ("Start", "End")),
    }
)
# NVSentinel's health watches are node conditions ("GpuXidWatchIsNotHealthy", "GpuAllWatchIsNotHealthy", ...)
NODE_REASON_SUFFIX = "WatchIsNotHealthy"
# the EKS node monitoring agent's GPU reasons, numbered (DCGM health codes, Xids)
NODE_REASON_NUMBERED = re.compile(r"^(?:DCGMHealthCode|DCGMFieldError|NvidiaXID)\d+\w*$")
# the Job's Failed condition, which the Job controller also writes as its Event (1.28+: a backoff limit per index)
JOB_REASONS = frozenset({"DeadlineExceeded", "BackoffLimitExceeded", "FailedIndexes", "MaxFailedIndexesExceeded"})
FINISHED_REASONS = frozenset({"Completed", "Succeeded"})
# the topology manager's reason was "Topology Affinity Error" before 1.18
ADMISSION_REASONS = frozenset(
    {
        "UnexpectedAdmissionError",
        "NodeAffinity",
        "TopologyAffinityError",
        "Topology Affinity Error",
        "PodFitsHostPorts",
        "MatchNodeSelector",
    }
)
_ADMISSION_MESSAGE = re.compile(r"^\s*(?:Pod was rejected: |Pod )?Allocate failed due to")
# Events only a pod that never ran gets (the scheduler's and its extenders', HAMi's FilteringFailed, and
# cluster-autoscaler's about a pending pod)
# (failedScheduling: its 2015 spelling; Pending: Kueue holding the workload back, its pods never created; a gang
# scheduler's pod group Unschedulable; a Job controller's FailedCreate: the pod never created)
# a controller's refused creation (the training operator's too): the pod was never made, and no scheduler saw it
NOT_CREATED_REASONS = frozenset({"FailedCreate", "FailedCreatePod"})
NEVER_RAN_REASONS = NOT_CREATED_REASONS | frozenset(
    {"FailedScheduling", "failedScheduling", "NotTriggerScaleUp", "Pending", "Unschedulable", "NotEnoughResources",
     "FilteringFailed"}
)  # fmt: skip
# kubectl describe's and get's event rows: type, reason, age ("2m57s (x5 over 54s)"), source, message; get's object column
# ("node/ip-10-1-2-3"); custom columns (first and last seen, count, source) before the type, the message right after
# the reason
# (get's object column read first: describe's age-and-source columns would also take "node/x    message" apart)
_ROW = re.compile(
    r"^\s*(?:\S+\s+){0,5}?(?:Warning|Normal)\s+(?P<reason>\w+)\s+(?:(?P<object>[a-z][a-z0-9.-]{0,62})/\S+(?:\s+|$)"
    r"|\S+(?: \(x\d+ over \S+\))?\s{2,}[^\n]*?\s{2,}|)(?P<message>[^\n]*?)\s*$"
)
_FIELD = re.compile(r"""^\s*"?(?P<key>[Mm]essage|[Rr]eason|Exit Code|exitCode|Status)"?\s*:\s*(?P<value>.*?),?\s*$""")
_BLOCK_SCALAR = re.compile(r"^[>|][-+]?$")  # YAML's folded or literal block: the value is on the lines below


@dataclass(frozen=True)
class RealLine:
    id: str
    text: str
    where: str
    k8s_reason: str | None
    expected_cause: str
    trap: bool
    source_url: str


def real_lines(where: tuple[str, ...] = PLACED, path: Path = REAL_LINES) -> list[RealLine]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    fields = RealLine.__dataclass_fields__
    return [RealLine(**{k: v for k, v in row.items() if k in fields}) for row in rows if row["where"] in where]


def recording(line: RealLine, agent: str | None = None, split: bool = False) -> Recording:
    """The line's incident; with ``agent``, a container-log line is printed instead by that node agent's pod
    (kube-system) on the experiment pod's node, as aws-node-termination-handler or Karpenter print theirs. With
    ``split``, a log text of several lines is a document per line, a millisecond apart, as a shipper without a
    multiline rule sends them (the default: one document, as one with such a rule, or a paste, holds them)."""
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
    ids = Ids(SEED)
    rec, nodes, pods = begin(ids, s)
    pod, node = pods[0], nodes[0]
    t = day(11, 21, 6, 40)
    training_chatter(rec, ids, pods, t - timedelta(minutes=2))
    texts = [one for one in line.text.split("\n") if one.strip()] if split else [line.text]
    stamps = [t + timedelta(milliseconds=i - len(texts) + 1) for i in range(len(texts))]
    if line.where == "kernel-log":
        for at, text in zip(stamps, texts, strict=True):
            rec.kernel(node, at, _as_the_pods_cgroup(text, pod.uid))
    elif line.where == "container-log" and agent is not None:
        helper = dataclasses.replace(
            pod, name=f"{agent}-x7k2p", namespace="kube-system", uid=ids.uuid("pod", "kube-system", agent),
            labels={"app.kubernetes.io/name": agent}, owner=None, gpu_request=0, gpu_indices=(), runs=[],
        )  # fmt: skip
        rec.pods.append(helper)
        rec.say(helper, t, _about_this_node(line.text, node.name))
    elif line.where == "container-log":
        for at, text in zip(stamps, texts, strict=True):
            rec.say(pod, at, text)
    if line.where in ("k8s-event", "pod-status", "container-status"):
        _place_kubernetes(rec, line, pod, node, t)
    else:
        end(pod, t + timedelta(seconds=5), 1)
    return expect(rec, (pod, line.expected_cause, True, None))


# The pod's cgroup in an OOM kill's lines (cgroup v1 ".../pod<uid>/...", v2's systemd slices "...-pod<uid with _>.slice")
_POD_CGROUP = re.compile(
    r"(?<=kubepods)([/a-z._-]{0,64}?pod)([0-9a-f]{8}([-_])[0-9a-f]{4}\3[0-9a-f]{4}\3[0-9a-f]{4}\3[0-9a-f]{12})"
)


def _as_the_pods_cgroup(text: str, uid: str) -> str:
    """The kernel line about the incident's pod: the UID in its cgroup paths is that pod's, as on the real node."""
    return _POD_CGROUP.sub(lambda m: m.group(1) + uid.replace("-", m.group(3)), text)


def _about_this_node(text: str, node: str) -> str:
    """A node agent's line about the incident's node: the nodes a controller's line names (Karpenter's, the
    termination handler's) are that node, as on the real cluster."""
    for name in named_nodes(text):
        text = text.replace(name, node)
    return text


def _fields(text: str) -> dict[str, str]:
    """reason, message and exit code as kubectl describe, YAML or JSON print them (a quoted YAML message may go on
    over indented lines)."""
    found: dict[str, str] = {}
    lines = text.splitlines()
    for i, raw in enumerate(lines):
        match = _FIELD.match(raw)
        if match is None:
            continue
        key = {"Exit Code": "exit", "exitCode": "exit"}.get(match["key"], match["key"].lower())
        value = match["value"]
        if _BLOCK_SCALAR.match(value):
            value = _block_below(lines[i + 1 :], _indent(raw))
        elif value.startswith("'") and not value.endswith("'"):
            value += " " + " ".join(part.strip() for part in lines[i + 1 : i + 3] if not _FIELD.match(part))
        found.setdefault(key, value.strip("'\" ,;}"))
    return found


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _block_below(lines: list[str], indent: int) -> str:
    """A YAML block scalar's value: the non-blank lines below its key indented deeper than the key, joined."""
    return " ".join(part.strip() for part in _indented_below(lines, indent) if part.strip())


# The container's termination message as kubectl describe, YAML or JSON print it: every line of it
_MESSAGE_START = re.compile(r"""^(?P<indent>\s*)"?[Mm]essage"?\s*:\s*(?P<value>.*?)\s*$""")
_JSON_MESSAGE = re.compile(r'"message"\s*:\s*("(?:[^"\\]|\\.)*")')
# describe's fields after a container state's Message (its value ends at the first of them)
_STATE_FIELD = re.compile(
    r"^\s*(?:Exit Code|Started|Finished|Reason|Signal|Ready|Restart Count|State|Last State|Environment|Mounts|"
    r"Limits|Requests|Liveness|Readiness|Image|Image ID|Port|Host Port|Command|Args|exitCode|finishedAt|startedAt|"
    r"reason|signal|containerID|IP|IPs|Controlled By|Containers|Container ID|Node|Status|Conditions|Volumes|Events|"
    r"QoS Class|Labels|Annotations)\s*:"
)


def _termination_message(text: str) -> str | None:
    """A terminated state's message with its lines: describe's value runs on until the state's next field; a YAML
    block scalar is its indented lines; a quoted YAML or JSON string is decoded (its \\n are lines)."""
    lines = text.splitlines()
    ended = next((i for i, raw in enumerate(lines) if "erminated" in raw), None)  # the state's block, not the pod's
    for i, raw in enumerate(lines):
        if ended is None or i <= ended:
            continue
        start = _MESSAGE_START.match(raw)
        if start is None:
            continue
        value, depth = start["value"], len(start["indent"])
        if _BLOCK_SCALAR.match(value):
            return textwrap.dedent("\n".join(_indented_below(lines[i + 1 :], depth))).strip("\n")
        if value[:1] == '"':
            try:
                return str(json.loads(value.rstrip(",")))
            except ValueError:
                return value.strip('",')
        rest = list(takewhile(lambda part: not _STATE_FIELD.match(part), lines[i + 1 :]))
        return "\n".join([value, *textwrap.dedent("\n".join(rest)).splitlines()]).strip("\n")
    quoted = _JSON_MESSAGE.search(text)  # a JSON status on one line
    return str(json.loads(quoted.group(1))) if quoted else None


def _indented_below(lines: list[str], depth: int) -> list[str]:
    """A YAML block scalar's lines, as written: those below its key indented deeper than the key (blanks too)."""
    return list(takewhile(lambda part: not part.strip() or _indent(part) > depth, lines))


def _ended_state(text: str) -> dict[str, str]:
    """A container's terminated state: kubectl describe's "Last State:" block when the container runs again or
    waits (CrashLoopBackOff) after it ended, else its state."""
    current, _, last = text.partition("Last State:")
    if last and "Terminated" not in current:
        return _fields(last)
    return _fields(text)


@dataclass(frozen=True)
class _Row:
    reason: str
    message: str
    on_node: bool  # `kubectl get events`' object column names a node


_AGE = re.compile(r"(\d+)([dhms])")
_AGE_COLUMN = re.compile(
    r"^\s*(?:(?:\S+\s+)??(?P<get>\d+[dhms]\S*)\s+(?:Warning|Normal)|(?:\S+\s+)?(?:Warning|Normal)\s+\w+\s+(?P<described>\S+))"
)


def _age(raw: str) -> int | None:
    """How long ago a row happened, in seconds, from its age column ("13m", "7m43s", "47m (x4 over 47m)")."""
    found = _AGE_COLUMN.match(raw)
    column = found and (found["get"] or found["described"])
    if not column or not _AGE.match(column):
        return None
    scale = {"d": 86400, "h": 3600, "m": 60, "s": 1}
    return sum(int(n) * scale[unit] for n, unit in _AGE.findall(column))


def _event_rows(text: str) -> list[_Row]:
    """The rows of `kubectl get events` or describe's Events, oldest first (by their age when every row has one)."""
    found = [(raw, _ROW.match(raw)) for raw in text.splitlines()]
    rows = [(raw, m) for raw, m in found if m is not None]
    ages = [_age(raw) for raw, _ in rows]
    if all(a is not None for a in ages):
        rows = [row for _, row in sorted(zip(ages, rows, strict=True), key=lambda pair: -(pair[0] or 0))]
    # a NodeClaim's rows (Karpenter writes one for the node and one for its claim) are about no object here
    return [
        _Row(m["reason"], m["message"].strip(), m["object"] == "node") for _, m in rows if m["object"] != "nodeclaim"
    ]


def _event_row(text: str, reason: str) -> str:
    """The message of the row about ``reason`` (kubectl describe or get), or the text when it is a bare message."""
    for raw in text.splitlines():
        match = _ROW.match(raw)
        if match is not None and match["reason"] == reason:
            return match["message"].strip()
    return _fields(text).get("message") or text.strip()


def _on_the_node(reason: str) -> bool:
    return reason in NODE_REASONS or reason.endswith(NODE_REASON_SUFFIX) or bool(NODE_REASON_NUMBERED.match(reason))


def _refused_at_admission(reason: str, text: str) -> bool:
    """The kubelet's admission refusals: the pod is bound to the node and fails there before any container runs
    (a status quoted without its reason says so in its message)."""
    if not reason:
        return _ADMISSION_MESSAGE.search(text) is not None
    return reason.startswith("OutOf") or reason in ADMISSION_REASONS


def _place_kubernetes(rec: Recording, line: RealLine, pod: Pod, node: Node, t: datetime) -> None:
    reason = line.k8s_reason or ""
    fields = _fields(line.text)
    if _refused_at_admission(reason, line.text):
        message = _event_row(line.text, reason) if line.where == "k8s-event" else fields.get("message") or line.text
        reason = reason or "UnexpectedAdmissionError"
        pod.scheduled, pod.started, pod.ready, pod.final_phase = t - timedelta(seconds=2), None, False, "Failed"
        pod.status_reason, pod.status_message = reason, message.strip()
        rec.events = [e for e in rec.events if e.name != pod.name]
        rec.logs = [entry for entry in rec.logs if entry.pod != pod.name]  # it never ran
        rec.events.append(_event(pod.name, "Pod", pod, t, reason, message.strip(), "kubelet"))
        return
    rows = _event_rows(line.text) if line.where == "k8s-event" else []
    if len(rows) > 1 and (reason not in NEVER_RAN_REASONS or any(r.reason == "Scheduled" for r in rows)):
        # several rows of `kubectl get events` / describe: each the Event it describes, oldest first, seconds apart
        for n, row in enumerate(rows):
            at = t - timedelta(seconds=10 * (len(rows) - 1 - n))
            if row.reason == "Scheduled":
                continue  # the pod was scheduled (as every pod of the incident is)
            if row.on_node or _on_the_node(row.reason):
                rec.events.append(_event(node.name, "Node", pod, at, row.reason, row.message, "kubelet"))
            elif row.reason in JOB_REASONS:
                job = pod.owner.name if pod.owner else pod.name
                rec.events.append(_event(job, "Job", pod, at, row.reason, row.message, "job-controller"))
            else:
                rec.events.append(_event(pod.name, "Pod", pod, at, row.reason, row.message, "kubelet"))
        end(pod, t + timedelta(seconds=5), 1)
        return
    if line.where == "k8s-event":
        message = _event_row(line.text, reason)
        if reason in NEVER_RAN_REASONS:
            pod.node, pod.scheduled, pod.started, pod.ready = None, None, None, False
            pod.unschedulable_message = message
            pod.admitted = reason not in NOT_CREATED_REASONS
            rec.events = [e for e in rec.events if e.name != pod.name]
            rec.logs = [entry for entry in rec.logs if entry.pod != pod.name]  # it never ran
            rec.events.append(_event(pod.name, "Pod", pod, t, reason, message, "default-scheduler"))
            return
        if _on_the_node(reason) or any(row.on_node and row.reason == reason for row in rows):
            rec.events.append(_event(node.name, "Node", pod, t, reason, message, "kubelet"))
        else:
            rec.events.append(_event(pod.name, "Pod", pod, t, reason, message, "kubelet"))
        end(pod, t + timedelta(seconds=5), 1)
        return
    if line.where == "container-status" and line.text.lstrip().startswith("Init Containers:"):
        end(pod, t + timedelta(seconds=5), 1)  # an init container's state: it ran before the pod's own container
        return
    if line.where == "container-status":
        fields = _ended_state(line.text)
        code = int(fields["exit"]) if fields.get("exit", "").lstrip("-").isdigit() else 1
        end(pod, t + timedelta(seconds=5), code, fields.get("reason") or reason or "Error")
        current, _, last = line.text.partition("Last State:")
        pod.term_message = _termination_message(last if last and "Terminated" not in current else line.text)
        return
    message = fields.get("message") or line.text.strip()
    if reason in FINISHED_REASONS or fields.get("status") == "Succeeded":
        # kubectl's STATUS "Completed" or describe's "Status: Succeeded": every container exited 0
        end(pod, t + timedelta(seconds=5), 0, "Completed", "Succeeded")
        return
    if reason == "Unschedulable":  # the PodScheduled condition of a pod the scheduler could not place
        pod.node, pod.scheduled, pod.started, pod.ready = None, None, None, False
        pod.unschedulable_message = message
        rec.events = [e for e in rec.events if e.name != pod.name]
        rec.logs = [entry for entry in rec.logs if entry.pod != pod.name]  # it never ran
        return
    if reason in JOB_REASONS:
        job = pod.owner.name if pod.owner else pod.name
        rec.events.append(_event(job, "Job", pod, t, reason, message, "job-controller"))
        end(pod, t + timedelta(seconds=5), 1)
        return
    # a condition's reason, DisruptionTarget's or Kueue's TerminationTarget's ("StoppedByKueue")
    if reason.startswith(("PreemptionBy", "TerminationBy", "EvictionBy", "DeletionBy", "StoppedBy")):
        pod.disruption = (reason, message, t)
    else:
        pod.status_reason, pod.status_message = reason or None, message
    end(pod, t + timedelta(seconds=5), 137 if reason else 1)


def _event(name: str, kind: str, pod: Pod, t: datetime, reason: str, message: str, component: str) -> KEvent:
    about_pod = kind == "Pod"
    return KEvent(
        at=t,
        reason=reason,
        message=message,
        kind=kind,
        name=name,
        namespace=pod.namespace if kind != "Node" else "default",
        uid=pod.uid if about_pod else "",
        component=component,
        type="Warning",
        api_version="batch/v1" if kind == "Job" else "v1",
    )


# The metrics file of each incident written so far, by all it is made from: most rows' incidents differ in their line
# alone, which the metrics never hold, and writing the node's GPU series was a third of a row's time.
_METRICS: dict[str, bytes] = {}


def _metrics_inputs(rec: Recording) -> str:
    """Everything of a recording the metrics can read: all but its lines, its events and its words about itself."""
    m = rec.meta
    rest = [getattr(rec, f.name) for f in dataclasses.fields(rec) if f.name not in ("meta", "logs", "events")]
    return repr((m.experiment, m.namespace, m.label_key, m.start, m.end, m.captured_at, rest))


def write(line: RealLine, folder: Path, agent: str | None = None, split: bool = False) -> Path:
    rec = recording(line, agent, split)
    key = _metrics_inputs(rec)
    known = _METRICS.get(key)
    write_recording(rec, folder, seed=SEED, metrics=known)
    if known is None:  # (read back only the first time: a copy is what the cache holds already)
        _METRICS[key] = (folder / METRICS_FILE).read_bytes()
    return folder
