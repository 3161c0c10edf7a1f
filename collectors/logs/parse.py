"""Pure log-store parsers shared by the live log collector and the offline snapshot collector.

Both call the same two functions on ``(index, document)`` pairs: the live collector on what its bounded
queries fetched, the snapshot collector on every document of a recorded ``logs.ndjson``. Every rule that
decides what becomes an event (scope, window, signature match, per-pod cap, ended containers' last lines)
lives here, so a snapshot and a live store that hold the same documents give the same timeline.
"""

from __future__ import annotations

import heapq
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from string import Formatter
from typing import Any

from whathappened.collectors.kube_objects import parse as kube_parse
from whathappened.collectors.logs.blocks import pieces
from whathappened.collectors.logs.discover import SOURCE, Doc, discover_from_documents, near_window
from whathappened.collectors.logs.extractors import Signature, traceback_attrs
from whathappened.collectors.logs.fields import (
    AGENT_NAMESPACES,
    PRESETS,
    FieldMapping,
    Reading,
    as_reading,
    event_of,
    host_of,
    mapping_for,
    message_of,
    name_of,
    reading_for,
    shorten,
    time_of,
)
from whathappened.collectors.logs.linescan import bounded, normalize
from whathappened.collectors.logs.signatures import BY_NAME, SIGNATURES, XID_SEVERITY

from whathappened.kinds import Kind, severity_of
from whathappened.model import PodInfo, Severity, Subject, TimelineEvent, Window
from whathappened.scope import Scope

__all__ = [
    "PRESETS",
    "FieldMapping",
    "Limits",
    "LineMatch",
    "Reading",
    "Target",
    "discover_from_documents",
    "ended_targets",
    "events_from_documents",
    "mapping_for",
    "match_document",
    "match_line",
    "one_json_value",
    "reading_for",
    "signature_event",
]

MAX_ATTR = 200
END_SLACK = timedelta(seconds=5)  # a container's last line is stamped a moment after kubelet saw it end
DOCUMENT_LINES = 100  # of a longer document, the lines read piece by piece at each end (where failures are said)
MAX_JSON_VALUE = 1 << 16  # a notice is a few KB; longer texts are not parsed to find out whether they are one
_PIECE = timedelta(microseconds=1)  # a document's pieces keep their order on the timeline, at its time


@dataclass(frozen=True)
class Limits:
    per_pod: int = 2000  # signature documents per pod (and per node), earliest first
    last_lines: int = 20  # context lines per ended container
    last_line_containers: int = 32  # ended containers given context, earliest ended first


@dataclass(frozen=True)
class LineMatch:
    signature: Signature
    attrs: Mapping[str, Any]
    line: int = 0  # the line of the text the match begins on


@dataclass(frozen=True)
class Target:
    """An ended container (or a pod whose containers are unknown) and when it ended."""

    namespace: str
    pod: str
    container: str | None
    end: datetime


# --- signatures ---------------------------------------------------------------------------------------------


def match_line(text: str) -> LineMatch | None:
    """The first signature that matches, with its attributes; None for an ordinary line. Linear in the line's
    length, whatever it holds (see ``linescan``)."""
    line = bounded(normalize(text))
    context: LineMatch | None = None
    for signature in SIGNATURES:
        found = signature.search(line)
        if not found:
            continue
        match = LineMatch(signature, _attrs(signature, found, line), line.count("\n", 0, found.start()))
        if signature.kind is None:
            # context only (the PCI -> UUID line): a document holding several kernel lines (dmesg captured at
            # once, the 570+ drivers' multi-line reports) goes on to the line that says what happened
            context = context or match
            continue
        if context is not None and _same_pci(context, match) and "uuid" in context.attrs:
            return LineMatch(signature, {"uuid": context.attrs["uuid"], **match.attrs}, match.line)
        return match
    return context


def match_document(text: str) -> list[tuple[int, LineMatch, str]]:
    """(line index, match, text matched) of what a document says. A one-line document is its line's match. A
    document of several lines (a shipper's multiline rule, a paste, a termination message) is each of its pieces'
    (``blocks.pieces``: its lines, a traceback as one; a line repeated, as a launcher's SIGTERM to each worker,
    counted once), the earliest first, as the same lines one document each would be; and the whole text's where it
    says what no piece does (a line wrapped in two, a status block: the piece it begins in says nothing) or more
    than the piece of its kind (torchrun's ChildFailedError record names the failed rank on its later lines). A JSON
    document printed over lines is one thing said (a cloud's notice with its state: a line of it may name a reboot
    the next line calls canceled). Of a very long document only the first and last ``DOCUMENT_LINES`` lines are
    read piece by piece."""
    whole = match_line(text)
    lines = text.split("\n")
    if len(lines) < 2 or one_json_value(text):
        return [(0, whole, text)] if whole is not None else []
    found: list[tuple[int, LineMatch, str]] = []
    said = False  # whether the piece holding the whole text's match said something of its own
    for index, piece in _pieces_at_the_ends(lines):
        hit = match_line(piece) if piece.strip() else None
        if whole is not None and index - piece.count("\n") <= whole.line <= index:
            said = hit is not None
        if hit is not None and (not found or _another(found[-1][1], hit)):
            found.append((index, hit, piece))
    if whole is None:
        return found
    same = next((k for k, (_, hit, _) in enumerate(found) if hit.signature is whole.signature), None)
    if same is not None:
        index, hit, _piece = found[same]
        if whole.attrs.keys() - hit.attrs.keys():  # the whole text says more than the piece: read it whole
            found[same] = (index, LineMatch(hit.signature, {**hit.attrs, **whole.attrs}, hit.line), text)
    elif not said:  # what only the lines together say, where it begins
        found.insert(
            next((k for k, item in enumerate(found) if item[0] > whole.line), len(found)), (whole.line, whole, text)
        )
    return found


# What tells two lines of one signature apart as two happenings, not one repeated: the error code (the driver's
# Xid 38 then its Xid 109 on one GPU; Hydra's banner per rank, a SIGKILL of a peer then a SIGSEGV), where a
# launcher's SIGTERM to each worker differs only by the worker's pid
_CODES = ("xid", "sxid", "signal")


def _another(last: LineMatch, hit: LineMatch) -> bool:
    """Whether ``hit`` says something other than the piece before it (a repeated line is counted once)."""
    return last.signature is not hit.signature or any(last.attrs.get(k) != hit.attrs.get(k) for k in _CODES)


def one_json_value(text: str) -> bool:
    """Whether the text is one JSON object or array (pretty-printed over lines), not a line that opens with a
    bracket (``[rank3]:``, ``[2024-05-01 ...]``, glog's ``[E1120 ...]``)."""
    stripped = text.strip()
    if stripped[:1] not in "{[" or stripped[-1:] not in "}]" or len(stripped) > MAX_JSON_VALUE:
        return False
    try:
        json.loads(stripped)
    except ValueError:
        return False
    return True


def _pieces_at_the_ends(lines: list[str]) -> Iterator[tuple[int, str]]:
    """``blocks.pieces`` of the document, of a long one only its first and last DOCUMENT_LINES lines (each end on
    its own: a traceback the cut breaks is left as lines), at their indexes in the whole."""
    if len(lines) <= 2 * DOCUMENT_LINES:
        yield from pieces(lines)
        return
    yield from pieces(lines[:DOCUMENT_LINES])
    skipped = len(lines) - DOCUMENT_LINES
    yield from ((skipped + index, piece) for index, piece in pieces(lines[skipped:]))


def _same_pci(one: LineMatch, other: LineMatch) -> bool:
    return str(one.attrs.get("pci", "")).lower() == str(other.attrs.get("pci", "")).lower() != ""


def _attrs(signature: Signature, found: re.Match[str], text: str) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for name, value in found.groupdict().items():
        if value is not None and not name[-1].isdigit():
            convert = signature.convert.get(name, str)
            attrs[name] = convert(value)
    attrs.update(signature.fixed)
    if signature.extract is not None:
        attrs.update(signature.extract(found, text))
    if signature.kind is not None and signature.kind is not Kind.APP_EXCEPTION and "Traceback" in text:
        for key, value in traceback_attrs(text).items():
            attrs.setdefault(key, value)
    return {k: _small(v) for k, v in attrs.items() if v is not None}


def _small(value: Any) -> Any:
    return shorten(value, MAX_ATTR) if isinstance(value, str) else value


def _summary(signature: Signature, attrs: Mapping[str, Any], text: str) -> str:
    wanted = {name for _, name, _, _ in Formatter().parse(signature.summary) if name}
    if wanted <= attrs.keys():
        return shorten(signature.summary.format(**attrs))
    return shorten(text)


def _event_in_window(event: TimelineEvent, window: Window) -> bool:
    return near_window(event.at, window)


# --- collection ---------------------------------------------------------------------------------------------


def events_from_documents(
    docs: Iterable[Doc], scope: Scope, reading: Reading | FieldMapping, limits: Limits = Limits()
) -> list[TimelineEvent]:
    """The scope's timeline from log-store documents: signature lines of its pods' containers and of its nodes'
    kernel logs (at most ``limits.per_pod`` per pod or node, earliest first), its archived Events, and the last
    lines of its ended containers for context."""
    pods = {(p.namespace, p.name) for p in scope.pods}
    nodes = set(scope.node_names)
    targets = ended_targets(scope, limits)
    matched: dict[tuple[str, str], list[tuple[Any, ...]]] = defaultdict(list)
    tails: dict[Target, list[tuple[Any, ...]]] = {t: [] for t in targets}
    by_pod: dict[tuple[str, str], list[Target]] = defaultdict(list)
    for target in targets:
        by_pod[(target.namespace, target.pod)].append(target)
    event_docs: list[Mapping[str, Any]] = []
    reading = as_reading(reading)
    for order, (_index, doc) in enumerate(docs):
        event = event_of(doc)
        if event is not None:
            event_docs.append(event)
            continue
        line = _log_line(doc, reading.for_doc(doc), scope.window, pods, nodes)
        if line is None:
            continue
        at, subject, text = line
        hits = match_document(text)
        named_nodes = next((str(hit.attrs["nodes"]) for _, hit, _ in hits if "nodes" in hit.attrs), None)
        if named_nodes is not None and subject.pod is None:
            named = _named_node(subject, named_nodes.split(), nodes)
            if named is None:
                continue  # a cluster-wide controller's line about nodes outside the scope
            subject = named
        key = ("pod", f"{subject.namespace}/{subject.pod}") if subject.pod else ("node", subject.node or "")
        for index, hit, piece in hits:
            matched[key].append((at + _PIECE * index, piece, order, subject, hit))
        for target in by_pod.get((subject.namespace or "", subject.pod or ""), ()):
            _keep_tail(tails[target], target, limits.last_lines, (at, text, order, subject))
    events = _signature_events(matched, limits.per_pod)
    events.extend(_tail_events(tails))
    events.extend(_archived_events(event_docs, scope))
    return sorted(events, key=lambda e: (e.at, e.kind, e.summary))


def _log_line(
    doc: Mapping[str, Any], mapping: FieldMapping, window: Window, pods: set[tuple[str, str]], nodes: set[str]
) -> tuple[datetime, Subject, str] | None:
    at = time_of(doc, mapping)
    if at is None or not window.contains(at):
        return None
    pod = name_of(doc, mapping.pod)
    if pod is not None:
        namespace = name_of(doc, mapping.namespace)
        if (namespace or "", pod) not in pods:
            return _agent_line(doc, mapping, at, namespace, pod, nodes)
        subject = Subject(
            namespace=namespace, pod=pod, container=name_of(doc, mapping.container), node=name_of(doc, mapping.node)
        )
        return at, subject, message_of(doc, mapping)
    host = host_of(doc, mapping, nodes)
    if host is None or host not in nodes:
        return None
    return at, Subject(node=host), message_of(doc, mapping)


def _named_node(subject: Subject, named: list[str], nodes: set[str]) -> Subject | None:
    """A controller's line (Karpenter, aws-node-termination-handler in queue mode) is about the nodes it names, not
    the node its pod runs on: the first of the scope's, or none."""
    if subject.node in named:
        return subject
    ours = [name for name in named if name in nodes]
    return Subject(node=ours[0]) if ours else None


def _agent_line(
    doc: Mapping[str, Any], mapping: FieldMapping, at: datetime, namespace: str | None, pod: str, nodes: set[str]
) -> tuple[datetime, Subject, str] | None:
    """A node agent's line on one of the scope's nodes, as the node's own (the agent is named in the text)."""
    node = name_of(doc, mapping.node)
    if namespace not in AGENT_NAMESPACES or node is None or node not in nodes:
        return None
    return at, Subject(node=node), f"[{namespace}/{pod}] {message_of(doc, mapping)}"


def _keep_tail(heap: list[tuple[Any, ...]], target: Target, size: int, item: tuple[Any, ...]) -> None:
    at, _text, order, subject = item
    if at > target.end + END_SLACK or (target.container and subject.container != target.container):
        return
    entry = (at, order, item)
    if len(heap) < size:
        heapq.heappush(heap, entry)
    elif entry > heap[0]:
        heapq.heapreplace(heap, entry)


def _signature_events(matched: Mapping[tuple[str, str], list[tuple[Any, ...]]], cap: int) -> list[TimelineEvent]:
    events: list[TimelineEvent] = []
    for _key, hits in matched.items():
        hits.sort(key=lambda h: (h[0], h[1], h[2]))
        kept = hits[:cap]
        uuids = {
            h[4].attrs["pci"].lower(): h[4].attrs["uuid"]
            for h in kept
            if h[4].signature.kind is None and "uuid" in h[4].attrs
        }
        settled = _settled(kept)
        for n, (at, text, _order, subject, hit) in enumerate(kept + _pcie_halves_joined(kept)):
            if hit.signature.kind is None or n in settled:
                continue
            attrs = dict(hit.attrs)
            if "pci" in attrs and attrs["pci"].lower() in uuids:
                attrs["uuid"] = uuids[attrs["pci"].lower()]
            attrs["signature"] = hit.signature.name
            events.append(signature_event(at, hit.signature, attrs, subject, text))
    return events


@dataclass(frozen=True)
class Settle:
    """A later line (of the signature ``by``) of the same node or container within ``within`` that settles a line:
    told by the attribute both name (``same``), only a line whose text holds ``only``, by a line whose text holds
    ``by_holding``; an ``earlier`` one: a line just before it that says what it was."""

    by: str
    within: timedelta
    same: str | None = None
    only: str | None = None
    by_holding: str | None = None
    earlier: bool = False


# A line that a later line settles within seconds: a NIC link back up (a flap the traffic rides out), an eviction
# manager that found no pod to evict
SETTLED: Mapping[str, tuple[Settle, ...]] = {
    "nic-link-down": (Settle("nic-link-up", timedelta(seconds=5), same="device"),),
    "kubelet-eviction-pressure": (Settle("kubelet-eviction-none-active", timedelta(seconds=1)),),
    # aws-ofi-nccl's own WARNs as it fails to start ("NET/OFI Creating new endpoint for domain ... failed",
    # "Couldn't open CQ") just before the same process says it did not load: NCCL goes on with its own transports
    "nccl-ofi-warn": (Settle("nccl-ofi-init-failed", timedelta(seconds=1), same="proc"),),
    "cuda-oom": (
        # llama.cpp's failed allocation that it retries without pipeline parallelism (and goes on)
        Settle("llamacpp-alloc-retry", timedelta(seconds=5)),
        # THC's line as the error was raised, that fairseq's first releases caught ("ran out of memory, skipping
        # batch"): only that line, which the error's own traceback follows when nothing caught it (another rank's
        # fatal out-of-memory is no THC line of this one's)
        Settle("cuda-oom-caught", timedelta(seconds=2), only="THCudaCheck FAIL"),
        # TensorRT's builder timing one tactic, scikit-learn's search scoring failed fits as nan (its warning printed
        # before the traceback it holds, or after): both go on
        Settle("tensorrt-tactic-retry", timedelta(seconds=2), only="Cuda Error in allocate"),
        Settle("sklearn-fit-failed", timedelta(seconds=5)),
        Settle("sklearn-fit-failed", timedelta(seconds=5), earlier=True),
    ),
    # a refusal on the pod's filesystem the container went on from: its program ran and raised later
    "pod-filesystem-refused": (
        Settle("python-traceback", timedelta(days=1)),
        Settle("python-exception-line", timedelta(days=1)),
    ),
    # the GPU the program could not use, then its "Falling back to CPU."
    "cuda-no-driver": (Settle("cpu-fallback", timedelta(seconds=2)),),
    # the report lines of a kill of the node's own agent (parse runs both ways: the report comes first)
    # ... and the kill line of the process the summary just before placed outside every pod
    "kernel-oom-killer": (Settle("kernel-oom-node-agent", timedelta(seconds=1), same="pid", earlier=True),),
    "kernel-oom-report": (
        Settle("kernel-oom-node-agent", timedelta(seconds=1)),
        Settle("kernel-oom-node-agent", timedelta(seconds=1), earlier=True),
    ),
    # a supervisor's program that it started again at once (supervisord's "spawned: 'x'" for the same x, gunicorn's
    # "Booting worker": neither side names a program)
    "supervisor-exited": (Settle("supervisor-restarted", timedelta(seconds=10), same="program"),),
    # NCCL's shared memory segment not made because CUDA refused to register it just before (shmutils.cc's "Cuda
    # failure 'invalid argument'"), not for want of room in /dev/shm: the NCCL error decides
    "shm-exhausted": (
        Settle("nccl-warn", timedelta(seconds=1), only="/dev/shm/nccl-", by_holding="Cuda failure", earlier=True),
    ),
}


def _settled(hits: list[tuple[Any, ...]]) -> set[int]:
    """The indexes of the hits a later hit settled (SETTLED)."""
    done: set[int] = set()
    for n, (at, text, _order, _subject, hit) in enumerate(hits):
        for rule in SETTLED.get(hit.signature.name, ()):
            if rule.only is not None and rule.only not in text:
                continue
            if any(
                other.signature.name == rule.by
                and (at - rule.within <= other_at <= at if rule.earlier else at <= other_at <= at + rule.within)
                and (rule.same is None or other.attrs.get(rule.same) == hit.attrs.get(rule.same))
                and (rule.by_holding is None or rule.by_holding in other_text)
                and other is not hit
                for other_at, other_text, _o, _s, other in hits
            ):
                done.add(n)
                break
    return done


# A fatal PCIe error a port received and a GPU below it that cannot recover, each a line of its own (a kernel log
# shipped line by line): one report, so within a second of each other
PCIE_HALVES = ("pcie-port-fatal", "pcie-gpu-unrecovered", "pcie-aer-gpu-lost")
_PORT_FATAL, _GPU_UNRECOVERED, _GPU_LOST = (BY_NAME[name] for name in PCIE_HALVES)
_PCIE_REPORT = timedelta(seconds=1)


def _pcie_halves_joined(hits: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The GPU lost, from the two halves of one AER report on a node (lines one document each, or the pieces of
    one document), for each GPU that no line already reported lost (its own fatal error)."""
    ports = [h for h in hits if h[4].signature is _PORT_FATAL]
    reported = {str(h[4].attrs.get("pci", "")).lower() for h in hits if h[4].signature is _GPU_LOST}
    joined: list[tuple[Any, ...]] = []
    for at, text, order, subject, hit in (h for h in hits if h[4].signature is _GPU_UNRECOVERED):
        pci = str(hit.attrs.get("pci", "")).lower()
        near = next((p for p in ports if abs(p[0] - at) <= _PCIE_REPORT), None)
        if near is None or pci in reported:
            continue
        reported.add(pci)
        attrs = {"pci": hit.attrs["pci"], "aer": near[4].attrs["port"] + ": Uncorrected (Fatal) error received"}
        match = LineMatch(_GPU_LOST, {**attrs, **_GPU_LOST.fixed}, 0)
        joined.append((max(at, near[0]), f"{near[1]}\n{text}", order, subject, match))
    return joined


def signature_event(
    at: datetime, signature: Signature, attrs: dict[str, Any], subject: Subject, text: str, source: str = SOURCE
) -> TimelineEvent:
    """A line that matched a signature as the timeline's event, from ``source`` (the log store unless another source
    read the line: see ``elsewhere``)."""
    kind = signature.kind or Kind.LOG_LINE
    severity: Severity = signature.severity or XID_SEVERITY.get(attrs.get("xid", -1)) or severity_of(kind)
    return TimelineEvent(
        at=at,
        source=source,
        kind=kind,
        severity=severity,
        summary=_summary(signature, attrs, text),
        subject=subject,
        attrs=attrs,
        raw={"line": shorten(text, 4000)},
    )


def _tail_events(tails: Mapping[Target, list[tuple[Any, ...]]]) -> list[TimelineEvent]:
    events = []
    for target, heap in tails.items():
        for at, _order, (_, text, _o, subject) in sorted(heap):
            events.append(
                TimelineEvent(
                    at=at,
                    source=SOURCE,
                    kind=Kind.LOG_LINE,
                    severity=severity_of(Kind.LOG_LINE),
                    summary=shorten(text) or "(empty line)",
                    subject=subject,
                    attrs={"context": "last lines", "ended": target.end},
                    raw={"line": shorten(text, 4000)},
                )
            )
    return events


def _archived_events(docs: list[Mapping[str, Any]], scope: Scope) -> list[TimelineEvent]:
    events = []
    for doc in kube_parse.scope_event_objects(docs, scope):
        event = kube_parse.parse_event(doc, source=SOURCE)
        if event is not None and _event_in_window(event, scope.window):
            events.append(event)
    return events


# --- which containers ended ---------------------------------------------------------------------------------


def ended_targets(scope: Scope, limits: Limits = Limits()) -> list[Target]:
    """The containers whose last lines give context, earliest ended first (the first to die is most often
    the root), at most ``limits.last_line_containers``. A pod that only the log store knows (no phase, no
    container states) is taken to have ended by the window's end: it is gone from the API."""
    found: list[Target] = []
    window = scope.window
    for pod in scope.pods:
        found.extend(_pod_targets(pod, window))
    found.sort(key=lambda t: (t.end, t.namespace, t.pod, t.container or ""))
    return found[: max(0, limits.last_line_containers)] if limits.last_lines > 0 else []


def _pod_targets(pod: PodInfo, window: Window) -> list[Target]:
    pod_end = pod.ended or pod.deleted
    targets = []
    for container in pod.containers:
        if container.init and not container.exit_code:
            continue
        if container.state == "terminated" or container.finished is not None:
            end = container.finished or pod_end or window.end
            targets.append(Target(pod.namespace, pod.name, container.name, _clamp(end, window)))
        if container.last_finished is not None:
            targets.append(Target(pod.namespace, pod.name, container.name, _clamp(container.last_finished, window)))
    if targets:
        return targets
    lifecycle_unknown = pod.phase is None and all(c.state is None for c in pod.containers)
    if pod_end is not None or pod.phase in ("Failed", "Succeeded") or lifecycle_unknown:
        return [Target(pod.namespace, pod.name, None, _clamp(pod_end or window.end, window))]
    return []


def _clamp(at: datetime, window: Window) -> datetime:
    return min(max(at, window.start), window.end)
