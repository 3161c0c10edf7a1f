"""The escape hatch: the few rules that need more than "an event of this kind on this subject in this window".

Each check takes the case and its rule and returns a finding or None. The cloud-notice checks follow the chain
(notice on the node -> cordon -> drain or eviction -> the pod stops) and require the pod to have been disrupted
after the notice, so an application crash that merely happens on a node with a pending notice keeps its own
cause.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

from whathappened.correlate import words
from whathappened.correlate.evidence import (
    DRAINS,
    ELSEWHERE,
    GPU,
    HOST,
    NODE,
    POD,
    SKEW,
    STOPS,
    Case,
    Finding,
    found,
    in_time_order,
    text_of,
)
from whathappened.correlate.fates import BURST, TERMINAL, is_about
from whathappened.correlate.rule import Rule, supporting
from whathappened.kinds import Kind
from whathappened.model import TimelineEvent

_LOG_LINES = frozenset({Kind.LOG_LINE})
_REACTING = frozenset(
    {Kind.NCCL_ERROR, Kind.NCCL_TIMEOUT, Kind.SIGTERM_RECEIVED, Kind.APP_EXCEPTION, Kind.LAUNCHER_TEARDOWN}
)
OWN_RANK_NEAR = timedelta(seconds=30)  # a launcher reports its own rank's death within its monitor's few seconds

NOTICE_LOOKBACK = timedelta(days=7)  # scheduled maintenance is announced up to days ahead
SPOT_LOOKBACK = timedelta(minutes=30)  # spot notices come 30 s (Azure, GCP) to 2 min (AWS) ahead

POD_DISRUPTIONS = frozenset(
    {
        Kind.EVICTION_API,
        Kind.DISRUPTION_TARGET,
        Kind.KILLING,
        Kind.TAINT_EVICTION,
        Kind.SIGTERM_RECEIVED,
        Kind.POD_DELETED,
    }
)
# What a pod logs or reports when it fails by itself; before a drain, it means the drain did not kill it.
OWN_FAILURES = frozenset(
    {Kind.APP_EXCEPTION, Kind.CUDA_OOM, Kind.CUDA_ERROR, Kind.OOM_KILLED, Kind.NCCL_ERROR, Kind.NCCL_TIMEOUT}
)
NODE_DISRUPTIONS = frozenset(
    {
        Kind.DRAIN,
        Kind.NODE_CORDONED,
        Kind.NODE_SHUTDOWN,
        Kind.NODE_REBOOTED,
        Kind.NODE_NOT_READY,
        Kind.NODE_DELETED,
    }
)
NOTICE_KINDS = frozenset({Kind.MAINTENANCE_NOTICE, Kind.SPOT_INTERRUPTION, Kind.NODE_CONDITION, Kind.NODE_TAINTED})
REBALANCE = frozenset({Kind.REBALANCE_RECOMMENDATION})


def host_maintenance(case: Case, rule: Rule) -> Finding | None:
    notices = case.find(NOTICE_KINDS, NODE, NOTICE_LOOKBACK, SKEW, words.is_maintenance_notice)
    return _notice_chain(case, rule, notices)


def spot_interruption(case: Case, rule: Rule) -> Finding | None:
    notices = case.find(NOTICE_KINDS, NODE, SPOT_LOOKBACK, SKEW, words.is_spot_notice)
    finding = _notice_chain(case, rule, notices)
    if finding is None and notices and not _failed_first(case, SPOT_LOOKBACK + SKEW, case.fate.ended + SKEW):
        # The node vanished with the pod on it: no drain needs to be recorded for a reclaimed spot VM.
        return replace(found(case, rule, notices), confidence=0.8)
    if finding is None and not notices:
        # EC2's rebalance recommendation (a spot instance at raised risk of interruption) is no interruption, but
        # aws-node-termination-handler drains the node on it when told to: a drain or eviction after one is the
        # spot lifecycle's. Alone, or only its "will be cordoned at" time passed, it is nothing.
        rebalance = case.find(REBALANCE, NODE, SPOT_LOOKBACK, SKEW)
        finding = _notice_chain(case, rule, rebalance, timed=False)
    return finding


def _notice_chain(case: Case, rule: Rule, notices: tuple[int, ...], timed: bool = True) -> Finding | None:
    """The notices and the disruption of the pod or its node that followed them; with ``timed``, a notice whose
    "not before" time the pod's end passed is enough (with less confidence)."""
    if not notices:
        return None
    first = min(case.event(i).at for i in notices)
    since = case.fate.ended - first + SKEW
    pod_side = case.find(POD_DISRUPTIONS, POD, since, SKEW)
    node_side = case.find(NODE_DISRUPTIONS, HOST, since, SKEW)
    disrupted = min((case.event(i).at for i in pod_side + node_side), default=case.fate.ended + SKEW)
    if _failed_first(case, since, disrupted):
        return None  # it was failing on its own before anyone drained it: its own rule explains it
    if pod_side:
        finding = found(case, rule, notices, pod_side + node_side)
        return replace(finding, onset=min(case.event(i).at for i in pod_side))
    if node_side:
        return replace(found(case, rule, notices, node_side), confidence=round(rule.confidence - 0.1, 2))
    if timed and _after_not_before(case, notices):
        return replace(found(case, rule, notices), confidence=round(rule.confidence - 0.2, 2))
    return None


def maintenance_notice_only(case: Case, rule: Rule) -> Finding | None:
    """A maintenance notice on the pod's node is all there is (the drain went unrecorded, the notice carries no
    time) and no rule before this one found anything: the likeliest reading, said with less confidence."""
    notices = case.find(NOTICE_KINDS, NODE, NOTICE_LOOKBACK, SKEW, words.is_maintenance_notice)
    if not notices or _failed_first(
        case, case.fate.ended - min(case.event(i).at for i in notices) + SKEW, case.fate.ended + SKEW
    ):
        return None
    return found(case, rule, notices)


def _failed_first(case: Case, since: timedelta, disrupted: datetime) -> bool:
    own = case.find(OWN_FAILURES, POD, since, SKEW, words.own_failure)
    return any(case.event(i).at < disrupted for i in own)


def _after_not_before(case: Case, notices: tuple[int, ...]) -> bool:
    for i in notices:
        not_before = case.event(i).attrs.get("not_before")
        if not_before is not None and hasattr(not_before, "tzinfo") and case.fate.ended >= not_before - SKEW:
            return True
    return False


_ELSEWHERE_FAULTS = frozenset(
    {Kind.NETWORK_ERROR, Kind.GPU_XID, Kind.GPU_MISSING, Kind.GPU_ECC_DBE, Kind.NVLINK_ERROR, Kind.NODE_NOT_READY}
)
_REACTIONS = frozenset({Kind.NCCL_ERROR, Kind.NCCL_TIMEOUT, Kind.LAUNCHER_TEARDOWN})
_FAULT_CAUSES: tuple[tuple[Callable[[TimelineEvent], bool], str], ...] = (
    (lambda e: e.kind == Kind.NETWORK_ERROR, "network-error"),
    (lambda e: e.kind == Kind.NODE_NOT_READY, "node-failure"),
    (words.fallen_off_bus, "gpu-fallen-off-bus"),
    (words.memory_fault, "gpu-memory-error"),
    (words.nvlink_fault, "nvlink-error"),
    (words.hardware_xid, "gpu-hardware-error"),
)


def fault_elsewhere(case: Case, rule: Rule) -> Finding | None:
    """A pod that died reacting (NCCL, the launcher) right after a fault on a node where another rank of the
    experiment runs: an MPI launcher whose worker's InfiniBand link failed, say. The fault is the cause."""
    reactions = case.find(_REACTIONS, POD, rule.before, rule.after)
    if not reactions:
        return None
    first = min(case.event(i).at for i in reactions)
    faults = case.find(_ELSEWHERE_FAULTS, ELSEWHERE, case.fate.ended - first + rule.before, rule.after)
    for i in faults:
        code = next((c for is_, c in _FAULT_CAUSES if is_(case.event(i))), None)
        if code is not None and case.event(i).at <= first + SKEW:
            return replace(found(case, rule, (i,), reactions), cause=code)
    return None


def thermal_shutdown(case: Case, rule: Rule) -> Finding | None:
    """The GPU vanished (or fell off the bus) minutes after it ran hot: it shut down to protect itself."""
    gone = case.find((Kind.GPU_MISSING, Kind.GPU_XID), GPU, rule.before, rule.after, words.fallen_off_bus, True)
    for i in gone:
        lost = case.event(i)
        heat = case.find((Kind.GPU_THERMAL,), GPU, case.fate.ended - lost.at + rule.before, SKEW, since_start=True)
        heat = tuple(
            h for h in heat if case.event(h).at <= lost.at and case.event(h).subject.gpu in (None, lost.subject.gpu)
        )
        if heat:
            return found(case, rule, heat, (i,))
    return None


_STARTED = frozenset({Kind.CONTAINER_STARTED})


def since_last_start(case: Case, rule: Rule) -> Finding | None:
    """Image and configuration failures that kept the pod from running: in a pod none of whose containers started,
    or after its last container start (a restart that could not happen). A pull or a mount that failed and was
    retried before the pod ran is no cause of a death hours later."""
    hits = case.find(rule.kinds, rule.on, rule.before, rule.after, rule.where)
    last = _last_start(case, rule)
    if last is not None:
        # a scheduling failure (a missing claim) is over once the pod was placed: never the cause of a pod that ran;
        # nor a sandbox the kubelet could not make again after the pod's end (its node rebooted, its network gone)
        hits = tuple(
            i
            for i in hits
            if case.event(i).at >= last
            and not _scheduling(case.event(i))
            and not (_sandbox(case.event(i)) and case.event(i).at > case.fate.ended)
        )
    # ... and over once the scheduler gave a later reason (a claim still binding while dynamic provisioning ran, then
    # an hour of "Insufficient nvidia.com/gpu", is no missing volume)
    later = [case.event(i).at for i in case.fate.events if case.event(i).kind == Kind.FAILED_SCHEDULING]
    hits = tuple(i for i in hits if not _scheduling(case.event(i)) or all(t <= case.event(i).at for t in later))
    return found(case, rule, hits) if hits else None


def _last_start(case: Case, rule: Rule, before_end: bool = False) -> datetime | None:
    """When the pod's containers last started: the status's, or the kubelet's last "Started" Event of one of them
    (the status may hold an earlier start); an init container's start says nothing of the others. With
    ``before_end``, a restart after the end (the kubelet bringing the container back after a probe killed it) is
    the next run's and not counted; a failed pull or mount is judged against every start, later ones included (one
    between the end and a restart that came up was retried)."""
    pod = case.fate.pod
    starts = [c.started for c in pod.containers if c.started is not None and not c.init]
    inits = {c.name for c in pod.containers if c.init}
    starts += [
        e.at
        for e in map(case.event, case.find(_STARTED, POD, rule.before, rule.after))
        if not e.attrs.get("init") and e.subject.container not in inits
    ]
    if before_end:
        starts = [at for at in starts if at <= case.fate.ended]
    return max(starts) if starts else None


def probe_since_last_start(case: Case, rule: Rule) -> Finding | None:
    """A health probe's failures and kill after the container's last start: a kill before it ended an earlier run
    of the container (a startup probe's, then the restart came up), not this one."""
    last = _last_start(case, rule, before_end=True)
    hits = tuple(
        i
        for i in case.find(rule.kinds, rule.on, rule.before, rule.after, rule.where)
        if last is None or case.event(i).at >= last
    )
    if not hits:
        return None
    return found(case, rule, hits, supporting(case, rule))


def _scheduling(event: TimelineEvent) -> bool:
    return str(event.attrs.get("reason") or "").lower() == "failedscheduling"


def _sandbox(event: TimelineEvent) -> bool:
    return str(event.attrs.get("reason") or "").lower() == "failedcreatepodsandbox"


def kernel_oom(case: Case, rule: Rule) -> Finding | None:
    """The kernel OOM killer on the pod's node just before it died: this pod's when the cgroup path names its UID,
    another pod's when it names another; with no UID (a node-wide OOM), the pod's when the pod did not exit
    cleanly and no other pod of the scope died on that node in the same minutes."""
    uid = case.fate.pod.uid
    stop = case.first_stop()  # killed after it was told to stop (a drain, a deletion): the stop explains it
    hits = []
    for i in case.find(rule.kinds, HOST, rule.before, SKEW):
        if stop is not None and case.event(i).at >= stop:
            continue
        named = case.event(i).attrs.get("pod_uid")
        if named is not None:
            if uid and named == uid:
                hits.append(i)
        elif not _clean_exit(case):
            hits.append(i)
    return found(case, rule, hits) if hits else None


def _clean_exit(case: Case) -> bool:
    return any(c.exit_code == 0 and c.reason in (None, "Completed") for c in case.fate.pod.containers)


_RAN = frozenset({Kind.CONTAINER_STARTED, Kind.CONTAINER_TERMINATED})


def refused_at_admission(case: Case, rule: Rule) -> Finding | None:
    """The kubelet refused the pod at admission and none of its containers ever ran. A kubelet restart re-admits
    the pods already running there and fails those its device manager cannot place again, in the same words
    ("Allocate failed due to ..."): those ran, and their death is another rule's (the node's, usually)."""
    if any(c.started is not None or c.exit_code is not None for c in case.fate.pod.containers):
        return None
    if any(case.event(i).kind in _RAN for i in case.fate.events):
        return None
    hits = case.find(rule.kinds, rule.on, rule.before, rule.after, rule.where)
    return found(case, rule, hits) if hits else None


# A controller's word that the API server refused to create the pod (the Job's and ReplicaSet's FailedCreate, the
# training operator's FailedCreatePod): read by their messages (a quota as capacity, a refused spec as set-up); any
# other (a webhook out of reach, the API server's timeout) says the pod was never made, not that it could not be
# placed
_NOT_CREATED = frozenset({"FailedCreate", "FailedCreatePod"})


def never_scheduled(case: Case, rule: Rule) -> Finding | None:
    if case.fate.node is not None:
        return None
    if any(
        case.event(i).kind == Kind.KUBE_EVENT and case.event(i).attrs.get("reason") in _NOT_CREATED
        for i in case.fate.events
    ):
        return None
    pending = tuple(i for i in case.fate.events if case.event(i).kind in (Kind.POD_PHASE, Kind.POD_CREATED))
    if pending:
        return replace(found(case, rule, pending), onset=case.event(pending[0]).at)
    return _status_only(case, rule, rule.cause)


def job_deadline(case: Case, rule: Rule) -> Finding | None:
    """The pod's Job hit its deadline or backoff limit and its controller stopped the pod: a pod that had died
    on its own before that (and so used up the backoff limit) keeps its own cause."""
    owner = case.fate.pod.owner_name
    hits = case.find(rule.kinds, rule.on, rule.before, rule.after)
    if owner:
        hits = tuple(i for i in hits if owner.lower() in text_of(case.event(i)))
    if not hits:
        return None
    since = min(case.event(i).at for i in hits) - SKEW
    stops = tuple(i for i in case.find(STOPS, POD, BURST, SKEW) if case.event(i).at >= since)
    return found(case, rule, hits, stops) if stops else None


def job_limit(case: Case, rule: Rule) -> Finding | None:
    """The pod's Job reached its deadline or backoff limit around the pod's end, the pods left in place (no
    controller stopped this one): the Job's ending is all the evidence says."""
    owner = case.fate.pod.owner_name
    hits = case.find(rule.kinds, rule.on, rule.before, rule.after)
    if owner:
        hits = tuple(i for i in hits if owner.lower() in text_of(case.event(i)))
    return found(case, rule, hits) if hits else None


def crash_first(case: Case, rule: Rule) -> Finding | None:
    """The pod's process crashing (a segfault, glibc's abort) before the pod reacted to anything: no NCCL error or
    timeout, CUDA error, SIGTERM, launcher teardown or exception naming a peer on the pod in the minutes before the
    crash. A rank that crashes after such a reaction (a double free as it tears down, after its CUDA error) ended
    with it, and the rules for it read it; a rank that crashed first is where the failure began, whatever its peers
    printed after. Older reactions belong to an attempt the launcher restarted from; a launcher's teardown because
    its own rank crashed (its record of the rank's crash beside it, the lines reordered by the shipper) is the
    crash's, not a reaction before it."""
    hits = case.find(rule.kinds, rule.on, rule.before, rule.after, rule.where)
    stop = case.first_stop()
    hits = tuple(i for i in hits if stop is None or case.event(i).at < stop)
    if not hits:
        return None
    first = min(case.event(i).at for i in hits)
    own = [case.event(i).at for i in case.find(_TEARDOWNS, POD, rule.before, rule.after, words.own_rank_failed)]
    for i in case.find(_BEFORE_A_CRASH, POD, rule.before, rule.after, _before_a_crash):
        event = case.event(i)
        if not first - CRASH_AFTER <= event.at < first:
            continue
        if event.kind == Kind.LAUNCHER_TEARDOWN and any(abs(event.at - at) <= OWN_RANK_NEAR for at in own):
            continue
        return None
    return found(case, rule, hits)


# a crash that follows a reaction within this ended with it (a rank's teardown, the NCCL watchdog's abort)
CRASH_AFTER = timedelta(minutes=2)
_TEARDOWNS = frozenset({Kind.LAUNCHER_TEARDOWN})
_BEFORE_A_CRASH = _REACTING | {Kind.CUDA_ERROR, Kind.CUDA_OOM}


def _before_a_crash(event: TimelineEvent) -> bool:
    return event.kind in (Kind.CUDA_ERROR, Kind.CUDA_OOM) or words.reaction(event) or words.teardown(event)


def teardown_by_launcher(case: Case, rule: Rule) -> Finding | None:
    """torchrun/mpirun tearing its ranks down is a reaction to another rank, unless the pod's own SIGTERM came first
    or the launcher said, moments around it, that one of its own ranks had died (torchrun sends its SIGTERMs and
    then reports "failed (exitcode: -9) local_rank: 3": the teardown answers its own rank's death, whatever killed
    that), or one of its ranks' processes had just exited by itself (PyTorch's "process group has NOT been
    destroyed" as it exits)."""
    hits = case.find(rule.kinds, rule.on, rule.before, rule.after, words.teardown)
    told_to_stop = case.find((Kind.SIGTERM_RECEIVED, Kind.KILLING), POD, rule.before, rule.after)
    first_stop = min((case.event(i).at for i in told_to_stop), default=None)
    own = [case.event(i).at for i in case.find(rule.kinds, POD, rule.before, rule.after, words.own_rank_record)]
    exited = [case.event(i).at for i in case.find(_LOG_LINES, POD, rule.before, rule.after, words.rank_exited)]
    # a rank that exited because of a reaction (a peer's NCCL error, a store gone, the watchdog's abort) did not
    # exit by itself
    reacted = [case.event(i).at for i in case.find(_REACTING, POD, rule.before, rule.after, words.reaction)]
    exited = [at for at in exited if not any(abs(at - when) <= OWN_RANK_NEAR for when in reacted)]
    hits = tuple(
        i
        for i in hits
        if (first_stop is None or case.event(i).at < first_stop)
        and not any(abs(case.event(i).at - at) <= OWN_RANK_NEAR for at in own)
        and not any(timedelta(0) <= case.event(i).at - at <= OWN_RANK_NEAR for at in exited)
    )
    return found(case, rule, hits) if hits else None


def stopped_without_fault(case: Case, rule: Rule) -> Finding | None:
    """Killing, deletion or an eviction with no notice, or a drain of its node (Karpenter's disruption, a
    scale-down, an instance refresh) just before it ended, and no fault found by any rule before this one. A
    SIGTERM the pod printed says it was told to stop, not who told it: a deletion only when a source saw the pod
    deleted."""
    hits = case.find(STOPS, POD, BURST, SKEW, _not_a_fault_reason) + case.find(DRAINS, HOST, BURST, SKEW)
    # the kubelet stopping the containers of a sandbox that changed under them ("Pod sandbox changed, it will be
    # killed and re-created": the runtime lost it) is no one's decision
    changed = [case.event(i).at for i in case.find(_EVENTS, POD, BURST, SKEW, words.sandbox_changed)]
    hits = tuple(
        i
        for i in hits
        if case.event(i).kind != Kind.KILLING or not any(abs(case.event(i).at - at) <= _SANDBOX_NEAR for at in changed)
    )
    if not hits:
        return None
    if case.fate.pod.deleted is None and all(case.event(i).kind == Kind.SIGTERM_RECEIVED for i in hits):
        return None
    terminal = case.find(TERMINAL, POD, BURST, SKEW)
    return found(case, rule, hits, terminal)


_EVENTS = frozenset({Kind.KUBE_EVENT})
_SANDBOX_NEAR = timedelta(minutes=1)


def _not_a_fault_reason(event: TimelineEvent) -> bool:
    """Every stop counts but a disruption the kubelet or a controller made for a reason of its own (pressure,
    shutdown, a taint): those are faults whose rules did not match, not a user's decision; nor the kubelet's kill
    for a failed health probe (one its rule did not take: an earlier run's)."""
    if event.kind == Kind.KILLING:
        return not words.probe_kill(event)
    if event.kind != Kind.DISRUPTION_TARGET:
        return True
    return str(event.attrs.get("reason") or "").lower() in ("", "evictionbyevictionapi")


_STATUS_CAUSES = {
    "evicted": "node-pressure-eviction",
    "nodelost": "node-failure",
    "shutdown": "node-failure",
    "terminated": "node-failure",
    "deadlineexceeded": "deadline-exceeded",
    "preempting": "scheduler-preemption",
    "oomkilled": "oom-killed",
    "containercannotrun": "config-error",
    "starterror": "config-error",
    "createcontainerconfigerror": "config-error",
    "createcontainererror": "config-error",
    "runcontainererror": "config-error",
    "invalidimagename": "config-error",
    "imagepullbackoff": "config-error",
    "errimagepull": "config-error",
    "errimageneverpull": "config-error",
}


# kubectl's STATUS "Unknown" is the pod's (its node stopped answering: NodeLost); a container's "Unknown" is the
# runtime losing track of it, which says nothing of the node
_POD_STATUS_CAUSES = {**_STATUS_CAUSES, "unknown": "node-failure"}


def pod_status(case: Case, rule: Rule) -> Finding | None:
    """What the pod's own status says, when no event said more: the Kubernetes API's view of a pod it still holds."""
    pod = case.fate.pod
    reasons = [(pod.reason, _POD_STATUS_CAUSES)]
    reasons += [(c.reason, _STATUS_CAUSES) for c in pod.containers]
    reasons += [(c.last_reason, _STATUS_CAUSES) for c in pod.containers]
    for reason, causes in reasons:
        # (kubectl shows an init container's ending as "Init:<reason>", and copies of its output carry it so)
        code = causes.get(str(reason or "").lower().removeprefix("init:"))
        if code is not None:
            return _status_only(case, rule, code)
    exits = [c.exit_code for c in pod.containers if not c.init and c.exit_code is not None]
    if pod.phase == "Succeeded" or (exits and all(code == 0 for code in exits)):
        return _status_only(case, rule, "completed")
    failed = [code for code in exits if code != 0]
    if failed and all(code in words.CRASH_EXITS for code in failed):  # the program's own crash, nothing else
        return _status_only(case, rule, "application-error")
    return None


def _status_only(case: Case, rule: Rule, code: str) -> Finding:
    terminal = tuple(i for i in case.fate.events if case.event(i).kind in TERMINAL | {Kind.POD_PHASE})
    return Finding(
        cause=code,
        confidence=rule.confidence,
        evidence=in_time_order(case.timeline, terminal),
        onset=case.fate.ended,
        trigger=None,
        rule=rule.name,
        summary=rule.summary,
    )


def unexplained(case: Case, rule: Rule) -> Finding:
    """The evidence does not decide: cite how the pod ended, and say so."""
    ending = tuple(
        i
        for i in case.fate.events
        if is_about(case.event(i), case.fate.pod) and abs(case.event(i).at - case.fate.ended) <= BURST
    )
    finding = _status_only(case, rule, "unknown")
    return replace(finding, evidence=in_time_order(case.timeline, ending))
