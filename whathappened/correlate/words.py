"""Predicates on single events: which Xid codes mean what, and the words real systems use for each happening.

The Xid families come from the one catalog, whathappened.xids (after NVIDIA's Xid catalog's immediate actions).
"""

from __future__ import annotations

import re

from whathappened.correlate.evidence import text_of, xid_of
from whathappened.correlate.fates import from_log
from whathappened.kinds import Kind
from whathappened.model import TimelineEvent
from whathappened.xids import Family, codes

FALLEN_OFF_BUS_XIDS = codes(Family.FALLEN_OFF_BUS)
MEMORY_XIDS = codes(Family.MEMORY)
NVLINK_XIDS = codes(Family.NVLINK)
HARDWARE_XIDS = codes(Family.HARDWARE)
APPLICATION_XIDS = codes(Family.APPLICATION)

SPOT_WORDS = ("spot", "preempt", "interruption", "instance-action", "rebalance")
MAINTENANCE_WORDS = (
    "maintenance",
    "scheduled",
    "reboot",
    "redeploy",
    "freeze",
    "terminate",
    "impending",
    "upcoming",
    "live-migrat",
    "migrate",
)
# Exceptions that report another failure rather than being one: NCCL, the launcher, signals, CUDA faults
# that the GPU rules explain, and CUDA out-of-memory that has its own rule.
REACTION_EXCEPTION_WORDS = (
    "nccl",
    "distbackenderror",
    "distnetworkerror",
    "diststoreerror",
    "childfailederror",
    "rendezvousclosederror",
    # the rendezvous store gone (its host pod's agent died): a reaction, whatever the error's words
    "rendezvousconnectionerror",
    "elastic/rendezvous/",
    # torch's monitored barrier naming the rank that did not arrive ("Rank 1 failed to pass monitoredBarrier")
    "monitoredbarrier",
    "processgroup",
    "watchdog",
    "sigterm",
    "signalexception",
    "keyboardinterrupt",
    # pyarrow's long operations stopped by a SIGINT or SIGTERM ("ArrowCancelled: Operation cancelled. Detail: received
    # signal 2"), as KeyboardInterrupt is
    "arrowcancelled",
    # torch.multiprocessing's report of a child killed from outside ("ProcessExitedException: process 0 terminated
    # with signal SIGKILL"): the parent relays the kill, which it did not cause
    "terminated with signal sigkill",
    "terminated with signal sigabrt",
    # a DataLoader worker killed from outside ("DataLoader worker (pid N) is killed by signal: Killed."): often the
    # memory limit, but the line does not say so
    "is killed by signal: killed",
    # ... or by a bus error, which the line does not tie to /dev/shm (when it does, the shm rule reads it), or by a
    # SIGTERM or SIGABRT, which do not say who sent them
    "is killed by signal: bus error",
    "is killed by signal: terminated",
    "is killed by signal: aborted",
    # PaddlePaddle's summary of a SIGABRT ("FatalError: A serious error (Process abort signal) is detected by the
    # operating system"), like "Fatal Python error: Aborted": what aborted is said before it, or elsewhere
    "a serious error (process abort signal)",
    "`process abort signal` is detected",
    # summaries of a failure elsewhere: a coordination barrier other tasks missed (JAX), Ray Train's run summary
    # ("Please inspect the previous error messages for a cause"), TensorFlow's generic wrapper of a GPU fault
    "barrier timed out",
    # Ray's and vLLM's relays of a failure elsewhere: Tune's summary of failed trials, an object lost with its node
    # or evicted, Ray's own RPCs to the head failing, a logged error of a worker nobody waited on, the engine's core
    # process dead for whatever killed it; XLA naming a stream an earlier error broke
    "trials did not complete",
    "unreconstructableerror",
    # Ray's worker process gone ("WorkerCrashedError: The worker died unexpectedly while executing this task"): an
    # OOM kill, a segfault or "ray stop", which it does not say
    "workercrashederror",
    # Ray's own processes failing under the task: its node's raylet gone ("LocalRayletDiedError: The task's local
    # raylet died", 0.x's "RayletError: The Raylet died with this message"), an object that could not be fetched
    # ("ObjectFetchTimedOutError"): which of them, and why, the line does not say
    "localrayletdiederror",
    "rayleterror: the raylet died",
    "objectfetchtimedouterror",
    # TensorFlow's gRPC UNAVAILABLE ("UnavailableError: Socket closed", "failed to connect to all addresses"): a
    # peer or the network gone, which it does not tell apart; a collective's own error says which (its rule)
    "errors_impl.unavailableerror",
    "unavailableerror: ",
    "raysystemerror: system error: rpc error",
    "possible unhandled error from worker",
    "enginedeaderror",
    # vLLM's front end when its engine process did not come up ("Engine process failed to start. See stack trace
    # for the root cause.", V1's "Engine core initialization failed. See root cause above."): the cause is the
    # engine's own lines
    "engine process failed to start",
    "engine core initialization failed",
    # ... and its worker processes' ("WorkerProc initialization failed due to an exception in a background
    # process"), TensorRT-LLM's executor proxy ("Executor worker returned error"), SGLang's rank that loaded while
    # others did not ("could finish the model loading, but there are other ranks that didn't finish loading")
    "workerproc initialization failed",
    "executor worker returned error",
    "other ranks that didn't finish loading",
    # control-plane stores and transports of serving stacks out of reach (Dynamo's etcd and NATS, NIXL's transfer
    # backend), Ray Serve's replicas that did not start (it retries), Spark's scheduler gone at shutdown: where,
    # not why
    "failed to connect to etcd server",
    "nats: serviceunavailableerror",
    "nixl_err_backend",
    "the deployment failed to start",
    "could not find coarsegrainedscheduler",
    "stream did not block host until done; was already in an error state",
    "trainingfailederror",
    "gpu sync failed",
    "cuda error",
    "outofmemoryerror",
    "out of memory",
    "ecc error",
)


def _reason(event: TimelineEvent) -> str:
    return str(event.attrs.get("reason") or "").lower()


def fallen_off_bus(event: TimelineEvent) -> bool:
    return event.kind == Kind.GPU_MISSING or xid_of(event) in FALLEN_OFF_BUS_XIDS


def memory_fault(event: TimelineEvent) -> bool:
    if event.kind in (Kind.GPU_ECC_DBE, Kind.GPU_ROW_REMAP_FAILURE):
        return True
    if event.kind == Kind.GPU_RETIRED_PAGES:
        return str(event.attrs.get("cause") or "").lower() == "dbe"
    return xid_of(event) in MEMORY_XIDS


def nvlink_fault(event: TimelineEvent) -> bool:
    if event.kind == Kind.NVLINK_ERROR:
        return True
    # the Blackwell NVLink Xids (144-150) say their own severity: "... Nonfatal XC0 i0 Link 13" is corrected
    return xid_of(event) in NVLINK_XIDS and "nonfatal" not in text_of(event)


def hardware_xid(event: TimelineEvent) -> bool:
    """A hardware Xid, or RM's own words for a GPU that needs a reset (no Xid printed)."""
    return xid_of(event) in HARDWARE_XIDS or event.attrs.get("gpu_fault") == "hardware"


def application_xid(event: TimelineEvent) -> bool:
    return xid_of(event) in APPLICATION_XIDS


# The launchers' own summaries of a local worker that failed (torchrun's "failed (exitcode: 1) local_rank: 5" and
# ChildFailedError, DeepSpeed's "exits with return code = 1"): a plain error exit of the pod's own rank, or its
# own crash (SIGSEGV). Any other signal's exit (negative, 128+N) says only that someone killed it, or, for SIGBUS,
# that /dev/shm ran out as often as the code crashed.
OWN_RANK_SIGNATURES = frozenset(
    {
        "torchelastic-worker-failed",
        "torchelastic-child-failed",
        "torchelastic-failure-record",
        "deepspeed-return-code",
        "lightning-child-failed",
        "composer-rank-crashed",
        "vllm-worker-died",
    }
)
# a process that crashed itself, as a launcher's negative signal or a container's 128 + it: SIGILL (an instruction
# the CPU lacks), SIGFPE, SIGSEGV; not SIGABRT (also the NCCL watchdog's abort) nor SIGBUS (also /dev/shm running out)
CRASH_EXITS = frozenset({-4, -8, -11, 132, 136, 139})
_ABORT_EXITS = frozenset({-6, 134})
# the signals a program's own fault raises (SIGILL, SIGFPE, SIGSEGV), as mpirun reports a rank ended by one
_CRASH_SIGNALS = frozenset({4, 8, 11})
_HYDRA_CRASH_STATUSES = frozenset({*_CRASH_SIGNALS, *(128 | signal for signal in _CRASH_SIGNALS)})


def own_rank_failed(event: TimelineEvent) -> bool:
    if event.attrs.get("signature") in ("mpirun-rank-exited", "mpd-collective-abort"):
        return event.attrs.get("signal") in _CRASH_SIGNALS
    if event.attrs.get("signature") == "hydra-bad-termination":
        # Hydra's banner (printed only for a rank that did not exit): its signal, or its EXIT CODE, the raw wait
        # status (11 a SIGSEGV, 139 the same with a core dumped, 128 | 11)
        return event.attrs.get("signal") in _CRASH_SIGNALS or event.attrs.get("exit_code") in _HYDRA_CRASH_STATUSES
    if event.attrs.get("signature") not in OWN_RANK_SIGNATURES or event.attrs.get("relayed"):
        return False
    code = event.attrs.get("exit_code")
    return isinstance(code, int) and (0 < code < 128 or code in CRASH_EXITS)


def own_rank_record(event: TimelineEvent) -> bool:
    """The launcher's record of its own rank's death: its ranks were torn down for that rank, not for a peer. A
    SIGTERM's is its own teardown. A SIGABRT's is its own rank's too: the NCCL watchdog aborting a rank that waited
    on a peer prints its timeout first, which its own rule reads before this; without those lines the abort says
    no more than that the rank aborted (a C++ exception, glibc's checks), and no peer."""
    if event.attrs.get("signature") not in OWN_RANK_SIGNATURES or event.attrs.get("relayed"):
        return False
    code = event.attrs.get("exit_code")
    return isinstance(code, int) and not teardown(event)


def wrapped_error(event: TimelineEvent) -> bool:
    """A launcher's report that the program raised (Hydra's "Error executing job with overrides"), what it raised
    unread: the program's error only when no rule before read a reaction or a stop."""
    return bool(event.attrs.get("wrapper"))


def reaction(event: TimelineEvent) -> bool:
    """A rank reacting to another's failure or to a stop: an NCCL error or timeout, a SIGTERM it printed, an
    exception that names a peer or the store gone, the launcher's record of a rank aborted (SIGABRT, as the NCCL
    watchdog ends one)."""
    if event.kind in (Kind.NCCL_ERROR, Kind.NCCL_TIMEOUT, Kind.SIGTERM_RECEIVED):
        return True
    if event.kind == Kind.APP_EXCEPTION:
        return not event.attrs.get("wrapper") and not event.attrs.get("crash") and not own_exception(event)
    return event.kind == Kind.LAUNCHER_TEARDOWN and event.attrs.get("exit_code") in _ABORT_EXITS


def rank_exited(event: TimelineEvent) -> bool:
    """A rank's process of this pod exiting by itself (the log line PyTorch prints as it goes)."""
    return event.attrs.get("signature") == "torch-process-group-not-destroyed"


def nvlink_text(event: TimelineEvent) -> bool:
    return "nvlink" in text_of(event)


def ecc_text(event: TimelineEvent) -> bool:
    text = text_of(event)
    return "ecc" in text or ("uncorrectable" in text and "nvlink" not in text)


def says_gpu_lost(text: str) -> bool:
    """``text`` (lower case) says a GPU is gone: the driver, CUDA or NVML (NVML_ERROR_GPU_IS_LOST, "GPU is lost")."""
    return any(w in text for w in ("fallen off the bus", "gpu is lost", "device lost"))


def lost_gpu_text(event: TimelineEvent) -> bool:
    return says_gpu_lost(text_of(event))


def unavailable_gpu_text(event: TimelineEvent) -> bool:
    """CUDA refusing the pod's GPU (cudaErrorDevicesUnavailable, "CUDA-capable device(s) is/are busy or
    unavailable"): under Kubernetes no other container holds the GPU the device plugin gave this one, so it is the
    GPU stuck in a state only a reset clears."""
    text = text_of(event)
    return "busy or unavailable" in text or "cudaerrordevicesunavailable" in text


# The kubelet's admission refusals, by status or event reason, and by the words of their messages ("Pod was
# rejected: Node didn't have enough resource: nvidia.com/gpu, ...", "Allocate failed due to ... which is unexpected").
# The topology manager's reason had blanks before 1.18 ("Topology Affinity Error"); before 1.10 the kubelet named the
# scheduler predicate its admission failed ("PodFitsHostPorts", "MatchNodeSelector").
_ADMISSION_REASONS = (
    "unexpectedadmissionerror",
    "nodeaffinity",
    "topologyaffinityerror",
    "topology affinity error",
    "podfitshostports",
    "matchnodeselector",
)
_ADMISSION_WORDS = ("pod was rejected", "didn't have enough resource", "allocate failed due to")


# The device plugin unable to start NVML at all ("error calling nvml.Init: Unknown Error"): the node's driver, its
# runtime or cgroup set-up, or a GPU; a refusal for that says nothing of scheduling, and alone decides nothing.
_NVML_UNUSABLE = ("error calling nvml.init", "failed to initialize nvml")


def admission_rejected(event: TimelineEvent) -> bool:
    """The node's kubelet refused the pod the scheduler had placed on it: it never ran there."""
    if event.kind != Kind.POD_FAILED:
        return False
    reason, text = _reason(event), text_of(event)
    return (
        reason in _ADMISSION_REASONS or reason.startswith("outof") or any(w in text for w in _ADMISSION_WORDS)
    ) and not any(w in text for w in _NVML_UNUSABLE)


def admission_lost_gpu(event: TimelineEvent) -> bool:
    """... because the device plugin found one of the node's GPUs gone ("nvml: GPU is lost")."""
    return admission_rejected(event) and lost_gpu_text(event)


# a GPU's extended resource: nvidia.com/gpu, its MIG and vGPU names (not the network operator's nvidia.com/rdma_*,
# hostdev), amd.com/gpu, gpu.intel.com/i915, any <domain>/*gpu* (aliyun.com/gpu-mem, volcano.sh/vgpu-number)
_GPU_RESOURCE = re.compile(
    r"unhealthy devices (?:nvidia\.com/(?:gpu|mig-|vgpu)|amd\.com/gpu|gpu\.intel\.com/|[\w.-]{1,253}/[\w.-]{0,60}gpu)"
)


def admission_unhealthy_gpu(event: TimelineEvent) -> bool:
    """... because the device plugin marked the node's GPUs unhealthy (the kubelet's device manager: "no healthy
    devices present; cannot allocate unhealthy devices nvidia.com/gpu"): a GPU fault on that node (another
    device's, a USB stick's, says nothing of the GPUs)."""
    return admission_rejected(event) and _GPU_RESOURCE.search(text_of(event)) is not None


def preemption(event: TimelineEvent) -> bool:
    if event.kind == Kind.PREEMPTED:
        return True
    if _reason(event) in ("preemptionbyscheduler", "preemptionbykubescheduler", "preempting", "preempted"):
        return True
    # the scheduler's and Kueue's own words ("preempting to accommodate a higher priority pod", "Preempted to
    # accommodate a workload (UID: ...)"); Kueue keeps a lifted condition's message behind "Previously: " (its
    # Preempted condition gone False when the workload has its quota again): a past preemption, not this end
    text = _PAST_PREEMPTION.sub("", text_of(event))
    return "to accommodate a" in text and "preempt" in text


_PAST_PREEMPTION = re.compile(r"(?:previously: )+preempted to accommodate a")


def pressure_eviction(event: TimelineEvent) -> bool:
    if event.kind == Kind.EVICTED:
        # the kubelet says what ran low ("The node was low on resource: memory."); Karpenter and other drainers
        # say "Evicted pod" (with ": <why>" since 0.3x): an Eviction API call, no pressure
        return not str(event.attrs.get("message") or "").lower().startswith("evicted pod")
    reason, text = _reason(event), text_of(event)
    if event.kind == Kind.POD_FAILED and reason == "evicted":
        return True
    if event.kind == Kind.POD_FAILED and not reason and "the node was low on resource: " in text:
        return True  # the eviction manager's words where a copy of the status left the reason out (a UI's relay)
    return reason == "terminationbykubelet" and any(w in text for w in ("low on resource", "pressure", "ephemeral"))


def node_lost(event: TimelineEvent) -> bool:
    if event.kind == Kind.TAINT_EVICTION:
        return True
    reason = _reason(event)
    if reason == "terminationbykubelet":
        return "shutdown" in text_of(event)
    return reason in (
        "nodelost",
        "deletionbytaintmanager",
        "deletionbypodgc",
        "deletionbygcpcontrollermanager",
        "terminated",
        "shutdown",
    )


def oom_killed(event: TimelineEvent) -> bool:
    if event.kind == Kind.OOM_KILLED or _reason(event).replace(" ", "") == "oomkilled":  # "OOM Killed" before 1.0
        return True
    # runc's init killed by the memory limit before the program ran (a StartError's message: "container init was
    # OOM-killed (memory limit too low?)"): the limit, as the Event's reading of the same words (reasons.py)
    return event.kind == Kind.CONTAINER_TERMINATED and "container init was oom-killed" in text_of(event)


# the kubelet's Killing message before 1.9 named no probe: 'container "x" is unhealthy, it will be killed and
# re-created.'
_LIVENESS_KILL_WORDS = ("liveness", "is unhealthy, it will be killed")


def liveness(event: TimelineEvent) -> bool:
    if event.kind == Kind.PROBE_FAILED:
        # the probe the message names ("Startup probe failed: Get .../actuator/health/liveness" is a startup probe's)
        probe = str(event.attrs.get("probe") or "").lower()
        return probe == "liveness" if probe else "liveness probe" in text_of(event)
    text = text_of(event)
    return any(w in text for w in _LIVENESS_KILL_WORDS)


def startup_kill(event: TimelineEvent) -> bool:
    """The kubelet killing a container whose startup probe used up its failures ("Container x failed startup probe,
    will be restarted"): its own Killing message, not the probe's Unhealthy rows (those alone kill nothing)."""
    return event.kind == Kind.KILLING and "failed startup probe" in text_of(event)


def probe_kill(event: TimelineEvent) -> bool:
    """The kubelet's kill for a failed liveness or startup probe."""
    return event.kind == Kind.KILLING and (liveness(event) or startup_kill(event))


def deadline(event: TimelineEvent) -> bool:
    if event.kind == Kind.DEADLINE_EXCEEDED or _reason(event) in ("deadlineexceeded", "backofflimitexceeded"):
        return True
    # the kubelet's activeDeadlineSeconds message on a pod whose reason a source left out
    return event.kind == Kind.POD_FAILED and "longer than the specified deadline" in text_of(event)


# Signatures whose exception is the code's own even though its words name NCCL (the program misusing the library) or
# memory (the JVM's own heap)
OWN_EXCEPTION_SIGNATURES = frozenset({"nccl-invalid-usage", "jvm-memory-limit"})


def own_exception(event: TimelineEvent) -> bool:
    """An exception of the pod's own, not a reaction to another failure. A traceback's header seen without its
    final line (shipped as a document of its own, or cut) names no exception: the final line, read on its own,
    says what failed."""
    attrs = event.attrs
    if attrs.get("wrapper"):
        return False  # a launcher's report of whatever was raised: wrapped_error, after the reactions' rules
    if attrs.get("signature") in OWN_EXCEPTION_SIGNATURES:
        return True
    if attrs.get("signature") == "python-traceback" and not attrs.get("exception") and not attrs.get("file"):
        return False
    if attrs.get("crash"):
        return False  # the process crashing (a segfault, glibc's abort): own_crash, when no reaction came first
    text = text_of(event)
    if any(w in text for w in _IMPORT_FAILURES):
        return True  # the image's libraries at odds ("libnccl.so.2: cannot open shared object file"): never a reaction
    return not any(w in text for w in REACTION_EXCEPTION_WORDS)


# An import or a loader failing names a library (NCCL's too) that was never used: the program's own failure (XLA's
# "Unable to load NCCL library" as its collective fails)
_IMPORT_FAILURES = ("cannot open shared object file", "undefined symbol:", "unable to load nccl library")


# cudaErrorUnknown in both spellings, and the driver shutting down with the process (CUDA_ERROR_DEINITIALIZED,
# "driver shutting down"): no cause
_UNNAMED_CUDA = (
    "unknown error",
    "cuda_error_unknown",
    "cudaerrorunknown",
    "cuda_error_deinitialized",
    "driver shutting down",
)


def sandbox_changed(event: TimelineEvent) -> bool:
    return _reason(event) == "sandboxchanged"


def own_crash(event: TimelineEvent) -> bool:
    """The process crashing by itself (a segfault, glibc aborting on a corrupted heap, an uncaught std::
    exception): the pod's own failure when no reaction came before it (checks.crash_first). A rank that crashes
    as it tears down after an NCCL error or a launcher's SIGTERM (a double free in a destructor) crashed because
    of that."""
    return bool(event.attrs.get("crash"))


def cuda_error_named(event: TimelineEvent) -> bool:
    """A CUDA error that says what failed: "unknown error" (cudaErrorUnknown) is what a GPU lost mid-kernel or a
    driver fault returns as often as anything the code did."""
    text = text_of(event)
    return not any(w in text for w in _UNNAMED_CUDA)


def own_failure(event: TimelineEvent) -> bool:
    """A failure the pod reported itself (an exception of its own, CUDA, memory, NCCL), not a shutdown message."""
    return event.kind != Kind.APP_EXCEPTION or own_exception(event)


def not_from_log(event: TimelineEvent) -> bool:
    return not from_log(event)


def cannot_run(event: TimelineEvent) -> bool:
    return _reason(event) in ("containercannotrun", "starterror", "createcontainererror", "runcontainererror")


def success(event: TimelineEvent) -> bool:
    if event.kind in (Kind.POD_SUCCEEDED, Kind.JOB_COMPLETED):
        return True
    if event.kind == Kind.POD_PHASE:
        return event.attrs.get("phase") == "Succeeded"
    return event.attrs.get("exit_code") == 0 or _reason(event) == "completed"


def teardown(event: TimelineEvent) -> bool:
    """The launcher stopping healthy ranks, not reporting that its own child failed with a real exit code."""
    if event.kind != Kind.LAUNCHER_TEARDOWN:
        return False
    if event.attrs.get("signature") in OWN_RANK_SIGNATURES and not event.attrs.get("relayed"):
        signal = str(event.attrs.get("signal") or "").upper()
        return event.attrs.get("exit_code") in (-15, 143) or signal in ("SIGTERM", "15")
    return True


def is_spot_notice(event: TimelineEvent) -> bool:
    if event.kind == Kind.SPOT_INTERRUPTION:
        return True
    if event.kind not in (Kind.MAINTENANCE_NOTICE, Kind.NODE_TAINTED, Kind.NODE_CONDITION):
        return False
    kind_words = " ".join(str(event.attrs.get(k) or "") for k in ("event_type", "action", "taint", "type", "reason"))
    text = (kind_words + " " + event.summary).lower()
    if event.kind != Kind.MAINTENANCE_NOTICE:
        # a spot pool's permanent taint (scalesetpriority=spot) is no notice; an interruption taint is
        return any(w in text for w in ("spot-itn", "interruption", "preempt"))
    return any(w in text for w in SPOT_WORDS)


def is_maintenance_notice(event: TimelineEvent) -> bool:
    if is_spot_notice(event):
        return False
    if event.kind == Kind.MAINTENANCE_NOTICE:
        return True
    if event.kind not in (Kind.NODE_CONDITION, Kind.NODE_TAINTED):
        return False
    text = " ".join(str(event.attrs.get(k) or "") for k in ("type", "reason", "taint")).lower() or event.summary.lower()
    return any(w in text for w in MAINTENANCE_WORDS)
