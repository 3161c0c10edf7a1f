"""The failure-signature table: which log lines mean what, in one place, as data.

Each ``Signature`` names the timeline kind a matching line becomes, the regular expression that confirms it
and extracts its attributes (named groups become attrs, converted by ``convert``), the phrases a search
server can use to pre-filter for it (``phrases`` for ``match_phrase``, ``regexp`` for a Lucene token regexp with a
literal head, ``wildcards`` for Lucene token wildcards: every line the ``pattern`` matches must also match one of
them, which the tests check against a real OpenSearch-API server), a real example line and a near miss that
must not match. A token pattern with no literal head makes the server walk the field's whole term dictionary;
written as one wildcard per literal tail, each walk can reject most terms by their last letters (Lucene's common
suffix check), which an alternation of tails in one regexp does not allow.

Matching is linear in a line's length (``collectors/logs/linescan.py``): a line is normalized (last frame of a
``\r`` redraw, no ANSI codes or NULs), a line over 16 KiB is examined by its first and last 8 KiB only, each
signature is searched only when the line holds one of the literals its pattern requires (derived from the
pattern), and no pattern starts with an unbounded class or scans ``.*`` across a line between two literals
(bounded repeats instead), so no search retries a long run from every position.

Order matters: a line becomes the event of the FIRST signature that matches it (specific before general),
so a "CUDA error: out of memory" is a CUDA OOM and not a generic CUDA error. A signature with ``kind=None``
is context only (the ``NVRM: GPU at PCI`` line that maps a PCI address to a GPU UUID).

Formats come from the drivers' and libraries' own format strings and real lines (see the project's reference
notes: NVIDIA open-gpu-kernel-modules kernel_rc.c, NCCL debug.cc / net_ib.cc, torch ProcessGroupNCCL.cpp,
torch.distributed.elastic, Open MPI, Megatron-LM, Hugging Face Trainer, DeepSpeed, Lightning).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from whathappened.collectors.logs.extractors import (
    FINAL,
    RECORD_EXIT,
    Signature,
    checkpoint,
    child_failed,
    cuda_error,
    cuda_oom,
    first_ints,
    ib_status,
    known,
    nccl_work,
    oom_pod,
    pid,
    ranked,
    relayed,
    rx,
    target_nodes,
    traceback,
    whole,
    xid_cause,
)

from whathappened.kinds import Kind
from whathappened.model import Severity

# --- the table ----------------------------------------------------------------------------------------------

_WORK = r"WorkNCCL\((?:[^()]|\([^()]*\))*\)"  # WorkNCCL(SeqNum=.., Timeout(ms)=..): one level of nested parens
_PCI = r"(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})"
_NCCL_RESULT = {"nccl_result": str}
# a CUDA error as printed: torch's "CUDA error: %s", Darknet's "CUDA Error: %s" and "CUDA Error Prev: %s", Paddle v1's
# "Cuda Error: %s" (the OOM signature reads the out-of-memory one, the CUDA error signature any other)
_CUDA_ERROR = r"(?:CUDA error|CUDA Error(?: Prev)?|Cuda Error): "
# Just after TensorRT-LLM's "CUDA runtime error in ": not inside its executor's "Encountered an error in
# forward(Async) function: " as it logs it or fails a request with it (it goes on serving), unless raised to Python as a
# RuntimeError, which ends the program (alternatives of a group, for the signatures that read the check to add theirs)
_TRTLLM_NOT_GONE_ON = (
    r"(?<!function: \[TensorRT-LLM\]\[ERROR\] CUDA runtime error in )"
    r"|(?<=RuntimeError: Encountered an error in forward function: \[TensorRT-LLM\]\[ERROR\] CUDA runtime error in )"
    r"|(?<=RuntimeError: Encountered an error in forwardAsync function: \[TensorRT-LLM\]\[ERROR\] CUDA runtime error in )"
)
# The node's own agents and log shippers, by the process names the kernel's OOM killer prints (cut to 15
# characters: "nvidia-device-p"): a kill of one of them (in its own memory cgroup, or the node's) is no pod's program
# killed, and the report lines around it are its (parse.SETTLED)
_NODE_AGENT_NAMES = (
    r"(?:flb-pipeline|fluent-bit|fluentd|td-agent-bit|vector|promtail|filebeat|otelcol[\w-]{0,8}|dcgm-exporter"
    r"|nv-hostengine|nvidia-device-p|kubelet|containerd|dockerd|node_exporter|kube-proxy|calico-node|cilium-agent"
    # netdata and its plugins ("apps.plugin", "go.d.plugin", "charts.d.plugin"; cut: "network-viewer.", and
    # "systemd-journal", journald's own name too), its cgroup-network helper
    r"|netdata|[\w-]{1,10}(?:\.d)?\.plugin|network-viewer\.|cgroup-network|systemd-journal"
    r"|datadog-agent|process-agent|trace-agent|system-probe|security-agent|telegraf"
    r"|collectd|grafana-agent[\w-]{0,4}|alloy"
    # a host unit's process as systemd names it before it execs its binary ("(resolved)", "(sd-pam)")
    r"|\([\w.-]{1,13}\))"
)
_NODE_AGENT = r"(?!" + _NODE_AGENT_NAMES + r"[),\s])"


def _signal_resource(signal: str) -> str:
    """An eviction signal's resource as the kubelet names it (signalToResource: "memory.available" and
    "allocatableMemory.available" -> memory, "nodefs.available" / "imagefs.available" / "containerfs.available" ->
    ephemeral-storage, "*.inodesFree" -> inodes, "pid.available" -> pids)."""
    resource, _, measure = signal.partition(".")
    if measure == "inodesFree":
        return "inodes"
    return {"allocatableMemory": "memory", "pid": "pids"}.get(
        resource, "ephemeral-storage" if resource in ("nodefs", "imagefs", "containerfs") else resource
    )


# NCCL's line prefix ("host:pid:tid [dev] file:line "), the process read as ``proc`` ("host:pid") when it is there
_NCCL_PROCESS = r"(?:(?P<proc>[\w.-]{1,253}:\d{1,10}):\d{1,10} \[\d{1,3}\] (?:[^\n]{0,200}? )?)?"

SIGNATURES: tuple[Signature, ...] = (
    Signature(
        name="nvrm-gpu-uuid",
        kind=None,
        pattern=rx(r"NVRM: GPU at PCI:" + _PCI + r": (?P<uuid>GPU-[0-9a-fA-F-]{36})"),
        summary="GPU {pci} is {uuid}",
        phrases=("NVRM: GPU at PCI",),
        examples=("NVRM: GPU at PCI:0000:9b:00: GPU-509665ad-b600-ac93-3616-d754b23d636d",),
        near_misses=("NVRM: GPU Board Serial Number: 1652823054417",),
    ),
    # The two halves of a GPU's link lost to a fatal PCIe error reported by the port above it (see
    # "pcie-aer-gpu-lost"), when a shipper sends the kernel's lines one by one: each alone says nothing (the port's
    # error may be another device's, "can't recover" follows non-fatal errors too); within a second of each other
    # on one node they are the GPU lost (parse.PCIE_HALVES)
    Signature(
        name="pcie-port-fatal",
        kind=None,
        pattern=rx(
            r"(?P<port>pcieport [0-9a-fA-F:.]{7,16}): (?:AER: )?(?:Multiple )?Uncorrected \(Fatal\) error received"
        ),
        summary="a fatal PCIe error reported by {port}",
        phrases=("Uncorrected (Fatal) error received",),
        examples=("pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) error received: 0000:00:03.0",),
        near_misses=("pcieport 0000:00:03.0: AER: Corrected error received: 0000:00:03.0",),
    ),
    Signature(
        name="pcie-gpu-unrecovered",
        kind=None,
        pattern=rx(r"nvidia " + _PCI + r"\.\d: (?:AER: )?(?P<how>can't recover|device has no AER-aware driver)"),
        summary="GPU PCI:{pci} cannot recover from a PCIe error ({how})",
        phrases=("can't recover", "no AER-aware driver"),
        examples=(
            "nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)",
            "nvidia 0000:02:00.0: device has no AER-aware driver",
        ),
        near_misses=("snd_hda_intel 0000:03:00.1: AER: can't recover (no error_detected callback)",),
    ),
    Signature(
        # An exception Python reports and ignores: raised in a finalizer ("Exception ignored in: <function ...>",
        # PyErr_WriteUnraisable) or in an exit handler after the program's body ended ("Error in
        # atexit._run_exitfuncs:"), with the traceback below it (blocks.pieces keeps them together). It changes no
        # exit status and tells no failure, whatever it names (a closed socket, a coordination service gone at
        # shutdown, an out-of-memory in a destructor).
        name="python-exception-ignored",
        kind=Kind.LOG_LINE,
        # (3.11+ also "Exception ignored on calling ctypes callback function", "... while calling deallocator ...",
        # "... when ...")
        pattern=rx(r"^(?:Exception ignored (?:in|on|while|when)\b|Error in atexit\._run_exitfuncs:)"),
        summary="an exception Python ignored (in a finalizer or an exit handler)",
        phrases=("Exception ignored in", "Error in atexit"),
        examples=(
            'Error in atexit._run_exitfuncs:\nTraceback (most recent call last):\n  File "jax/_src/distributed.py",'
            " line 168, in shutdown\n    global_state.shutdown()\njaxlib.xla_extension.XlaRuntimeError:"
            " DEADLINE_EXCEEDED: Deadline Exceeded",
            "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f3b2c1d0e50>",
        ),
        near_misses=("RuntimeError: Exception ignored while training: loss is nan",),
    ),
    Signature(
        # a thread other than the main one ending on an exception (threading's excepthook: "Exception in thread %s:"
        # and the traceback, kept together by blocks.pieces): the thread ends, the program goes on; not the JVM's
        # 'Exception in thread "main" ...', which ends it; nor a thread's error of the GPU, its memory or NCCL (an
        # illegal address or ECC error is sticky, the whole process's context is dead; a thread's OOM or NCCL error
        # is what stopped the program's work): those are read by their own signatures
        name="python-thread-exception",
        kind=Kind.LOG_LINE,
        pattern=rx(
            r"^Exception in thread (?!\"main\")[^\n]{1,200}:\nTraceback \(most recent call last\):"
            # (the words of those signatures on the exception's own lines, not indented: not a frame's code or a
            # message naming "CUDA_VISIBLE_DEVICES")
            r"(?![\s\S]{0,16000}?\n[^ \t\n][^\n]{0,2000}?(?:CUDA error|CUDA Error|CUDA_ERROR_|cuda runtime error"
            r"|CUDA driver error|\[CUDA\]|CUDA-capable|cudaError|[Oo]ut of memory|OutOfMemoryError|RESOURCE_EXHAUSTED"
            r"|NCCL error|ncclUnhandled|ncclSystemError|ncclInternalError|ncclRemoteError|DistBackendError|ECC error"
            r"|Xid))"
        ),
        summary="a thread of the program ended on an exception (the program went on)",
        phrases=("Exception in thread",),
        examples=(
            'Exception in thread Thread-4:\nTraceback (most recent call last):\n  File "threading.py", line 916, in'
            " _bootstrap_inner\nKeyError: 'health'",
        ),
        near_misses=(
            'Exception in thread "main" java.lang.OutOfMemoryError: Java heap space',
            'Exception in thread MemMon:\nTraceback (most recent call last):\n  File "threading.py", line 1045, in'
            " _bootstrap_inner\nRuntimeError: CUDA error: misaligned address",
        ),
    ),
    Signature(
        # a library's own error, logged with the traceback of what it caught (blocks.pieces keeps them together):
        # Comet's streaming thread ("COMET ERROR: Streaming error", it goes on sending), xformers probing for Triton
        # ("A matching Triton is not available, some optimizations will not be enabled", then the ImportError's
        # traceback). (Not W&B's exit hook, "wandb: ERROR Problem finishing run": 0.10 then exits -1 and 0.12+
        # raises, the exception the run ended with.)
        name="library-error-logged",
        kind=Kind.LOG_LINE,
        # gRPC's Python server failing one call ("ERROR:grpc._server:Exception calling application: %s", the
        # handler's traceback below): it answers that call with an error and serves the next
        pattern=rx(
            r"(?:^|[\s:])(?:COMET ERROR: Streaming error|A matching Triton is not available"
            r"|(?:Exception calling application|Exception iterating responses):"
            r"(?![^\n]{0,300}(?:CUDA|NCCL|out of memory|ECC|Xid)))"
        ),
        summary="a library logged an error of its own and went on",
        phrases=("COMET ERROR: Streaming error", "matching Triton is not available", "Exception calling application"),
        examples=(
            "COMET ERROR: Streaming error\nTraceback (most recent call last):\n  File"
            ' "/usr/local/lib/python3.5/dist-packages/comet_ml/comet.py", line 117, in _loop\n'
            "ValueError: Could not connect to server after multiple tries.",
        ),
        near_misses=(
            "wandb: ERROR Problem finishing run",
            "ERROR:grpc._server:Exception calling application: CUDA error: uncorrectable ECC error encountered",
        ),
    ),
    Signature(
        # PyTorch 2.4+ as a rank's process exits without destroy_process_group ("WARNING: process group has NOT been
        # destroyed before we destruct ProcessGroupNCCL"): the rank ended by itself (a process killed by a signal
        # prints nothing); what ended it is said elsewhere
        name="torch-process-group-not-destroyed",
        kind=Kind.LOG_LINE,
        pattern=rx(r"process group has NOT been destroyed before we destruct ProcessGroupNCCL"),
        summary="a rank's process exited without destroying its process group",
        phrases=("has NOT been destroyed before we destruct ProcessGroupNCCL",),
        examples=(
            "[rank0]:[W219 09:17:03.293812312 ProcessGroupNCCL.cpp:1168] Warning: WARNING: process group has NOT been"
            " destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call"
            " destroy_process_group to ensure that any pending NCCL operations have finished in this process.",
        ),
        near_misses=("[rank0]: destroy_process_group() was called; ProcessGroupNCCL destroyed",),
    ),
    Signature(
        name="nvrm-xid",
        kind=Kind.GPU_XID,
        pattern=rx(
            r"NVRM: Xid \((?:PCI:)?" + _PCI + r"(?: GPU-I:(?P<gpu_instance>\d+))?(?: GPU-CI:\d+)?\): (?P<xid>\d+),"
            r" (?:pid=(?P<pid>'?<?\w+>?'?), (?:name='?(?P<process>[^,']*)'?, )?)?(?P<text>[^\n]*)"
        ),
        summary="Xid {xid} on GPU PCI:{pci}: {text}",
        phrases=("NVRM: Xid",),
        convert={"xid": int, "pid": pid, "gpu_instance": int, "process": known},
        extract=xid_cause,
        examples=(
            "NVRM: Xid (PCI:0000:5d:00): 48, pid=18822, name=python, An uncorrectable double bit error (DBE) has been"
            " detected on GPU in the framebuffer at partition 2, subpartition 0.",
            "kernel: [103859.498995] NVRM: Xid (PCI:0002:00:00): 13, pid=2519562, name=python3, Graphics Exception:"
            " ChID 000c, Class 0000cbc0, Offset 00000000, Data 00000000",
            "NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
            "[ 5107.644336] NVRM: Xid (PCI:0000:03:00): 79, GPU has fallen off the bus.",
            "NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9). RST: No, D-RST: No",
            "[...] NVRM: Xid (0000:03:00): 14, Channel 00000001",
        ),
        near_misses=(
            "NVRM: GPU 0000:9b:00.0: GPU has fallen off the bus.",
            "nvidia-smi: Xid errors reported: none",
        ),
    ),
    Signature(
        name="nvrm-fallen-off-bus-at-probe",
        kind=Kind.GPU_XID,
        pattern=rx(
            r"(?:NVRM: The NVIDIA GPU (?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})"
            r"\.\d[\s\S]{0,200}?)?fallen off the bus and is not responding"
        ),
        summary="GPU PCI:{pci} has fallen off the bus (no Xid: seen at driver probe)",
        phrases=("fallen off the bus",),
        fixed={"xid": 79, "text": "GPU has fallen off the bus."},
        examples=(
            "NVRM: The NVIDIA GPU 0000:b3:00.0\n               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
            "               NVRM: fallen off the bus and is not responding to commands.",
        ),
        near_misses=(
            "NVRM: GPU 0000:9b:00.0: GPU has fallen off the bus.",
            "NVRM: The NVIDIA probe routine failed for 1 device(s).",
        ),
    ),
    Signature(
        # The bus-loss line itself, without the Xid: os-interface nv.c before the R470 drivers
        # ("NVRM: GPU at %04x:%02x:%02x.%x has fallen off the bus."), and RM's own NV_DEV_PRINTF after the Xid in
        # later ones ("NVRM: GPU %04x:%02x:%02x.%x: GPU has fallen off the bus.").
        name="nvrm-fallen-off-bus",
        kind=Kind.GPU_XID,
        # (with or without the PCI domain: "NVRM: GPU 18:00.0: GPU has fallen off the bus.")
        pattern=rx(
            r"NVRM: GPU (?:at )?(?:PCI:)?(?P<pci>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2})\.\d:? (?:GPU )?has"
            r" fallen off the bus"
        ),
        summary="GPU PCI:{pci} has fallen off the bus",
        phrases=("fallen off the bus",),
        fixed={"xid": 79, "text": "GPU has fallen off the bus."},
        examples=(
            "[   49.261458] NVRM: GPU at 0000:01:00.0 has fallen off the bus.",
            "NVRM: GPU 0000:9b:00.0: GPU has fallen off the bus.",
        ),
        near_misses=("NVRM: GPU 0000:9b:00.0: RmInitAdapter failed! (0x26:0x56:1463)",),
    ),
    Signature(
        # The PCIe layer reporting a fatal uncorrectable error on the GPU's own link (drivers/pci/pcie/aer.c, the
        # device named by its driver, "nvidia"; "Uncorrectable" since Linux 6.8, no "AER: " before 4.19): the link
        # is reset and the nvidia driver, which registers no error handlers, loses the GPU, whether or not RM
        # printed Xid 79. "can't recover (no error_detected callback)" alone is no loss: err.c prints it for
        # non-fatal errors too, and the GPU goes on. (The fatal error received by the root port above the GPU, with
        # the GPU unable to recover in the same report, is the same loss: "pcie-port-fatal" and
        # "pcie-gpu-unrecovered" joined by parse.PCIE_HALVES.)
        name="pcie-aer-gpu-lost",
        kind=Kind.GPU_XID,
        pattern=rx(
            r"nvidia " + _PCI + r"\.\d: (?:AER: )?(?P<aer>PCIe Bus Error: severity=Uncorrect(?:ed|able) \(Fatal\))"
        ),
        summary="GPU PCI:{pci} lost to a fatal PCIe error ({aer})",
        phrases=("severity=Uncorrected (Fatal)", "severity=Uncorrectable (Fatal)"),
        fixed={"xid": 79, "text": "GPU lost to a fatal PCIe error (AER)."},
        examples=(
            "nvidia 0000:17:00.0: AER: PCIe Bus Error: severity=Uncorrectable (Fatal), type=Inaccessible, (Unregistered"
            " Agent ID)",
            "nvidia 0000:17:00.0: AER: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer,"
            " (Receiver ID)",
        ),
        near_misses=(
            "nvidia 0000:17:00.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
            "pcieport 0000:00:03.0: AER: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer",
            "nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)",
        ),
    ),
    Signature(
        # The GPU System Processor (R510+ GSP firmware): RM's heartbeat check ("NVRM: GPU%d %s: Heartbeat timed
        # out, ...", kernel_gsp.c, the Xid 119 family) and its crash report banner ("kgspHealthCheck_<chip>:
        # ***** GSP-CrashCat Report *****" / "GSP Error", with Xid 120 after it in the same report); the GSP not
        # answering in the words RM prints with or without an Xid 119 beside them ("_issueRpcAndWait: rpcRecvPoll
        # timedout for fn %d", "Back to back GSP RPC timeout detected! GPU marked for reset", "GSP RM heartbeat timed
        # out", "LibOS heartbeat timed out", the firmware's own "GSP task watchdog timeout @ pc:...").
        name="nvrm-gsp-fault",
        kind=Kind.GPU_XID,
        pattern=rx(
            r"NVRM: (?:GPU(?P<rm_gpu>\d{1,2}) )?_?kgsp(?:IsHeartbeatTimedOut|HealthCheck_\w{1,16}): "
            r"(?P<text>Heartbeat timed out|\*{3,80} ?GSP[^\n*]{0,60})"
            r"|NVRM: [^\n]{0,200}?(?P<rpc>rpcRecvPoll timedout for fn \d{1,4}|Back to back GSP RPC timeout detected"
            r"|GSP RM heartbeat timed out|LibOS heartbeat timed out)"
            r"|(?P<watchdog>GSP task watchdog timeout) @ pc:"
        ),
        summary="GSP firmware fault on a GPU: {text}",
        # the analyzer keeps "_kgspIsHeartbeatTimedOut:" as one token
        phrases=(
            "Heartbeat timed out",
            "rpcRecvPoll timedout",
            "Back to back GSP RPC timeout",
            "GSP task watchdog timeout",
        ),
        wildcards=("kgsphealthcheck*",),
        fixed={"xid": 119},
        extract=lambda m, _t: {"text": m.group("text") or m.group("rpc") or m.group("watchdog")},
        examples=(
            "[   24.302465] NVRM: GPU6 _kgspIsHeartbeatTimedOut: Heartbeat timed out, currentTimeMs 812751949 heartbeat"
            " 1899482",
            "NVRM: kgspHealthCheck_TU102: ****************************** GSP-CrashCat Report ***************",
            "kernel: [612947.633642] NVRM: _issueRpcAndWait: rpcRecvPoll timedout for fn 76!",
            "NVRM: nvAssertFailedNoLog: Assertion failed: Back to back GSP RPC timeout detected! GPU marked for reset @"
            " kernel_gsp.c:2387",
            "NVRM: GPU0 _kgspRpcRecvPoll: GSP RM heartbeat timed out",
            "Aug 07 17:19:18 ubuntu kernel: GSP task watchdog timeout @ pc:0x1250c5c, partition:2#0, task:3",
        ),
        near_misses=("NVRM: GPU6 kgspInitRm: GSP-RM firmware loaded, heartbeat every 2000 ms",),
    ),
    Signature(
        # NVIDIA k8s-device-plugin's health check: log.Printf("XidCriticalError: Xid=%d on Device=%s; marking
        # device as unhealthy.") (v0.x) and "..., the device will go unhealthy." (older).
        name="device-plugin-xid",
        kind=Kind.GPU_XID,
        # (a UUID shortened in a paste, "GPU-455e672a-...", still names the Xid)
        # (and the raw NVML event it logs first: "Processing event {Device:{...} EventType:8 EventData:%d ...}", 8
        # being nvmlEventTypeXidCriticalError and the data the Xid)
        # (the DRA driver's kubelet plugin since 2026: "Processing event XID=%d event", "Sending XID=%d health event
        # for device %s")
        pattern=rx(
            r"XidCriticalError: Xid=(?P<xid>\d{1,3}) on Device=(?P<uuid>GPU-[0-9a-fA-F-]{4,36}(?:\.{3})?)"
            r"|Processing event \{Device:\{[^}\n]{0,200}\} EventType:8 EventData:(?P<xid2>\d{1,3})\b"
            r"|(?:Processing event|Sending) XID=(?P<xid3>\d{1,3}) (?:event|health event for device)"
        ),
        summary="Xid {xid} on {uuid} (device plugin marks the GPU unhealthy)",
        phrases=("XidCriticalError", "EventType:8 EventData", "Processing event XID", "health event for device"),
        extract=lambda m, _t: (
            {"xid": int(m.group("xid2") or m.group("xid3"))} if m.group("xid2") or m.group("xid3") else {}
        ),
        convert={"xid": int},
        examples=(
            "2020/08/10 19:09:42 XidCriticalError: Xid=69 on Device=GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8, the"
            " device will go unhealthy.",
            "I0809 13:32:51.873532       1 health.go:159] Processing event {Device:{Handle:0x7e590d4986e8} EventType:8"
            " EventData:94 GpuInstanceId:4294967295 ComputeInstanceId:4294967295}",
        ),
        near_misses=("Xid=69 is not in the list of application Xids; skipping",),
    ),
    Signature(
        # nvidia-smi / NVML when a GPU is gone: "Unable to determine the device handle for GPU %s: %s" with
        # NVML_ERROR_UNKNOWN ("Unknown Error") or NVML_ERROR_GPU_IS_LOST ("GPU is lost").
        name="nvml-device-lost",
        kind=Kind.GPU_MISSING,
        pattern=rx(
            r"Unable to determine the device handle for (?:GPU|gpu) ?(?P<bus>[0-9a-fA-F]{3,8}:[0-9a-fA-F]{2}:"
            r"[0-9a-fA-F]{2}\.\d): (?P<error>Unknown Error|GPU is lost)"
        ),
        summary="nvidia-smi cannot reach GPU {bus}: {error}",
        phrases=("Unable to determine the device handle",),
        fixed={"text": "GPU is lost (fallen off the bus)"},
        examples=("Unable to determine the device handle for GPU 0000:09:00.0: Unknown Error",),
        near_misses=("Unable to determine the device handle for GPU 0000:09:00.0: Insufficient Permissions",),
    ),
    Signature(
        # the GPU gone as its status code names it: NVML's NVML_ERROR_GPU_IS_LOST as go-nvml spells it
        # ("ERROR_GPU_IS_LOST", gpud and the device plugin) and pynvml names its exception class
        # (NVMLError_GpuIsLost, a class per NVML_ERROR_* name), RM's NV_ERR_GPU_IS_LOST ("GPU lost from the bus",
        # nvAssertOkFailedNoLog and friends), and that status by its number (0x0000000F, nvstatuscodes.h) where a
        # call to the GSP failed with it ("_issueRpcAndWait: rpcSendMessage failed with status 0x%08x for fn %d!",
        # GspRmAlloc's, GspRmFree's and GspRmControl's "status=0x%08x")
        name="gpu-is-lost-status",
        kind=Kind.GPU_MISSING,
        pattern=rx(
            r"(?:(?P<uuid>GPU-[0-9a-fA-F-]{36})[^\n]{0,200}?)?(?:\b(?:NVML_)?ERROR_GPU_IS_LOST\b|\bNV_ERR_GPU_IS_LOST\b"
            r"|\bNVMLError_GpuIsLost\b|GPU lost from the bus)"
            r"|NVRM: [^\n]{0,200}?(?:rpcSendMessage failed with status |GspRm(?:Alloc|Free|Control) failed: [^\n]{0,300}?"
            r"\bstatus=)"
            r"0x0{0,7}[fF]\b"
        ),
        summary="the GPU is lost: {line}",
        phrases=(
            "NV_ERR_GPU_IS_LOST",
            "GPU lost from the bus",
            "ERROR_GPU_IS_LOST",
            "NVML_ERROR_GPU_IS_LOST",
            "NVMLError_GpuIsLost",
            "rpcSendMessage failed",
            "GspRmAlloc failed",
            "GspRmFree failed",
            "GspRmControl failed",
        ),
        wildcards=("?*error_gpu_is_lost", "?*nvmlerror_gpuislost"),
        fixed={"text": "GPU is lost (fallen off the bus)"},
        extract=whole,
        examples=(
            "failed to get remapped rows for GPU-ac896b35-5782-c478-4b2a-a661de07770f: failed to get device remapped"
            " rows: ERROR_GPU_IS_LOST",
            "NVRM: nvAssertOkFailedNoLog: Assertion failed: GPU lost from the bus [NV_ERR_GPU_IS_LOST] (0x0000000F)"
            " returned from rmStatus @ kernel_ce_gv100.c:106",
            "NVRM: _issueRpcAndWait: rpcSendMessage failed with status 0x0000000f for fn 76!",
            "NVMLError_GpuIsLost: GPU is lost",
            "NVRM: GPU0 rpcRmApiFree_GSP: GspRmFree failed: hClient=0xc1d00029; hObject=0xbeef0100; paramsStatus=0x00000000;"
            " status=0x0000000f",
        ),
        near_misses=(
            "nvml.ERROR_GPU_IS_LOST_HANDLER registered",
            "NVRM: _issueRpcAndWait: rpcSendMessage failed with status 0x00000065 for fn 10!",
        ),
    ),
    Signature(
        # RM failing to bring a GPU up (the adapter's init, "RmInitAdapter failed! (0x%x:0x%x:%d)" with the GPU's
        # PCI address on R470+, without it before): the GPU is unusable until it is reset or replaced; during a
        # run, what a GPU that dropped off the bus says when the driver tries it again
        name="nvrm-init-failed",
        kind=Kind.GPU_MISSING,
        # (and "osInitNvMapping: *** Cannot attach gpu", the same at the OS layer)
        pattern=rx(
            r"NVRM: (?:GPU (?:at )?(?:PCI:)?"
            + _PCI
            + r"\.\d:? )?RmInitAdapter failed!|NVRM: osInitNvMapping: \*{3} Cannot attach gpu"
            # R525+ with GSP: the same init failing on the GSP firmware's boot ("RmInitAdapter: Cannot initialize
            # GSP firmware RM", after "GSP-FMC reported an error" or "Max GSP-RM boot attempts exceeded")
            + r"|NVRM: RmInitAdapter: Cannot initialize GSP firmware RM"
            # the step of the init that failed ("RmInitAdapter: %s failed, bailing out of RmInitAdapter"), and the
            # kernel interface's report of the same ("GPU %04x:%02x:%02x.%x: rm_init_adapter failed, device minor
            # number %d")
            + r"|NVRM: RmInitAdapter: \w{1,60} failed, bailing out of RmInitAdapter"
            + r"|NVRM: [^\n]{0,40}?rm_init_adapter failed, device minor number \d{1,4}"
        ),
        summary="the driver could not initialize a GPU (RmInitAdapter failed)",
        phrases=(
            "RmInitAdapter failed",
            "Cannot attach gpu",
            "Cannot initialize GSP firmware RM",
            "bailing out of RmInitAdapter",
            "rm_init_adapter failed",
        ),
        fixed={"text": "GPU failed to initialize (RmInitAdapter failed)"},
        examples=(
            "[   39.147720] NVRM: RmInitAdapter failed! (0x26:0xffff:1127)",
            "kernel: [  218.250408] NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)",
            "[  +0.000021] NVRM: RmInitAdapter: Cannot initialize GSP firmware RM",
            "NVRM: GPU 0000:09:00.0: rm_init_adapter failed, device minor number 0",
        ),
        near_misses=("NVRM: GPU 0000:0a:00.0: RmInitAdapter succeeded", "NVRM: GSP firmware RM initialized"),
    ),
    Signature(
        # RM reporting a GPU that must be reset before it can work again, by the status it returns
        # (NV_ERR_RESET_REQUIRED, 0x62: assertions and failed GSP RPCs print it), the memory subsystem's own error
        # after a bus flush timed out (kgmmuCheckMemSubsysError), the GPU firmware not booting ("failed to wait for
        # GFW boot complete") and a GPU crash dump taken: hardware faults the Xid may not carry
        name="nvrm-gpu-needs-reset",
        kind=Kind.GPU_XID,
        pattern=rx(
            r"NVRM: [^\n]{0,300}?(?P<status>NV_ERR_RESET_REQUIRED"
            r"|GspRm(?:Alloc|Free|Control) failed: [^\n]{0,300}?\bstatus=0x0{0,6}62\b"
            # the GSP telling RM that the PMU (the GPU's power management controller) halted: Xid 62's fault
            # ("_kgspRpcGspEventPmuHalted: Received signal from GSP that PMU has halted.")
            r"|Received signal from GSP that PMU has halted"
            r"|Memory Subsystem Error detected|The GPU likely needs to be reset|failed to wait for GFW boot complete"
            r"|A GPU crash dump has been created"
            # the GSP's or another falcon's halted core dumped (kflcnCoreDumpDestructive: registers, "ICD: ...")
            r"|kflcnCoreDumpDestructive)"
            # amdgpu's RAS: "{%llu}uncorrectable hardware error(%s) detected!"
            r"|amdgpu [0-9a-fA-F:.]{7,16}: \{\d{1,12}\}uncorrectable hardware error\(\w{1,64}\) detected"
        ),
        summary="the GPU needs a reset: {line}",
        phrases=(
            "NV_ERR_RESET_REQUIRED",
            "GspRmAlloc failed",
            "GspRmFree failed",
            "GspRmControl failed",
            "PMU has halted",
            "Memory Subsystem Error detected",
            "failed to wait for GFW boot complete",
            "A GPU crash dump has been created",
            "The GPU likely needs to be reset",
            "uncorrectable hardware error",
            "kflcnCoreDumpDestructive",
        ),
        fixed={"gpu_fault": "hardware"},
        extract=whole,
        examples=(
            "NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED] (0x00000062)"
            " returned from status @ kernel_channel.c:2874",
            "NVRM: rpcRmApiAlloc_GSP: GspRmAlloc failed: hClient=0xc1d1a616; hParent=0x5c000054; hObject=0x5c00005b;"
            " hClass=0x0000c86f; paramsSize=0x00000170; paramsStatus=0x00000062; status=0x00000062",
            "NVRM: GPU6 kgmmuCheckMemSubsysError_IMPL: Memory Subsystem Error detected. kbusSendSysmembarSingle"
            " failed.",
            "NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:9b:00 (printing 1 of every 30).  The GPU"
            " likely needs to be reset.",
            "amdgpu 0000:1c:00.0: {1}uncorrectable hardware error(ERREVENT_ATHUB_INTERRUPT) detected!",
            "kernel: NVRM: kgspWaitForGfwBootOk_TU102: failed to wait for GFW boot complete: 0x55 VBIOS version"
            " 95.04.69.40.36",
            "[Tue Apr  9 01:21:38 2024] NVRM: A GPU crash dump has been created. If possible, please run",
            "[   84.702013] NVRM: GPU6 kflcnCoreDumpDestructive_IMPL: ICD: a4:0x0000000000000004   a5:0x0000000000000a00",
        ),
        near_misses=(
            "NVRM: rpcRmApiAlloc_GSP: GspRmAlloc failed: hClass=0x0000c86f; paramsStatus=0x00000051; status=0x00000051",
        ),
    ),
    Signature(
        # gpud's Xid component: "XID %d(%s) detected on %s" with the GPU's PCI bus id (newer: "detected on GPU
        # PCI:%s UUID:%s")
        name="gpud-xid",
        kind=Kind.GPU_XID,
        pattern=rx(r"XID (?P<xid>\d{1,3}) ?\((?P<text>[^)\n]{1,160})\) detected on (?:GPU )?PCI:" + _PCI),
        summary="Xid {xid} on GPU PCI:{pci}: {text}",
        phrases=("detected on PCI", "detected on GPU PCI"),
        convert={"xid": int},
        examples=(
            "XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00",
            '"reason":"XID 48 (Double Bit ECC Error) detected on GPU PCI:0000:6b:00'
            ' UUID:GPU-c44c6e5f-72cf-8200-97c2-f9b9ebcf2dbb",',
        ),
        near_misses=("no XID detected on PCI:0000:ae:00",),
    ),
    Signature(
        # the kernel's OOM killer ending one of the node's own agents or log shippers (its kill line, its summary's
        # task=), or a process its summary places outside every pod's cgroup (task_memcg=/init.scope,
        # /system.slice/..., /user.slice/...: the host's own): no pod's program; the report and kill lines of the
        # same kill are settled with it (parse.SETTLED)
        name="kernel-oom-node-agent",
        kind=Kind.LOG_LINE,
        pattern=rx(
            r"[Oo]ut of memory: Kill(?:ed)? process \d{1,10} \(" + _NODE_AGENT_NAMES + r"\)"
            r"|oom-kill:constraint=CONSTRAINT_[A-Z_]{1,20}[^\n]{0,2048}?,(?:task=" + _NODE_AGENT_NAMES + r","
            r"|task_memcg=/(?![^,\n]{0,300}kubepods)[^,\n]{0,300},task=[^,\n]{1,64},pid=(?P<pid>\d{1,10}))"
        ),
        convert={"pid": int},
        summary="the kernel's OOM killer ended a node agent: {line}",
        phrases=("out of memory: Killed process", "out of memory: Kill process", "oom-kill:constraint"),
        extract=whole,
        examples=(
            "Memory cgroup out of memory: Killed process 1360652 (flb-pipeline) total-vm:1307336kB, anon-rss:259736kB",
            "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=x,mems_allowed=0,oom_memcg=/kubepods/pod1,"
            "task_memcg=/kubepods/pod1/c1,task=flb-pipeline,pid=1360652,uid=0",
            "Out of memory: Killed process 4242 (nvidia-device-p) total-vm:1000kB, anon-rss:900kB",
            "Memory cgroup out of memory: Killed process 4243 (charts.d.plugin) total-vm:90000kB, anon-rss:40000kB",
            "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/init.scope,"
            "task=python,pid=7899,uid=0",
        ),
        near_misses=(
            "Memory cgroup out of memory: Killed process 41230 (python) total-vm:71562312kB",
            "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/kubepods."
            "slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/cri-containerd-2.scope,task=python,pid=7,uid=0",
        ),
    ),
    Signature(
        name="kernel-oom-killer",
        kind=Kind.KERNEL_OOM,
        pattern=rx(
            # (and 3.x-4.x's kill on a line of its own after "Kill process %d (%s) score %u or sacrifice child":
            # "Killed process %d (%s) total-vm:..." or el7's "Killed process %d (%s), UID %u, total-vm:...")
            r"(?:(?P<cgroup>Memory cgroup )?[Oo]ut of memory: Kill(?:ed)? process "
            r"|Killed process (?=\d{1,10} \([^)\n]{0,64}\),? (?:UID \d{1,10}, )?total-vm:))(?P<pid>\d+) \("
            + _NODE_AGENT
            + r"(?P<process>[^)\n]{0,64})\)"
            r"(?:[^\n]{0,512}?anon-rss:(?P<anon_rss_kb>\d+)kB)?"
        ),
        summary="kernel OOM killer killed {process} (pid {pid})",
        phrases=("out of memory: Killed process", "out of memory: Kill process", "Killed process"),
        convert={"pid": int, "anon_rss_kb": int, "cgroup": bool},
        extract=oom_pod,
        examples=(
            "Memory cgroup out of memory: Killed process 41230 (python) total-vm:71562312kB, anon-rss:67012444kB,"
            " file-rss:13220kB, shmem-rss:0kB, UID:0 pgtables:131912kB oom_score_adj:985",
            "Out of memory: Killed process 2793 (pt_main_thread) total-vm:102745988kB, anon-rss:95230612kB",
            "Out of memory: Kill process 1234 (python) score 999 or sacrifice child",
            "[35881895.792304] Killed process 21518 (python2) total-vm:1617472kB, anon-rss:1310652kB, file-rss:4kB",
            "Killed process 42452 (memcg_test_1), UID 0, total-vm:1066448kB, anon-rss:1048596kB, file-rss:8kB",
        ),
        near_misses=(
            "oom_reaper: reaped process 41230 (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB",
            "earlyoom: Killed process 4242 (python) after SIGTERM",
            "Memory cgroup out of memory: Killed process 1360652 (flb-pipeline) total-vm:1307336kB, anon-rss:259736kB",
        ),
    ),
    Signature(
        # a kill of every task in a cgroup: the kernel's memory.oom.group (set by the kubelet on cgroup v2 since
        # 1.28: "Tasks in %s are going to be killed due to memory.oom.group set"), Talos' userspace OOM handler
        # ("[talos] Sending SIGKILL to cgroup {... "controller": "runtime.OOMController", "cgroup": "%s"}"); the pod
        # named by the cgroup's path
        name="kernel-oom-group-kill",
        kind=Kind.KERNEL_OOM,
        pattern=rx(
            r"Tasks in /\S{0,400}?kubepods\S{0,400} are going to be killed due to memory\.oom\.group set"
            r"|Sending SIGKILL to cgroup [^\n]{0,200}?\"controller\": \"runtime\.OOMController\", \"cgroup\": \"[^\"\n]{0,200}?"
            r"kubepods"
        ),
        summary="the OOM killer ended every task of a cgroup: {line}",
        phrases=("memory.oom.group", "Sending SIGKILL to cgroup"),
        extract=lambda m, t: {**oom_pod(m, t), "line": m.group(0)},
        examples=(
            "Tasks in /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c.slice/cri-containerd-9f.scope"
            " are going to be killed due to memory.oom.group set",
        ),
        near_misses=(
            "memory.oom.group set to 1 for /kubepods.slice",
            "Tasks in /system.slice/docker-5f0c2a1b9e.scope are going to be killed due to memory.oom.group set",
        ),
    ),
    Signature(
        # the OOM killer's report around the kill (mm/oom_kill.c, memcontrol.c): its first line "%s invoked
        # oom-killer: gfp_mask=...", cgroup v1's "Task in %s killed as a result of limit of %s" (before 4.19), the
        # memcg's "memory: usage %lukB, limit %lukB, failcnt %lu" at its limit; kept when the "Killed process" line
        # is not (rate limits, a shipper's cut)
        name="kernel-oom-report",
        kind=Kind.KERNEL_OOM,
        pattern=rx(
            r"(?<![^\s\]])" + _NODE_AGENT + r"(?P<process>[^\s\]]{1,64}) invoked oom-killer: gfp_mask="
            r"|Task in /[^\s]{1,400} killed as a result of limit of /"
            r"|\bmemory: usage (?P<usage>\d{1,15})kB, limit (?P=usage)kB, failcnt"
            # the memcg's statistics, printed only in its OOM report (mem_cgroup_print_oom_meminfo)
            r"|Memory cgroup stats for /kubepods[^\s:]{0,400}"
        ),
        summary="the kernel's OOM killer ran: {line}",
        phrases=("invoked oom-killer", "killed as a result of limit of", "memory: usage", "Memory cgroup stats for"),
        extract=lambda m, t: {**oom_pod(m, t), "line": m.group(0)},
        examples=(
            "Oct 21 21:08:58 kubernetes-minion-2 kernel: [75254.207495] supervisord invoked oom-killer: gfp_mask=0xd0,"
            " order=0, oom_score_adj=0",
            "[Thu Dec  7 00:20:58 2017] Task in /kubepods/pod95387fa4-da9c-11e7-9d36-5254b24cbf5e/e84ed2eecf15 killed as"
            " a result of limit of /kubepods/pod95387fa4-da9c-11e7-9d36-5254b24cbf5e/e84ed2eecf15",
            "[5193605.506735] memory: usage 524288kB, limit 524288kB, failcnt 0",
            "[39291577.009360] Memory cgroup stats for /kubepods/burstable/podfe3f7a38-b3f7-48aa-8997-a697ae3d0741/c7eb"
            "f4d756b2: cache:0KB rss:613460KB",
        ),
        near_misses=("memory: usage 524092kB, limit 9007199254740988kB, failcnt 0",),
    ),
    Signature(
        # Slurm's step daemon after the job's memory cgroup killed a task (task/cgroup plugin): "Detected %u
        # oom-kill event(s) in %ps. Some of your processes may have been killed by the cgroup out-of-memory handler."
        # (20.x+; "Detected %u oom_kill event(s) in step %u.%u cgroup" before), srun's "task %d: Out Of Memory", as
        # Slurm-on-Kubernetes pods print them
        name="slurm-oom-kill",
        kind=Kind.OOM_KILLED,
        pattern=rx(
            r"Detected (?P<kills>\d{1,6}) oom[-_]kill events?(?:\(s\))? in (?:StepId=|step )?(?P<step>[\w.]{1,64})"
            r"|srun: error: [^\n]{1,200}?: tasks? [\d,-]{1,64}: Out Of Memory"
        ),
        summary="Slurm: the job's memory cgroup killed its tasks (out of memory)",
        phrases=("oom kill", "oom_kill", "Out Of Memory"),  # "oom_kill" is one token to the standard analyzer
        convert={"kills": int},
        examples=(
            "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=37205392.0. Some of your processes may have"
            " been killed by the cgroup out-of-memory handler.",
            "slurmstepd: error: Detected 2 oom_kill events in StepId=JOBID.13. Some of the step tasks have been OOM"
            " Killed.",
            "srun: error: node107: task 0: Out Of Memory",
        ),
        near_misses=("slurmstepd: error: Detected 0 oom-kill events: memory enforcement disabled",),
    ),
    Signature(
        # Ray's memory monitor killing a worker when its node (on Kubernetes: its pod's memory) passed the usage
        # threshold (ray.exceptions.OutOfMemoryError, 2.2+: "Task was killed due to the node running low on
        # memory.", "Ray killed this worker ... because it was the most recently scheduled task")
        name="ray-memory-monitor-kill",
        kind=Kind.OOM_KILLED,
        # (and the raylet's periodic summary: "%d Workers (tasks / actors) killed due to memory pressure (OOM), %d
        # Workers crashed due to other reasons at node ...")
        pattern=rx(
            r"(?:Task|Actor) was killed due to the node running low on memory"
            # before 2.2 the monitor failed the task itself ("RayOutOfMemoryError: More than 95% of the memory on
            # node %s is used"); the worker-killing policy's detail, seen without its header ("Ray killed this worker
            # (ID: %s) because it was the most recently scheduled task")
            r"|RayOutOfMemoryError: More than \d{1,3}% of the memory on node|RayTaskError\(RayOutOfMemoryError\)"
            r"|Ray killed this worker \(ID: [0-9a-f]{8,64}\) because it was the most recently scheduled task"
            # (also wrapped by a terminal or rsyslog after its count's "(tasks /")
            r"|\b[1-9]\d{0,5} Workers \(tasks\s{1,4}/(?:\s{1,4}actors\) killed due to memory pressure \(OOM\)|[ \t]*$)"
        ),
        summary="Ray: the memory monitor killed a worker (the node ran low on memory)",
        phrases=(
            "killed due to the node running low on memory",
            "killed due to memory pressure",
            "of the memory on node",
            "Ray killed this worker",
            "RayTaskError(RayOutOfMemoryError)",
        ),
        examples=(
            "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\nMemory on the"
            " node (IP: 172.31.69.247) where the task was running was 54.86GB / 57.60GB (0.952354), which exceeds"
            " the memory usage threshold of 0.95.",
        ),
        near_misses=(
            "ray.exceptions.OutOfMemoryError: node memory is fine, the task ran out of GPU memory",
            "0 Workers (tasks / actors) killed due to memory pressure (OOM), 2 Workers crashed due to other reasons",
        ),
    ),
    Signature(
        # the kill's one-line summary (mm/oom_kill.c dump_oom_summary, 4.19+): "oom-kill:constraint=%s,nodemask=..,
        # cpuset=..,mems_allowed=..,oom_memcg=..,task_memcg=..,task=%s,pid=%d,uid=%d", kept when the "Killed
        # process" line that follows it is not (rate limits, a log shipper's line cut)
        name="kernel-oom-kill-summary",
        kind=Kind.KERNEL_OOM,
        pattern=rx(
            r"oom-kill:constraint=(?P<constraint>CONSTRAINT_[A-Z_]+)[^\n]{0,2048}?,task="
            + _NODE_AGENT
            + r"(?P<process>[^,\n]{1,64}),"
            r"pid=(?P<pid>\d+)"
        ),
        summary="kernel OOM killer killed {process} (pid {pid})",
        phrases=("oom-kill:constraint",),
        convert={"pid": int},
        extract=oom_pod,
        examples=(
            "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-9f1c.scope,mems_allowed=0-1,"
            "oom_memcg=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0b2e5f3c_1d4a_4f6b_9a7e_2c8d"
            "1e0f3a5b.slice,task_memcg=/kubepods.slice/kubepods-burstable.slice,task=pt_main_thread,pid=461754,uid=0",
        ),
        near_misses=("oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null)",),
    ),
    Signature(
        name="nccl-watchdog-timeout",
        kind=Kind.NCCL_TIMEOUT,
        pattern=rx(
            # the work may be on the next line or cut (a shipper or a paste wrapped it): the words alone say it
            r"(?:Watchdog c|C)aught\s{1,4}collective operation timeout:(?:\s{1,4}"
            + _WORK
            + r"(?: ran for (?P<ran_ms>\d+) milliseconds)?)?"
            # (and what is left of the words when a terminal broke the line within them: "Watchdog caught colle" /
            # "ctive operation timeout: WorkNCCL(SeqNum=4, ...")
            + r"|\boperation timeout: WorkNCCL\(SeqNum=\d{1,12}"
            # 2.3+: the watchdog's own line when it finds a work past its timeout ("Timeout at NCCL work: %d, last
            # enqueued NCCL work: %d, last completed NCCL work: %d.")
            # (a paste may wrap it after "last enqueued")
            + r"|Timeout at NCCL work: (?P<seq>\d{1,12}), last enqueued\b"
        ),
        summary="NCCL watchdog timeout: {op} SeqNum={seq} after {timeout_ms} ms",
        phrases=("caught collective operation timeout", "Timeout at NCCL work", "operation timeout: WorkNCCL"),
        convert={"ran_ms": int},
        extract=nccl_work,
        examples=(
            "[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation"
            " timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000,"
            " Timeout(ms)=600000) ran for 600081 milliseconds before timing out.",
            "[rank3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=64214, OpType=ALLGATHER, NumelIn=1,"
            " NumelOut=32, Timeout(ms)=600000)",
            "[rank0]:[E1206 18:44:16.994932383 ProcessGroupNCCL.cpp:1709] [PG 1 Rank 0] Timeout at NCCL work: 7753, last"
            " enqueued NCCL work: 7755, last completed NCCL work: 7752.",
        ),
        near_misses=("[Rank 0] ProcessGroupNCCL initialization options: NCCL version: 2.21.5, TIMEOUT(ms): 600000",),
    ),
    Signature(
        name="nccl-blocking-wait-timeout",
        kind=Kind.NCCL_TIMEOUT,
        # torch 1.11+ "Work %s timed out in blocking wait"; 1.7-1.10 "Work %s timed out in call to wait()", the
        # message the timed-out rank aborts its communicators with (the others print it as the "Original reason")
        pattern=rx(r"Work:? " + _WORK + r" timed out in (?:blocking wait|call to wait\(\))"),
        summary="NCCL blocking wait timed out: {op} SeqNum={seq}",
        phrases=("timed out in blocking wait", "timed out in call to wait"),
        extract=nccl_work,
        examples=(
            "[Rank 2] Work WorkNCCL(SeqNum=88, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, Timeout(ms)=600000)"
            " timed out in blocking wait (NCCL_BLOCKING_WAIT=1).",
            "RuntimeError: NCCL communicator was aborted on rank 3. Original reason for failure was: Work"
            " WorkNCCL(OpType=BROADCAST, TensorShape=[512], Timeout(ms)=1800000) timed out in call to wait().",
        ),
        near_misses=("NCCL_BLOCKING_WAIT is deprecated, use TORCH_NCCL_BLOCKING_WAIT instead",),
    ),
    Signature(
        name="nccl-watchdog-stuck",
        kind=Kind.NCCL_TIMEOUT,
        # the heartbeat monitor's last words on the same hang (torch 2.3+: "Terminating the process after attempting
        # to dump debug info, due to ProcessGroupNCCL watchdog hang.")
        pattern=rx(
            r"watchdog got stuck for (?P<stuck_s>\d+) seconds|Heartbeat monitor timed out"
            r"|due to ProcessGroupNCCL watchdog hang"
        ),
        summary="NCCL watchdog hung (heartbeat monitor)",
        phrases=("watchdog got stuck for", "Heartbeat monitor timed out", "ProcessGroupNCCL watchdog hang"),
        convert={"stuck_s": int},
        fixed={"hang": True},
        extract=ranked,
        examples=(
            "[rank1]:[E1111 17:10:53] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress",
            "Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=2",
            "[rank2]:[F205 18:19:06.383067836 ProcessGroupNCCL.cpp:1614] [PG ID 17 PG GUID 137 Rank 2] Terminating the"
            " process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang.",
        ),
        near_misses=("[Rank 0] ProcessGroupNCCL initialization options: TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC: 480",),
    ),
    Signature(
        # PyTorch 2.4+ flight recorder: a rank whose collective timed out tells the others through the store;
        # each then says "Received a dump signal due to a collective timeout from rank %d" ("from this local rank"
        # on the one that timed out) or "Observed flight recorder dump signal from another rank via TCPStore."
        name="nccl-timeout-dump-signal",
        kind=Kind.NCCL_TIMEOUT,
        pattern=rx(
            # (its long line wrapped by a terminal in any word: "from this local \nrank")
            r"Received a dump signal due to a collective timeout from\s{1,4}(?:this\s{1,4}local(?:\s{1,4}rank|[ \t]*$)"
            r"|rank (?P<peer_rank>\d+))"
            r"|Observed flight recorder dump signal from another rank"
            # torch 2.2-2.3: "Received a global timeout from another rank and will start to dump the debug info."
            r"|Received a global timeout from another rank"
        ),
        summary="NCCL collective timeout (flight recorder dump signal)",
        phrases=(
            "Received a dump signal due to a collective timeout",
            "Observed flight recorder dump signal",
            "Received a global timeout from another rank",
        ),
        convert={"peer_rank": int},
        extract=ranked,
        examples=(
            "[rank5]:[E723 01:58:45.667329643 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 5]"
            " Received a dump signal due to a collective timeout from rank 2 and we will try our best to dump the"
            " debug info.",
            "[rank0]:[E804 23:05:54.816 ProcessGroupNCCL.cpp:1849] [PG ID 0 PG GUID 0(default_pg) Rank 0] Observed"
            " flight recorder dump signal from another rank via TCPStore.",
        ),
        near_misses=("[rank0]: TORCH_NCCL_DUMP_ON_TIMEOUT=1, dumping the flight recorder to /tmp/nccl_trace_rank_0",),
    ),
    Signature(
        # the program misusing NCCL: two ranks on one GPU (init.cc "Duplicate GPU detected : rank %d and rank %d both
        # on CUDA device %lx"), a collective called with invalid arguments (ncclInvalidUsage, "invalid usage"): the
        # code's or its launch's, not the network's
        name="nccl-invalid-usage",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(
            r"(?P<message>Duplicate GPU detected : rank \d{1,6} and rank \d{1,6} both on CUDA device \w{1,16}"
            r"|NCCL operation \w{1,40}\([^\n]{0,300}?\) failed: invalid (?:usage|argument)"
            # PyTorch 1.x's c10d ("NCCL error in: %s:%d, invalid usage, NCCL version %s", ncclInvalidUsage's note)
            # (a paste may wrap after its comma: the words then begin the next line)
            r"|NCCL error in: \S{1,300},\s{1,4}invalid (?:usage|argument)|ncclInvalidUsage: This usually reflects invalid usage"
            r"|(?m:^)invalid (?:usage|argument) \(run with NCCL_DEBUG=\w{1,10} for details\), NCCL version"
            # an argument NCCL refuses (ncclInvalidArgument: "Invalid value for an argument.", its "Last error:" such
            # as "Broadcast : sendbuff (nil) is not a valid pointer"): the program's call
            r"|ncclInvalidArgument: Invalid value for an argument"
            # the bootstrap root seeing two processes claim one rank, or ranks told different world sizes
            # (bootstrap.cc "Bootstrap Root : rank %d of %d ranks has already checked in", "... mismatch in rank count
            # from procs %d : %d"): the launch's ranks are wrong, the network is not
            r"|Bootstrap Root : (?:rank \d{1,7} of \d{1,7} ranks has already checked in"
            r"|mismatch in rank count from procs \d{1,7} : \d{1,7}))"
        ),
        summary="NCCL used wrongly: {message}",
        phrases=(
            "Duplicate GPU detected",
            "failed: invalid usage",
            "failed: invalid argument",
            "invalid usage, NCCL version",
            "invalid argument, NCCL version",
            "ncclInvalidUsage",
            "ncclInvalidArgument",
            "Bootstrap Root : ",
        ),
        fixed={"exception": "NCCL invalid usage"},
        examples=(
            "[1,4]<stdout>:smc-gpu-03:29882:30400 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 4 and rank 0"
            " both on CUDA device 1000",
            "RuntimeError: Internal: nccl_all_reduce_thunk.cc:162: NCCL operation ncclAllReduce(send_buffer,"
            " recv_buffer, buffer.element_count, datatype, reduce_op, comm, *cu_stream) failed: invalid usage: while"
            " running replica 0",
            "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, invalid usage, NCCL"
            " version 2.7.8",
            "ncclInvalidArgument: Invalid value for an argument.\nLast error:\nBroadcast : sendbuff (nil) is not a valid"
            " pointer",
            "hpc-25-14:18569:18835 [0] bootstrap.cc:131 NCCL WARN Bootstrap Root : rank 1 of 8 ranks has already"
            " checked in",
            "node1:12:40 [0] NCCL WARN Bootstrap Root : mismatch in rank count from procs 16 : 8",
        ),
        near_misses=(
            "NCCL operation ncclAllReduce(send_buffer) failed: unhandled system error",
            "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system error,"
            " NCCL version 2.7.8",
        ),
    ),
    Signature(
        # NCCL finding no network interface to bootstrap over (bootstrap.cc "Bootstrap : no socket interface
        # found"; NCCL_SOCKET_IFNAME naming an interface the pod lacks) or handed an address of no family
        # (socket.cc "ncclSocketInit: connecting to address %s with family %d is neither AF_INET(%d) nor
        # AF_INET6(%d)"): the pod's network set-up, not a fault of the run
        name="nccl-no-interface",
        kind=Kind.CONFIG_ERROR,
        pattern=rx(
            r"(?P<error>Bootstrap ?: no socket interface found|ncclSocketInit: connecting to address [^\n]{0,80}?with"
            r" family \d{1,6} is neither AF_INET"
            # Gloo's TCP device (GLOO_SOCKET_IFNAME naming an interface the pod lacks, or a host name with no address
            # of its own: "ifa != nullptr. Unable to find address for: eth0", "rp != nullptr. Unable to find address
            # for: dgx-1.ai", "Unable to find interface for: [0.0.0.189]"); oneCCL's key-value store
            # ("fill_local_host_ip: can't find interface to get host IP")
            r"|(?:ifa|rp) != nullptr\. Unable to find (?:address|interface) for: \S{1,200}"
            r"|fill_local_host_ip: can't find interface\s{1,4}(?:\S{1,40}\s{1,4})?to get host IP)"
        ),
        summary="the collectives found no network interface to use: {error}",
        phrases=(
            "no socket interface found",
            "is neither AF_INET",
            "Unable to find address for",
            "Unable to find interface for",
            "can't find interface",
        ),
        fixed={"reason": "network interface"},
        examples=(
            "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1201, internal error,"
            " NCCL version 2.14.3\nncclInternalError: Internal check failed.\nLast error:\nBootstrap : no socket"
            " interface found",
            "[trainer0|0]:ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor"
            " AF_INET6(10)",
            "RuntimeError: [enforce fail at /root/pytorch/third_party/gloo/gloo/transport/tcp/device.cc:83] ifa !="
            " nullptr. Unable to find address for: bond1",
            "|CCL_ERROR| internal_kvs.cpp:289 fill_local_host_ip: can't find interface  to get host IP",
            "|CCL_ERROR| internal_kvs.cpp:325 fill_local_host_ip: can't find interface eth1 to get host IP",
        ),
        near_misses=("node-1:77:77 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.3<0>",),
    ),
    Signature(
        name="nccl-ib-completion-error",
        kind=Kind.NCCL_ERROR,
        pattern=rx(
            # net_ib.cc by NCCL version: "Got completion with error %d, opcode %d, len %d, vendor err %d" (2.4-2.7),
            # "... from peer %s with error %d, ..." (2.8+, the peer empty when unknown), "with status=%d opcode=%d"
            # (a vendor's IB plugin prints it as "NET/IBP:")
            r"NET/IBP?(?:/GIN)?\s*: ?Got completion (?:from peer\s{1,4}(?:(?P<peer>\S{1,128}?)\s{1,4})?)?with (?:error |status=)"
            r"(?P<status>\d+)(?:,? opcode[ =](?P<opcode>\d+))?"
        ),
        summary="NCCL NET/IB completion error {ib_status} ({ib_status_name}) from peer {peer}",
        phrases=("completion from peer", "Got completion with error"),  # "IBP:Got" is one token to the analyzer
        convert={"opcode": int},
        extract=ib_status,
        examples=(
            "node-2:5776:5902 [0] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer"
            " 10.2.0.5<33092> with error 12, opcode 0, len 0, vendor err 129 (Recv)",
            "NCCL WARN NET/IB : Got completion from peer 7.247.232.133 with status=4 opcode=0 len=0 vendor err 81 (Send)",
            "gpu7:2044:2112 [3] NCCL WARN NET/IB : Got completion with error 12, opcode 1, len 21845, vendor err 129",
            "NET/IBP:Got completion from peer 7.6.13.83<36315> with status=12 opcode=32698 len=32696 vendor err 129",
        ),
        near_misses=("node-2:5776:5898 [0] NCCL INFO NET/IB : Using [0]ibP111p0s0:1/IB [1]rdmaP1111p0s2:1/RoCE",),
    ),
    Signature(
        name="nccl-remote-error",
        kind=Kind.NCCL_ERROR,
        pattern=rx(
            r"remote process exited or there was a network error(?:.*?\(peer rank (?P<peer_rank>\d+)\))?"
            r"|ncclRemoteError|remote process exiting prematurely"
            # torchcomms' result code of the same ("comm aborted, , result: commRemoteError (commRemoteError)")
            r"|\bresult: commRemoteError\b"
        ),
        summary="NCCL error: remote process exited or there was a network error",
        phrases=(
            "remote process exited or there was a network error",
            "ncclRemoteError",
            "remote process exiting",
            "commRemoteError",
        ),
        convert={"peer_rank": int},
        fixed={"remote": True, "detail": "remote process exited or there was a network error"},
        extract=ranked,
        examples=(
            "[rank0]:[E1120 07:21:15.412001 ProcessGroupNCCL.cpp:1590] [PG ID 0 PG GUID 0(default_pg) Rank 0] Process"
            " group watchdog thread terminated with exception: NCCL error: remote process exited or there was a"
            " network error, NCCL version 2.21.5",
            "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
            "Exception: comm aborted, , result: commRemoteError (commRemoteError)",
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317,"
            " remote process exited or there was a network error, NCCL version 2.21.5 (peer rank 8)",
        ),
        near_misses=("worker 3: remote process exited with status 0 after training completed",),
    ),
    Signature(
        name="nccl-system-error",
        kind=Kind.NCCL_ERROR,
        pattern=rx(r"(?P<nccl_result>unhandled system error|ncclSystemError)"),
        summary="NCCL error: unhandled system error",
        phrases=("unhandled system error", "ncclSystemError"),
        convert=_NCCL_RESULT,
        fixed={"detail": "unhandled system error"},
        extract=ranked,
        examples=(
            "  what():  NCCL error: unhandled system error, NCCL version 2.10.3",
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
        ),
        near_misses=("SystemError: error return without exception set",),
    ),
    Signature(
        # NCCL's CUDACHECK when an allocation fails: WARN("Cuda failure '%s'") (2.x), "Cuda failure %d '%s'"
        # (2.19+), quoted again in torch's "Last error:" and XLA's "Last NCCL warning(error) log entry": the GPU's
        # memory was full, whatever NCCL result ("unhandled cuda error") it is reported under
        name="nccl-cuda-oom",
        kind=Kind.CUDA_OOM,
        pattern=rx(r"Cuda failure (?:\d{1,4} )?'out of memory'"),
        summary="GPU out of memory (NCCL could not allocate)",
        phrases=("Cuda failure",),
        examples=(
            "gpu-2:411:530 [1] include/alloc.h:103 NCCL WARN Cuda failure 2 'out of memory'",
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275,"
            " unhandled cuda error, NCCL version 2.18.1\nLast error:\nCuda failure 'out of memory'",
        ),
        near_misses=("gpu-2:411:530 [1] NCCL WARN Cuda failure 'invalid device ordinal'",),
    ),
    Signature(
        name="nccl-cuda-error",
        kind=Kind.NCCL_ERROR,
        pattern=rx(r"(?P<nccl_result>unhandled cuda error|ncclUnhandledCudaError)"),
        summary="NCCL error: unhandled cuda error",
        phrases=("unhandled cuda error", "ncclUnhandledCudaError"),
        convert=_NCCL_RESULT,
        fixed={"detail": "unhandled cuda error"},
        extract=ranked,
        examples=(
            "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled cuda"
            " error, NCCL version 2.14.3",
        ),
        near_misses=("handled cuda event destroy after stream sync",),
    ),
    Signature(
        name="nccl-internal-error",
        kind=Kind.NCCL_ERROR,
        pattern=rx(
            r"(?P<nccl_result>\bncclInternalError\b|\bncclInvalidUsage\b|\bncclInvalidArgument\b|NCCL error: internal error"
            r"|NCCL error: invalid usage|NCCL error: invalid argument"
            # vLLM's pynccl wrapper ("NCCL Error %d: %s", ncclGetErrorString's words)
            r"|NCCL Error \d{1,2}: (?:internal error|invalid usage|invalid argument))"
        ),
        summary="NCCL error: {nccl_result}",
        phrases=("ncclInternalError", "ncclInvalidUsage", "ncclInvalidArgument", "NCCL error"),
        convert=_NCCL_RESULT,
        extract=ranked,
        examples=(
            "torch.distributed.DistBackendError: NCCL error: internal error - please report this issue",
            "RuntimeError: NCCL Error 3: internal error - please report this issue to the NCCL developers",
        ),
        near_misses=("ncclInternalErrorCount=0 in the last health report",),
    ),
    Signature(
        # the ranks a timed-out rank aborted, when the reason they quote is cut before its WorkNCCL
        name="nccl-communicator-aborted-timeout",
        kind=Kind.NCCL_TIMEOUT,
        pattern=rx(
            r"NCCL communicator was aborted on rank (?P<rank>\d+)\.?[^\n]{0,40}?Original reason for failure was:"
            r"[^\n]{0,300}?(?:collective operation timeout|timed out)"
        ),
        summary="NCCL communicator aborted on rank {rank} after a collective timed out",
        phrases=("NCCL communicator was aborted",),
        convert={"rank": int},
        examples=(
            "RuntimeError: NCCL communicator was aborted on rank 3.  Original reason for failure was: [Rank 3]"
            " Watchdog caught collective operation timeout",
        ),
        near_misses=(
            "RuntimeError: NCCL communicator was aborted on rank 3.  Original reason for failure was: NCCL error:"
            " unhandled system error, NCCL version 2.10.3",
        ),
    ),
    Signature(
        name="nccl-communicator-aborted",
        kind=Kind.NCCL_ERROR,
        pattern=rx(r"NCCL communicator was aborted on rank (?P<rank>\d+)"),
        summary="NCCL communicator aborted on rank {rank}",
        phrases=("NCCL communicator was aborted",),
        convert={"rank": int},
        fixed={"detail": "communicator aborted"},
        examples=(
            "RuntimeError: NCCL communicator was aborted on rank 3.  Original reason for failure was: NCCL error:"
            " remote process exited",
        ),
        near_misses=("NCCL communicator was created on rank 3 with 8 peers",),
    ),
    Signature(
        name="nccl-taking-process-down",
        kind=Kind.NCCL_ERROR,
        # (PyTorch 2.4+ words the first: "Exception (either an error or timeout) detected by watchdog at work: %d")
        pattern=rx(
            r"Some NCCL operations have failed or timed out|we are taking the entire process down"
            r"|Exception \(either an error or timeout\) detected by watchdog"
        ),
        summary="NCCL failure: the process is being taken down",
        phrases=(
            "Some NCCL operations have failed or timed out",
            "taking the entire process down",
            "either an error or timeout",
        ),
        fixed={"detail": "process taken down after an NCCL failure", "abort": True},
        severity=Severity.WARNING,
        extract=ranked,
        examples=(
            "[rank0]:[E1120 07:28:03.106002 ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank 0] To avoid data"
            " inconsistency, we are taking the entire process down.",
            "[E ProcessGroupNCCL.cpp:414] Some NCCL operations have failed or timed out. Due to the asynchronous"
            " nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
            "[rank3]:[E321 02:07:08.465224069 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 3] Exception (either an error or"
            " timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work:"
            " 1579.",
        ),
        near_misses=("Some NCCL operations completed; taking a checkpoint",),
    ),
    Signature(
        # Gloo (torch.distributed's CPU backend) timing out in a collective: unbound_buffer.cc "Timed out waiting
        # %dms for recv operation to complete" (send alike), pair.cc "Timed out waiting ... for" in older forms
        name="gloo-timeout",
        kind=Kind.NCCL_TIMEOUT,
        pattern=rx(
            # (its location may stand on the line before, or be shipped apart: the words are Gloo's own)
            r"(?:gloo/transport/tcp/\w{1,32}\.cc:\d{1,6}\]\s{1,4})?(?P<detail>Timed out waiting \d{1,12} ?ms for"
            r" (?:send|recv) operation to complete)"
        ),
        summary="Gloo collective timed out: {detail}",
        phrases=("Timed out waiting",),
        fixed={"backend": "gloo"},
        extract=ranked,
        examples=(
            "[rank2]: RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out"
            " waiting 1800000ms for recv operation to complete",
            "[/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:129]\nTimed out waiting 600000ms for send"
            " operation to complete",
        ),
        near_misses=("Timed out waiting 1800000ms for the dataset download to complete",),
    ),
    Signature(
        # Gloo's TCP pair losing its peer (pair.cc "Connection closed by peer [%s]:%d", "Read error [%s]:%d: %s",
        # "Write error ...", "Connect timeout [%s]:%d" when the peer's listener never answered): the rank at the
        # other end exited or the network dropped it
        name="gloo-peer-lost",
        kind=Kind.NCCL_ERROR,
        pattern=rx(
            r"gloo/transport/tcp/pair\.cc:\d{1,6}\] (?P<detail>Connection closed by peer [^\n]{0,80}|(?:Read|Write)"
            r" error [^\n]{0,120}|Connect timeout [^\n]{0,80})"
            # ProcessGroupGloo failing to connect its full mesh ("Gloo connectFullMesh failed with %s", pair.cc's
            # error after it, whatever its words)
            r"|Gloo connectFullMesh failed with (?P<mesh>[^\n]{0,200})"
        ),
        summary="Gloo lost its peer: {detail}",
        phrases=("Connection closed by peer", "Read error", "Write error", "Connect timeout", "connectFullMesh failed"),
        fixed={"backend": "gloo"},
        extract=ranked,
        examples=(
            "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer"
            " [127.0.0.1]:10895",
            "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:589] Read error [192.168.70.92]:25266:"
            " Connection reset by peer",
            "  what():  [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:898] Connect timeout [10.0.0.7]:51096",
            "[rank4]:[E421 02:05:38.764490322 ProcessGroupGloo.cpp:143] Gloo connectFullMesh failed with"
            " [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
        ),
        near_misses=("gloo/transport/tcp/pair.cc:210] connected to peer [10.0.0.2]:4001",),
    ),
    Signature(
        # NCCL's IB async events that are the subnet going about its business (ibv_event_type_str: the subnet
        # manager asking for re-registration, a port coming up, a LID, SM or P_Key change): no error, though NCCL
        # prints them as WARN
        name="ib-async-event-routine",
        kind=Kind.LOG_LINE,
        pattern=rx(
            r"NET/IB ?: Got async event ?: (?:client reregistration|port active|LID change|SM change|P_Key change)"
        ),
        summary="InfiniBand: {line}",
        phrases=("Got async event",),
        extract=lambda m, _t: {"line": m.group(0)},
        examples=("gpu-node-3:2205:2262 [0] NCCL WARN NET/IB : Got async event : client reregistration",),
        near_misses=("NCCL WARN NET/IB : Got async event : port error",),
    ),
    Signature(
        # The fabric itself, as the transports report it: NCCL's IB async events (net_ib.cc "NET/IB : Got async
        # event : %s", ibv_event_type_str: port error, device fatal, ...), and UCX's mlx5 completion syndromes
        # (ib_mlx5_log.c "Transport retry count exceeded on mlx5_0:1/IB", "Remote access error", the
        # IBV_WC_RETRY_EXC_ERR family).
        name="ib-fabric-error",
        kind=Kind.NETWORK_ERROR,
        pattern=rx(
            r"NET/IB ?: Got async event ?: (?P<event>port error|local catastrophic error|GID table change|"
            r"[A-Za-z ]{3,40}(?:error|fatal|failed))"
            r"|(?P<ucx>Transport retry count exceeded|Receiver not ready retry count exceeded|Remote access error|"
            r"Local protection error) on (?P<device>mlx\d_\d{1,3}(?::\d{1,2})?)"
            # UCX 1.3-1.8 ib_mlx5_log.c: "Error on QP 0x%x wqe[%d]: %s (synd 0x%x vend 0x%x)"
            r"|Error on QP 0x[0-9a-f]{1,8} wqe\[\d{1,9}\]: (?P<ucx_qp>[A-Za-z ]{3,60}) \(synd 0x"
            # UCX's rc_verbs/ud_verbs with the verbs status string (ibv_wc_status_str: "Send completion with error:
            # transport retry counter exceeded", "RNR retry counter exceeded")
            # (dc_verbs names the QP between: "Send completion with error on qp 0x%x: transport retry counter
            # exceeded syndrome 0x%x")
            r"|UCX\s{1,4}(?:ERROR|FATAL)\s[^\n]{0,80}?completion with error(?: on qp 0x[0-9a-f]{1,8})?:"
            r" (?P<wc>(?:transport|RNR) retry counter exceeded)"
            # NCCL 2.27+ IB resiliency (p2p_resiliency.cc): a NIC marked failed (whether or not NCCL then fails over
            # to another: the NIC on this node failed, and a rank that dies after it died with it in the way), or
            # none left to fail over to
            r"|NET/IB: ?[^\n]{0,80}?(?P<failed>Device \d{1,3} marked as failed\.|No functional"
            r" devices left|The error is fatal \()"
        ),
        summary="InfiniBand fabric error: {line}",
        phrases=(
            "Got async event",
            "retry count exceeded",
            "retry counter exceeded",
            "Error on QP",
            "Remote access error",
            "Local protection error",
            "marked as failed.",
            "The error is fatal",
            "No functional devices left",
        ),
        fixed={"network": True},
        extract=whole,
        examples=(
            "...-48:34050:34121 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error",
            "[master:19546:0:19546] ib_mlx5_log.c:139  Transport retry count exceeded on mlx5_0:1/IB (synd 0x15 vend"
            " 0x81 hw_synd 0/0)",
            "[clx-orion-059:27319:0:27319] ib_mlx5_log.c:113  FATAL: Error on QP 0x3ce8e wqe[12598]: Transport retry"
            " count exceeded (synd 0x15 vend 0x81) opcode SEND",
            "[1467152048.497975] [softiron-3:3087 :0] rc_verbs_iface.c:47   UCX  ERROR Send completion with error:"
            " transport retry counter exceeded",
            "node-7:5301:5420 [2] transport/net_ib/p2p_resiliency.cc:325 NCCL WARN NET/IB: ncclIbResiliencyHandleDevice"
            "Failure: Device 1 marked as failed. Initiating recovery? No",
        ),
        near_misses=(
            "NCCL INFO NET/IB : Got async event : port active",
            "ucx retry count set to 7 on mlx5_0:1",
            "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.0.0.7<0>",
        ),
    ),
    Signature(
        # libfabric's EFA provider failing a transfer ("libfabric:%d:%d::efa:%s:%s():%d<warn> err: %d, message: %s
        # ..."): what aws-ofi-nccl then reports as a failed request; a peer gone or unreachable
        name="efa-transfer-error",
        kind=Kind.NCCL_ERROR,
        pattern=rx(
            r"libfabric:\d{1,10}:\d{1,12}:(?:[^:\s]{0,32}:)?efa:\w{1,16}:\w{1,64}\(\):\d{1,6}<warn> (?:\w{1,64}: )?err:"
            # (before 1.18 the RxR layer's "rxr_cq_write_tx_error: err: %d, prov_err: %s (%d)")
            r" (?P<err>\d{1,5}), (?:prov_err|message): (?P<detail>[^\n]{1,120}?)(?: My EFA addr|$)",
            re.MULTILINE,
        ),
        summary="EFA transfer error {err}: {detail}",
        phrases=("efa",),
        wildcards=("*efa_rdm_*", "*rxr_cq_*"),
        convert={"err": int},
        examples=(
            "libfabric:451707:1708520807::efa:cq:efa_rdm_txe_handle_error():737<warn> err: 5, message: Invalid address"
            " My EFA addr: fi_addr_efa://[fe80::13:c2ff:fe6f:f03d]:0:1072483550 My host id: i-0db7083f3fcbebb65",
            "[1,13]<stderr>:libfabric:35:1668017255::efa:cq:rxr_cq_write_tx_error():243<warn> rxr_cq_write_tx_error: err:"
            " 20, prov_err: Not a directory (20)",
        ),
        near_misses=("libfabric:451707:1708520807::efa:core:efa_device_init():120<info> Selected device rdmap16s27",),
    ),
    Signature(
        # what a pod's init or sidecar containers must fetch refused for the pod's identity: Vault's agent
        # (vault-agent-init) reading a secret or logging in with the pod's service account answered 403 ("[ERROR]
        # agent: runtime error encountered: ... Code: 403. Errors: ... permission denied", "auth.handler: error
        # authenticating: ... Code: 403", which it retries for ever), git-sync unable to clone the code ("error
        # syncing repo" / "failed to sync repo, aborting" ... "exit status 128: ... fatal: Could not read from remote
        # repository"): the pod's secrets, policy or keys, set up wrong
        name="pod-credentials-refused",
        kind=Kind.CONFIG_ERROR,
        pattern=rx(
            r"(?P<error>(?:runtime error encountered|error authenticating):\s{0,10}\n(?:[^\n]{0,400}\n){0,12}?"
            r"[^\n]{0,40}Code: 403\. Errors:"
            # (git-sync's exit, not its retries: "unexpected error syncing repo", "error syncing repo, will retry"; not a
            # host name that did not resolve, which ssh says before git's generic words)
            r"|(?<!unexpected )(?:error syncing repo|failed to sync repo, aborting|too many failures, aborting)"
            r"(?![^\n]{0,20}will retry)(?![^\n]{0,600}Could not resolve hostname)[^\n]{0,300}?exit status 128"
            r"[^\n]{0,300}?fatal: (?:Could not read from remote repository|Authentication failed"
            r"|repository '[^'\n]{1,300}' not found))"
        ),
        summary="the pod's credentials were refused: {error}",
        phrases=("runtime error encountered", "error authenticating", "error syncing repo", "failed to sync repo"),
        fixed={"reason": "credentials"},
        examples=(
            "2023-05-25T05:49:05.463Z [ERROR] agent: runtime error encountered:\n  error=\n  | template server:"
            " vault.read(kv/x): Error making API request.\n  | \n  | URL: GET https://vault/v1/kv/x\n  | Code: 403."
            " Errors:\n  | \n  | * permission denied",
            "E0202 13:28:43.307843       1 main.go:169] error syncing repo: error running command: exit status 128:"
            " \"Cloning into '/git'...\\nfatal: Could not read from remote repository.\\n\"",
        ),
        near_misses=(
            '"msg"="unexpected error syncing repo, will retry" "error"="error running command: exit status 128:'
            " \\\"Cloning into '/opt/p'...\\\\nfatal: Could not read from remote repository...",
            "2021-11-22T17:46:08.799Z [ERROR] auth.handler: error authenticating:\n  error=\n  | Put"
            ' "https://vault:8200/v1/auth/kubernetes/login": dial tcp 10.0.0.1:8200: i/o timeout\n   backoff=2.1s',
        ),
    ),
    Signature(
        # Linkerd's network validator (the pod's init container where linkerd-cni sets the redirect up) finding no
        # redirect ("Failed to validate networking configuration. Please ensure iptables rules are rewriting traffic
        # as expected."): the pod's network was not made for it, and it does not start
        name="mesh-network-unvalidated",
        kind=Kind.CONFIG_ERROR,
        pattern=rx(r"linkerd_network_validator: (?P<error>Failed to validate networking configuration)"),
        summary="the service mesh could not set up the pod's network: {error}",
        phrases=("Failed to validate networking configuration",),
        fixed={"reason": "pod network"},
        examples=(
            "2024-04-04T08:59:27.259562Z ERROR linkerd_network_validator: Failed to validate networking configuration."
            " Please ensure iptables rules are rewriting traffic as expected. timeout=10s",
        ),
        near_misses=("2024-04-04T08:59:17.257993Z  INFO linkerd_network_validator: Connecting to 1.1.1.1:20001",),
    ),
    Signature(
        # libfabric's EFA provider giving up on an internal error ("Libfabric EFA provider has encountered an
        # internal error:" ... "Your application will now abort()"): the node's fabric as the process saw it, like
        # its transfer errors
        name="efa-internal-error",
        kind=Kind.NCCL_ERROR,
        pattern=rx(r"Libfabric EFA provider has encountered an internal error"),
        summary="EFA provider internal error: {line}",
        phrases=("EFA provider has encountered an internal error",),
        extract=whole,
        examples=(
            "Libfabric EFA provider has encountered an internal error:\n\nLibfabric error: (-12) Cannot allocate"
            " memory\nEFA internal error: (4112) Failure to post internal receive buffers",
        ),
        near_misses=("libfabric:1:2::efa:core:efa_device_init():120<info> Selected device rdmap16s27",),
    ),
    Signature(
        # the pod's filesystem refusing what its container sets up: a write to what the pod mounts read-only (a
        # ConfigMap or Secret, readOnlyRootFilesystem, a read-only volume: EROFS in any wording, Python's "[Errno 30]
        # Read-only file system", Go's "open %s: read-only file system", Rust's "kind: ReadOnlyFilesystem"), and the
        # container's start-up commands refused on its volumes for the user the spec runs it as (coreutils' and
        # busybox's chown, chmod, mkdir: "Operation not permitted", "Permission denied"; Node's "EACCES: permission
        # denied, mkdir 'logs'"): the pod's spec against its volumes, not the program's storage failing. (A Python
        # PermissionError raised by the program itself stays its own exception.)
        name="pod-filesystem-refused",
        kind=Kind.CONFIG_ERROR,
        pattern=rx(
            # (not a line that says it goes on without the write: the Hugging Face hub's "Could not cache non-existence
            # of file. Will ignore error and continue.", "Could not set the permissions on the file", a warning, a
            # "mkdir -p failed" a library logs; a refusal the container went on from is settled by the program's own
            # later failure, parse.SETTLED)
            r"^(?![^\n]{0,400}(?:Will ignore error and continue|Could not set the permissions|(?i:\bwarn(?:ing)?\b)"
            r"|mkdir -p failed))[^\n]{0,400}?"
            r"(?P<error>\[Errno 30\] Read-only file system|kind: ReadOnlyFilesystem|: read-only file system$"
            r"|(?:^|[\s/])(?:chown|chmod|mkdir|touch|cp|mv|ln|install): [^\n]{1,300}?: (?:Read-only file system"
            r"|Operation not permitted|Permission denied)$"
            r"|E(?:ACCES|PERM): (?:permission denied|operation not permitted), (?:mkdir|chown|chmod|mkdtemp) ')",
            re.MULTILINE,
        ),
        summary="the pod's filesystem refused what its container set up: {error}",
        phrases=(
            "Read-only file system",
            "ReadOnlyFilesystem",
            "Operation not permitted",
            "Permission denied",
        ),
        fixed={"reason": "filesystem permissions"},
        examples=(
            "chown: /consul/config: Read-only file system",
            "mkdir: cannot create directory '/mnt/sync/folders': Read-only file system",
            "/bin/chown: changing ownership of '/home/u/app/deployment/server/': Operation not permitted",
            "mkdir: can't create directory '/mnt/rustfs/logs': Permission denied",
            "Error: EACCES: permission denied, mkdir 'logs'",
            "OSError: [Errno 30] Read-only file system: '/models/models--x/snapshots/4659a7d'",
            "error: open /root/.kube/config.lock: read-only file system",
            'create cache dir success: Os { code: 30, kind: ReadOnlyFilesystem, message: "Read-only file system" }',
        ),
        near_misses=(
            "PermissionError: [Errno 13] Permission denied: '/data/shard-0001.tar'",
            "Could not cache non-existence of file. Will ignore error and continue. Error: [Errno 30] Read-only file"
            " system: '/mnt/cache/hub/x'",
            "npm WARN tar EACCES: permission denied, open '/app/node_modules/.staging/x/package.json'",
            "WARNING: chown: changing ownership of '/data': Operation not permitted",
            "chown: changing ownership of '/data': Operation not permitted (ignored)",
        ),
    ),
    Signature(
        # the pod's limits and devices too small for what the program must set up: UCX unable to pin memory under
        # the locked-memory limit ("Please set max locked memory (ulimit -l) to 'unlimited' (current: %llu
        # kbytes)"), a FUSE mount (JuiceFS, gcsfuse, s3fs in the container) with no /dev/fuse in the pod
        # (fusermount: "fuse device not found, try 'modprobe fuse' first", "mknod /dev/fuse: operation not
        # permitted"): the pod's spec (a privileged or device setting, the runtime's ulimit), not the code or the node
        name="pod-limits-too-small",
        kind=Kind.CONFIG_ERROR,
        pattern=rx(
            r"(?P<error>UCX\s{1,4}(?:ERROR|FATAL)\s[^\n]{0,300}?Please set max locked memory \(ulimit -l\) to 'unlimited'"
            # UCX before 1.13, which gave no advice: its completion queue refused at ERROR (ib_iface.c
            # "ibv_create_cq(cqe=%d) failed: %m"), the locked-memory limit of a container
            r"|UCX\s{1,4}ERROR ibv_create_cq\(cqe=\d{1,9}\) failed: Cannot allocate memory"
            # numactl refused the memory policy it was asked to set (no CAP_SYS_NICE, the runtime's seccomp
            # profile): it exits before the program starts
            r"|setting membind: Operation not permitted"
            r"|fuse device not found, try 'modprobe"
            r" fuse' first|mknod /dev/fuse: operation not permitted)"
        ),
        summary="the pod cannot set up what the program needs: {error}",
        phrases=(
            "max locked memory",
            "fuse device not found",
            "mknod /dev/fuse",
            "ibv_create_cq",
            "setting membind: Operation not permitted",
        ),
        fixed={"reason": "pod limits"},
        examples=(
            "ib_log.c:246  UCX  ERROR mlx5_0: ibv_create_cq() failed: Cannot allocate memory. Please set max locked"
            " memory (ulimit -l) to 'unlimited' (current: 64 kbytes)",
            "/usr/bin/fusermount: fuse device not found, try 'modprobe fuse' first",
            "[1548304905.378218] [mpi11:4770 :0]       ib_iface.c:690  UCX  ERROR ibv_create_cq(cqe=4096) failed:"
            " Cannot allocate memory",
            "set_mempolicy: Operation not permitted\nsetting membind: Operation not permitted",
        ),
        near_misses=(
            "max locked memory       (kbytes, -l) unlimited",
            "ib_md.c:293  UCX  WARN  ibv_reg_mr(address=0x7f, length=4096) failed: Cannot allocate memory. Please set"
            " max locked memory (ulimit -l) to 'unlimited' (current: 64 kbytes)",
        ),
    ),
    Signature(
        # /dev/shm too small for the DataLoader's workers (a pod without a memory-backed emptyDir there): torch's
        # "DataLoader worker (pid %d) is killed by signal: Bus error. It is possible that dataloader's workers are
        # out of shared memory", the C++ worker's "Unexpected bus error encountered in worker. This might be caused
        # by insufficient shared memory (shm)", the shm manager's "unable to write to file </torch_...>: No space
        # left on device (28)", NCCL's "Error while creating shared memory segment /dev/shm/nccl-*": the pod's
        # spec, not the code or the node
        name="shm-exhausted",
        kind=Kind.CONFIG_ERROR,
        pattern=rx(
            r"(?P<error>workers are out of shared memory|caused by insufficient shared memory"
            # (the shm manager's write to /dev/shm: "unable to write to file </torch_%d_%d>", with ": No space left on
            # device" from 1.x, " at .../THAllocator.c:%d" in 0.4, bare in _share_fd_)
            r"|unable to write to file </torch_[^>\n]{1,64}>"
            r"|Error while creating shared memory segment /dev/shm/|failed to extend /dev/shm/"
            # NCCL before 2.7 (shm.h: "Call to posix_fallocate failed : %s")
            r"|NCCL WARN Call to posix_fallocate failed ?: No space left on device)"
        ),
        summary="the pod's shared memory (/dev/shm) ran out: {error}",
        phrases=(
            "out of shared memory",
            "insufficient shared memory",
            "unable to write to file",
            "Error while creating shared memory segment",
            "failed to extend",
            "Call to posix_fallocate failed",
        ),
        fixed={"reason": "shared memory"},
        examples=(
            "gpu2-ru7:2143:2561 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device",
            "RuntimeError: DataLoader worker (pid 56811) is killed by signal: Bus error. It is possible that"
            " dataloader's workers are out of shared memory. Please try to raise your shared memory limit.",
            "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory"
            " (shm).",
            "RuntimeError: unable to write to file </torch_8289_606636967_0>: No space left on device (28)",
            "RuntimeError: unable to write to file </torch_76_3625483894> at /pytorch/aten/src/TH/THAllocator.c:383",
            "gpu-2:311:402 [3] include/shm.h:28 NCCL WARN Error while creating shared memory segment"
            " /dev/shm/nccl-7VtQvW (size 9637888)",
        ),
        near_misses=("OSError: [Errno 28] No space left on device: '/checkpoints/step_1000'",),
    ),
    Signature(
        # the launchers unable to set up the workers' environment: Ray's runtime env (its pip or conda packages,
        # working_dir: RuntimeEnvSetupError, "runtime_env setup failed: Failed to set up runtime environment."), and
        # Open MPI's daemon missing on the workers ("orted: command not found" before "ORTE was unable to reliably
        # start one or more daemons": the image has no Open MPI where the launcher expects it), and mpirun finding
        # fewer slots than the ranks it was asked for (help-orte-rmaps-base.txt / PRRTE's "There are not enough
        # slots available in the system to satisfy the %d slots that were requested", 1.x-2.x's "All nodes which
        # are allocated for this job are already filled."): the hostfile or the MPIJob's slotsPerWorker, nothing ran.
        # Also a hostfile the launcher cannot use: Open MPI's help-hostfile.txt ("Open RTE was unable to open the
        # hostfile:", PRRTE's "PRTE was unable to ...", "A hostfile was provided that contains multiple definitions of
        # the slot count", "detected a parse error in the hostfile"), MPICH's and Intel MPI's Hydra
        # ("HYDU_parse_hostfile (...): unable to open host file: %s"), and ssh handed a host list's "host:slots" as a
        # name ("ssh: Could not resolve hostname localhost:4: ...": no host name holds a colon). And torch's env://
        # rendezvous without the variables a launcher or an operator sets ("Error initializing torch.distributed
        # using env:// rendezvous: environment variable MASTER_ADDR expected, but not set"): the pod's command runs
        # the script without torchrun, or its spec lacks them
        name="launcher-setup-failed",
        kind=Kind.CONFIG_ERROR,
        pattern=rx(
            r"(?P<error>RuntimeEnvSetupError|runtime_env setup failed|\borted: command not found"
            r"|There are not enough slots available in the system to satisfy the \d{1,9}"
            r"|All nodes which are allocated for this job are already filled"
            r"|(?:Open RTE|ORTE|PRTE|PRRTE) was unable to open the hostfile|A hostfile was provided that contains multiple definitions"
            r"|detected a parse error in the hostfile|unable to open host file: \S{1,300}"
            r"|ssh: Could not resolve hostname [\w.-]{1,253}:\d{1,6}:"
            # Open MPI not finding the program it was told to start (help-orterun.txt "was unable to find the
            # specified executable file", "could not access\nor execute an executable")
            r"|(?:mpirun|mpiexec|orterun|prterun|oshrun)(?:\.real)? was unable to find the specified executable file"
            r"|(?:mpirun|mpiexec|orterun|prterun|oshrun)(?:\.real)? was unable to launch the specified application as it"
            r" could not (?:access|find an executable)\b"
            r"|(?<=env:// rendezvous: )environment variable \w{1,40} expected, but not set)"
        ),
        summary="the launcher could not set up the workers: {error}",
        phrases=(
            "RuntimeEnvSetupError",
            "runtime_env setup failed",
            "unable to find the specified executable file",
            "could not access or execute an executable",
            "could not find an executable",
            "orted: command not found",
            "not enough slots available in the system",
            "are already filled",
            "unable to open the hostfile",
            "contains multiple definitions",
            "parse error in the hostfile",
            "unable to open host file",
            "Could not resolve hostname",
            "expected, but not set",
        ),
        examples=(
            "Status message: runtime_env setup failed: Failed to set up runtime environment.",
            "mpirun was unable to find the specified executable file, and therefore\ndid not launch the job.",
            "mpirun.real was unable to launch the specified application as it could not find an executable:",
            "mpirun was unable to launch the specified application as it could not access\nor execute an executable:",
            "ray.exceptions.RuntimeEnvSetupError: Failed to set up runtime environment.",
            "bash: orted: command not found",
            "There are not enough slots available in the system to satisfy the 16\nslots that were requested by the"
            " application:",
            "All nodes which are allocated for this job are already filled.",
            "[mpiexec@node-0] HYDU_parse_hostfile (lib/utils/args.c:324): unable to open host file: hosts",
            "ssh: Could not resolve hostname worker-0:8: Name or service not known",
            "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable WORLD_SIZE"
            " expected, but not set",
        ),
        near_misses=(
            "runtime_env setup succeeded for job raysubmit_fufX4B3GcxYVxBdW",
            "ssh: Could not resolve hostname worker-0.workers: Name or service not known",
        ),
    ),
    Signature(
        # the image's GPU code built for other GPUs than the node's: CUDA's cudaErrorNoKernelImageForDevice ("no
        # kernel image is available for execution on the device", 209; 48 before CUDA 10.1; the driver API's
        # CUDA_ERROR_NO_BINARY_FOR_GPU) and the older cudaErrorInvalidDeviceFunction ("invalid device function",
        # 8: "not compiled for the proper device architecture"), in every wrapper that prints them (torch's "CUDA
        # error: ...", THC's "error=48 : ...", Caffe's "Check failed: error == cudaSuccess (8 vs. 0)  ..."): the
        # image does not fit the node's GPU, as an image for another CPU does not fit its node
        name="cuda-no-kernel-for-gpu",
        kind=Kind.CONFIG_ERROR,
        pattern=rx(
            # (not TensorRT's builder dropping one tactic for it: "Skipping tactic 0x... due to exception no kernel
            # image is available ...", it goes on with the others)
            r"(?<!due to exception )(?P<error>no kernel image is available for execution on the device"
            r"|invalid device function|device kernel image is invalid|cudaErrorInvalidKernelImage|CUDA_ERROR_INVALID_IMAGE"
            # the image's ptxas older than the node's GPU ("ptxas fatal   : Value 'sm_90a' is not defined for option
            # 'gpu-name'")
            # (not TensorFlow's XLA quoting it as it falls back to the driver: "... The ptxas error was: ptxas fatal")
            r"|(?<!The ptxas error was: )ptxas fatal\s{0,4}: Value 'sm_\w{1,8}' is not defined for option 'gpu-name'"
            r"|cudaErrorNoKernelImageForDevice|cudaErrorInvalidDeviceFunction|CUDA_ERROR_NO_BINARY_FOR_GPU"
            # the image's PTX newer than the node's driver can compile (CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "the
            # provided PTX was compiled with an unsupported toolchain")
            r"|CUDA_ERROR_UNSUPPORTED_PTX_VERSION|cudaErrorUnsupportedPtxVersion"
            r"|the provided PTX was compiled with an unsupported toolchain"
            # cuBLAS and cuDNN refusing a GPU older than they support ("the function requires a feature absent
            # from the device architecture"): a wheel for newer GPUs on a V100 or a Maxwell card
            r"|CUBLAS_STATUS_ARCH_MISMATCH|CUDNN_STATUS_(?:NOT_SUPPORTED_)?ARCH_MISMATCH)"
        ),
        summary="the image's GPU code does not fit this node's GPU or driver: {error}",
        phrases=(
            "no kernel image is available",
            "invalid device function",
            "cudaErrorNoKernelImageForDevice",
            "cudaErrorInvalidDeviceFunction",
            "CUDA_ERROR_NO_BINARY_FOR_GPU",
            "device kernel image is invalid",
            "cudaErrorInvalidKernelImage",
            "CUDA_ERROR_INVALID_IMAGE",
            "is not defined for option 'gpu-name'",
            "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
            "cudaErrorUnsupportedPtxVersion",
            "compiled with an unsupported toolchain",
            "CUBLAS_STATUS_ARCH_MISMATCH",
            "CUDNN_STATUS_ARCH_MISMATCH",
            "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH",
        ),
        fixed={"reason": "GPU architecture"},
        examples=(
            "code=222( cudaErrorUnsupportedPtxVersion ) cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)",
            "RuntimeError: CUDA error: no kernel image is available for execution on the device",
            "THCudaCheck FAIL file=/pytorch/aten/src/THC/generic/THCTensorMath.cu line=244 error=48 : no kernel image"
            " is available for execution on the device",
            "F0225 14:39:53.618700 10213 vol2col.cu:75] Check failed: error == cudaSuccess (8 vs. 0)  invalid device"
            " function",
            "RuntimeError: Triton Error [CUDA]: device kernel image is invalid",
            "ptxas fatal   : Value 'sm_90a' is not defined for option 'gpu-name'",
            "RuntimeError: CUDA error: CUBLAS_STATUS_ARCH_MISMATCH when calling `cublasCreate(handle)`",
            "E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_ARCH_MISMATCH",
        ),
        near_misses=(
            "CUDA kernel images built for: sm_80 sm_86 sm_90",
            "[E] 9: Skipping tactic0x0000000000000000 due to exception no kernel image is available for execution on"
            " the device",
        ),
    ),
    Signature(
        # TensorFlow's stream executor probing the GPU at start ("failed call to cuInit: CUDA_ERROR_NO_DEVICE", "...
        # UNKNOWN ERROR (303)", then its diagnostics "kernel driver does not appear to be running on this host",
        # "no NVIDIA GPU device is present: /dev/nvidia0 does not exist"): it logs the failure and carries on on the
        # CPU, so nothing here ends the process
        name="tf-gpu-probe-failed",
        kind=Kind.LOG_LINE,
        pattern=rx(
            # (TF <= 2.10's path, 2.11-2.13's tensorflow/compiler/xla/..., 2.14+'s external/local_xla/...; not JAX's
            # external/xla/xla/..., which stops where TF goes on)
            r"(?:tensorflow/|tensorflow/compiler/xla/|external/local_xla/xla/)stream_executor/cuda/cuda_driver\.cc:\d{1,6}\]"
            r" failed call to cuInit: "
            r"|cuda_diagnostics\.cc:\d{1,6}\] (?:kernel driver does not appear to be running on this host"
            r"|no NVIDIA GPU device is present)"
        ),
        summary="TensorFlow found no usable GPU and goes on without it: {line}",
        phrases=(
            "failed call to cuInit",
            "kernel driver does not appear to be running",
            "no NVIDIA GPU device is present",
        ),
        extract=whole,
        examples=(
            "E tensorflow/stream_executor/cuda/cuda_driver.cc:406] failed call to cuInit: CUDA_ERROR_NO_DEVICE",
            "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:163] no NVIDIA GPU device is present: /dev/nvidia0"
            " does not exist",
        ),
        near_misses=("I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:176] hostname: gpu-node-1",),
    ),
    Signature(
        # the container cannot use a GPU at all: no driver mounted into it (torch's "Found no NVIDIA driver on your
        # system"), or one older than the image's CUDA runtime (cudaErrorInsufficientDriver's string). Never a GPU
        # lost at run time, which CUDA reports in other words ("unknown error", "GPU is lost").
        name="cuda-no-driver",
        kind=Kind.CONFIG_ERROR,
        # (also: no GPU exposed to the container, cudaErrorNoDevice "no CUDA-capable device is detected", the
        # runtime's hook not run; the driver and its user-space libraries of two versions, NVML's "Driver/library
        # version mismatch"; nvidia-smi unable to reach a driver; CUDA 803/804 "system has unsupported display
        # driver / cuda driver combination", "forward compatibility was attempted on non supported HW"; torch's
        # cudaGetDeviceCount failing with 500 "named symbol not found", a runtime newer than the driver)
        pattern=rx(
            # (not Triton's pinned memory pool failing on it: a warning, the server goes on without it)
            r"(?<!failed to allocate pinned system memory: )"
            r"(?P<error>CUDA driver version is insufficient for CUDA runtime version|Found no NVIDIA driver on your"
            r" system|cudaErrorInsufficientDriver|The NVIDIA driver on your system is too old"
            r"|no CUDA-capable device is detected|Failed to initialize NVML: Driver/library version mismatch"
            r"|NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"
            r"|system has unsupported display driver / cuda driver combination"
            r"|forward compatibility was attempted on non supported HW"
            r"|cudaGetDeviceCount\(\)[^\n]{0,200}?Error 500: named symbol not found"
            # NVML's library not in the container at all (NVML_ERROR_LIBRARY_NOT_FOUND: go-nvml's
            # "ERROR_LIBRARY_NOT_FOUND", nvmlErrorString's "NVML Shared Library Not Found", nvidia-smi's "couldn't
            # find libnvidia-ml.so library in your system"): the pod ran without the NVIDIA runtime or its hook
            r"|\bERROR_LIBRARY_NOT_FOUND\b|NVML Shared Library Not Found"
            r"|couldn't find libnvidia-ml\.so library in your system"
            # the device plugin's and go-nvml's words for the same (klog or log, 0.9-0.17: "Failed to initialize
            # NVML: could not load NVML library.", "Incompatible strategy detected auto" with its "If this is a GPU
            # node, did you configure the NVIDIA Container Toolkit?" / "... set the docker default runtime to")
            r"|could not load NVML\b|If this is a GPU node, did you (?:configure the NVIDIA Container Toolkit"
            r"|set the docker default runtime to)"
            # the version mismatch by its code name (NVML_ERROR_LIB_RM_VERSION_MISMATCH, go-nvml's
            # ERROR_LIB_RM_VERSION_MISMATCH)
            r"|\b(?:NVML_)?ERROR_LIB_RM_VERSION_MISMATCH\b|\bNVMLError_(?:LibRmVersionMismatch|DriverNotLoaded)\b"
            # a runtime API the installed driver is too old for (cudaErrorCallRequiresNewerDriver); not NGC images'
            # banner on an older driver ("... compatibility mode is UNAVAILABLE", "cuInit(0) returned 804"): minor
            # version compatibility often runs the image all the same
            r"|API call is not supported in the installed CUDA driver"
            # MPS: the client finding no control daemon or server (cudaErrorMpsConnectionFailed, 805), the daemon's
            # own binary missing from the image ("nvidia-cuda-mps-control: command not found")
            r"|MPS client failed to connect to the MPS control daemon|nvidia-cuda-mps-control: command not found"
            # frameworks finding no GPU at all: Accelerate's "fp16 mixed precision requires a GPU" (raised when
            # torch.cuda.is_available() is False), Lightning's "You requested GPUs: [1]\n But your machine only
            # has: []"
            r"|mixed precision requires a GPU|But your machine only has: \[\]"
            # torch's lazy CUDA init finding no device at all (cudaErrorNoDevice as torch words it: "RuntimeError: No
            # CUDA GPUs are available"; the container was given none, or its runtime hook exposed none)
            r"|(?<=Error: )No CUDA GPUs are available"
            # the driver's own library not mounted into the container (the NVIDIA runtime's hook not run): Python's
            # and the loader's words ("ImportError: libcuda.so.1: cannot open shared object file", "/bin/bash: error
            # while loading shared libraries: libcuda.so.1: ...")
            # (not TensorFlow's dso_loader warning, "Could not load dynamic library 'libcuda.so.1'; dlerror: ...": it goes
            # on without; ctypes' and llama-cpp's "Failed to load shared library ...: libcuda.so.1: ..." are the same)
            r"|(?<!dlerror: )libcuda\.so\.1: cannot open shared object file)"
        ),
        summary="the container cannot use its GPU: {error}",
        phrases=(
            "No CUDA GPUs are available",
            "CUDA driver version is insufficient",
            "Found no NVIDIA driver",
            "cudaErrorInsufficientDriver",
            "The NVIDIA driver on your system is too old",
            "no CUDA-capable device is detected",
            "Driver/library version mismatch",
            "couldn't communicate with the NVIDIA driver",
            "unsupported display driver / cuda driver combination",
            "forward compatibility was attempted on non supported HW",
            "named symbol not found",
            "ERROR_LIBRARY_NOT_FOUND",
            "NVML Shared Library Not Found",
            "couldn't find libnvidia-ml.so library",
            "could not load NVML",
            "If this is a GPU node, did you",
            "ERROR_LIB_RM_VERSION_MISMATCH",
            "NVMLError_LibRmVersionMismatch",
            "NVMLError_DriverNotLoaded",
            "API call is not supported in the installed CUDA driver",
            "MPS client failed to connect",
            "nvidia-cuda-mps-control: command not found",
            "mixed precision requires a GPU",
            "But your machine only has",
            "libcuda.so.1: cannot open shared object file",
        ),
        wildcards=(
            "?*error_library_not_found",
            "?*error_lib_rm_version_mismatch",
            "?*nvmlerror_librmversionmismatch",
            "?*nvmlerror_drivernotloaded",
        ),
        fixed={"reason": "CUDA driver"},
        examples=(
            "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version",
            "RuntimeError: No CUDA GPUs are available",
            "gpu-1:77:77 [0] NCCL WARN Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'",
            "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and"
            " installed a driver from http://www.nvidia.com/Download/index.aspx",
            "Failed to allocate device vector A (error code no CUDA-capable device is detected)!",
            "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.124",
            'level=ERROR msg="Cannot init NVML library; err: ERROR_LIBRARY_NOT_FOUND"',
            "pynvml.nvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found",
            "Failed to initialize NVML: could not load NVML library.",
            "E0506 17:45:45.421965       1 factory.go:113] If this is a GPU node, did you configure the NVIDIA"
            " Container Toolkit?",
            "tensorpack.utils.nvml.NvmlException: NVML_ERROR_LIB_RM_VERSION_MISMATCH",
            "ValueError: fp16 mixed precision requires a GPU",
            "/bin/bash: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file"
            " or directory",
            "pytorch_lightning.utilities.exceptions.MisconfigurationException: You requested GPUs: [1]\n But your"
            " machine only has: []",
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest"
            " NVIDIA driver is installed and running.",
            "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling"
            " NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted"
            " on non supported HW",
            "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda"
            " functions before calling NumCudaDevices() that might have already set an error? Error 500: named symbol"
            " not found (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)",
            "[TM][ERROR] CUDA runtime error: API call is not supported in the installed CUDA driver",
            "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda"
            " functions before calling NumCudaDevices() that might have already set an error? Error 805: MPS client"
            " failed to connect to the MPS control daemon or the MPS server",
            "./entrypoint.sh: line 5: nvidia-cuda-mps-control: command not found",
            "pynvml.NVMLError_DriverNotLoaded: Driver Not Loaded",
        ),
        near_misses=(
            "CUDA driver version: 12.4, CUDA runtime version: 12.1",
            "E0612 pinned_memory_manager.cc:202] failed to allocate pinned system memory: CUDA driver version is"
            " insufficient for CUDA runtime version",
            "       version 440.64.00 was detected and compatibility mode is UNAVAILABLE.",
            "KeyError: named symbol not found in the registry",
            "No CUDA GPUs are available, use CPU!",
        ),
    ),
    Signature(
        # the rendezvous store's server cannot listen: its port is taken (c10d socket.cpp "The server socket has
        # failed to listen on any local network address", errno 98 / EADDRINUSE in 2.4's libuv form), another run
        # or process on the pod's network (hostNetwork) holding MASTER_PORT, or a port below 1024 a non-root
        # container may not bind (errno 13 / EACCES)
        name="store-port-in-use",
        kind=Kind.CONFIG_ERROR,
        pattern=rx(
            r"The server socket has failed to listen on any local network address\.[^\n]{0,300}?"
            r"(?P<error>errno: 98 - Address already in use|EADDRINUSE|errno: 13 - Permission denied|EACCES)"
            # the attempts before it, one line each ("[c10d] The server socket has failed to bind to [::]:29500
            # (errno: 98 - Address already in use).")
            r"|The server socket has failed to bind to [^\n]{1,300}?\((?P<bind_error>errno: 98 - Address already in use"
            r"|errno: 13 - Permission denied)\)"
            # TCPStore before 2.0 and THD (0.4) said only the errno's words ("RuntimeError: Address already in use",
            # "RuntimeError : Address already in use at .../THD/process_group/General.cpp:17")
            r"|(?m:^)(?:[^\n]{0,80}?\]:?\s{0,4})?RuntimeError ?: (?P<old_error>Address already in use)\b"
        ),
        summary="the rendezvous store cannot listen on its port ({error})",
        phrases=("failed to listen on any local network address", "failed to bind to", "Address already in use"),
        extract=lambda m, _t: {
            "reason": "port in use"
            if (m.group("error") or m.group("bind_error") or m.group("old_error"))
            in ("errno: 98 - Address already in use", "EADDRINUSE", "Address already in use")
            else "port not permitted"
        },
        examples=(
            "RuntimeError: The server socket has failed to listen on any local network address. The server socket has"
            " failed to bind to [::]:29500 (errno: 98 - Address already in use).",
            "RuntimeError: The server socket has failed to listen on any local network address. port: 29500, useIpv6:"
            " 0, code: -98, name: EADDRINUSE, message: address already in use.",
            "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address."
            " The server socket has failed to bind to [::]:98 (errno: 13 - Permission denied).",
            "RuntimeError: The server socket has failed to listen on any local network address. port: 98, useIpv6: 0,"
            " code: -13, name: EACCES, message: permission denied",
            "RuntimeError: Address already in use",
            "[rank0]: RuntimeError: Address already in use",
            "RuntimeError : Address already in use at /opt/conda/conda-bld/pytorch/work/torch/lib/THD/process_group/"
            "General.cpp:17",
        ),
        near_misses=(
            "RuntimeError: The server socket has listened on [::]:29500 (errno: 13 - Permission denied on a log file)",
        ),
    ),
    Signature(
        # the container's binary is for another CPU, or a script without "#!" (runc/crun "exec %s: exec format error", runc before 1.1
        # "standard_init_linux.go:%d: exec user process caused: exec format error"): the image, not the run
        name="exec-format-error",
        kind=Kind.CONFIG_ERROR,
        pattern=rx(
            r"\bexec (?:user process caused|\S{1,256}): \"?exec format error"
            # runc 1.0-rc's quoted form ('standard_init_linux.go:207: exec user process caused "exec format error"');
            # TensorFlow's fatal check of the CPU it was built for ("F ... cpu_feature_guard.cc:37] The TensorFlow
            # library was compiled to use AVX instructions, but these aren't available on your machine.")
            r"|exec user process caused \"exec format error\""
            # crun's words for its container's entrypoint ("exec container process `%s`: Exec format error")
            r"|exec container process [^\n]{1,300}: Exec format error"
            r"|The TensorFlow library was compiled to use [\w.]{1,12} instructions, but these aren't available on your"
            r" machine"
        ),
        # (the kernel's ENOEXEC: a binary for another CPU, or a script without its "#!" line)
        summary="the container's program cannot run on this node: {error}",
        phrases=("exec format error", "The TensorFlow library was compiled to use"),
        extract=lambda m, _t: {
            "error": "an image built for another CPU"
            if "TensorFlow" in m.group(0)
            else "exec format error (a binary built for another CPU, or a script without its #! line)"
        },
        examples=(
            "exec /node-problem-detector: exec format error",
            "standard_init_linux.go:228: exec user process caused: exec format error",
            '{"msg":"exec container process `/opt/run.sh`: Exec format error","level":"error"}',
        ),
        near_misses=("OSError: [Errno 8] Exec format error: './run.sh'",),
    ),
    Signature(
        # NCCL relaying the CUDA runtime's failure (checks.h CUDACHECK: "Cuda failure %d '%s'", 2.19+ with the code,
        # "Cuda failure '%s'" before): the CUDA error it is, judged like one (an illegal access, a lost GPU, ECC)
        name="nccl-cuda-failure",
        kind=Kind.CUDA_ERROR,
        # (the errors the CUDA rules judge; any other CUDA failure NCCL meets stays an NCCL error)
        pattern=rx(
            # (also bare, as torch's "Last error:" quotes it without NCCL_DEBUG, behind a rank's prefix)
            r"(?:NCCL WARN |(?m:^)(?:\[rank\d{1,6}\]:\s?)?)Cuda failure (?:(?P<code>\d{1,4}) )?'(?P<error>an illegal memory"
            r" access was encountered"
            r"|misaligned address|an illegal instruction was encountered|device-side assert triggered|uncorrectable ECC"
            r" error encountered|uncorrectable NVLink error detected during the execution|unspecified launch failure)'"
        ),
        summary="CUDA error (in NCCL): {error}",
        phrases=("Cuda failure",),
        convert={"code": int},
        examples=(
            "Amphitrite:940929:940929 [1] enqueue.cc:1556 NCCL WARN Cuda failure 700 'an illegal memory access was"
            " encountered'",
            "[rank7]: Cuda failure 214 'uncorrectable ECC error encountered'",
        ),
        near_misses=(
            "NCCL WARN Cuda failure count reset to 0",
            "transport/nvls.cc:254 NCCL WARN Cuda failure 401 'the operation cannot be performed in the present state'",
        ),
    ),
    Signature(
        # NCCL's WARNs it goes on from: no verbs library or a device it could not open (it uses the other devices
        # or its sockets), and the others below (a plugin's own start-up failure is nccl-ofi-init-failed's)
        name="nccl-net-plugin-fallback",
        kind=Kind.LOG_LINE,
        pattern=rx(
            r"NCCL WARN (?:Failed to open libibverbs\.so"
            r"|Call to ibv_open_device failed"
            # user-buffer registration falling back to copies (p2p.cc, harmless per NCCL's maintainers) and a
            # stray connection on NCCL's port ("socketFinalizeAccept: wrong magic": a probe, not a peer)
            r"|rank \d{1,6} failed to IPC register userbuff|socketFinalizeAccept: wrong magic"
            # CollNet (SHARP) not set up: NCCL says it goes on point to point ("Cannot initialize CollNet, using
            # point-to-point network instead", "CollNet is not supported or fails to initialize, ignoring
            # NCCL_ALGO=COLLNET"), after the SHARP plugin's own refusals ("SHARP coll init error: ...", "SHARP group
            # create: ... failed")
            r"|Cannot initialize CollNet, using point-to-point network instead|CollNet is not supported or fails to"
            r" initialize, ignoring|(?:NET/IB : )?SHARP coll init error|SHARP group create: [^\n]{0,80}failed"
            # the proxy's service thread told something by a connection from no rank (localRank -1: a stray
            # connection, as "wrong magic" is)
            r"|\[Service thread\] Unknown command \d{1,10} from localRank -1"
            # RCCL's advice at start-up ('Missing "iommu=pt" from kernel command line which can lead to system
            # instablity or hang!'): a setting, no failure
            r'|Missing "iommu=pt" from kernel command line'
            # the topology search settling for a simpler ring order (graph/search.cc "Could not find a path for pattern
            # %d, falling back to simple order"), and a communicator's clean-up failing as it is destroyed or aborted
            # (init.cc "commReclaim: cleanup comm %p rank %d failed in destroy/abort, error %d"): the run over already
            # or ending for a cause told before it
            r"|Could not find a path for pattern \d{1,3}, falling back to simple order"
            r"|commReclaim: cleanup comm (?:0x)?[0-9a-fA-F]{1,16} rank \d{1,6} failed in destroy/abort"
            # the proxy failing to close a rank's connection (proxy.cc "[Proxy Service %d] Failed to execute operation
            # %s from rank %d, retcode %d" for Close): the communicator already going away; GCP's GPUDirect-TCPX
            # plugin's control-path poll counting its timeouts ("rx ctrl timeout cnt %lu, nanos %lu") as it goes on
            r"|\[Proxy Service \d{1,6}\] Failed to execute operation Close from rank \d{1,6}"
            r"|[^\n]{0,300}? rx ctrl timeout cnt \d{1,20}, nanos \d{1,20})"
        ),
        summary="NCCL warned and went on: {line}",
        phrases=(
            "Failed to open libibverbs",
            "Call to ibv_open_device failed",
            "failed to IPC register userbuff",
            "wrong magic",
            "Cannot initialize CollNet",
            "CollNet is not supported",
            "SHARP coll init error",
            "SHARP group create",
            "Unknown command",
            "falling back to simple order",
            "commReclaim",
            "Failed to execute operation Close",
            "rx ctrl timeout cnt",
        ),
        examples=(
            "gpu-1:311:402 [3] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
            "node-1:21:21 [0] init.cc:2143 NCCL WARN commReclaim: cleanup comm 0x9801e10 rank 0 failed in"
            " destroy/abort, error 1",
            "node-1:174:3274 [1] proxy.cc:1521 NCCL WARN [Proxy Service 1] Failed to execute operation Close from rank"
            " 1, retcode 3",
            "[0] tcpxResult_t tcpxCommProgress(tcpxComm*):1231 NCCL WARN 0xadca8062b70:0xadca805d0f0, nic 0, enp12s0,"
            " 172.16.0.11<39187><-172.16.0.95<46723> rx rx ctrl timeout cnt 7331502, nanos 10000000585",
        ),
        near_misses=("NCCL WARN NET/OFI Request 0x7fbb944701b8 completed with error. RC: 20.",),
    ),
    Signature(
        # aws-ofi-nccl failing to start ("NET/OFI aws-ofi-nccl initialization failed", nccl_net_ofi_init's
        # "NET/OFI Initializing plugin failed"): NCCL falls back to its own transports and goes on; the plugin's
        # own WARNs just before it in the same process (nccl-ofi-warn) are part of it (parse.SETTLED)
        name="nccl-ofi-init-failed",
        kind=Kind.LOG_LINE,
        pattern=rx(
            _NCCL_PROCESS + r"NCCL WARN NET/OFI (?:aws-ofi-nccl initialization failed|Initializing plugin failed)"
        ),
        summary="NCCL: the aws-ofi-nccl plugin did not load (NCCL uses its own transports)",
        phrases=("aws-ofi-nccl initialization failed", "Initializing plugin failed"),
        examples=(
            "algo-1:17778:17848 [5] nccl_net_ofi_create_plugin:259 NCCL WARN NET/OFI aws-ofi-nccl initialization failed",
            "ip-10-36-29-253:82:2548 [0] nccl_net_ofi_init:155 NCCL WARN NET/OFI Initializing plugin failed",
        ),
        near_misses=("NCCL WARN NET/OFI Request 0x7fbb944701b8 completed with error. RC: 20.",),
    ),
    Signature(
        # aws-ofi-nccl's own WARNs: an NCCL error like any other, unless the plugin says in the same process right
        # after it that it did not start (parse.SETTLED: its start-up failing, "Creating new endpoint for domain
        # ... failed", "Couldn't open CQ")
        name="nccl-ofi-warn",
        kind=Kind.NCCL_ERROR,
        # (the plugin's 2019 format of its own: "WARN: Function: %s Line: %d: NET/OFI %s")
        pattern=rx(
            _NCCL_PROCESS + r"NCCL WARN (?P<detail>NET/OFI [^\n]+)"
            r"|WARN: Function: \w{1,80} Line: \d{1,6}: (?P<old>NET/OFI [^\n]+)"
        ),
        extract=lambda m, _t: {"detail": m.group("detail") or m.group("old")},
        summary="NCCL WARN {detail}",
        phrases=("NET/OFI",),
        examples=(
            "ip-10-36-29-253:82:2548 [0] nccl_net_ofi_domain_get_ep:969 NCCL WARN NET/OFI Creating new endpoint for"
            " domain 0x7f7dc3a992c0 failed: Invalid argument",
            "WARN: Function: create_nccl_ofi_component Line: 459: NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid"
            " argument",
        ),
        near_misses=("ip-10-36-29-253:82:2548 [0] NCCL INFO NET/OFI Selected provider is efa",),
    ),
    Signature(
        name="nccl-warn",
        kind=Kind.NCCL_ERROR,
        # (NCCL 2.2 printed its level without its name: "host:pid:tid [0] include/socket.h:360 WARN Call to connect
        # failed : Connection timed out")
        pattern=rx(
            r"NCCL WARN (?P<detail>[^\n]+)"
            # (its socket's words only: its other old WARNs, a library it goes on without, are read by their own)
            r"|\[\d{1,3}\] include/socket\.h:\d{1,6} WARN (?P<old>[^\n]+)"
            # its CUDA check quoted bare, with NCCL 2.19+'s code ("Cuda failure 217 'peer access is not supported
            # between these two devices'")
            r"|(?m:^)(?:\[rank\d{1,6}\]:\s?)?(?P<bare>Cuda failure \d{1,4} '[^'\n]{1,200}')"
        ),
        extract=lambda m, _t: {"detail": m.group("detail") or m.group("old") or m.group("bare")},
        summary="NCCL WARN {detail}",
        phrases=("NCCL WARN", "WARN Call to", "WARN Connection closed", "WARN Socket"),
        examples=(
            "gpu-node-3:1287:1501 [4] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer",
            "gpu-bql-144-103:18553:18611 [0] include/socket.h:360 WARN Call to connect failed : Connection timed out",
            "Cuda failure 217 'peer access is not supported between these two devices'",
        ),
        near_misses=(
            "gpu-node-3:1287:1287 [4] NCCL INFO Bootstrap : Using eth0:10.0.0.3<0>",
            "gpu-1:1:2 [0] misc/ibvwrap.cu:63 WARN Failed to open libibverbs.so[.1]",
        ),
    ),
    Signature(
        # what the application asked of its GPU or its libraries and could not have: a Triton kernel needing more
        # shared memory than the GPU has (triton OutOfResources "out of resource: shared memory, Required: %d,
        # Hardware limit: %d"), a tensor over protobuf's 2 GB limit in a TensorFlow RPC ("exceeded maximum protobuf
        # size of 2GB")
        name="app-out-of-resources",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(
            r"(?P<message>(?:out of resource: shared memory, Required: \d{1,12}"
            # the same limit named by the kernel, as Inductor reports it when no config fits ("InductorError:
            # RuntimeError: No valid triton configs. OutOfMemoryError: out of resource: triton_tem_fused_0 Required:
            # 107008 Hardware limit:101376"); not the autotuner logging one candidate it skips ("... for benchmark
            # choice TritonTemplateCaller(...)"), which goes on with the others
            r"|out of resource: \w{1,120},? Required: \d{1,12},? Hardware limit: ?\d{1,12})"
            r"(?![\s\S]{0,300}?(?:for benchmark choice|Ignoring this choice))|exceeded maximum protobuf size of 2GB)"
        ),
        summary="the program asked for more than its GPU or library allows: {message}",
        phrases=("out of resource", "exceeded maximum protobuf size"),
        fixed={"exception": "out of resources"},
        examples=(
            "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 126978, Hardware limit:"
            " 101376. Reducing block sizes or `num_stages` may help.",
            "[libprotobuf ERROR message_lite.cc:451] tensorflow.RecvBufRespExtra exceeded maximum protobuf size of 2GB:"
            " 5368538440",
            "torch._inductor.exc.InductorError: RuntimeError: No valid triton configs. OutOfMemoryError: out of"
            " resource: triton_tem_fused_0 Required: 107008 Hardware limit:101376 Reducing block sizes or `num_stages`"
            " may help.",
        ),
        near_misses=(
            "shared memory per block: 101376 bytes (out of resource checks enabled)",
            "ERROR:torch._inductor.select_algorithm:Exception No valid triton configs. OutOfMemoryError: out of"
            " resource: triton_mm Required: 294912 Hardware limit:232448 Reducing block sizes or `num_stages` may help."
            " for benchmark choice TritonTemplateCaller(/tmp/torchinductor_x/2q/c2q5.py, BLOCK_K=128, num_warps=4)",
            "Runtime error during autotuning: \nOutOfMemoryError: out of resource: triton_mm Required: 131072 Hardware"
            " limit:101376 Reducing block sizes or `num_stages` may help.. \nIgnoring this choice.",
        ),
    ),
    Signature(
        # CUDA refusing to start because the node's NVSwitch fabric is not up (cudaErrorSystemNotReady, 802,
        # "system not yet initialized": the fabric manager not running or not done on an HGX node): the node's
        # NVLink fabric, whoever prints it (torch's CUDA init warning, THC, the samples, ggml)
        name="nvlink-fabric-not-ready",
        kind=Kind.NVLINK_ERROR,
        # (the string only where CUDA or the GPU is named before it: "system not yet initialized" alone is any
        # program's)
        pattern=rx(
            r"(?:802|CUDA|cuda|gpu|error code )[^\n]{0,200}?(?P<error>system not yet initialized)"
            # gpud's fabric check on an NVSwitch system ("checked fabric state; fabric manager found but not active")
            r"|(?P<agent>fabric manager found but not active)"
            r"|(?P<code>cudaErrorSystemNotReady"
            r"|CUDA_ERROR_SYSTEM_NOT_READY)"
        ),
        summary="the node's NVLink fabric is not up (CUDA error 802: system not yet initialized)",
        phrases=(
            "system not yet initialized",
            "cudaErrorSystemNotReady",
            "CUDA_ERROR_SYSTEM_NOT_READY",
            "fabric manager found but not active",
        ),
        fixed={"counter": "fabric not ready"},
        examples=(
            "RuntimeError: cuda runtime error (802) : system not yet initialized at"
            " /opt/conda/conda-bld/pytorch_1579022034529/work/aten/src/THC/THCGeneral.cpp:50",
            'CUDA error at bandwidthTest.cu:256 code=802(cudaErrorSystemNotReady) "cudaSetDevice(currentDevice)"',
            '"reason": "NVIDIA-H100-80GB-HBM3 checked fabric state; fabric manager found but not active",',
        ),
        near_misses=("the metrics system is not yet ready, retrying",),
    ),
    Signature(
        # TensorFlow's allocator trying a large block and falling back ("I ... cuda_driver.cc:801] failed to
        # allocate 7.81G (8387559424 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory"): it goes on with a
        # smaller one; a real OOM ends in ResourceExhaustedError
        name="tf-allocator-retry",
        kind=Kind.LOG_LINE,
        # (and pinned host memory, which it retries smaller: "failed to alloc %d bytes on host: CUDA_ERROR_...",
        # "could not allocate pinned host memory of size: %d"; XLA's autotuners failing to get scratch space for
        # one candidate, which they skip: "cudnn_conv_algorithm_picker.cc:%d] Resource exhausted: Failed to allocate
        # request for ...", the gemm and Triton autotuners alike)
        pattern=rx(
            r"failed to allocate [\d.]{1,10}[KMGT]? \(\d{1,15} bytes\) from device: CUDA_ERROR_OUT_OF_MEMORY"
            r"|failed to alloc \d{1,15} bytes on host: CUDA_ERROR_[A-Z_]{2,40}|could not allocate pinned host memory"
            r"|(?:algorithm_picker|autotuner)\.cc:\d{1,6}\] (?:Resource exhausted|RESOURCE_EXHAUSTED): Failed to allocate"
        ),
        summary="TensorFlow's allocator retried a smaller block: {line}",
        phrases=(
            "from device: CUDA_ERROR_OUT_OF_MEMORY",
            "bytes on host",
            "could not allocate pinned host memory",
            "Failed to allocate request for",
        ),
        extract=whole,
        examples=(
            "I tensorflow/stream_executor/cuda/cuda_driver.cc:801] failed to allocate 7.81G (8387559424 bytes) from"
            " device: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
            "E tensorflow/stream_executor/cuda/cuda_driver.cc:802] failed to alloc 34359738368 bytes on host:"
            " CUDA_ERROR_OUT_OF_MEMORY: out of memory",
            "E external/xla/xla/service/gpu/cudnn_conv_algorithm_picker.cc:1059] Resource exhausted: Failed to allocate"
            " request for 528.00MiB (553648128B) on device ordinal 0",
        ),
        near_misses=("CUDA_ERROR_OUT_OF_MEMORY: out of memory",),
    ),
    Signature(
        # the launcher of torch.distributed.launch (<1.9) or a script reporting a worker killed by a signal
        # ("subprocess.CalledProcessError: Command '[...]' died with <Signals.SIGKILL: 9>."): someone killed it,
        # which says nothing of who (an exit status is the rank's own failure, read as the exception it is)
        name="worker-killed-by-signal",
        kind=Kind.LOG_LINE,
        pattern=rx(
            # (a SIGSEGV, SIGILL or SIGFPE is the child's own crash: the segfault signature's)
            r"CalledProcessError: Command [^\n]{1,4000}? died with <Signals\.(?P<signal>SIG(?!SEGV|ILL|FPE)[A-Z]{2,8}): \d{1,2}>"
        ),
        summary="a worker was killed by {signal}",
        phrases=("died with",),
        examples=(
            "subprocess.CalledProcessError: Command '['/root/miniconda3/bin/python', '-u', 'basicsr/train.py',"
            " '--local_rank=0']' died with <Signals.SIGKILL: 9>.",
        ),
        near_misses=(
            "subprocess.CalledProcessError: Command '['python', 'train.py']' returned non-zero exit status 1.",
        ),
    ),
    Signature(
        # a Python warning (warnings.showwarning: "%s:%s: %s: %s", "file.py:46: UserWarning: ...") quoting an OS
        # error it went on from ("UserWarning: [Errno 28] No space left on device.  joblib will operate in serial
        # mode"): not the storage failure below. Only those: every warning fetched would crowd a pod's signature
        # lines (capped per pod) with lines that decide nothing.
        name="python-warning",
        kind=Kind.LOG_LINE,
        pattern=rx(r"\.py:\d{1,6}: [A-Z][A-Za-z]{0,40}Warning: \[Errno \d{1,3}\]"),
        summary="a Python warning: {line}",
        phrases=("Errno",),
        extract=whole,
        examples=(
            "/site-packages/joblib/_multiprocessing_helpers.py:46: UserWarning: [Errno 28] No space left on device."
            "  joblib will operate in serial mode",
        ),
        near_misses=(
            "train.py:46: saving checkpoint (UserWarning count 0)",
            "train.py:46: UserWarning: the default value of use_reentrant will change",
        ),
    ),
    Signature(
        # the run's storage and data sources failing under it: the OS's EIO / ENOSPC / ENOTCONN / ESTALE in any
        # wording ("[Errno 5] Input/output error", "close() failed: Transport endpoint is not connected"), the
        # Hugging Face hub unreachable ("Couldn't reach '%s' on the Hub"), an AWS API refusing (botocore "An error
        # occurred (%s) when calling the %s operation"): the program's failure, no fault of the GPU node
        name="storage-error",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(
            r"(?P<message>\[Errno (?:5|28|107|108|116|121|122)\] (?:Input/output error|No space left on device|Transport endpoint"
            r" is not connected|Cannot send after transport endpoint shutdown|Stale file handle|Remote I/O error"
            r"|Disk quota exceeded)"
            # git giving up on a quota ("fatal: could not create work tree dir '%s': Disk quota exceeded")
            r"|fatal: [^\n]{1,300}?: Disk quota exceeded"
            r"|failed: Transport endpoint is not connected"
            # Rust's io::Error ("Transport endpoint is not connected (os error 107)": a FUSE client's own mount),
            # TensorFlow's and absl's status after a path ("%s; No space left on device": a checkpoint's SaveV2),
            # and mount.nfs run by the container itself ("mount.nfs4: Connection reset by peer", "mount.nfs: access
            # denied by server while mounting %s")
            r"|(?:Input/output error|No space left on device|Transport endpoint is not connected|Stale file handle"
            r"|Disk quota exceeded) \(os error (?:5|28|107|116|122)\)"
            r"|(?<=\S); (?:No space left on device|Disk quota exceeded)[ \t]*$"
            r"|(?<![\w.-])mount\.nfs4?: (?:Connection reset by peer|Connection timed out|Connection refused|No route to host"
            r"|Network is unreachable|access denied by server while mounting \S{1,300}|Protocol not supported"
            r"|requested NFS version or transport protocol is not supported)"
            # coreutils' and tar's own words ("ls: cannot access '%s': Cannot send after transport endpoint shutdown",
            # "touch: setting times of '%s': Input/output error", "cp: error writing '%s': No space left on device")
            r"|(?:^|[\s:])(?:ls|cp|mv|touch|cat|mkdir|rm|tar|rsync|dd|head|tail|find|du|stat|ln|chmod|chown): [^\n]{1,300}?:"
            r" (?:Input/output error|No space left on device|Transport endpoint is not connected|Cannot send after"
            r" transport endpoint shutdown|Stale file handle|Remote I/O error|Disk quota exceeded)$"
            r"|Couldn't reach '[^'\n]{1,200}' on the Hub|An error occurred \((?:[A-Za-z]{3,40}|\d{3})\) when calling the"
            r" \w{1,64} operation"
            # the Hub refusing a gated model without a token (huggingface_hub's GatedRepoError message, alone in
            # KServe's storage initializer)
            r"|Access to model \S{1,200} is restricted\. You must have access to it and be authenticated"
            # an HTTP client's request failing at ERROR (Rust's reqwest: "error sending request for url (%s)", NIM's
            # model hub)
            r"|\bERROR\b[^\n]{0,300}?error sending request for url \([^)\s]{1,500}\))"
        ),
        summary="the run's storage or data source failed: {message}",
        phrases=(
            "Input/output error",
            "No space left on device",
            "Transport endpoint is not connected",
            "Cannot send after transport endpoint shutdown",
            "Stale file handle",
            "Disk quota exceeded",
            "Remote I/O error",
            "on the Hub",
            "when calling the",
            "You must have access to it and be authenticated",
            "error sending request for url",
            "mount.nfs",
            "mount.nfs4",
        ),
        fixed={"exception": "storage error"},
        examples=(
            "ERROR: megatron.core.dist_checkpointing.strategies.filesystem_async: Local process 0 encountered an error:"
            " [Errno 5] Input/output error",
            "E tensorflow/core/platform/default/posix_file_system.cc:56] close() failed: Transport endpoint is not"
            " connected",
            "ConnectionError(\"Couldn't reach 'tanganke/sun397' on the Hub (ConnectionError)\")",
            "ls: cannot access '/remote_artifacts/ping': Cannot send after transport endpoint shutdown",
            "touch: setting times of '/fsx/x': Input/output error",
            "download failed: s3://bucket/x.gz to x.gz An error occurred (SlowDown) when calling the GetObject operation"
            " (reached max retries: 2): Please reduce your request rate.",
            "fatal error: An error occurred (403) when calling the HeadObject operation: Forbidden",
            "Access to model meta-llama/Meta-Llama-3-8B-Instruct is restricted. You must have access to it and be"
            " authenticated to access it. Please log in.",
            "ERROR gcsf > Could not mount to /data: Transport endpoint is not connected (os error 107)",
            "E ckpt/model.ckpt-100.data-00000-of-00001.tempstate1387; No space left on device",
            "mount.nfs4: Connection timed out",
        ),
        near_misses=(
            "checkpoint written to /ckpt/step_100 (no space left check passed)",
            "mount.nfs4: mounting fs-1.efs.us-east-1.amazonaws.com:/ on /mnt/efs",
        ),
    ),
    Signature(
        # Weights & Biases failing in wandb.init, which raises and ends the program: its init timeout ("Run
        # initialization has timed out after %s sec.", a CommError), no API key without a terminal ("api_key not
        # configured (no-tty)", a UsageError), its service or (0.8-0.9) its process not starting ("Timed out waiting
        # for wandb service to start after %s seconds", ServiceStartTimeoutError, also printed by `wandb agent`;
        # "W&B process failed to launch", a LaunchError), and what init's error path prints in 0.10-0.12 (its
        # getcaller()'s "Problem at: FILE LINE FUNCTION", then "Abnormal program exit"); its retries and sync
        # errors mid-run are not fatal and not read
        name="wandb-init-failed",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(
            r"wandb: ERROR (?P<message>Run initialization has timed out after [\d.]{1,10} sec"
            r"|api_key not configured \(no-tty\)|W&B process failed to launch|Abnormal program exit"
            r"|Error communicating with wandb process)"
            r"|(?P<service>Timed out waiting for wandb service to start after [\d.]{1,10} seconds)"
            r"|^(?P<caller>Problem at: \S{1,300} \d{1,6} \S{1,200})$",
            re.MULTILINE,
        ),
        summary="Weights & Biases could not start the run: {line}",
        extract=whole,
        phrases=(
            "Run initialization has timed out",
            "api_key not configured",
            "process failed to launch",
            "Abnormal program exit",
            "waiting for wandb service to start",
            "Problem at",
            "Error communicating with wandb process",
        ),
        fixed={"exception": "wandb init"},
        examples=(
            "wandb: ERROR Run initialization has timed out after 600.0 sec. Please try increasing the timeout with the"
            " `init_timeout` setting: `wandb.init(settings=wandb.Settings(init_timeout=120))`.",
            "wandb: ERROR api_key not configured (no-tty). call wandb.login(key=[your_api_key])",
            "wandb: ERROR W&B process failed to launch, see: /home/u/wandb/debug.log",
            "Error: Timed out waiting for wandb service to start after 30.0 seconds. Try increasing the timeout with the"
            " `_service_wait` setting.",
            "Problem at: /media/superhero/8TB/LilNetX-main/main.py 85 main",
        ),
        near_misses=(
            "wandb: ERROR Error while calling W&B API: context deadline exceeded (<Response [500]>)",
            "Problem at: the data loader, see below",
        ),
    ),
    Signature(
        # the W&B sweep agent ending on its runs' own failures: every run it started crashed at once ("Detected %d
        # failed runs in the first %d seconds, killing sweep.", "Detected %d failed runs in a row at start, killing
        # sweep.")
        name="wandb-sweep-failed",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(
            # (not "Run %s errored: %r": the agent starts the next run after it)
            r"(?P<message>Detected \d{1,6} failed runs in (?:the first \d{1,6} seconds|a row at start), killing sweep)"
        ),
        summary="the sweep's runs failed: {message}",
        phrases=("failed runs in",),
        fixed={"exception": "wandb sweep"},
        examples=(
            "wandb: ERROR Detected 3 failed runs in the first 60 seconds, killing sweep.",
            "wandb: ERROR Detected 5 failed runs in a row at start, killing sweep.",
        ),
        near_misses=("wandb: Agent Starting Run: 0jbbwa4t with config:", "Run 0jbbwa4t errored: IndexError('x')"),
    ),
    Signature(
        # a training loop's numeric guard stopping the run: Megatron-LM's rerun state machine ("Unexpected result
        # %s on rank %d at iteration #%d invocation #%d (message='%s')"), NeMo raising it per rank ("Rank %d, node
        # %s, device %d, iteration %d: Unexpected result nan (message=...)")
        name="nan-guard",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(
            r"Unexpected result (?P<value>nan|inf|-inf)\b[^\n]{0,200}?\(message='(?P<message>[^'\n]{1,300})'"
            # TensorFlow's NanTensorHook (Estimator, MonitoredSession): "Model diverged with loss = NaN."
            r"|ERROR:tensorflow:Model diverged with loss = NaN|NanLossDuringTrainingError"
            # Keras' TerminateOnNaN callback ("Batch %d: Invalid loss, terminating training")
            r"|Batch \d{1,12}: Invalid loss, terminating training"
            # the DETR family's training loop (DETR, Deformable DETR, DINO, RT-DETR, DEIM engine.py: "Loss is {},
            # stopping training", then sys.exit(1))
            r"|(?:^|[\]>]:\s?)Loss is (?:nan|inf|-inf), stopping training"
            # Lightning's EarlyStopping(check_finite=True): "Monitored metric %s = %s is not finite. Previous best
            # value was %s. Signaling Trainer to stop."
            r"|Monitored metric \S{1,120} = (?:nan|inf|-inf) is not finite\."
            # PyTorch-Ignite's TerminateOnNan handler ("%s: Output '%s' contains NaN or Inf. Stop training")
            r"|contains NaN or Inf\. Stop training"
            # YOLOv5's loop ("WARNING: non-finite loss, ending training ", then its loss tensor)
            r"|non-finite loss, ending training"
        ),
        summary="the loss or gradients went non-finite: {line}",
        # ("rerun_state_machine:Unexpected" and "ERROR:tensorflow:Model" are one token each to the analyzer)
        phrases=(
            "result nan",
            "result inf",
            "diverged with loss",
            "Invalid loss, terminating training",
            "stopping training",
            "is not finite",
            "contains NaN or Inf. Stop training",
            "non-finite loss, ending training",
        ),
        extract=whole,
        fixed={"exception": "non-finite value"},
        examples=(
            "ERROR:megatron.core.rerun_state_machine:Unexpected result nan on rank 3 at iteration #3 invocation #2"
            " (message='found NaN in local grad norm for bucket #0 in backward pass before data-parallel communication"
            " collective')",
            "ERROR:tensorflow:Model diverged with loss = NaN.",
            "Batch 6: Invalid loss, terminating training",
            "Loss is nan, stopping training",
            "[rank3]: Loss is nan, stopping training",
            "Monitored metric val_rec_loss = nan is not finite. Previous best value was 0.045. Signaling Trainer to"
            " stop.",
            "ignite.handlers.terminate_on_nan.TerminateOnNan WARNING: TerminateOnNan: Output '{'loss': nan}' contains"
            " NaN or Inf. Stop training",
        ),
        near_misses=(
            "Unexpected result 0.0 on rank 3 (message='loss check')",
            "WARNING:tensorflow:Model diverged with loss = NaN.",  # fail_on_nan_loss=False: the run stops cleanly
        ),
    ),
    Signature(
        # autograd refusing the program's graph in its own words, wherever the exception's class went (ranks writing
        # at once tear "RuntimeError" from its message): a tensor changed in place that backward needed ("one of the
        # variables needed for gradient computation has been modified by an inplace operation"), a second backward
        # through a freed graph ("Trying to backward through the graph a second time")
        name="autograd-graph-error",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(
            r"(?P<message>one of the variables needed for gradient computation has been modified by an inplace"
            r" operation|Trying to backward through the graph a second time)"
        ),
        summary="autograd refused the program's graph: {message}",
        phrases=("needed for gradient computation has been modified", "backward through the graph a second time"),
        fixed={"exception": "autograd error"},
        examples=(
            ": one of the variables needed for gradient computation has been modified by an inplace operation:"
            " [torch.cuda.HalfTensor [1024]] is at version 24; expected version 23 instead.",
        ),
        near_misses=("autograd: no variables needed for gradient computation were modified",),
    ),
    Signature(
        # a CUDA kernel's device-side assertion, as the device printf writes it ("%s:%d: %s: block: [%d,%d,%d],
        # thread: [%d,%d,%d] Assertion `%s` failed."): the code's own check (an index out of range), before the
        # "device-side assert triggered" CUDA error that follows it
        name="device-side-assert",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(
            r"\.cu:\d{1,6}: [^\n]{1,300}?block: \[\d{1,6},\d{1,6},\d{1,6}\], thread: \[\d{1,6},\d{1,6},\d{1,6}\]"
            r" Assertion `(?P<message>[^`\n]{1,300})` failed"
            # the same lines of many GPU threads written at once and torn into each other: the head of one (file,
            # line, kernel, "block: [") and an assertion's words after it on the line
            r"|\.cu:\d{1,6}: \w{1,200}: block: \[\d[^\n]{0,1000}? Assertion `"
        ),
        summary="a device-side assertion failed: {message}",
        phrases=("Assertion",),
        fixed={"exception": "device-side assertion"},
        examples=(
            "/pytorch/aten/src/ATen/native/cuda/ScatterGatherKernel.cu:115: operator(): block: [0,0,0], thread:"
            ' [1,0,0] Assertion `idx_dim >= 0 && idx_dim < index_size && "index out of bounds"` failed.',
            "/x/Loss.cu:240: nll_loss_forward_reduce_cuda_kernel_2d: block: [0/x/Loss.cu,0:240,0: nll_loss_forward_reduce"
            "_cuda_kernel_2d], thread: [30: block: [0] Assertion `t >= 0 && t < n_classes], thread: [12` failed.",
        ),
        near_misses=(
            "Assertion `idx_dim >= 0` passed in unit test ScatterGatherKernel.cu",
            "Loss.cu:240: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0] launched",
        ),
    ),
    Signature(
        # TGI's and LoRAX's launcher when its model download step failed with an error ("Download encountered an
        # error:", its stderr after it; a signal's death is said otherwise): the program could not get its model
        name="tgi-download-failed",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(r"\w{1,40}_launcher: Download encountered an error"),
        summary="the server could not download its model",
        phrases=("Download encountered an error",),
        fixed={"exception": "model download"},
        examples=(
            "2025-05-23T03:12:22.649807Z ERROR download: text_generation_launcher: Download encountered an error:",
        ),
        near_misses=("INFO download: text_generation_launcher: Successfully downloaded weights.",),
    ),
    Signature(
        # ssh refusing the launcher's login to a worker (OpenSSH's "%s: Permission denied (%s)." with the methods
        # tried), or the launcher's ssh refusing a worker whose host key it does not trust ("Host key verification
        # failed."): an MPIJob's keys, their modes or its known_hosts wrong, the pod's set-up
        name="ssh-permission-denied",
        kind=Kind.CONFIG_ERROR,
        pattern=rx(
            r"(?P<error>Permission denied \((?:publickey|password|keyboard-interactive|hostbased|gssapi-[\w-]{1,40})"
            r"(?:,[\w-]{1,40}){0,6}\)|(?m:^)Host key verification failed)\."
        ),
        summary="ssh refused the login: {error}",
        phrases=("Permission denied (", "Host key verification failed"),
        fixed={"reason": "ssh keys"},
        examples=(
            "root@tensorflow-benchmarks-worker-1.tensorflow-benchmarks-worker: Permission denied (publickey,password).",
            "Host key verification failed.",
        ),
        near_misses=("Permission denied, please try again.",),
    ),
    Signature(
        # s6-overlay unable to run one of the image's service scripts ("s6-rc-oneshot-run: fatal: unable to exec
        # %s: Permission denied", its execute bit lost in the build; "No such file or directory"): it stops the
        # container before the program runs, the image's set-up
        name="s6-unable-to-exec",
        kind=Kind.CONFIG_ERROR,
        pattern=rx(
            r"s6-[\w-]{1,40}: fatal: unable to exec \S{1,300}: (?P<error>Permission denied|No such file or directory)"
        ),
        summary="s6-overlay could not run the image's script: {error}",
        phrases=("unable to exec",),
        fixed={"reason": "image's scripts"},
        examples=("s6-rc-oneshot-run: fatal: unable to exec /etc/s6-overlay/s6-rc.d/init-tor/run: Permission denied",),
        near_misses=("s6-rc: info: service init-tor: starting",),
    ),
    Signature(
        # the container's entrypoint not runnable as the runtime or its init wrapper starts it (runc before 1.1:
        # "standard_init_linux.go:%d: exec user process caused \"no such file or directory\"" or "permission denied";
        # runc 1.1+: "exec %s: no such file or directory"; tini's, dumb-init's): the image's or the spec's command,
        # the program never ran
        name="entrypoint-not-runnable",
        kind=Kind.CONFIG_ERROR,
        pattern=rx(
            r"exec user process caused:? \\?\"?(?P<error>no such file or directory|permission denied)"
            r"|(?m:^)exec /\S{1,300}: (?P<error2>no such file or directory|permission denied)[ \t]*$"
            # the init wrappers' own ("[FATAL tini (7)] exec /docker-entrypoint.sh failed: Permission denied",
            # "[dumb-init] /entrypoint.sh: No such file or directory"); not a shell's "/bin/sh: 1: /x.sh: Permission
            # denied", also a redirect or a sourced file the program goes on from
            r"|\[FATAL tini \(\d{1,9}\)\] exec \S{1,300} failed: (?P<error3>Permission denied|No such file or directory"
            r"|Exec format error)"
            r"|\[dumb-init\] \S{1,300}: (?P<error4>Permission denied|No such file or directory|Exec format error)"
        ),
        extract=lambda m, _t: {
            "error": m.group("error") or m.group("error2") or m.group("error3") or m.group("error4")
        },
        summary="the container's program could not be started: {error}",
        phrases=("exec user process caused", "no such file or directory", "Permission denied"),
        fixed={"reason": "entrypoint"},
        examples=(
            'standard_init_linux.go:211: exec user process caused "no such file or directory"',
            "exec /start.sh: no such file or directory",
            "[FATAL tini (7)] exec /docker-entrypoint.sh failed: Permission denied",
            "[dumb-init] /entrypoint.sh: No such file or directory",
            "[FATAL tini (7)] exec /usr/local/bin/train failed: Exec format error",
        ),
        near_misses=(
            "open /data/shard-0041.tar: no such file or directory",
            "/bin/sh: 1: /workspace/hooks/upload_ckpt.sh: Permission denied",
        ),
    ),
    Signature(
        # Argo Workflows' emissary (the step's entrypoint, argoexec) unable to find the step's command in the image
        # ("failed to find name in PATH: exec: %q: executable file not found in $PATH", for a path Go's LookPath
        # error: "exec: \"/bin/sh\": no such file or directory", "permission denied"), the message of the main
        # container's end with exit code 64, and its error on stderr): the step never ran, the spec's command or
        # the image
        name="argo-emissary-no-command",
        kind=Kind.CONFIG_ERROR,
        pattern=rx(r"failed to find name in PATH: (?P<error>exec: \"[^\"\n]{1,200}\": [^\n]{1,200})"),
        summary="the step's command is not in its image: {error}",
        phrases=("failed to find name in PATH",),
        fixed={"reason": "command not in image"},
        examples=(
            'Error (exit code 64): failed to find name in PATH: exec: "exit": executable file not found in $PATH',
            'failed to find name in PATH: exec: "/bin/sh": no such file or directory',
        ),
        near_misses=('exec: "nvidia-smi": executable file not found in $PATH',),
    ),
    Signature(
        # the NVIDIA device plugin refusing its own configuration ("unable to validate flags: using MPS requires
        # --mps-root to be specified") or unable to read MIG devices for want of privileges ("error starting plugins:
        # ... error getting parent memory info: Insufficient Permissions"): the plugin's set-up
        name="device-plugin-config",
        kind=Kind.CONFIG_ERROR,
        pattern=rx(
            r"(?P<error>unable to validate flags: [^\n]{1,200}"
            r"|error starting plugins: [^\n]{0,600}?: Insufficient Permissions)"
        ),
        summary="the device plugin's set-up: {error}",
        phrases=("unable to validate flags", "Insufficient Permissions"),
        fixed={"reason": "device plugin"},
        examples=(
            "E0120 07:09:15.605081       1 main.go:132] error starting plugins: unable to load config: unable to validate"
            " flags: using MPS requires --mps-root to be specified",
            "E0407 94 main.go:188] error starting plugins: error getting plugins: error getting MIG profile for MIG"
            " device at index '(0, 0)': error getting parent memory info: Insufficient Permissions",
        ),
        near_misses=("Insufficient Permissions to query fan speed, skipping",),
    ),
    Signature(
        # Spark's driver aborting the job because an executor was lost ("Job aborted due to stage failure: ... failed
        # 4 times, most recent failure: ... ExecutorLostFailure (executor N exited caused by one of the running
        # tasks) Reason: ..."): the driver ends for an executor that died elsewhere
        name="spark-executor-lost",
        kind=Kind.LAUNCHER_TEARDOWN,
        pattern=rx(r"Job aborted due to stage failure: [^\n]{0,600}?\bExecutorLostFailure\b"),
        summary="Spark aborted the job: an executor was lost",
        phrases=("ExecutorLostFailure",),
        examples=(
            "Caused by: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 9.0 failed 4"
            " times, most recent failure: Lost task 0.3 in stage 9.0 (TID 9411) (100.110.242.65 executor 1):"
            " ExecutorLostFailure (executor 1 exited caused by one of the running tasks) Reason:",
        ),
        near_misses=("WARN TaskSetManager: Lost task 0.0 in stage 9.0: ExecutorLostFailure (executor 1 exited)",),
    ),
    Signature(
        # DeepEP's expert-parallel all-to-all giving up on remote ranks: the host's wait ("DeepEP error: timeout
        # (dispatch CPU)") and the kernel's own check ("DeepEP timeout check failed: rank = %d, thread = %d, value =
        # %d"): a collective that did not complete, like the NCCL watchdog's
        name="deepep-timeout",
        kind=Kind.NCCL_TIMEOUT,
        # (also the host's "DeepEP error: CPU recv timeout" and the kernels' prints before trap(): "DeepEP dispatch NVL
        # receiver timeout, channel: %d, ...", "DeepEP timeout for dispatch receivers, rank %d, ..."; not the
        # "Warning: DeepEP timeout for ..." of a masked rank it goes on without)
        pattern=rx(
            r"DeepEP error: (?:timeout \((?:dispatch|combine)[^)\n]{0,20}\)|CPU recv timeout)"
            r"|DeepEP timeout check failed: rank = \d{1,6}"
            r"|(?<!Warning: )DeepEP (?:dispatch|combine)[\w ]{0,40}? timeout, channel"
            r"|(?<!Warning: )DeepEP timeout for (?:dispatch|combine)"
        ),
        summary="DeepEP's all-to-all timed out: {line}",
        phrases=("DeepEP error", "DeepEP timeout", "receiver timeout"),
        extract=whole,
        examples=(
            "(Worker_DP7_EP7 pid=4757) RuntimeError: DeepEP error: timeout (dispatch CPU)",
            "DeepEP timeout check failed: rank = 7, thread = 32, value = 0)",
            "[rank2]: RuntimeError: DeepEP error: CPU recv timeout",
            "DeepEP dispatch NVL receiver timeout, channel: 3, RDMA: 0, nvl: 6, src RDMA: 1, src nvl: 2, start: 0, end: 0",
        ),
        near_misses=(
            "DeepEP not available: Invalid Argument",
            "Warning: DeepEP timeout for dispatch receivers, rank 3",
        ),
    ),
    Signature(
        # TensorRT 7's builder timing a tactic ("Get cuda error during getBestTactic: %s") and going on with the
        # next: the out-of-memory error just before it was caught (parse.SETTLED)
        name="tensorrt-tactic-retry",
        kind=Kind.LOG_LINE,
        # (also its reformat timing: "WARNING: Get cuda error during timeReformat.")
        pattern=rx(r"Get cuda error during (?:getBestTactic|timeReformat)\b"),
        summary="TensorRT's builder went on with the next tactic: {line}",
        phrases=("Get cuda error during getBestTactic", "Get cuda error during timeReformat"),
        extract=whole,
        examples=("WARNING: Get cuda error during getBestTactic: (Unnamed Layer* 1) [ElementWise]",),
        near_misses=("[E] [TRT] ../rtSafe/safeRuntime.cpp (25) - Cuda Error in allocate: 2 (out of memory)",),
    ),
    Signature(
        # scikit-learn's search scoring failed fits as nan and going on (FitFailedWarning: before 1.0 "Estimator fit
        # failed. The score on this train-test partition for these parameters will be set to nan. Details:" and the
        # traceback; since 1.0 "%d fits failed out of a total of %d. The score on these train-test partitions for
        # these parameters will be set to nan."): the error printed with it, before or after, was caught
        # (parse.SETTLED). Not "All the %d fits failed", the ValueError that ends the search.
        name="sklearn-fit-failed",
        kind=Kind.LOG_LINE,
        pattern=rx(
            r"Estimator fit failed\. The score on this train-test partition"
            r"|\d{1,9} fits failed out of a total of \d{1,9}\.\s{1,4}The score on these train-test partitions"
        ),
        summary="scikit-learn's search scored failed fits as nan and went on: {line}",
        phrases=("Estimator fit failed", "fits failed out of a total of"),
        extract=whole,
        examples=(
            "sklearn/model_selection/_validation.py:615: FitFailedWarning: Estimator fit failed. The score on this"
            " train-test partition for these parameters will be set to nan. Details:",
            "FitFailedWarning: \n5 fits failed out of a total of 25.\nThe score on these train-test partitions for"
            " these parameters will be set to nan.",
        ),
        near_misses=("ValueError: \nAll the 25 fits failed.\nIt is very likely that your model is misconfigured.",),
    ),
    Signature(
        # llama.cpp retrying its compute buffers after a failed allocation ("compute buffer allocation failed,
        # retrying without pipeline parallelism"): the out-of-memory just before it was caught (parse.SETTLED)
        name="llamacpp-alloc-retry",
        kind=Kind.LOG_LINE,
        pattern=rx(r"compute buffer allocation failed, retrying without pipeline parallelism"),
        summary="llama.cpp retried its buffers without pipeline parallelism",
        phrases=("retrying without pipeline parallelism",),
        examples=(
            "1.06.520.107 W sched_reserve: compute buffer allocation failed, retrying without pipeline parallelism",
        ),
        near_misses=("compute buffer allocation failed",),
    ),
    Signature(
        # a supervisor's record of its program ending: supervisord's "exited: %s (exit status %d; not expected)" and
        # "exited: %s (terminated by SIGSEGV (core dumped); not expected)", gunicorn's "Worker with pid %s was
        # terminated due to signal %d": the program's own failure or crash, unless the supervisor started it again
        # moments later (parse.SETTLED: supervisor-restarted), which ends nothing
        name="supervisor-exited",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(
            r"exited: (?P<program>[\w.:-]{1,100}) \((?:exit status (?:[1-9]\d?|1[01]\d|12[0-5])"
            r"|terminated by (?P<sig>SIG(?:SEGV|ILL|FPE))\b[^\n;]{0,40}); not expected\)"
            r"|Worker with pid \d{1,10} was terminated due to signal (?P<signal>4|8|11)\b"
        ),
        summary="the supervisor's program ended: {line}",
        phrases=("not expected", "terminated due to signal"),
        fixed={"exception": "program exited"},
        extract=lambda m, t: {**whole(m, t), **({"crash": True} if m.group("sig") or m.group("signal") else {})},
        examples=(
            "ganymede  | 2025-10-12 10:25:35,461 WARN exited: worker (exit status 1; not expected)",
            "2022-05-19 16:37:56,329 INFO exited: flask (terminated by SIGSEGV (core dumped); not expected)",
            "[2023-04-18 09:58:48 +0000] [1] [WARNING] Worker with pid 8 was terminated due to signal 4",
        ),
        near_misses=(
            "INFO exited: worker (exit status 0; expected)",
            "WARN exited: worker (exit status 0; not expected)",
            "INFO exited: flask (terminated by SIGKILL; not expected)",
            "[WARNING] Worker with pid 8 was terminated due to signal 9",
        ),
    ),
    Signature(
        # ... and the supervisor starting it again (supervisord's "spawned: '%s' with pid %d", gunicorn's "Booting
        # worker with pid: %d")
        name="supervisor-restarted",
        kind=Kind.LOG_LINE,
        pattern=rx(r"spawned: '(?P<program>[\w.:-]{1,100})' with pid \d{1,10}|Booting worker with pid: \d{1,10}"),
        summary="the supervisor started its program again",
        phrases=("spawned:", "Booting worker with pid"),
        examples=(
            "INFO spawned: 'sidekiq' with pid 16409",
            "[2023-04-18 09:58:49 +0000] [1] [INFO] Booting worker with pid: 9",
        ),
        near_misses=("INFO gave up: worker entered FATAL state, too many start retries too quickly",),
    ),
    Signature(
        # the process crashing itself: CPython's faulthandler ("Fatal Python error: Segmentation fault"), the
        # shell's "Segmentation fault (core dumped)", UCX's "Caught signal 11 (Segmentation fault: ...)", a
        # DataLoader worker's ("Unexpected segmentation fault encountered in worker."), Triton server's handler
        # ("Signal (11) received."); glibc aborting a process that corrupted its own heap or stack (malloc_printerr's
        # "free(): double free detected in tcache 2", "double free or corruption (!prev)", "malloc(): corrupted top
        # size", ..., before 2.26 inside "*** Error in `%s': %s: 0x%x ***"; "*** stack smashing detected ***");
        # an uncaught C++ exception of the standard library's own errors ("terminate called after throwing an
        # instance of 'std::bad_alloc'": new failing, which a memory limit does not do; a std::runtime_error may
        # carry an NCCL or CUDA failure and is left to what() says)
        name="segfault",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(
            r"Fatal Python error: (?P<message>Segmentation fault|Bus error)|Segmentation fault\s{1,8}\(core dumped\)"
            r"|line \d{1,6}:\s{1,8}\d{1,10} Segmentation fault|Caught signal 11 \(Segmentation fault"
            # the same deaths by SIGILL and SIGFPE as shells report them (bash's "Illegal instruction (core dumped)",
            # "Floating point exception (core dumped)", "line N: PID Illegal instruction", zsh's "illegal hardware
            # instruction"), and every one of them as what ran the program reports it: Go's os/exec ("signal:
            # segmentation fault (core dumped)"), Python's subprocess ("died with <Signals.SIGSEGV: 11>."), cog's
            # worker ("FatalWorkerException: ... (exitcode -11)"); a supervisor's record is supervisor-exited's
            r"|(?P<sig>(?:Illegal instruction|Floating point exception|illegal hardware instruction)\s{1,8}\(core dumped\)"
            r"|line \d{1,6}:\s{1,8}\d{1,10} (?:Illegal instruction|Floating point exception)"
            # (bash's word alone when it wrote no core: the whole line, "Illegal instruction")
            r"|(?m:^)Illegal instruction[ \t]*$"
            r"|\bsignal: (?:segmentation fault|illegal instruction|floating point exception)"
            r"|died with <Signals\.SIG(?:SEGV|ILL|FPE): \d{1,2}>"
            r"|FatalWorkerException: [^\n]{0,300}?\(exitcode -(?:4|8|11)\)"
            # a Go program's runtime panic ("panic: runtime error: invalid memory address or nil pointer dereference"),
            # the JVM's crash report ("#  SIGSEGV (0xb) at pc=0x..., pid=..., tid=..."; a SIGBUS one decides nothing)
            # (at a line's start or after a CRI prefix: "recovered from panic: ..." and "caught panic: ..." went on)
            r"|(?:^|\b(?:stderr|stdout) [FP] )panic: runtime error: [^\n]{1,200}"
            r"|\bSIG(?:SEGV \(0xb\)|ILL \(0x4\)|FPE \(0x8\)) at pc=0x[0-9a-fA-F]{1,16})"
            r"|Unexpected segmentation fault encountered in worker|(?:^|[\]>]:\s?)Signal \(11\) received\."
            # Open MPI's handler (opal backtrace: "[host:pid] *** Process received signal ***", "[host:pid] Signal:
            # Segmentation fault (11)")
            r"|\] Signal: (?:Segmentation fault|Illegal instruction|Floating point exception) \((?:11|4|8)\)"
            # srun's record of its tasks ("srun: error: %s: task(s) %s: Segmentation fault"); TGI's and LoRAX's
            # launcher when a shard died of SIGILL, SIGFPE or SIGSEGV ("Shard process was signaled to shutdown with
            # signal %d")
            r"|srun: error: [^\n]{1,200}?: tasks? [\d,-]{1,4000}: Segmentation fault"
            r"|Shard (?:process )?was signaled to shutdown with signal (?:4|8|11)\b"
            # (malloc_printerr's messages name the function and what it found, glibc 2.17-2.40)
            r"|(?P<glibc>(?:free|malloc|realloc|munmap_chunk|mremap_chunk|malloc_consolidate|tcache_thread_shutdown|_int_free"
            r"|_int_malloc|_int_realloc)\(\): (?:invalid|corrupted|unaligned|double free|too many|mismatching"
            r"|(?:small|large|unsorted)bin|memory corruption)[^\n:*]{0,60}"
            r"|double free or corruption \((?:!prev|fasttop|out|top)\)|corrupted size vs\. prev_size(?: in fastbins)?"
            r"|corrupted double-linked list(?: \(not small\))?|\*\*\* (?:stack smashing|buffer overflow) detected \*\*\*)"
            # glibc's assert ("%s%s%s:%u: %s%sAssertion `%s' failed."): the program's own check, then abort
            r"|(?:^|[\]>]:\s?)[\w.+-]{1,64}: \S{1,300}:\d{1,6}: [^\n]{1,400}?: Assertion [`'](?P<assertion>[^\n]{1,300})'"
            r" failed\.$"
            r"|terminate called after throwing an instance of '(?P<cpp>std::(?:bad_alloc|length_error|out_of_range"
            r"|invalid_argument|logic_error|bad_function_call|bad_optional_access|bad_variant_access"
            r"|bad_array_new_length))'"
        ),
        summary="the process crashed: {exception}",
        phrases=(
            "Fatal Python error",
            "Segmentation fault",
            "segmentation fault encountered",
            "Signal (11) received",
            "double free",
            "invalid pointer",
            "invalid size",
            "invalid next size",
            "corrupted top size",
            "memory corruption",
            "double linked list corrupted",
            "invalid chunk size",
            "corrupted size vs",
            "corrupted double-linked list",
            "stack smashing detected",
            "buffer overflow detected",
            "unaligned",
            "too many chunks",
            "mismatching",
            "terminate called after throwing",
            "Assertion",
            "signaled to shutdown with signal",
            "Illegal instruction",
            "Floating point exception",
            "illegal hardware instruction",
            "signal: segmentation fault",
            "signal: illegal instruction",
            "signal: floating point exception",
            "died with <Signals.SIG",
            "FatalWorkerException",
            "panic: runtime error",
            "SIGSEGV (0xb)",
            "SIGILL (0x4)",
            "SIGFPE (0x8)",
        ),
        # judged after the reactions (words.own_crash): a rank crashing as it tears down after an NCCL error
        fixed={"crash": True},
        extract=lambda m, _t: {
            "exception": m.group("message")
            or m.group("sig")
            or m.group("glibc")
            or m.group("cpp")
            or (m.group("assertion") and "assertion failed")
            or "Segmentation fault"
        },
        examples=(
            "Fatal Python error: Segmentation fault",
            "/bin/bash: line 1:    42 Segmentation fault      python train.py",
            "/entrypoint.sh: line 3:    17 Segmentation fault      (core dumped) python train.py",
            "[gpu-3:625371:0:625371] Caught signal 11 (Segmentation fault: address not mapped to object at address"
            " (nil))",
            "ERROR: Unexpected segmentation fault encountered in worker.",
            "Signal (11) received.",
            "free(): double free detected in tcache 2",
            "*** Error in `python3.5': double free or corruption (!prev): 0x0000000001ff97e0 ***",
            "malloc(): corrupted top size",
            "free(): unaligned chunk detected in tcache 2",
            "*** stack smashing detected ***: python terminated",
            "*** buffer overflow detected ***: terminated",
            "[1,3]<stderr>:Signal (11) received.",
            "[k8s-slave03:00956] Signal: Segmentation fault (11)",
            "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc",
            "python3: /opt/DeepEP/csrc/hybrid_ep/extension/permute.cu:412: void permute_launcher(PermuteArgs) [with"
            " DType = short unsigned int]: Assertion 'args.output_tokens_ptr != nullptr' failed.",
            "srun: error: jade751: tasks 580,588,596: Segmentation fault",
            "Illegal instruction (core dumped)",
            "[1]    122549 illegal hardware instruction (core dumped)  python predict.py",
            "Error: llama runner process has terminated: signal: segmentation fault (core dumped)",
            "subprocess.CalledProcessError: Command '['dot', '-Tsvg']' died with <Signals.SIGSEGV: 11>.",
            "2024-03-07T10:55:48.374277561Z stderr F panic: runtime error: invalid memory address or nil pointer"
            " dereference",
            "#  SIGSEGV (0xb) at pc=0x0000000116aa3d6e, pid=16574, tid=217347",
            "2024-03-06T17:53:31.052444Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to"
            " shutdown with signal 4 rank=0",
        ),
        near_misses=(
            "torch.utils.data: worker 2 exited cleanly after segmentation of the dataset",
            "Fatal Python error: Aborted",
            "ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown with signal 9 rank=0",
            "subprocess.CalledProcessError: Command 'x' died with <Signals.SIGKILL: 9>.",
            "cog.server.exceptions.FatalWorkerException: Prediction failed for an unknown reason. (exitcode -9)",
            "#  SIGBUS (0x7) at pc=0x00007f2b1c0e7e4b, pid=1, tid=0x00007f2b0dbfe700",
            "mysql_server caught panic: runtime error: invalid memory address or nil pointer dereference",
            'level=error msg="recovered from panic: runtime error: index out of range [3] with length 3"',
            "Signal (15) received.",
            "[k8s-slave03:00956] Signal: Terminated (15)",
            "terminate called after throwing an instance of 'c10::DistBackendError'",
        ),
    ),
    Signature(
        # CUDA errors a program or a tool reports and goes on from: TensorFlow skipping peer access for one pair of
        # GPUs ("W ... gpu_device.cc] Unable to enable peer access between device ordinals 2 and 5, status:
        # CUDA_ERROR_TOO_MANY_PEERS"), XLA's optional JIT service not made ("unable to create StreamExecutor for
        # CUDA:0: ..."), cuda-memcheck listing every API error, handled or not ("========= Program hit
        # cudaErrorPeerAccessUnsupported (error 217)")
        name="cuda-error-gone-on-from",
        kind=Kind.LOG_LINE,
        pattern=rx(
            r"Unable to enable peer access between device ordinals|unable to create StreamExecutor for"
            r"|========= Program hit cudaError"
        ),
        summary="a CUDA error the program went on from: {line}",
        phrases=("Unable to enable peer access", "unable to create StreamExecutor", "Program hit"),
        extract=whole,
        examples=(
            "W tensorflow/core/common_runtime/gpu/gpu_device.cc:1370] Unable to enable peer access between device"
            " ordinals 2 and 5, status: CUDA_ERROR_TOO_MANY_PEERS: peer mapping resources exhausted",
            '========= Program hit cudaErrorPeerAccessUnsupported (error 217) due to "peer access is not supported'
            ' between these two devices" on CUDA API call to cudaIpcOpenMemHandle.',
        ),
        near_misses=("RuntimeError: CUDA error: peer access is not supported between these two devices",),
    ),
    Signature(
        # a trainer that catches a CUDA OOM and goes on: fairseq's "| WARNING: ran out of memory with exception:
        # %s;\n Skipping batch" (0.x) and "OOM: Ran out of memory with exception: %s" (_log_oom, then "attempting
        # to recover"), its first releases' "| WARNING: ran out of memory on GPU #%d, skipping batch" and its
        # validation's "ran out of memory, retrying batch" (the THCudaCheck line printed as the error was raised
        # just before it is settled: parse.SETTLED), and the forks that copy them. An OOM it re-raises ends in its
        # own traceback's final line.
        name="cuda-oom-caught",
        kind=Kind.LOG_LINE,
        pattern=rx(
            r"[Rr]an out of memory with exception|[Rr]an out of memory(?: on GPU #\d{1,3})?, (?:skipping|retrying) batch"
        ),
        summary="the trainer caught a CUDA out-of-memory error and went on (skipped the batch or recovered)",
        phrases=("ran out of memory with exception", "skipping batch", "retrying batch"),
        examples=(
            "| WARNING: ran out of memory with exception: CUDA out of memory. Tried to allocate 1.50 GiB (GPU 0;"
            " 15.75 GiB total capacity; 11.71 GiB already allocated; 584.94 MiB free; 2.38 GiB cached);",
            "2023-01-05 10:11:12 | WARNING | fairseq.trainer | OOM: Ran out of memory with exception: CUDA out of"
            " memory. Tried to allocate 62.00 MiB (GPU 0; 15.90 GiB total capacity)",
            "| WARNING: ran out of memory on GPU #2, skipping batch",
            "| WARNING: ran out of memory, retrying batch",
        ),
        near_misses=(
            "RuntimeError: CUDA out of memory. Tried to allocate 62.00 MiB (GPU 0; 15.90 GiB total capacity)",
        ),
    ),
    Signature(
        name="cuda-oom",
        kind=Kind.CUDA_OOM,
        # PyTorch (CUDACachingAllocator "CUDA out of memory. Tried to allocate ..."), the CUDA runtime and driver
        # ("out of memory", CUDA_ERROR_OUT_OF_MEMORY), TensorFlow's BFC allocator ("OOM when allocating tensor
        # with shape[...]", a ResourceExhaustedError) and XLA/JAX ("RESOURCE_EXHAUSTED: Out of memory while
        # trying to allocate N bytes", "Resource exhausted: Out of memory").
        pattern=rx(
            # (not quoted in an OpenAI-style error body a server answered a request with, '{"error":{"message":"CUDA
            # out of memory...': the server's, which went on; the process printing it only received it)
            r'CUDA out of memory(?<!\{"error":\{"message":"CUDA out of memory)(?<!\{"error": \{"message": "CUDA out of memory)'
            r"(?<!\{'error': \{'message': 'CUDA out of memory)(?<!'object': 'error', 'message': 'CUDA out of memory)(?<!\"object\":\"error\",\"message\":\"CUDA out of memory)|"
            + _CUDA_ERROR
            + r"out of memory|torch\.cuda\.OutOfMemoryError|torch\.OutOfMemoryError"
            # (not TensorFlow's host allocator, "... on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu":
            # the process's own memory, not the GPU's)
            r"|CUDA_ERROR_OUT_OF_MEMORY|OOM when allocating tensor(?![^\n]{0,400}?device:CPU:\d{1,3} by allocator)"
            r"|(?i:resource[_ ]exhausted): Out\s{1,4}of memory"
            r"|error=2 : out of memory|cuda runtime error \(2\) : out of memory"
            # cuBLAS / cuDNN failing to allocate their workspace or handle
            r"|CUBLAS_STATUS_ALLOC_FAILED|CUDNN_STATUS_ALLOC_FAILED"
            # vLLM ("No available memory for the cache blocks"), SGLang ("Not enough memory. Please try to
            # increase --mem-fraction-static"): too little GPU memory left for the KV cache
            r"|No available memory for the cache blocks|Not enough memory\. Please try to increase --mem-fraction-static"
            # SGLang's scheduler finding its KV token pool exhausted mid-run ("Prefill out of memory. Try to lower
            # your batch size.", "Decode ...", later "Out of memory. ..."; logged, then it exits or raises);
            # TensorRT-LLM's PyTorch backend explaining its executor's start ("Executor creation failed due to
            # insufficient GPU memory.", then the component it could not create)
            r"|(?:(?:Prefill|Decode) out|Out) of memory\. Try to lower your batch size"
            r"|Executor creation failed due to insufficient GPU memory"
            # NVSHMEM's symmetric heap not getting its GPU memory (its NZ check "%s:%d: non-zero status: %d %s" with
            # NVSHMEMX_ERROR_OUT_OF_MEMORY, 2, after cuMemCreate; its CUDA check "cuda failed with out of memory")
            r"|non-zero status: 2 (?:cuMemCreate|cuMemAlloc|cudaMalloc)\w{0,20} failed|\] cuda failed with out of memory"
            # vLLM 0.4+: the model's context does not fit in what is left for the KV cache
            r"|is larger than the maximum number of tokens that can be stored in KV cache"
            # the CUDA runtime's and driver's own words as other C++ servers print them (FasterTransformer's "[FT]
            # [ERROR] CUDA runtime error: out of memory", torch's "CUDA driver error: out of memory")
            r"|CUDA (?:runtime|driver) error: out of memory"
            # TensorFlow failing to allocate the destination of a host-to-GPU copy; XLA's allocator by PjRt
            r"|Dst tensor is not initialized"
            # (not an autotuner's scratch request for one candidate, which it skips: tf-allocator-retry's)
            r"|(?:Resource exhausted|RESOURCE_EXHAUSTED): Failed to allocate request for"
            # XLA's BFC allocator failing a request (tsl bfc_allocator.cc "Allocator (%s) ran out of memory trying to
            # allocate %s (rounded to %d)requested by op %s"; TF's retry says "The caller indicates that this is not
            # a failure" instead)
            r"|ran out of memory trying to allocate [\d.]{1,10}[KMGT]?i?B \(rounded to \d{1,15}\)\s?requested by op"
            # MXNet's pooled storage ("cudaMalloc failed: out of memory"), glog's CHECK on cudaSuccess in Caffe and
            # others ("Check failed: error == cudaSuccess (2 vs. 0)  out of memory")
            r"|cudaMalloc (?:retry )?failed: out of memory|\(2 vs\. 0\)\s{1,4}out of memory"
            # (MXNet 2's pooled storage after freeing its pool: "cudaMalloc retry failed: out of memory")
            # XLA placing a constant in device memory ("Failed to allocate %d bytes for new constant"; not ONNX
            # Runtime's arena, "BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer", which
            # is the CPU provider's too and names no device)
            r"|Failed to allocate \d{1,15} bytes for new constant"
            # old RMM's thrust allocator throwing its own rmmError_t as if a CUDA error (RMM_ERROR_OUT_OF_MEMORY, 4:
            # CUDA 10.0's words for 4 "unspecified launch failure", 10.1+'s "driver shutting down")
            r"|rmm_allocator::allocate\(\): RMM_ALLOC: (?:unspecified launch failure|driver shutting down)"
            # TensorRT-LLM's CUDA check ("[TensorRT-LLM][ERROR] CUDA runtime error in %s: %s", the call or "error"
            # and cudaGetErrorString), TensorRT failing to create an execution context ("initializeExecutionContext
            # ... Error Code 2: OutOfMemory"; the builder's failed allocations for one tactic are warnings it skips;
            # not a request's error its executor went on from: _TRTLLM_NOT_GONE_ON)
            r"|CUDA runtime error in (?:" + _TRTLLM_NOT_GONE_ON + r")[^\n]{1,300}?: out of memory"
            r"|initializeExecutionContext[^\n]{0,100}?Error Code 2: OutOfMemory"
            # vLLM V1's KV cache check ("To serve at least one request with the model's max seq len (%d), (%.2f GiB
            # KV cache is needed, which is larger than the available KV cache memory (%.2f GiB)"); TGI's and LoRAX's
            # warm-up catching the OOM ("Not enough memory to handle %d prefill tokens. You need to decrease
            # `--max-batch-prefill-tokens`")
            r"|KV cache is needed, which is larger than the available KV cache memory"
            # torch's allocator under a memory fraction ("Allocation on device %d would exceed allowed memory. (out of
            # memory)")
            r"|would exceed allowed memory\. \(out of memory\)"
            # the RAPIDS Accelerator for Spark out of retries ("GpuSplitAndRetryOOM: GPU OutOfMemory: could not split
            # inputs and retry"); HAMi-core refusing an allocation over the container's share of a shared GPU
            # ("[HAMI-core ERROR (...)]: Device 0 OOM %lu / %lu", "cuMemoryAllocate failed res=2"); torch's OOM
            # message failing on a MIG slice that refuses NVML's process list (CUDACachingAllocator's
            # "NVML_SUCCESS == r INTERNAL ASSERT FAILED", pytorch#112377)
            # (GpuRetryOOM and RetryOOM alone are the retry framework's signal to try again, logged as it catches them
            # and in each retried task's loss: only a job aborted for one is a death; and not Spark's driver
            # recording one task attempt lost to a split that failed, "WARN TaskSetManager: Lost task ...", it retries)
            r"|(?m:^)(?![^\n]{0,120}\bWARN\b[^\n]{0,200}?\bLost task\b)[^\n]{0,300}?SplitAndRetryOOM: GPU OutOfMemory"
            r"|Job aborted due to stage failure: [^\n]{0,600}?RetryOOM: GPU OutOfMemory"
            r"|\[HAMI-core ERROR[^\]\n]{0,120}\]: (?:Device \d{1,3} OOM \d{1,20} / \d{1,20}|cuMemoryAllocate failed res=2\b)"
            r"|NVML_SUCCESS == r INTERNAL ASSERT FAILED at \"?[^\n]{0,200}?CUDACachingAllocator\.cpp"
            r"|Not enough memory to handle \d{1,9} prefill tokens"
            # PaddlePaddle's allocator ("Out of memory error on GPU %d. Cannot allocate %s memory on GPU %d, ...",
            # 1.7-2.x, in its ResourceExhaustedError summary or alone), its CUDA check ("(External) CUDA error(2),
            # out of memory.", "Cuda error(2)" in 2.1) and Fluid 1.x's "enforce allocating <= available failed" (the
            # bytes asked of the GPU against those free, gpu_info.cc); Caffe2's enforce on CUDA's status ("[enforce
            # fail at event_gpu.cc:17] error == cudaSuccess. 2 vs 0. Error at: ...: out of memory"); MindSpore's
            # device memory pool ("Malloc for kernel output failed, Memory isn't enough") and CUDA calls ("The
            # cudaStreamCreateWithFlags failed, ret[2], out of memory"); OneFlow before 0.9's uncaught exception
            # ("oneflow::RuntimeException' / what():  Error: out of memory", its CUDA allocator's words)
            r"|Out of memory error on GPU \d{1,3}\. Cannot allocate|(?i:cuda) error\(2\), out of memory"
            r"|enforce allocating <= available failed"
            r"|error == cudaSuccess\. 2 vs 0\.[^\n]{0,400}?out of memory"
            r"|Malloc for kernel (?:input|output|workspace) failed, Memory isn't enough"
            r"|The cuda\w{1,40} failed, ret\[2\], out of memory"
            r"|oneflow::RuntimeException'\s{0,200}what\(\):\s{1,4}Error: out of memory"
            # CUDA's own name for it in any library's words (RAPIDS' RMM "std::bad_alloc: out_of_memory: CUDA error
            # at: .../cuda_memory_resource.hpp:68: cudaErrorMemoryAllocation out of memory", XGBoost's "Memory
            # allocation error on worker 0: std::bad_alloc: cudaErrorMemoryAllocation: out of memory"); RMM's pool
            # unable to grow ("RMM failure at: .../pool_memory_resource.hpp:179: Maximum pool size exceeded"), its
            # device resource's bad_alloc even where a paste cut the words off; Thrust's ("parallel_for failed: out of
            # memory"); cuML's allocator ("FAIL: call='cudaMalloc(&ptr, n)'. Reason:out of memory")
            # (not RMM's pinned host memory, /mr/host/; not another CUDA error its device resource rethrows as bad_alloc,
            # "cudaErrorIllegalAddress" from an earlier kernel)
            r"|(?m:^)(?![^\n]{0,400}/mr/host/)[^\n]{0,400}?cudaErrorMemoryAllocation"
            r"|RMM failure at:?\s?\S{0,300}?: Maximum pool size exceeded"
            r"|std::bad_alloc: (?:out_of_memory: )?CUDA error at: \S{0,300}?/mr/device/\w{1,40}_memory_resource\.hpp"
            r"(?!:\d{1,6}: cudaError(?!MemoryAllocation))"
            # LightGBM's and XGBoost's CUDA checks on an allocation ("[LightGBM] [Fatal] [CUDA] out of memory %s %d",
            # dh::safe_cuda's "updater_gpu_hist.cu: 567: out of memory")
            r"|\[LightGBM\] \[Fatal\] \[CUDA\] out of memory|\.cuh?: \d{1,6}: out of memory"
            r"|CUDA error 2 at \S{1,300}:\d{1,6}: out of memory"
            r"|Failed: (?i:cuda) error \S{1,300}:\d{1,6}\s{1,4}'out of memory'|Cuda failure \S{1,200}\.cu:\d{1,6}: 'out of"
            r" memory'|CUDA kernel failed : out of memory"
            r"|CU(?:SOLVER|SPARSE)_STATUS_ALLOC_FAILED|CURAND_STATUS_ALLOCATION_FAILED"
            # NVIDIA HPL's and nccl-tests' CUDA checks with cudaErrorMemoryAllocation ("CUDART Error: %s = 2 (out of
            # memory)", "Test CUDA failure %s:%d 'out of memory'")
            r"|CUDART Error: [^\n]{1,400}? = 2 \(out of memory\)|Test CUDA failure \S{1,200}:\d{1,6}\s{1,4}'out of memory'"
            # programs in other languages: CUDA.jl's OutOfGPUMemoryError ("ERROR: Out of GPU memory"), dlib's
            # cuda_error ("Error while calling cudaMalloc(...) ... code: 2, reason: out of memory"), TensorRT 4's
            # "Cuda Error in allocate: 2", C++ checks by name ('Cuda error in func "%s" at line %d: out of memory.',
            # NanoVDB's "CUDA error 2: out of memory (%s:%d)"), unixpickle/cuda's Go allocator ("BFC alloc: out of memory"),
            # MATLAB's gpuArray ("Out of memory on device.")
            r"|\bOut of GPU memory\b|cudaMalloc(?!Host)[^\n]{0,300}?code: 2, reason: out of memory|Cuda Error in allocate: 2\b"
            r"|Cuda error in func \"[^\"\n]{1,100}\" at line \d{1,6}: out of memory|CUDA error 2: out of memory"
            r"|BFC alloc: out of memory|Out of memory on device\."
            r"|parallel_for failed: out of memory|call='cudaMalloc\([^'\n]{0,100}\)'\. Reason: ?out of memory"
            # CuPy's memory pool ("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 25,600,000 bytes
            # (allocated so far: 3,635,267,072 bytes).", before v6 "out of memory to allocate %d bytes (total %d
            # bytes)"), ONNX Runtime's CUDA check ("CUDA failure 2: out of memory ; GPU=0 ; ..."), CatBoost's GPU pool
            # (NCudaLib::TOutOfMemoryError), FAISS's ("details: CUDA error 2 out of memory", "cudaMalloc error out of
            # memory [2]", "Failed to cudaMalloc 16000000000 bytes"), OpenCV's device memory ("gpu_mat.cu:116: error:
            # (-217:Gpu API call) out of memory in function 'allocate'"; not its pinned host memory, cuda_host_mem.cpp),
            # OpenCL's own name for a device buffer it could not make (CL_MEM_OBJECT_ALLOCATION_FAILURE, boost.compute's
            # "Memory Object Allocation Failure": LightGBM's GPU learner), DALI's decoders ("CUDA allocation failed",
            # "Can't allocate %d bytes on device %d"), TensorRT's builder ("Cuda Error in allocate: 2 (out of memory)")
            r"|Out of memory allocating [\d,]{1,30} bytes \(allocated so far: [\d,]{1,30} bytes\)"
            r"|out of memory to allocate \d{1,20} bytes \(total \d{1,20} bytes\)|CUDA failure 2: out of memory"
            r"|NCudaLib::TOutOfMemoryError|CUDA error 2 out of memory|cudaMalloc error out of memory \[2\]"
            r"|Failed to cudaMalloc \d{1,20} bytes"
            r"|(?m:^)(?![^\n]{0,400}cuda_host_mem\.cpp)[^\n]{0,400}?\(-217:Gpu API call\) out of memory"
            r"|Memory Object Allocation Failure|(?m:^)CUDA allocation failed[ \t]*$"
            r"|Can't allocate \d{1,20} bytes on device \d{1,3}|Cuda Error in allocate: 2 \(out of memory\)"
        ),
        extract=cuda_oom,
        summary="GPU out of memory (tried to allocate {tried})",
        phrases=(
            "CUDA out of memory",
            "CUDA error: out of memory",  # (also "CUDA Error: out of memory": the analyzer lower-cases it)
            "OutOfMemoryError",
            "CUDA_ERROR_OUT_OF_MEMORY",
            "OOM when allocating tensor",
            "RESOURCE_EXHAUSTED: Out of memory",
            "Resource exhausted: Out of memory",
            "error=2 : out of memory",
            "cuda runtime error (2) : out of memory",
            "CUBLAS_STATUS_ALLOC_FAILED",
            "CUDNN_STATUS_ALLOC_FAILED",
            "No available memory for the cache blocks",
            "Please try to increase --mem-fraction-static",
            "out of memory. Try to lower your batch size",
            "Executor creation failed due to insufficient GPU memory",
            "cuMemCreate failed",
            "cuda failed with out of memory",
            "maximum number of tokens that can be stored in KV cache",
            "runtime error: out of memory",
            "driver error: out of memory",
            "Dst tensor is not initialized",
            "CUDA runtime error in",
            "Error Code 2: OutOfMemory",
            "larger than the available KV cache memory",
            "would exceed allowed memory",
            "GPU OutOfMemory",
            "HAMI-core ERROR",
            "NVML_SUCCESS == r INTERNAL ASSERT FAILED",
            "prefill tokens",
            "Failed to allocate request for",
            "cudaMalloc failed: out of memory",
            "cudaMalloc retry failed: out of memory",
            "bytes for new constant",
            "RMM_ALLOC",
            "vs. 0) out of memory",
            "Out of memory error on GPU",
            "error(2), out of memory",
            "enforce allocating <= available failed",
            "cudaSuccess. 2 vs 0",
            "Memory isn't enough",
            "ret[2], out of memory",
            "what(): Error: out of memory",
            "cudaErrorMemoryAllocation",
            "Maximum pool size exceeded",
            "memory_resource.hpp",
            "parallel_for failed: out of memory",
            "Reason:out of memory",
            "Out of memory allocating",
            "out of memory to allocate",
            "CUDA failure 2: out of memory",
            "TOutOfMemoryError",
            "CUDA error 2 out of memory",
            "cudaMalloc error out of memory",
            "Failed to cudaMalloc",
            "Gpu API call) out of memory",
            "Memory Object Allocation Failure",
            "CUDA allocation failed",
            "bytes on device",
            "Cuda Error in allocate: 2",
            "CUSOLVER_STATUS_ALLOC_FAILED",
            "CUSPARSE_STATUS_ALLOC_FAILED",
            "CURAND_STATUS_ALLOCATION_FAILED",
            "kernel failed : out of memory",
            "Out of GPU memory",
            "reason: out of memory",
            "Cuda error in func",
            "CUDA error 2: out of memory",
            "BFC alloc: out of memory",
            "Out of memory on device",
            "RetryOOM",
            "LightGBM Fatal CUDA out of memory",
        ),
        examples=(
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has a total capacity of"
            " 79.11 GiB of which 1.48 GiB is free.",
            "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity)",
            "RuntimeError: CUDA error: out of memory",
            "THCudaCheck FAIL file=/pytorch/aten/src/THC/generic/THCStorage.cu line=58 error=2 : out of memory",
            "ResourceExhaustedError: OOM when allocating tensor with shape[128,128,109,109] and type float on"
            " /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate"
            " 17179869184 bytes.",
            "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
            "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when"
            " initializing the engine.",
            "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be"
            " stored in KV cache (7344).",
            "  what():  [FT][ERROR] CUDA runtime error: out of memory /workspace/src/fastertransformer/utils/allocator.h:220",
            "RuntimeError: CUDA driver error: out of memory",
            "tensorflow.python.framework.errors_impl.InternalError: Dst tensor is not initialized.",
            "mxnet.base.MXNetError: [11:18:15] src/storage/./pooled_storage_manager.h:157: cudaMalloc failed: out of"
            " memory",
            "F0903 14:31:26.106397 92421 syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs. 0)  out of memory",
            "E pjrt_stream_executor_client.cc:1981] Execution of replica 0 failed: Resource exhausted: Failed to"
            " allocate request for 32.00MiB (33554432B) on device ordinal 0",
            "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
            "RuntimeError: [TensorRT-LLM][ERROR] CUDA runtime error in error: out of memory"
            " (/home/jenkins/agent/workspace/LLM/main/L0_PostMerge/tensorrt_llm/cpp/tensorrt_llm/runtime/ipcUtils.cpp:48)",
            "[TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory"
            " (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)",
            "ERROR - [executionContext.cpp::initializeExecutionContext::644] Error Code 2: OutOfMemory (Requested size"
            " was 149635638784 bytes.)",
            "22.5 GiB KV cache is needed, which is larger than the available KV cache memory (17.39 GiB).",
            "RuntimeError: Not enough memory to handle 1024 prefill tokens. You need to decrease"
            " `--max-batch-prefill-tokens`",
            "com.nvidia.spark.rapids.jni.SplitAndRetryOOM: GPU OutOfMemory: could not split inputs and retry",
            "2018-10-02 21:03:52,196 ERROR - container_support.training - uncaught exception during training: CUDA out"
            " of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity)",
            "[HAMI-core ERROR (pid:25 thread=139892685178688 allocator.c:53)]: Device 0 OOM 27147995136 / 25757220864",
            'RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "/pytorch/c10/cuda/CUDACachingAllocator.cpp":1154,'
            " please report a bug to PyTorch.",
            "Out of memory error on GPU 0. Cannot allocate 25.002197MB memory on GPU 0, available memory is only"
            " 15.187500MB.",
            "OSError: (External) CUDA error(2), out of memory.",
            "OSError: (External) Cuda error(2), out of memory. [Advise: The API call failed because it was unable to"
            " allocate enough memory to perform the requested operation. ]",
            "paddle.fluid.core.EnforceNotMet: enforce allocating <= available failed, 10513462067 > 1369702144",
            "RuntimeError: [enforce fail at event_gpu.cc:17] error == cudaSuccess. 2 vs 0. Error at:"
            " /home/sd/pytorch/caffe2/core/event_gpu.cc:17: out of memory",
            "RuntimeError: Malloc for kernel output failed, Memory isn't enough, node:Default/Cast-op446",
            "The cudaStreamCreateWithFlags failed, ret[2], out of memory",
            "terminate called after throwing an instance of 'oneflow::RuntimeException'\n  what():  Error: out of"
            " memory",
            "MemoryError: std::bad_alloc: CUDA error at: ../include/rmm/mr/device/cuda_memory_resource.hpp:68:"
            " cudaErrorMemoryAllocation out of memory",
            "distributed.utils - ERROR - std::bad_alloc: CUDA error at: /env/include/rmm/mr/device/cuda_memory_resource.hpp",
            "MemoryError: std::bad_alloc: RMM failure at:/src/rmm/include/rmm/mr/device/pool_memory_resource.hpp:179:"
            " Maximum pool size exceeded",
            "  what():  parallel_for failed: out of memory",
            "RuntimeError: Exception occured! file=/w/cpp/include/cuml/common/cuml_allocator.hpp line=109: FAIL:"
            " call='cudaMalloc(&ptr, n)'. Reason:out of memory",
            "Exception in main training loop: Out of memory allocating 25,600,000 bytes (allocated so far:"
            " 3,635,267,072 bytes).",
            "cupy.cuda.memory.OutOfMemoryError: out of memory to allocate 250092544 bytes (total 10824923136 bytes)",
            "onnxruntime::CudaCall CUDA failure 2: out of memory ; GPU=0 ; hostname=h ; expr=cudaStreamCreate(&stream);",
            "(NCudaLib::TOutOfMemoryError) /src/catboost/catboost/cuda/cuda_lib/memory_pool/stack_like_memory_pool.h:303:"
            " Error: Out of memory. Requested 8880 MB; Free 5902.061425 MB",
            "Faiss assertion 'err__ == cudaSuccess' failed in virtual void"
            " faiss::gpu::StandardGpuResourcesImpl::initializeForDevice(int) at StandardGpuResources.cpp:312; details:"
            " CUDA error 2 out of memory",
            "Faiss assertion 'cudaMalloc(p, size) == cudaSuccess' failed in void faiss::gpu::allocMemorySpace("
            "faiss::gpu::MemorySpace, void**, size_t) at utils/MemorySpace.cpp:20; details: Failed to cudaMalloc"
            " 16000000000 bytes",
            "  what():  OpenCV(3.4.13) /home/u/opencv-3.4.13/modules/core/src/cuda/gpu_mat.cu:116: error: (-217:Gpu API"
            " call) out of memory in function 'allocate'",
            "  what():  Memory Object Allocation Failure",
            "Error when executing Mixed operator ImageDecoder encountered:\nCUDA allocation failed",
            "[LightGBM] [Fatal] [CUDA] out of memory /src/cuda/cuda_utils.cpp 21",
            "/xgboost/src/tree/updater_gpu_hist.cu: 567: out of memory",
            "Can't allocate 129499136 bytes on device 0.",
            "[E] [TRT] ../rtSafe/safeRuntime.cpp (25) - Cuda Error in allocate: 2 (out of memory)",
            "F0902 13:30:41.691910 7302 math_functions.cu:359] Check failed: status == CURAND_STATUS_SUCCESS (102 vs. 0)"
            "  CURAND_STATUS_ALLOCATION_FAILED",
            "RuntimeError: cusolver error: CUSOLVER_STATUS_ALLOC_FAILED, when calling `cusolverDnCreate(handle)`",
            "ERROR: Out of GPU memory",
            "  what():  Error while calling cudaMalloc(&data, new_size*sizeof(float)) in file ../dlib-19.4/dlib/dnn/"
            "gpu_data.cpp:191. code: 2, reason: out of memory",
            "runtime.cpp (16) - Cuda Error in allocate: 2",
            'Cuda error in func "cuda_init_device" at line 33: out of memory.',
            "CUDA error 2: out of memory (/src/nanovdb/nanovdb/cuda/GridHandle.cuh:83)",
            "panic: BFC alloc: out of memory",
            "HPL ERROR: CUDART Error: cudaMalloc( &dev_A, size) = 2 (out of memory) on node1 at (hpl.cu:100)",
            "Error using gpuArray/max\nOut of memory on device. To view more detail about available memory on the GPU,"
            " use 'gpuDevice()'.",
            "Job aborted due to stage failure: Task 9 in stage 2.0 failed 8 times, most recent failure: Lost task 9.7 in"
            " stage 2.0 (TID 2207) (10.0.0.4 executor 9): com.nvidia.spark.rapids.jni.GpuRetryOOM: GPU OutOfMemory",
            "thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Torch(\"CUDA out of memory. Tried"
            " to allocate 100.00 MiB (GPU 0; 7.78 GiB total capacity; 6.83 GiB already allocated",
            "thread 'main' panicked at 'Unable to warmup model: Generation(\"Allocation on device 0 would exceed allowed"
            " memory. (out of memory)\")', router/src/main.rs:216:18",
            "[2025-07-08 19:47:15] ERROR scheduler.py:1820: Decode out of memory. Try to lower your batch size.",
            "  what():  rmm_allocator::allocate(): RMM_ALLOC: unspecified launch failure",
            "[07/08/2025-19:47:15] [TRT-LLM] [RANK 1] [E] Failed to initialize executor on rank 1: Executor creation"
            " failed due to insufficient GPU memory.",
        ),
        near_misses=(
            "torch.cuda.memory_summary(): 71.2 GiB allocated, 4.1 GiB reserved (out of 80 GiB)",
            "grpc: RESOURCE_EXHAUSTED: Received message larger than max (4194312 vs. 4194304)",
            '{"error":{"message":"CUDA out of memory. Tried to allocate 20.00 MiB.","type":"BadRequestError","code":400}}',
            "INFO RmmRapidsRetryIterator$RmmRapidsRetryIterator: got a throwable in RmmRapidsRetryIterator.next():\n"
            "com.nvidia.spark.rapids.jni.GpuRetryOOM: GPU OutOfMemory",
            "WARN TaskSetManager: Lost task 82.0 in stage 2.0 (TID 294) (10.28.9.113 executor 0):"
            " com.nvidia.spark.rapids.jni.GpuSplitAndRetryOOM: GPU OutOfMemory: could not split inputs and retry",
            "Error while calling cudaMallocHost(&data, new_size*sizeof(float)) in file gpu_data.cpp:185. code: 2,"
            " reason: out of memory",
            "[TensorRT-LLM][ERROR] Encountered an error in forwardAsync function: [TensorRT-LLM][ERROR] CUDA runtime"
            " error in ::cudaMallocAsync(ptr, n, stream): out of memory (/src/cudaAllocator.cpp:52)",
        ),
    ),
    Signature(
        name="cuda-error",
        kind=Kind.CUDA_ERROR,
        # torch's "CUDA error: %s" (cudaGetErrorString), the THC era's "cuda runtime error (%d) : %s at
        # file:line", and the driver API's names (CUDA_ERROR_ECC_UNCORRECTABLE in TensorFlow's stream executor).
        pattern=rx(
            _CUDA_ERROR + r"(?P<error>[^\n]*[^\s])[ \t]*$|(?P<cuda_code>cudaError[A-Z]\w+)"
            # TensorRT-LLM's check ("[TensorRT-LLM][ERROR] CUDA runtime error in %s: %s (file:line)")
            # (inside "Encountered an error in forward(Async) function: " a request's error the executor went on from,
            # unless it is one that stays in the CUDA context until the process restarts)
            # (the prefix first: a pattern that opens on lookarounds tries them at every position of a line)
            r"|\[TensorRT-LLM\]\[ERROR\] CUDA runtime error in (?:"
            + _TRTLLM_NOT_GONE_ON
            + r"|(?=[^\n]{1,286}?: (?:an illegal memory access was encountered|unspecified launch failure|misaligned address"
            r"|an illegal instruction was encountered)))"
            r"[^\n]{1,300}?: (?P<trt_error>[^\n(]{0,200}?[^\s(])"
            r"(?: \([^\n]{1,300}\))?[ \t]*$"
            r"|cuda runtime error \((?P<runtime_code>\d{1,4})\) : (?P<runtime_error>[^\n]{0,200}?[^\s])"
            r"(?: at [^\s]{1,300})?[ \t]*$"
            # XGBoost's dh::safe_cuda ("%s: %d: %s", the file, line and cudaGetErrorString's words: "gpu_predictor.cu:
            # 236: an illegal memory access was encountered"), LightGBM's CUDA check ("[LightGBM] [Fatal] [CUDA] %s %s
            # %d")
            r"|\.cuh?: \d{1,6}: (?P<file_error>an illegal memory access was encountered|unspecified launch failure"
            r"|misaligned address|an illegal instruction was encountered|device-side assert triggered)"
            r"|\[LightGBM\] \[Fatal\] \[CUDA\] (?P<lgbm_error>[^\n]{1,200}?) \S{1,300}\.(?:cu|cpp|h) \d{1,6}\s*$"
            # ggml's CUDA_CHECK ("CUDA error %d at %s:%d: %s"), the "Failed: Cuda error %s:%d '%s'" of DeepEP's and
            # vLLM's custom all-reduce checks (the words on the same line or the next), the CUDA samples' "Cuda
            # failure %s:%d: '%s'"
            r"|CUDA error \d{1,4} at \S{1,300}:\d{1,6}: (?P<ggml_error>[^\n]{1,200})"
            # (vLLM's older check without "Cuda error": "Failed: %s:%d '%s'", a .cu or .cuh file's)
            r"|Failed: (?:(?i:cuda) error \S{1,300}|\S{1,300}\.cuh?):\d{1,6}(?:\s{1,4}'(?P<failed_error>[^'\n]{1,200})')?"
            # NVSHMEM's CUDA_RUNTIME_CHECK ("[%s:%d] cuda failed with %s")
            r"|\] cuda failed with (?P<nvshmem_error>(?!out of memory)[^\n]{0,200}?[^\s])[ \t]*$"
            # PointNet++'s and other extensions' CUDA_CHECK_ERRORS ("CUDA kernel failed : %s\n%s at L:%d in %s")
            r"|CUDA kernel failed : (?P<kernel_error>[^\n]{1,200})"
            r"|Cuda failure \S{1,200}\.cu:\d{1,6}: '(?P<sample_failure>[^'\n]{1,200})'"
            # PaddlePaddle 2.x: "(External) CUDA error(%d), %s." (cudaGetErrorString's words, then its hint)
            r"|(?i:cuda) error\((?P<paddle_code>\d{1,4})\), (?P<paddle_error>[^\n]{0,200}?[^\s.])\.?[ \t]*$"
            # torch 0.x-1.x THC: "THCudaCheck FAIL file=%s line=%i error=%i : %s", printed before THError raises
            # "cuda runtime error (%d) : %s" (read above when it comes). Not THCGeneral.cpp's "invalid argument"
            # (error=11) of 0.4-1.1 on newer GPUs and CUDA: raised within the library and caught there, the run
            # goes on (pytorch/pytorch#15797)
            r"|THCudaCheck FAIL file=(?!\S{0,300}THCGeneral\.cpp line=\d{1,6} error=11 )\S{1,300} line=\d{1,6}"
            r" error=(?P<thc_code>\d{1,4}) : (?P<thc_error>[^\n]{0,200}?[^\s])"
            r"[ \t]*$"
            r"|(?P<driver_error>CUDA_ERROR_(?!OUT_OF_MEMORY)[A-Z_]{2,60})(?:: (?P<driver_detail>[^\n]{1,200}))?"
            # cuDNN and cuBLAS status codes other than an allocation (cuda-oom's): "CUDNN_STATUS_EXECUTION_FAILED"
            r"|(?P<lib_status>CU(?:DNN|BLAS|SOLVER|SPARSE|RAND)_STATUS_(?!ALLOC_FAILED|ALLOCATION_FAILED|SUCCESS)[A-Z_]{3,40})"
            # cudaErrorDevicesUnavailable in every wrapper (TensorFlow's implicit initialization "Status: ...", glog's
            # "Check failed: error == cudaSuccess (46 vs. 0)  ...", an application's own check)
            r"|(?P<busy_error>all CUDA-capable devices are busy or unavailable)"
            # NVIDIA's HPL ("HPL ERROR: CUDART Error: %s = %d (%s) on %s at (%s)": the call, its code and
            # cudaGetErrorString's words)
            r"|CUDART Error: [^\n]{1,400}? = (?P<cudart_code>\d{1,4}) \((?P<cudart_error>[^)\n]{1,200})\)"
            # DCGM's diagnostic (NVVS: "API call %s failed for GPU%u: '%s'", cudaGetErrorString's words)
            r"|API call cu\w{1,60} failed(?: for GPU ?\d{1,3})?: '(?P<nvvs_error>[^'\n]{1,200})'"
            # nccl-tests: "Test CUDA failure %s:%d '%s'"
            r"|Test CUDA failure \S{1,200}:\d{1,6}\s{1,4}'(?P<test_error>[^'\n]{1,200})'"
            # the CUDA samples' vectorAdd, the GPU Operator's CUDA validator: "Failed to allocate device vector A
            # (error code %s)!" with cudaGetErrorString's words (which may hold parentheses: "device(s) is/are")
            r"|Failed to (?:allocate device vector|copy vector|launch vectorAdd kernel|free device vector)[^\n]{0,60}?"
            r" \(error code (?P<sample_error>[^\n]{1,200}?)\)!"
            # the CUDA samples' check macro as bitsandbytes and others print it: "Error %s at line %d in file %s"
            # (only with one of cudaGetErrorString's own strings: "Error opening config at line 3" is no CUDA error)
            r"|^Error (?P<check_error>invalid device ordinal|invalid argument|out of memory|an illegal memory access was"
            r" encountered|unspecified launch failure|invalid device function|misaligned address|initialization error"
            r"|invalid configuration argument|too many resources requested for launch|no kernel image is available for"
            r" execution on the device|device-side assert triggered|uncorrectable ECC error encountered"
            r"|operation not supported|invalid resource handle) at line \d{1,6} in file \S{1,300}\.(?:c|cu|cpp|cc)\b",
            re.MULTILINE,
        ),
        extract=cuda_error,
        summary="CUDA error: {error}",
        phrases=(
            "CUDA error",
            "cuda runtime error",
            "THCudaCheck FAIL",
            "Test CUDA failure",
            "all CUDA-capable devices are busy or unavailable",
            "at line",
            "device vector",
            "copy vector",
            "vectorAdd kernel",
            "an illegal memory access was encountered",
            "LightGBM Fatal CUDA",
            "CUDART Error",
            "API call",
            "custom_all_reduce.cuh",
            "cuda failed with",
        ),
        # (cuDNN and cuBLAS status codes are one token each to the analyzer)
        regexp="cudaerror[a-z]+",
        # (one token each to the analyzer)
        wildcards=(
            "cuda_error_*",
            "cudnn_status_*",
            "cublas_status_*",
            "cusolver_status_*",
            "cusparse_status_*",
            "curand_status_*",
        ),
        examples=(
            "RuntimeError: CUDA error: uncorrectable ECC error encountered\nCompile with `TORCH_USE_CUDA_DSA` to"
            " enable device-side assertions.",
            "RuntimeError: CUDA error: unspecified launch failure",
            "RuntimeError: CUDA error: an illegal memory access was encountered",
            "Error invalid device ordinal at line 359 in file /home/tim/git/bitsandbytes/csrc/pythonInterface.c",
            "CUDA Error Prev: uncorrectable ECC error encountered: Success",
            "F0426 17:52:54.043815 30811 hl_cuda_device.cc:565] Check failed: cudaSuccess == cudaStat (0 vs. 39) Cuda"
            " Error: uncorrectable ECC error encountered",
            "CUDA error: uncorrectable NVLink error detected during the execution",
            "RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered at"
            " /pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265",
            "E tensorflow/stream_executor/cuda/cuda_event.cc:29] Error polling for event status: failed to query"
            " event: CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable ECC error encountered",
            "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingHostAllocator.cpp line=265 error=77 : an illegal"
            " memory access was encountered",
            "Test CUDA failure common.cu:1007\n'CUDA-capable device(s) is/are busy or unavailable'",
            "Failed to allocate device vector A (error code CUDA-capable device(s) is/are busy or unavailable)!",
            "E tensorflow/stream_executor/cuda/cuda_dnn.cc:81] CUDNN_STATUS_EXECUTION_FAILED",
            "ExternalError: CUDA error(700), an illegal memory access was encountered. ",
            "  what():  [21:57:25] /x/include/xgboost/../../src/common/common.h:41: /x/src/predictor/gpu_predictor.cu:"
            " 236: an illegal memory access was encountered",
            "[LightGBM] [Fatal] [CUDA] an illegal memory access was encountered"
            " /home/u/src/io/cuda/cuda_column_data.cpp 67",
            "HPL ERROR: CUDART Error: cudaMemcpyAsync( a, b, n, cudaMemcpyDeviceToDevice, s) = 700 (an illegal memory"
            " access was encountered) on gpu4 at (getrfs_mp.cu:750)",
            "VLLM: Failed: /workspace/csrc/custom_all_reduce.cuh:368 'invalid argument'",
            "[/nvshmem/src/host/coll/barrier/barrier.cpp:21] cuda failed with an illegal memory access was encountered ",
        ),
        near_misses=(
            "CUDA_VISIBLE_DEVICES=0,1,2,3 error_log=/tmp/err.log",
            "cuda runtime version 12.4",
            "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=405 error=11 : invalid argument",
            "Failed: connect to registry.local:5000 'timed out'",
        ),
    ),
    Signature(
        # the JVM's own limits (java.lang.OutOfMemoryError for the heap, GC time, direct buffers, metaspace) and its
        # native allocation failing ("There is insufficient memory for the Java Runtime Environment to continue"):
        # the program's sizing, not a container's limit (that kills the process: OOMKilled); its words name memory,
        # yet it is no reaction (words.OWN_EXCEPTION_SIGNATURES)
        name="jvm-memory-limit",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(
            # (not Spark's driver recording one task attempt lost to it: "WARN TaskSetManager: Lost task ...", it retries)
            r"^(?![^\n]{0,120}\bWARN\b[^\n]{0,200}?\bLost task\b)[^\n]{0,300}?"
            r"(?P<message>java\.lang\.OutOfMemoryError: (?:Java heap space|GC overhead limit exceeded|Direct buffer memory"
            r"|Cannot reserve \d{1,20} bytes of direct buffer memory|Metaspace|Compressed class space"
            r"|Requested array size exceeds VM limit)|There is insufficient memory for the Java Runtime Environment)",
            re.MULTILINE,
        ),
        summary="the JVM ran out of its own memory: {message}",
        phrases=("java.lang.OutOfMemoryError", "insufficient memory for the Java Runtime Environment"),
        fixed={"exception": "java.lang.OutOfMemoryError"},
        examples=(
            "java.lang.OutOfMemoryError: GC overhead limit exceeded",
            "# There is insufficient memory for the Java Runtime Environment to continue.",
            "java.lang.OutOfMemoryError: Cannot reserve 4194304 bytes of direct buffer memory (allocated: 1955056699,"
            " limit: 1957691392)",
        ),
        near_misses=(
            "-XX:+HeapDumpOnOutOfMemoryError set; java.lang.OutOfMemoryError handler installed",
            "WARN TaskSetManager: Lost task 0.0 in stage 8.0 (TID 12, 192.168.56.198, executor 1):"
            " java.lang.OutOfMemoryError: Java heap space",
        ),
    ),
    Signature(
        # the program out of processes, threads or files under the container's limits (pids.max, ulimit -u and -n),
        # as the runtimes that die of it say so: libgomp ("libgomp: Thread creation failed: %s", then exit), Go's
        # runtime ("runtime: failed to create new OS thread (have %d already; errno=%d)", "fatal error: newosproc"),
        # OpenBLAS ("OpenBLAS blas_thread_init: pthread_create failed for thread %ld of %d: %s", then raise(SIGINT)),
        # a shell giving up ("bash: fork: Resource temporarily unavailable"; its "fork: retry:" it goes on from),
        # libzmq's assertion on its descriptors ("Too many open files (signaler.cpp:330)", then abort). After the
        # CUDA signatures: the program's own limits, not the GPU's
        name="process-limits",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(
            r"(?P<message>libgomp: Thread creation failed: Resource temporarily unavailable"
            r"|runtime: failed to create new OS thread \(have \d{1,9} already; errno=11\)|fatal error: newosproc"
            r"|blas_thread_init: pthread_create(?: failed for thread \d{1,6} of \d{1,6})?: (?:Resource temporarily"
            r" unavailable|Operation not permitted)|runtime/cgo: pthread_create failed: Resource temporarily unavailable"
            r"|\bfork: Resource temporarily unavailable|Too many open files \([\w./-]{1,200}\.cpp:\d{1,6}\))"
        ),
        summary="the program ran out of processes, threads or files under the container's limits: {message}",
        phrases=(
            "Thread creation failed",
            "failed to create new OS thread",
            "newosproc",
            "pthread_create",
            "fork: Resource temporarily unavailable",
            "Too many open files",
        ),
        fixed={"exception": "process limits"},
        examples=(
            " libgomp: Thread creation failed: Resource temporarily unavailable",
            "runtime: failed to create new OS thread (have 1306 already; errno=11)\nruntime: may need to increase max"
            " user processes (ulimit -u)\nfatal error: newosproc",
            "OpenBLAS blas_thread_init: pthread_create failed for thread 22 of 48: Resource temporarily unavailable",
            "-bash: fork: Resource temporarily unavailable",
            "Too many open files (signaler.cpp:330)",
            "Too many open files (bundled/zeromq/src/epoll.cpp:39)",
            "OpenBLAS blas_thread_init: pthread_create failed for thread 1 of 6: Operation not permitted",
            "OpenBLAS blas_thread_init: pthread_create: Resource temporarily unavailable",
            "runtime/cgo: pthread_create failed: Resource temporarily unavailable",
        ),
        near_misses=(
            "-bash: fork: retry: Resource temporarily unavailable",
            "runtime: failed to create new OS thread (have 12 already; errno=12)",
        ),
    ),
    Signature(
        # the program's own failures that print no exception class: torch's Module.load_state_dict message on its
        # own ("Error(s) in loading state_dict for %s:"), a failed check of torch's C++ core in an uncaught
        # c10::Error ("what():  [enforce fail at inline_container.cc:N] . unexpected pos ...", the checkpoint
        # writer), ggml's assertion (GGML_ASSERT, which aborts), llama.cpp not knowing the model's architecture,
        # SageMaker's legacy training container reporting the program's exception ("uncaught exception during
        # training"), torch.export's guard on a data-dependent value (GuardOnDataDependentSymNode, a RuntimeError
        # whose name says no Error). After the CUDA signatures: the same line may quote an OOM or a CUDA error
        name="own-failure-unnamed",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(
            r"(?P<message>Error\(s\) in loading state_dict for [\w.]{1,100}:"
            r"|what\(\):\s{1,4}\[enforce fail at [^\]\n]{1,200}\][^\n]{0,200}"
            r"|GGML_ASSERT\([^\n]{1,300}?\) failed"
            r"|unknown model architecture: '[^'\n]{1,60}'"
            # (as the traceback's final line, not torch's recording of the expression at ERROR before it raises)
            r"|(?:^|\[rank\d{1,6}\]:\s?)(?:[\w.]{1,200}\.)?GuardOnDataDependentSymNode: [^\n]{1,300}"
            # an uncaught exception ending a JVM's main thread ("Exception in thread \"main\" %s"; not Spark's
            # SparkUserAppException, which relays the exit code of the application it ran)
            r"|Exception in thread \"main\" (?![\w.]{0,100}SparkUserAppException)[\w.$]{1,200}(?:Exception|Error)\b[^\n]{0,300}"
            r"|uncaught exception during training"
            # Ollama's model runner ending with an error exit (Go's "exit status %d"; a signal is said otherwise)
            r"|runner process has terminated: exit status (?:[1-9]\d?|1[01]\d|12[0-5])\b"
            # the interpreter or a shell unable to run the program's script ("python: can't open file '%s': [Errno
            # 2] No such file or directory", "/bin/sh: 1: ./start.sh: Text file busy")
            r"|can't open file '[^'\n]{1,400}': \[Errno 2\] No such file or directory"
            r"|/bin/(?:ba)?sh: (?:line )?\d{1,6}: [^\n]{1,300}: Text file busy"
            # a CUDA IPC handle that would not open in this process (Triton's perf_analyzer "failed to open CUDA IPC
            # handle: %s", UCX's "UCX Fatal: ... failed to open ipc mem handle"): the program's own sharing of memory
            r"|failed to open (?:CUDA IPC handle|ipc mem handle)\b[^\n]{0,300})"
        ),
        summary="the program failed: {message}",
        phrases=(
            "Error(s) in loading state_dict",
            "enforce fail at",
            "GGML_ASSERT",
            "GuardOnDataDependentSymNode",
            'Exception in thread "main"',
            "unknown model architecture",
            "uncaught exception during training",
            "runner process has terminated",
            "can't open file",
            "Text file busy",
            "failed to open CUDA IPC handle",
            "failed to open ipc mem handle",
        ),
        wildcards=("?*guardondatadependentsymnode",),  # one token to the analyzer behind its module path
        fixed={"exception": "program error"},
        examples=(
            "Error(s) in loading state_dict for Linear:\n\tsize mismatch for weight: copying a param with shape"
            " torch.Size([0, 17]) from checkpoint, the shape in current model is torch.Size([1, 17]).",
            "  what():  [enforce fail at inline_container.cc:274] . unexpected pos 3695636864 vs 3695636752",
            "GGML_ASSERT(tensor->op == GGML_OP_UNARY) failed",
            "llama_model_load: error loading model: error loading model architecture: unknown model architecture:"
            " 'phi3'",
            'Exception in thread "main" java.lang.RuntimeException: MySparkSQLCLIDriver exit with code(-1)',
            "2018-10-02 21:03:52,196 ERROR - container_support.training - uncaught exception during training: :"
            " Unable to connect to endpoint",
        ),
        near_misses=(
            'Exception in thread "Thread-1" java.lang.RuntimeException: retrying',
            'Exception in thread "main" org.apache.spark.SparkUserAppException: User application exited with 137',
            "Loaded state_dict for Linear: 0 missing keys",
        ),
    ),
    Signature(
        # TensorRT-LLM's own checks (TLLM_CHECK: "[TensorRT-LLM][ERROR] Assertion failed: %s (%s:%d)", also inside a
        # TllmException or Triton's model table): the program's configuration or build (ranks that do not match the
        # engine's tensor and pipeline parallelism, an engine built by another version)
        name="trtllm-assertion",
        kind=Kind.APP_EXCEPTION,
        # (not one its executor logs for a request and goes on: "Encountered an error in forward(Async) function: ...")
        pattern=rx(
            r"(?<!forward function: )(?<!forwardAsync function: )"
            r"\[TensorRT-LLM\]\[ERROR\] Assertion failed:\s{0,4}(?P<message>[^\n|]{0,300}[^\s|])?"
        ),
        summary="TensorRT-LLM's check failed: {message}",
        phrases=("[TensorRT-LLM][ERROR] Assertion failed",),
        fixed={"exception": "TensorRT-LLM assertion"},
        examples=(
            "[TensorRT-LLM][ERROR] tensorrt_llm::common::TllmException: [TensorRT-LLM][ERROR] Assertion failed: d == a +"
            " length (/app/tensorrt_llm/cpp/tensorrt_llm/plugins/gemmPlugin/gemmPlugin.cpp:156)",
            "| tensorrt_llm   | 1       | UNAVAILABLE: Internal: unexpected error when creating modelInstanceState:"
            " [TensorRT-LLM][ERROR] Assertion failed:  |",
        ),
        near_misses=(
            "[TensorRT-LLM][INFO] Assertion checks enabled",
            "[TensorRT-LLM][ERROR] Encountered an error in forward function: [TensorRT-LLM][ERROR] Assertion failed:"
            " freeBlockIterator.has_value() (/app/tensorrt_llm/cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp:249)",
        ),
    ),
    Signature(
        # a Rust program's panic ("thread '%s' panicked at '%s', %s:%d:%d" before Rust 1.73, "thread '%s' panicked at
        # %s:%d:%d:\n%s" since): a bug of the program's own (TGI's router, a tokenizer); the main thread's ends the
        # process (judged after the reactions, like a crash), a worker thread's may be caught by its runtime (read
        # as an exception). After the CUDA signatures: a panic that quotes a CUDA error is that error
        name="rust-panic",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(r"\bthread '(?P<thread>[^'\n]{1,100})' panicked at (?P<message>[^\n]{1,300})"),
        summary="the program panicked: {message}",
        phrases=("panicked at",),
        fixed={"exception": "Rust panic"},
        extract=lambda m, _t: {"crash": True} if m.group("thread") == "main" else {},
        examples=(
            "thread 'tokio-runtime-worker' panicked at /usr/src/router/src/server.rs:180:45:",
            "thread '<unnamed>' panicked at 'called `Result::unwrap()` on an `Err` value: Os { code: 24 }',"
            " src/lib.rs:10:5",
        ),
        near_misses=("the worker thread 'loader' paused at step 10",),
    ),
    Signature(
        name="torchelastic-sigterm-received",
        kind=Kind.SIGTERM_RECEIVED,
        pattern=rx(r"Received (?:Signals\.)?(?P<signal>SIG[A-Z]+|\d+) death signal"),
        summary="launcher received {signal}, shutting down workers",
        phrases=("death signal",),
        examples=(
            "torch.distributed.elastic.agent.server.api: [WARNING] Received Signals.SIGTERM death signal, shutting"
            " down workers",
            "[2024-05-02 10:01:02,123] torch.distributed.elastic.agent.server.api: [WARNING] Received 15 death signal,"
            " shutting down workers",
        ),
        near_misses=("registered handler for death signals: SIGTERM, SIGINT",),
    ),
    Signature(
        name="torchelastic-child-failed",
        kind=Kind.LAUNCHER_TEARDOWN,
        pattern=rx(r"torch\.distributed\.elastic\.multiprocessing\.errors\.ChildFailedError:?"),
        summary="torchrun: a worker failed (ChildFailedError)",
        phrases=("ChildFailedError",),
        extract=child_failed,
        examples=(
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: train.py FAILED",
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n======\ntrain.py FAILED\n------\n"
            "Failures:\n  <NO_OTHER_FAILURES>\n------\nRoot Cause (first observed failure):\n[0]:\n"
            "  time      : 2024-01-01_12:00:00\n  host      : node-1\n  rank      : 3 (local_rank: 3)\n"
            "  exitcode  : -6 (pid: 12345)\n  error_file: <N/A>\n  traceback : Signal 6 (SIGABRT) received by PID 12345",
        ),
        near_misses=("from torch.distributed.elastic.multiprocessing.errors import record",),
    ),
    Signature(
        # a ChildFailedError record's fields seen without the header above them (the summary's lines shipped one
        # by one, or the paste cut): "exitcode  : %d (pid: %d)", "traceback : Signal %d (%s) received by PID %d"
        name="torchelastic-failure-record",
        kind=Kind.LAUNCHER_TEARDOWN,
        pattern=rx(RECORD_EXIT, re.MULTILINE),
        summary="torchrun: local rank failed with exit code {exit_code}",
        phrases=("exitcode",),
        extract=child_failed,
        examples=(
            "  rank      : 0 (local_rank: 0)\n  exitcode  : -11 (pid: 6421)\n  error_file: <N/A>\n  traceback : Signal"
            " 11 (SIGSEGV) received by PID 6421",
            "stderr:   rank      : 1 (local_rank: 1)\nstderr:   exitcode  : 1 (pid: 8835)",
        ),
        near_misses=("exitcode 0 recorded for pid 6421",),
    ),
    Signature(
        # before the closing-signal lines: printed together, they say this pod's own rank failed and the launcher
        # then stopped its siblings, which is no reaction to another pod
        name="torchelastic-worker-failed",
        kind=Kind.LAUNCHER_TEARDOWN,
        # (and torch 1.9's words for a child that wrote no error file: "Child process %d (local_rank %d) FAILED
        # (exitcode %d)")
        pattern=rx(
            r"failed \(exitcode: (?P<exit_code>-?\d+)\) local_rank: (?P<local_rank>\d+) \(pid: (?P<pid>\d+)\)"
            r"|Child process (?P<pid2>\d{1,10}) \(local_rank (?P<local_rank2>\d{1,6})\) FAILED \(exitcode (?P<exit_code2>-?\d{1,4})\)"
        ),
        extract=lambda m, _t: {
            "exit_code": int(m.group("exit_code") or m.group("exit_code2")),
            "local_rank": int(m.group("local_rank") or m.group("local_rank2")),
            "pid": int(m.group("pid") or m.group("pid2")),
        },
        summary="torchrun: local rank {local_rank} failed with exit code {exit_code}",
        phrases=("local_rank",),  # "api:failed" is one token to the standard analyzer
        examples=(
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 2806) of"
            " binary: /usr/bin/python3",
            "Child process 32378 (local_rank 0) FAILED (exitcode 1)",
        ),
        near_misses=("INFO: local_rank: 0 (pid: 2806) started",),
    ),
    Signature(
        # DeepSpeed's per-node launcher (launcher/launch.py sigkill_handler) once a local rank ended badly: it kills
        # the others ("Killing subprocess %d", also on SIGTERM) and says "%s exits with return code = %d" of the
        # first (a negative code is the signal that ended it): the pod's own rank, as torchrun's summary above
        name="deepspeed-return-code",
        kind=Kind.LAUNCHER_TEARDOWN,
        pattern=rx(r"exits with return code = (?P<exit_code>-?\d{1,4})"),
        summary="DeepSpeed launcher: a local rank exited with code {exit_code}",
        extract=relayed,
        phrases=("exits with return code",),
        convert={"exit_code": int},
        examples=(
            "[2023-07-10 04:26:35,999] [ERROR] [launch.py:324:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py',"
            " '--local_rank=1', '--deepspeed', 'ds_config.json'] exits with return code = 1",
            "worker-1: [2023-07-10 04:26:35,999] [ERROR] [launch.py:324:sigkill_handler] ['/usr/bin/python3', '-u',"
            " 'train.py', '--local_rank=1'] exits with return code = 1",
        ),
        near_misses=("[INFO] [launch.py:131:sigkill_handler] Killing subprocess 250621",),
    ),
    Signature(
        # Lightning's subprocess launcher watching its local ranks (_ChildProcessObserver): "Child process with PID
        # %d terminated with code %d. Forcefully terminating all other processes to avoid zombies": the pod's own
        # rank, as torchrun's summary above
        name="lightning-child-failed",
        kind=Kind.LAUNCHER_TEARDOWN,
        pattern=rx(
            r"Child process with PID (?P<pid>\d{1,9}) terminated with code (?P<exit_code>-?\d{1,4})\. Forcefully"
            r" terminating all other processes"
        ),
        summary="Lightning: local rank process {pid} exited with code {exit_code}",
        phrases=("Forcefully terminating all other processes",),
        convert={"pid": int, "exit_code": int},
        examples=(
            "Child process with PID 652 terminated with code 1. Forcefully terminating all other processes to avoid"
            " zombies",
        ),
        near_misses=("Child process with PID 652 started",),
    ),
    Signature(
        name="torchelastic-closing-workers",
        kind=Kind.LAUNCHER_TEARDOWN,
        pattern=rx(
            # (not SIGHUP or SIGINT: the agent passing on the signal it was itself sent, no worker's failure)
            r"Sending process (?P<pid>\d+) closing signal (?:Signals\.)?(?P<signal>SIG(?!HUP\b|INT\b)[A-Z]+)"
            r"|Closing process (?P<pid2>\d+) via signal (?:Signals\.)?(?P<signal2>SIG(?!HUP\b|INT\b)[A-Z]+)"
            # the same teardown escalated when a worker ignored it (api.py _close: "Unable to shutdown process %s via
            # %s, forcefully exiting via %s")
            r"|Unable to shutdown process (?P<pid3>\d+) via (?:Signals\.)?SIG(?!HUP\b|INT\b)[A-Z]+, forcefully exiting via"
            r" (?:Signals\.)?(?P<signal3>SIG[A-Z]+)"
        ),
        summary="launcher is stopping worker process {pid} with {signal}",
        phrases=("closing signal", "via signal", "forcefully exiting via"),
        extract=lambda m, _t: {
            "pid": int(m.group("pid") or m.group("pid2") or m.group("pid3")),
            "signal": m.group("signal") or m.group("signal2") or m.group("signal3"),
        },
        examples=(
            "torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 901 closing signal SIGTERM",
            "torch.distributed.elastic.multiprocessing.api: [WARNING] Closing process 2211 via signal SIGTERM",
            "torch.distributed.elastic.multiprocessing.api: [WARNING] Unable to shutdown process 264 via"
            " Signals.SIGTERM, forcefully exiting via Signals.SIGKILL",
        ),
        near_misses=(
            "dataloader worker 3 exited after closing its file",
            "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 102241 closing signal SIGHUP",
        ),
    ),
    Signature(
        name="mpirun-rank-exited",
        kind=Kind.LAUNCHER_TEARDOWN,
        pattern=rx(
            # (also as the binary a wrapper renamed it to: MPIJob's launcher runs "mpirun.real")
            r"(?:mpirun|mpiexec|orterun|prterun)(?:\.real)? noticed that process rank (?P<failed_rank>\d+) with PID"
            r" (?P<pid>\S{1,32}) on node(?: (?P<host>(?!exited )\S{1,253}))? exited on(?:\s{1,4}signal (?P<signal>\d+)|\s*$)"
        ),
        summary="mpirun: rank {failed_rank} on {host} exited on signal {signal}",
        phrases=("noticed that process rank",),
        convert={"failed_rank": int, "pid": pid, "signal": int},
        examples=(
            "mpirun noticed that process rank 3 with PID 1234 on node gpu-node-7 exited on signal 9 (Killed).",
            "mpirun noticed that process rank 0 with PID 0 on node exited on signal 4 (Illegal instruction).",
            "mpirun.real noticed that process rank 1 with PID 39 on node mpi-test-2-mpijob-worker-1 exited on signal 9"
            " (Killed).",
            "mpiexec noticed that process rank 0 with PID 10313 on node proton exited on \nsignal 6 (Aborted).",
        ),
        near_misses=("mpirun: process rank 3 with PID 1234 started on node gpu-node-7",),
    ),
    Signature(
        # MPICH2's MPD launcher (1.0-1.2) after a rank ended ("rank %d in job %d  %s_%d   caused collective abort of
        # all ranks" then "exit status of rank %d: killed by signal %d" or "return code %d"): as mpirun's record
        name="mpd-collective-abort",
        kind=Kind.LAUNCHER_TEARDOWN,
        pattern=rx(
            r"rank (?P<failed_rank>\d{1,7}) in job \d{1,10}\s{1,4}\S{1,253}\s{1,6}caused collective abort of all ranks"
            r"(?:\s{1,8}exit status of rank \d{1,7}: (?:killed by signal (?P<signal>\d{1,3})|return code (?P<exit_code>\d{1,3})))?"
            # (its second line alone, where each line is a document of its own)
            r"|(?m:^)\s{0,8}exit status of rank (?P<failed_rank2>\d{1,7}): killed by signal (?P<signal2>\d{1,3})"
        ),
        extract=first_ints(
            failed_rank=("failed_rank", "failed_rank2"), signal=("signal", "signal2"), exit_code=("exit_code",)
        ),
        summary="MPD: rank {failed_rank} ended and aborted the others",
        phrases=("caused collective abort of all ranks", "exit status of rank"),
        examples=(
            "rank 2 in job 1958  bb36_58821   caused collective abort of all ranks\n  exit status of rank 2: killed by"
            " signal 11",
        ),
        near_misses=("rank 2 in job 1958 finished without abort",),
    ),
    Signature(
        # Open MPI's launcher after a rank ended outside the rules (help-orterun.txt proc-exit-no-sync and
        # proc-ordered-abort: "%s has exited due to process rank %lu with PID %lu on\nnode %s exiting improperly."
        # (1.5+), "... exiting without calling \"finalize\"." (1.4), "... calling \"abort\"." (MPI_Abort)): it
        # tears the other ranks down
        name="mpirun-rank-ended-improperly",
        kind=Kind.LAUNCHER_TEARDOWN,
        pattern=rx(
            r"(?:mpirun|mpiexec|orterun|prterun)(?:\.real)? has exited due to process rank (?P<failed_rank>\d{1,7})"
            r" with PID (?P<pid>\S{1,32}) on(?:\s{1,4}node (?P<host>\S{1,253}) (?P<how>exiting improperly"
            r"|exiting without calling \"finalize\"|calling \"abort\"))?"
        ),
        summary="mpirun: rank {failed_rank} ended outside MPI's rules; the others are torn down",
        phrases=("has exited due to process rank",),
        convert={"failed_rank": int, "pid": pid},
        examples=(
            "mpirun has exited due to process rank 11 with PID 10211 on\nnode compute-12-23.local exiting improperly."
            " There are two reasons this\ncould occur:",
            'mpiexec has exited due to process rank 0 with PID 26254 on\nnode b2 exiting without calling "finalize".'
            " This may",
            "mpirun has exited due to process rank 1 with PID 4017 on",
        ),
        near_misses=("mpirun has exited normally after process rank 0 finished",),
    ),
    Signature(
        # the program calling MPI wrongly, as MPI's fatal error handler reports it: Open MPI's (and Spectrum MPI's)
        # "*** An error occurred in %s ... *** MPI_ERR_COMM: invalid communicator ... *** MPI_ERRORS_ARE_FATAL",
        # MPICH's "Fatal error in PMPI_Allreduce: Invalid communicator, error stack:": the code's, as NCCL's
        # invalid usage is (not MPI_ERR_OTHER, MPI_ERR_INTERN, a transport's error)
        name="mpi-invalid-usage",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(
            r"\*\*\* (?P<message>MPI_ERR_(?:COMM|ARG|TYPE|COUNT|RANK|TAG|BUFFER|OP|ROOT|TRUNCATE|GROUP|DIMS|TOPOLOGY)"
            r": [^\n]{1,120})"
            r"|Fatal error in P?MPI_\w{1,40}: (?P<mpich>Invalid (?:communicator|datatype|count|rank|root|tag|buffer"
            r" pointer|argument|MPI_Op|MPI_Request)|Message truncated)"
        ),
        extract=lambda m, _t: {"message": m.group("message") or m.group("mpich")},
        summary="MPI used wrongly: {message}",
        phrases=(
            "MPI_ERR_COMM",
            "MPI_ERR_ARG",
            "MPI_ERR_TYPE",
            "MPI_ERR_COUNT",
            "MPI_ERR_RANK",
            "MPI_ERR_TAG",
            "MPI_ERR_BUFFER",
            "MPI_ERR_OP",
            "MPI_ERR_ROOT",
            "MPI_ERR_TRUNCATE",
            "Fatal error in",
        ),
        fixed={"exception": "MPI invalid usage"},
        examples=(
            "[g32n01:32314] *** MPI_ERR_COMM: invalid communicator",
            "Fatal error in PMPI_Allreduce: Invalid communicator, error stack:",
        ),
        near_misses=(
            "[g32n01:32314] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
            "Fatal error in PMPI_Allreduce: Other MPI error, error stack:",
        ),
    ),
    Signature(
        # MPICH's (and Intel MPI's) Hydra launcher after a rank ended badly (pmiserv's banner "BAD TERMINATION OF
        # ONE OF YOUR APPLICATION PROCESSES", then "PID %d RUNNING AT %s" and "EXIT CODE: %d" or "EXIT STRING"):
        # it cleans up the remaining ranks
        name="hydra-bad-termination",
        kind=Kind.LAUNCHER_TEARDOWN,
        pattern=rx(
            r"BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES"
            r"(?:[^\n]{0,8}\n[=\s]{0,8}(?:RANK \d{1,7} )?PID (?P<pid>\d{1,9}) RUNNING AT (?P<host>\S{1,253}))?"
            r"(?:[^\n]{0,8}\n[=\s]{0,8}(?:EXIT CODE: (?P<exit_code>-?\d{1,4})|KILLED BY SIGNAL: (?P<killed>\d{1,2})\b))?"
            # its exit string below the banner ("YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Segmentation fault
            # (signal 11)", macOS's "Segmentation fault: 11 (signal 11)")
            r"(?:[\s\S]{0,400}?TERMINATED WITH THE EXIT STRING: [^\n]{0,80}?\(signal (?P<signal>\d{1,2})\))?"
            # (its exit code line read alone; MPICH 4's and Intel MPI's banner naming the signal: "=   RANK 1 PID 27494
            # RUNNING AT node1" / "=   KILLED BY SIGNAL: 11 (Segmentation fault)", also alone; not the exit string
            # alone: mpiexec ORs every rank's status into it)
            r"|(?m:^)=[ \t]{1,4}EXIT CODE: (?P<exit_code2>-?\d{1,4})[ \t]*$"
            r"|(?m:^)=[ \t]{1,4}KILLED BY SIGNAL: (?P<signal2>\d{1,2})\b"
        ),
        extract=first_ints(exit_code=("exit_code2",), signal=("signal2", "killed")),
        summary="the MPI launcher (Hydra): a rank ended badly, cleaning up the others",
        phrases=(
            "BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
            "EXIT CODE",
            "KILLED BY SIGNAL",
        ),
        convert={"pid": int, "exit_code": int, "signal": int, "killed": int},
        examples=(
            "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 4821 RUNNING AT node-3\n=   EXIT CODE: 9",
            "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 5318 RUNNING AT node-3\n=   EXIT CODE: 11\n"
            "=   CLEANING UP REMAINING PROCESSES\n===\nYOUR APPLICATION TERMINATED WITH THE EXIT STRING: Segmentation"
            " fault (signal 11)",
            "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   RANK 1 PID 27494 RUNNING AT node1\n"
            "=   KILLED BY SIGNAL: 11 (Segmentation fault)",
            "BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
        ),
        near_misses=("TERMINATION OF ALL APPLICATION PROCESSES COMPLETED",),
    ),
    Signature(
        # Open MPI telling a rank that a peer is gone: the BTL's "An MPI communication peer process has unexpectedly
        # disconnected." (help-mpi-btl-tcp.txt), ORTE's "ORTE has lost communication with a remote daemon." (3.x+)
        # and "ORTE has lost communication with its daemon located on node:" (1.x-2.x): reactions to another rank
        name="mpi-peer-lost",
        kind=Kind.LAUNCHER_TEARDOWN,
        pattern=rx(
            r"An MPI communication peer process has\s{1,4}unexpectedly disconnected"
            # (PRRTE, Open MPI 5's runtime: "PRTE has lost communication with a remote daemon.")
            r"|(?:ORTE|PRTE) has lost communication with (?:a remote daemon|its daemon located on node)"
        ),
        summary="Open MPI: a peer process or its node's daemon was lost",
        phrases=(
            "peer process has unexpectedly disconnected",
            "ORTE has lost communication with",
            "PRTE has lost communication with",
        ),
        examples=(
            "An MPI communication peer process has unexpectedly disconnected.  This\nusually indicates a failure in"
            " the peer process (e.g., a crash or\notherwise exiting without calling MPI_FINALIZE first).",
            "ORTE has lost communication with a remote daemon.\n\n  HNP daemon   : [[43015,0],0] on node launcher",
            " ORTE has lost communication with its daemon located on node:\n\n   hostname:  ip-10-15-20-17",
            "PRTE has lost communication with a remote daemon.",
        ),
        near_misses=("ORTE has established communication with a remote daemon",),
    ),
    Signature(
        name="mpirun-nonzero-exit",
        kind=Kind.LAUNCHER_TEARDOWN,
        pattern=rx(
            r"(?:(?:mpirun|mpiexec|orterun|prterun|prun)(?:\.real)?|Horovod) detected that one or more processes exited"
            r" with non-zero status"
            r"(?:[\s\S]*?Process name: \[\[\d+,\d+\],(?P<failed_rank>\d+)\])?(?:[\s\S]*?Exit code:\s*(?P<exit_code>-?\d+))?"
            # the paragraph Open MPI prints before it (help-orterun.txt "Primary job  terminated normally, but %d
            # process(es) returned\na non-zero exit code. Per user-direction, the job has been aborted."), also alone
            r"|Primary job\s{1,4}terminated normally, but \d{1,7} process(?:es)? returned(?:\s{1,4}a non-zero exit code|\s*$)"
        ),
        summary="mpirun: a rank exited with a non-zero status",
        phrases=("detected that one or more processes exited with non-zero status", "Primary job"),
        convert={"failed_rank": int, "exit_code": int},
        examples=(
            "mpirun detected that one or more processes exited with non-zero status, thus causing\nthe job to be"
            " terminated. The first process to do so was:\n\n  Process name: [[41593,1],3]\n  Exit code:    1",
            "RuntimeError: Horovod detected that one or more processes exited with non-zero status, thus causing the"
            " job to be terminated. The first process to do so was:\nProcess name: worker-1[0]\nExit code: 137",
            "mpiexec detected that one or more processes exited with non-zero status, thus causing",
            "Primary job  terminated normally, but 1 process returned\na non-zero exit code. Per user-direction, the job"
            " has been aborted.",
        ),
        near_misses=("mpirun: all processes exited with status 0",),
    ),
    Signature(
        # Ray: a task or the driver failed because an actor's process died elsewhere (ray.exceptions ActorDiedError,
        # RayActorError of Ray 1.x, "The actor died unexpectedly before finishing this task."): a reaction
        name="ray-actor-died",
        kind=Kind.LAUNCHER_TEARDOWN,
        # (an actor that "died because of an error raised in its creation task" failed in its own constructor: the
        # exception it quotes is the program's)
        pattern=rx(
            r"\b(?:ActorDiedError|RayActorError)\b(?!: The actor died because of an error raised in its creation task)"
            # an object's owner (the worker that made it) exited ("OwnerDiedError: Failed to retrieve object ...
            # The object's owner has exited")
            r"|\bOwnerDiedError\b"
            r"|The actor died unexpectedly before finishing this task"
            # the core worker failing a task whose actor is dead ("Task failed: IOError: cancelling task of dead
            # actor: ...")
            r"|cancelling task of dead actor"
        ),
        summary="Ray: an actor this process depended on died",
        phrases=(
            "ActorDiedError",
            "RayActorError",
            "The actor died unexpectedly",
            "OwnerDiedError",
            "cancelling task of dead actor",
        ),
        examples=(
            "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
            "ray.exceptions.RayTaskError(ActorDiedError): ray::main_task() (pid=1042684, ip=10.0.3.7)",
        ),
        near_misses=(
            "ray.exceptions.RayTaskError(ValueError): ray::main_task() (pid=1042684, ip=10.0.3.7)",
            "ray.exceptions.RayActorError: The actor died because of an error raised in its creation task,"
            " ray::Trainable.__init__() (pid=961282, ip=10.33.0.28)",
        ),
    ),
    Signature(
        # Ray losing a worker's node or process, as the driver or the trainer says it: Ray Train's backend executor
        # ("Worker %d has failed."), the GCS marking a node dead ("The node with node id: %s and ip: %s has been
        # marked dead because the detector has missed too many heartbeats from it"), a task on a dead node ("Task
        # failed because the node it was running on is dead or unavailable"): reactions to another worker
        name="ray-worker-lost",
        kind=Kind.LAUNCHER_TEARDOWN,
        pattern=rx(
            r"\bWorker \d{1,6} has failed\.|has been marked dead because the (?:detector|monitor) has missed too many"
            r" heartbeats"
            r"|Task failed because the node it was running on is dead or unavailable"
            # the same before 2.x's wording ("Task failed due to the node (where this task was running)  was dead or
            # unavailable"), and objects lost with the node that held them (ObjectLostError "Object %s is lost due to
            # node failure", 2.x's "All copies of %s have been lost due to node failure")
            r"|Task failed due to the node \(where this task was running\)\s{1,4}was dead or unavailable"
            r"|(?:\bis|have been) lost due to node failure"
            # Ray Train v2's controller ("Terminating training worker group after encountering failure(s) on %d
            # worker(s):")
            r"|Terminating training worker group after encountering failure\(s\) on \d{1,6} worker\(s\)"
        ),
        summary="Ray: a worker or its node was lost",
        phrases=(
            "has failed",
            "marked dead because the",
            "node it was running on is dead",
            "where this task was running",
            "lost due to node failure",
            "Terminating training worker group",
        ),
        examples=(
            "(TorchTrainer pid=89392) Worker 0 has failed.",
            "Terminating training worker group after encountering failure(s) on 1 worker(s):",
            "WARNING worker.py:1462 -- The node with node id: 8f205b12 and ip: 10.128.0.103 has been marked dead"
            " because the detector has missed too many heartbeats from it.",
            "Task failed because the node it was running on is dead or unavailable. Node IP: 127.0.0.1",
            "ray.exceptions.ObjectLostError: Object 4dfeca054278f155ffffffffffffffffffffffff0100000001000000 is lost due"
            " to node failure.",
        ),
        near_misses=("Worker 0 has failed to report metrics in time; retrying",),
    ),
    Signature(
        # MosaicML Composer's launcher ("Rank %d crashed with exit code %d."): the pod's own rank, as torchrun's
        # summary
        name="composer-rank-crashed",
        kind=Kind.LAUNCHER_TEARDOWN,
        # (and since 0.17 "Global rank %d (PID %d) exited with code %d")
        pattern=rx(
            r"(?:Global r|R)ank (?P<local_rank>\d{1,6}) (?:crashed with exit code|\(PID \d{1,10}\) exited with code)"
            r" (?P<exit_code>-?\d{1,4})\b"
        ),
        summary="Composer: rank {local_rank} crashed with exit code {exit_code}",
        phrases=("crashed with exit code", "exited with code"),
        convert={"local_rank": int, "exit_code": int},
        examples=(
            "ERROR:composer.cli.launcher:Rank 0 crashed with exit code -11.",
            "ERROR:composer.cli.launcher:Global rank 0 (PID 208865) exited with code -11",
        ),
        near_misses=("Rank 0 exited with exit code 0.",),
    ),
    Signature(
        # vLLM's multiprocess executor watching its tensor-parallel workers ("Worker %s pid %d died, exit code: %d"):
        # the worker's own end when its code is its own (an error exit, a crash's signal); a SIGTERM or SIGKILL (-15,
        # -9) is the engine shutting its workers down for a reason said elsewhere
        name="vllm-worker-died",
        kind=Kind.LAUNCHER_TEARDOWN,
        pattern=rx(
            r"Worker (?P<worker>\w{1,60}) pid \d{1,10} died, exit code: (?P<exit_code>-(?:4|8|11)|[1-9]\d{0,2})\b"
        ),
        summary="vLLM: worker {worker} died with exit code {exit_code}",
        phrases=("died, exit code",),
        convert={"exit_code": int},
        examples=(
            "ERROR 07-26 14:50:35 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 214281 died, exit code: -11",
        ),
        near_misses=(
            "Worker VllmWorkerProcess pid 214281 started",
            "ERROR 07-28 23:29:37 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 87 died, exit code: -15",
        ),
    ),
    Signature(
        # Ray's object store refusing what the program put in it: larger than the store, or the store full of the
        # program's own objects (plasma_store_provider.cc "Failed to put object %s in object store because it is
        # full. Object size is %d bytes.", ObjectStoreFullError; Ray 0.x's pyarrow "PlasmaStoreFull: object does not
        # fit in the plasma store")
        name="ray-object-store-full",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(
            r"(?P<message>Failed to put object [0-9a-f]{8,64} in object store because it is full"
            r"|PlasmaStoreFull: object does not fit in the plasma store)"
        ),
        summary="Ray's object store could not hold what the program put in it: {message}",
        phrases=("in object store because it is full", "does not fit in the plasma store"),
        fixed={"exception": "object store full"},
        examples=("pyarrow.lib.PlasmaStoreFull: object does not fit in the plasma store",),
        near_misses=("Object store is 80% full, spilling objects to disk",),
    ),
    Signature(
        # a Ray job's entrypoint (the program `ray job submit` runs) ending in error ("Job entrypoint command failed
        # with exit code %d"): the program's own end when its code is its own (an error exit, a crash's signal: -4,
        # -8, -11); what it printed decides first (a wrapper). A SIGTERM or SIGKILL is someone else's stop.
        name="ray-job-entrypoint-failed",
        kind=Kind.APP_EXCEPTION,
        # (the shell Ray runs it in reports a signal as 128+N: 132, 136, 139 are a crash's, 137 and 143 someone's stop;
        # 126 and 127 are the command not found or not runnable, said by the shell's own line)
        pattern=rx(
            r"Job entrypoint command failed with exit code"
            r" (?P<exit_code>-(?:4|8|11)|13[269]|1[01]\d|12[0-5]|16[6-9]|1[7-9]\d|2[0-4]\d|25[0-5]|[1-9]\d?)\b"
        ),
        summary="the Ray job's entrypoint failed with exit code {exit_code}",
        phrases=("Job entrypoint command failed",),
        convert={"exit_code": int},
        fixed={"wrapper": True, "exception": "Ray job entrypoint failed"},
        examples=(
            "Status message: Job entrypoint command failed with exit code 1, last available logs (truncated to 20,000"
            " chars):",
        ),
        near_misses=(
            "Job entrypoint command failed with exit code -15, last available logs",
            "Job entrypoint command failed with exit code 137, last available logs (truncated to 20,000 chars):",
        ),
    ),
    Signature(
        # XLA unable to compile the program's function (TensorFlow's tf2xla: "tf2xla conversion failed while
        # converting %s", an op without an XLA kernel under jit_compile): the program's model, not the GPU
        name="xla-compile-failed",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(r"(?P<message>tf2xla conversion failed while converting [^\n\[]{1,300})"),
        summary="XLA could not compile the program: {message}",
        phrases=("tf2xla conversion failed",),
        fixed={"exception": "XLA compilation failed"},
        examples=("tf2xla conversion failed while converting __inference_one_step_on_data_23809[]. Run with",),
        near_misses=("tf2xla conversion succeeded for __inference_one_step_on_data_23809",),
    ),
    Signature(
        # Ray relaying a task's exception by its class ("ray.exceptions.RayTaskError(KeyError): ray::f() (pid=...)"):
        # one of Python's own errors in the task is the program's; a RuntimeError (CUDA, NCCL) or an
        # OutOfMemoryError (torch's or Ray's memory monitor) says nothing alone. A wrapper: what the task printed
        # decides first.
        name="ray-task-error",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(
            r"RayTaskError\((?P<inner>KeyError|ValueError|TypeError|IndexError|AttributeError|NameError|ImportError"
            r"|ModuleNotFoundError|AssertionError|FileNotFoundError|ZeroDivisionError|NotImplementedError"
            r"|UnboundLocalError|JSONDecodeError)\): ray::"
        ),
        summary="Ray: a task raised {inner}",
        phrases=("RayTaskError",),
        extract=lambda m, _t: {"exception": m.group("inner")},
        fixed={"wrapper": True},
        examples=("ray.exceptions.RayTaskError(ImportError): ray::skyrl_entrypoint() (pid=841440, ip=10.190.168.34)",),
        near_misses=("ray.exceptions.RayTaskError(RuntimeError): ray::WorkerDict.fit() (pid=5190, ip=10.0.0.3)",),
    ),
    Signature(
        # a launcher or CLI logging that its child command failed by its exit status (subprocess's "Command '[...]'
        # returned non-zero exit status %d.", axolotl's "Failed to train/fine-tune config ...: Command ..."):
        # the child's own error, which what it printed decides first (a wrapper)
        name="child-command-failed",
        kind=Kind.APP_EXCEPTION,
        # (logged at ERROR or in a launcher's "Failed to ..."; not a WARNING about a helper command that the program
        # went on from, nor git's)
        pattern=rx(
            r"(?:\bERROR\b|Failed to )[^\n]{0,300}?Command '\[(?!'git')[^\n]{1,1000}?\]' returned non-zero exit status"
            r" (?P<exit_code>\d{1,3})\."
        ),
        summary="a child command failed with exit status {exit_code}",
        phrases=("returned non-zero exit status",),
        convert={"exit_code": int},
        fixed={"wrapper": True, "exception": "child command failed"},
        examples=(
            "[ERROR] [axolotl.cli.main.train:184] Failed to train/fine-tune config 'x.yml': Command '['accelerate',"
            " 'launch', '-m', 'axolotl.cli.train', 'x.yml']' returned non-zero exit status 1.",
        ),
        near_misses=(
            "wandb: WARNING Command '['git', 'rev-parse', 'HEAD']' returned non-zero exit status 128.",
            "WARNING:root:Command '['nvidia-smi', '-q']' returned non-zero exit status 9.",
        ),
    ),
    Signature(
        # the image's libraries at odds with what the framework was built for: XLA's cuDNN check ("Loaded runtime
        # CuDNN library: %s but source was compiled with: %s"), no PTX compiler in the image ("No PTX compilation
        # provider is available"): the program's environment, as the project reads other libraries of the image
        name="image-library-mismatch",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(
            r"(?P<message>Loaded runtime CuDNN library: [\d.]{1,20} but source was compiled with: [\d.]{1,20}"
            r"|No PTX compilation provider is available"
            # no cuDNN in the image at all, as TensorFlow's and XLA's ops report it ("UNIMPLEMENTED: DNN library is
            # not found.", also inside the executor's note that it aborted)
            r"|DNN library is not found"
            # no NCCL in the image, as XLA's collective that needed it fails ("NCCL operation ncclGetUniqueId(&id)
            # failed: Unable to load NCCL library. Multi-GPU collectives will not work."; not the warning alone)
            r"|NCCL operation \w{1,40}\([^)\n]{0,80}\) failed: Unable to load NCCL library)"
        ),
        summary="the image's libraries do not fit the framework: {message}",
        phrases=(
            "Loaded runtime CuDNN library",
            "No PTX compilation provider",
            "DNN library is not found",
            "Unable to load NCCL library",
        ),
        fixed={"exception": "library mismatch"},
        examples=(
            "E1027 15:11:27.184481 3266602 cuda_dnn.cc:456] Loaded runtime CuDNN library: 9.10.1 but source was compiled"
            " with: 9.13.1.  CuDNN library needs to have matching major version and equal or higher minor version.",
            "No PTX compilation provider is available. Neither ptxas/nvlink nor nvjtlink is available.",
            "W tensorflow/core/framework/op_kernel.cc:1745] OP_REQUIRES failed at conv_ops.cc:1120 : UNIMPLEMENTED: DNN"
            " library is not found.",
            "E external/xla/xla/pjrt/pjrt_stream_executor_client.cc:2732] Execution of replica 0 failed: INTERNAL:"
            " custom call 'xla.gpu.reduce_scatter' failed: external/xla/xla/service/gpu/nccl_utils.cc:134: NCCL"
            " operation ncclGetUniqueId(&id) failed: Unable to load NCCL library. Multi-GPU collectives will not work.",
        ),
        near_misses=(
            "Loaded cuDNN version 90100",
            "W external/xla/xla/service/gpu/nccl_api.cc:88] Unable to load NCCL library. Multi-GPU collectives will"
            " not work.",
        ),
    ),
    Signature(
        # TensorFlow's ring collectives aborting on a transport failure (ring_reducer.cc / ring_gatherer.cc
        # "Aborting RingReduce with %s"): the collective's error, as NCCL's would be (an OutOfRange is the input's
        # end)
        name="tf-ring-collective-aborted",
        kind=Kind.NCCL_ERROR,
        pattern=rx(
            r"Aborting Ring(?:Reduce|Gather(?:er)?) with (?P<detail>(?!OutOfRange)\w{2,40}: [^\n]{1,200})"
            # a collective op's peer unreachable, as eager execution raises it ("UnavailableError: Socket closed
            # [Op:CollectiveReduceV2]"), also where gRPC's details come between ('... "grpc_status":14}
            # [Op:CollectiveBcastRecv]', the line that ends the exception's message)
            r"|(?P<unavailable>UnavailableError: [^\n]{1,300}?|\"grpc_status\":\d{1,2}\})[ \t]{0,4}\[Op:Collective\w{1,40}\]"
            # TF 2.4+'s collective executor aborting on a peer it cannot reach ("Collective ops is aborted by: %s\nThe
            # error could be from a previous operation. Restart your program to reset.")
            r"|Collective ops is aborted by: (?:failed to connect to all addresses|Socket closed|Connection reset by peer"
            r"|[^\n]{0,200}?\b(?:UNAVAILABLE|Unavailable|DEADLINE_EXCEEDED))"
        ),
        extract=lambda m, _t: {"detail": m.group("detail") or m.group(0)},
        summary="TensorFlow collective aborted: {detail}",
        phrases=(
            "Aborting RingReduce",
            "Aborting RingGather",
            "Aborting RingGatherer",
            "Op:Collective",
            "Collective ops is aborted by",
        ),
        examples=(
            "E tensorflow/core/common_runtime/ring_reducer.cc:369] Aborting RingReduce with Unavailable: Socket closed",
            "tensorflow.python.framework.errors_impl.UnavailableError: Socket closed\nAdditional GRPC error information"
            ' from remote target /job:worker/replica:0/task:0:\n:{"grpc_status":14} [Op:CollectiveBcastRecv]',
        ),
        near_misses=(
            "Aborting RingReduce with OutOfRange: End of sequence",
            "UnavailableError: failed to connect to all addresses [Op:__inference_train_function_512]",
        ),
    ),
    Signature(
        # Horovod shutting the collectives down after a rank failed ("Horovod has been shut down. This was caused by
        # an exception on one of the ranks or an attempt to ... after one of the ranks finished execution"), and
        # TensorFlow's multi-worker health check ("Cluster check alive failed, /job:worker/replica:0/task:1 is down,
        # aborting collectives"): reactions to another rank
        name="collectives-shut-down",
        kind=Kind.LAUNCHER_TEARDOWN,
        pattern=rx(r"Horovod has been shut down|Cluster check alive failed, \S{1,200} is down, aborting collectives"),
        summary="the collectives were shut down after another rank failed: {line}",
        phrases=("Horovod has been shut down", "check alive failed"),  # "ERROR:tensorflow:Cluster" is one token
        extract=whole,
        examples=(
            "W tensorflow/core/framework/op_kernel.cc:1318] OP_REQUIRES failed at mpi_ops.cc:422 : Aborted: Horovod has"
            " been shut down. This was caused by an exception on one of the ranks",
            "ERROR:tensorflow:Cluster check alive failed, /job:worker/replica:0/task:1 is down, aborting collectives:"
            " Deadline Exceeded",
        ),
        near_misses=("Horovod has been initialized with 8 ranks",),
    ),
    Signature(
        # JAX / XLA's coordination service client (client.h): "Terminating process because the JAX distributed
        # service detected fatal errors. This most likely indicates that another task died": a reaction
        name="jax-coordination-fatal",
        kind=Kind.LAUNCHER_TEARDOWN,
        pattern=rx(
            r"Terminating process because the (?:JAX distributed service detected fatal errors|coordinator"
            r" detected missing heartbeats)"
            # torch's monitored barrier on a rank that got there and lost the one it waited for ("Rank 1
            # successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0")
            r"|successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank"
            # and rank 0's own report of the ranks that never arrived ("[Rank 0]: Ranks 4, 5, 6, 7 failed to pass
            # monitoredBarrier in %d ms"): it waited on them
            r"|Ranks? \d{1,6}(?:, \d{1,6}){0,500} failed to pass monitoredBarrier"
            # the coordination service itself (coordination_service.cc SetTaskError: "%s has been set to ERROR in
            # coordination service: %s"), which runs in task 0, naming another task
            r"|/job:\w{1,64}/replica:\d{1,4}/task:(?P<peer_task>[1-9]\d{0,5}) has been set to ERROR in coordination"
            r" service"
            # and its abort of every task when another came back as a new process ("%s unexpectedly tried to connect
            # with a different incarnation. It has likely restarted."), as the service logs it: the same words raised
            # in the task that restarted (its RegisterTask answered with them) are about itself
            r"|coordination_service\.cc:\d{1,6}\] /job:\w{1,64}/replica:\d{1,4}/task:[1-9]\d{0,5} unexpectedly tried to"
            r" connect with a different incarnation"
        ),
        summary="the distributed runtime lost another task (JAX's coordination service, torch's monitored barrier)",
        # (not the service's "Task ... heartbeat timeout. This indicates that the remote task has failed" alone, nor
        # about task 0: it names the task that stalled, which may be the one printing it, a single process slow to
        # initialize)
        phrases=(
            "Terminating process because the",
            "successfully reached monitoredBarrier",
            "failed to pass monitoredBarrier",
            "has been set to ERROR in coordination service",
            "unexpectedly tried to connect with a different incarnation",
        ),
        convert={"peer_task": int},
        examples=(
            "F0929 17:42:48.594200 1044529 client.h:77] Terminating process because the JAX distributed service"
            " detected fatal errors. This most likely indicates that another task died; see the other task logs for"
            " more details.",
            "RuntimeError: Rank 1 successfully reached monitoredBarrier, but received errors while waiting for"
            " send/recv from rank 0. Please check rank 0 logs for faulty rank.",
            "[rank0]: RuntimeError: [Rank 0]: Ranks 6 failed to pass monitoredBarrier in 180000000000 ms",
            "E1115 coordination_service.cc:954] /job:jax_worker/replica:0/task:3 has been set to ERROR in coordination"
            " service: UNAVAILABLE: Task /job:jax_worker/replica:0/task:3 heartbeat timeout.",
        ),
        near_misses=(
            "Terminating process because the training loop finished",
            "E1115 coordination_service.cc:954] /job:jax_worker/replica:0/task:0 has been set to ERROR in coordination"
            " service: UNAVAILABLE: Task /job:jax_worker/replica:0/task:0 heartbeat timeout.",
            "jaxlib.xla_extension.XlaRuntimeError: ABORTED: /job:jax_worker/replica:0/task:1 unexpectedly tried to"
            " connect with a different incarnation. It has likely restarted.",
        ),
    ),
    Signature(
        name="sigterm-received",
        kind=Kind.SIGTERM_RECEIVED,
        pattern=rx(
            r"\b(?:[Rr]eceived|[Gg]ot|[Cc]aught) (?:signal )?(?:Signals\.)?SIGTERM\b|\bSIGTERM received\b"
            r"|\b[Rr]eceived signal 15\b"
        ),
        summary="received SIGTERM",
        phrases=("received SIGTERM", "got SIGTERM", "caught SIGTERM", "SIGTERM received", "received signal 15"),
        fixed={"signal": "SIGTERM"},
        examples=("Received SIGTERM, saving emergency checkpoint and exiting", "[trainer] caught SIGTERM; exiting"),
        near_misses=("installing handler for SIGTERM",),
    ),
    Signature(
        name="checkpoint-megatron",
        kind=Kind.CHECKPOINT_SAVED,
        pattern=rx(r"successfully saved checkpoint (?:from|at) iteration\s+(?P<step>\d+) to (?P<path>\S+)"),
        summary="checkpoint saved at step {step}",
        phrases=("successfully saved checkpoint",),
        extract=checkpoint,
        examples=("  successfully saved checkpoint from iteration    2000 to /checkpoints/llama-70b [ t 1/8, p 1/4 ]",),
        near_misses=("saving checkpoint at iteration    2000 to /checkpoints/llama-70b",),
    ),
    Signature(
        name="checkpoint-deepspeed",
        kind=Kind.CHECKPOINT_SAVED,
        pattern=rx(r"Checkpoint global_step(?P<step>\d+) is ready now"),
        summary="checkpoint saved at step {step}",
        phrases=("is ready now",),
        extract=checkpoint,
        examples=(
            "[2024-03-01 10:00:00,000] [INFO] [engine.py:3488:_save_zero_checkpoint] [Torch] Checkpoint global_step1000 is ready now!",
        ),
        near_misses=("[Torch] Checkpoint global_step1000 is about to be saved!",),
    ),
    Signature(
        name="checkpoint-hf-trainer",
        kind=Kind.CHECKPOINT_SAVED,
        pattern=rx(r"Saving model checkpoint to (?P<path>\S*checkpoint-(?P<step>\d+)\S*)"),
        summary="checkpoint saved at step {step}",
        phrases=("Saving model checkpoint to",),
        extract=checkpoint,
        examples=(
            "[INFO|trainer.py:3305] 2024-05-02 10:01:02,123 >> Saving model checkpoint to /output/checkpoint-500",
        ),
        near_misses=("Loading model checkpoint from /output/checkpoint-500",),
    ),
    Signature(
        name="checkpoint-lightning",
        kind=Kind.CHECKPOINT_SAVED,
        pattern=rx(r"global step (?P<step>\d+):[^\n]{0,512}?saving model to '(?P<path>[^'\n]+)'"),
        summary="checkpoint saved at step {step}",
        phrases=("saving model to",),
        extract=checkpoint,
        examples=(
            "Epoch 3, global step 1000: 'val_loss' reached 0.51234 (best 0.51234), saving model to"
            " '/ckpt/epoch=3-step=1000.ckpt' as top 1",
        ),
        near_misses=("Epoch 3, global step 1000: 'val_loss' was not in top 1",),
    ),
    Signature(
        name="checkpoint-generic",
        kind=Kind.CHECKPOINT_SAVED,
        pattern=rx(r"(?<![Nn]o )(?<![Nn]ot )\b(?:[Cc]heckpoint (?:saved|written)|[Ss]aved (?:a |the )?checkpoint)\b"),
        summary="checkpoint saved",
        phrases=(
            "checkpoint saved",
            "checkpoint written",
            "saved checkpoint",
            "saved a checkpoint",
            "saved the checkpoint",
        ),
        extract=checkpoint,
        examples=(
            "Saved checkpoint to /ckpt/llama/step_1200 (step=1200)",
            "checkpoint saved: gs://bucket/run7/iter_0004000",
        ),
        near_misses=("Failed to save checkpoint to /ckpt/llama/step_1200: No space left on device",),
    ),
    Signature(
        # (a link back up within seconds is a flap the traffic rides out: parse.SETTLED)
        name="nic-link-down",
        kind=Kind.NETWORK_ERROR,
        # (IB/core 6.x: "mlx5_0: Port: %u Link DOWN", its "Link ACTIVE" when back)
        pattern=rx(
            r"(?<![\w.-])(?P<device>[\w.-]+):? (?:NIC )?Link (?:is )?[Dd]own\b"
            r"|(?<![\w.-])(?P<ibdev>[\w.-]+): Port: (?P<port>\d{1,3}) Link DOWN\b"
        ),
        summary="network link down on {device}",
        phrases=("Link is Down", "Link down"),
        extract=lambda m, _t: {"device": f"{m.group('ibdev')} port {m.group('port')}"} if m.group("ibdev") else {},
        examples=(
            "ice 0000:17:00.0 ens1f0: NIC Link is Down",
            "mlx5_core 0000:0c:00.0 ibp12s0: Link down",
            "mlx5_core 0000:0a:00.0 mlx5_0: Port: 1 Link DOWN",
        ),
        near_misses=("ice 0000:17:00.0 ens1f0: NIC Link is Up, 100 Gbps Full Duplex",),
    ),
    Signature(
        name="nic-link-up",
        kind=None,
        pattern=rx(
            r"(?<![\w.-])(?P<device>[\w.-]+):? (?:NIC )?Link (?:is )?[Uu]p\b"
            r"|(?<![\w.-])(?P<ibdev>[\w.-]+): Port: (?P<port>\d{1,3}) Link ACTIVE\b"
        ),
        summary="network link up on {device}",
        extract=lambda m, _t: {"device": f"{m.group('ibdev')} port {m.group('port')}"} if m.group("ibdev") else {},
        phrases=("Link is Up", "Link up", "Link ACTIVE"),
        examples=(
            "ixgbe 0000:af:00.1 enp175s0f1: NIC Link is Up 10 Gbps, Flow Control: RX/TX",
            "mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE",
        ),
        near_misses=("ixgbe 0000:af:00.1 enp175s0f1: NIC Link is Down",),
    ),
    Signature(
        # the ConnectX firmware no longer answering the driver (drivers/net/ethernet/mellanox/mlx5/core/cmd.c:
        # "cmd[%d]: %s(0x%x) No done completion", "%s(0x%x) timeout. Will cause a leak of a command resource";
        # health.c: "device's health compromised - reached miss count", "Fatal error %u detected"): its RDMA
        # traffic stops with it
        name="mlx5-firmware-stuck",
        kind=Kind.NETWORK_ERROR,
        pattern=rx(
            r"mlx5_core (?P<device>[0-9a-fA-F:.]{1,32}):[^\n]{0,128}?(?:\b[A-Z][A-Z0-9_]{1,40}\(0x[0-9a-fA-F]{1,8}\)"
            r" (?:No done completion|timeout\. Will cause a leak of a command resource)"
            r"|device's health compromised|Fatal error \d{1,6} detected"
            # every command slot held by one the firmware never completed (cmd.c "failed to allocate command entry")
            r"|cmd_work_handler:\d{1,6}:\(pid \d{1,9}\): failed to allocate command entry)"
        ),
        summary="NIC {device}: its firmware stopped answering",
        phrases=(
            "No done completion",
            "Will cause a leak of a command resource",
            "health compromised",
            "Fatal error",
            "failed to allocate command entry",
        ),
        examples=(
            "b1360: [14280.445220] mlx5_core 0000:61:00.0: wait_func_handle_exec_timeout:1104:(pid 141183): cmd[22]:"
            " CREATE_DCT(0x710) No done completion",
            "mlx5_core 0000:61:00.0: wait_func:1132:(pid 141181): CREATE_DCT(0x710) timeout. Will cause a leak of a"
            " command resource",
            "mlx5_core 0000:3b:00.0: poll_health:739:(pid 0): device's health compromised - reached miss count",
        ),
        near_misses=("mlx5_core 0000:61:00.0: mlx5_cmd_init:2180:(pid 1): cmdif revision 5",),
    ),
    Signature(
        name="mlx5-cable-error",
        kind=Kind.NETWORK_ERROR,
        pattern=rx(
            r"(?:mlx5_core (?P<device>[0-9a-fA-F:.]{1,32}):[^\n]{0,256}?|mlx5_core: |mlx5_port_module_event:\d{1,6}:"
            r"\(pid \d{1,9}\): )Port module event\[error\]: module (?P<module>\d+), (?P<detail>[^\n]{1,120})"
        ),
        summary="NIC {device} port module error: {detail}",
        phrases=("Port module event",),
        convert={"module": int},
        examples=(
            "mlx5_core 0000:0c:00.0: mlx5_port_module_event:1162:(pid 0): Port module event[error]: module 0, Cable"
            " error, Bus stuck (I2C or data shorted)",
        ),
        near_misses=(
            "mlx5_core 0000:0c:00.0: mlx5_port_module_event:1154:(pid 0): Port module event: module 0, Cable plugged",
        ),
    ),
    Signature(
        name="netdev-watchdog",
        kind=Kind.NETWORK_ERROR,
        # the 6.x form names the CPU instead ("<driver> <bus> <dev>: NETDEV WATCHDOG: CPU: %d: transmit queue %u
        # timed out %u ms")
        pattern=rx(
            r"NETDEV WATCHDOG: (?:CPU: \d{1,4}: |(?P<device>\S+) \((?P<driver>[^)]*)\): )transmit queue (?P<queue>\d+)"
            r" timed out"
            # Intel i40e/ice resetting after the watchdog fired ("tx_timeout recovery level %d, txqueue %d" or
            # "hung_queue %d" by version)
            r"|(?:i40e|ice) [0-9a-fA-F:.]{7,16} (?P<device2>[\w.-]{1,16}): tx_timeout recovery level \d"
            # mlx5e's own report of the watchdog's timeout ("%s: TX timeout detected", its reporter's "TX timeout on
            # queue: %d, SQ: 0x%x, CQ: 0x%x, SQ Cons: 0x%x SQ Prod: 0x%x, usecs since last trans: %u")
            r"|mlx5_core [0-9a-fA-F:.]{7,16} (?P<device3>[\w.-]{1,16}): TX timeout (?:detected|on queue: (?P<queue2>\d{1,5}))"
        ),
        summary="NIC {device} transmit queue {queue} timed out",
        phrases=("NETDEV WATCHDOG", "tx_timeout recovery level", "TX timeout detected", "TX timeout on queue"),
        extract=lambda m, _t: (
            {"device": m.group("device2")}
            if m.group("device2")
            else {"device": m.group("device3"), **({"queue": int(m.group("queue2"))} if m.group("queue2") else {})}
            if m.group("device3")
            else {}
        ),
        convert={"queue": int},
        examples=(
            "NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue 3 timed out 5120 ms",
            "NETDEV WATCHDOG: ib0.beef (): transmit queue 26 timed out",
            "r8125 0000:22:04.0 eth4: NETDEV WATCHDOG: CPU: 3: transmit queue 0 timed out 5010 ms",
            "i40e 0000:22:00.0 enp34s0f0: tx_timeout recovery level 1, hung_queue 11",
            "mlx5_core 0000:13:00.1 eth1: TX timeout detected",
            "mlx5_core 0000:13:00.1 eth1: TX timeout on queue: 19, SQ: 0x1a7, CQ: 0x4ab, SQ Cons: 0x0 SQ Prod: 0x1,"
            " usecs since last trans: 27541000",
        ),
        near_misses=("NETDEV: eth0 transmit queue 3 restarted",),
    ),
    Signature(
        # the fabric manager's own log: an NVSwitch fatal error it detected ("detected NVSwitch fatal error %d on fid
        # %d on NVSwitch pci bus id %s physical id %d port %d"), or it giving up on the node's topology ("detected
        # number of NVSwitches don't match with any supported system topology, aborting fabric manager"): the node's
        # NVLink fabric
        name="fabric-manager-fatal",
        kind=Kind.NVLINK_ERROR,
        pattern=rx(
            r"detected NVSwitch fatal error (?P<sxid>\d{1,6}) on fid \d{1,4} on NVSwitch pci bus id"
            r"|detected number of NVSwitches don't match with any supported system topology, aborting fabric manager"
        ),
        summary="fabric manager: {line}",
        phrases=("detected NVSwitch fatal error", "aborting fabric manager"),
        convert={"sxid": int},
        fixed={"counter": "fabric manager"},
        extract=whole,
        examples=(
            "[Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus"
            " id 00000000:86:00.0 physical id 3 port 33",
            "detected number of NVSwitches don't match with any supported system topology, aborting fabric manager",
        ),
        near_misses=("detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci bus id 00000000:86:00.0",),
    ),
    Signature(
        # RM failing NVLink link discovery between peers ("knvlinkDiscoverPostRxDetLinks_GH100: Getting peer0's
        # postRxDetLinkMask failed!", "knvlinkUpdatePostRxDetectLinkMask_IMPL: Failed to update Rx Detect Link
        # mask!"): the GPU's NVLinks did not train
        name="nvrm-nvlink-rx-detect-failed",
        kind=Kind.NVLINK_ERROR,
        pattern=rx(r"NVRM: knvlink\w{0,60}PostRxDet\w{0,40}: [^\n]{0,80}?(?:[Ff]ailed)"),
        summary="NVLink link discovery failed: {line}",
        phrases=("NVRM",),
        wildcards=("knvlink*",),
        fixed={"counter": "nvlink rx detect"},
        extract=whole,
        examples=(
            "kernel: NVRM: knvlinkDiscoverPostRxDetLinks_GH100: Getting peer0's postRxDetLinkMask failed!",
            "[6619715.535712] NVRM: knvlinkUpdatePostRxDetectLinkMask_IMPL: Failed to update Rx Detect Link mask!",
        ),
        near_misses=("NVRM: knvlinkUpdatePostRxDetectLinkMask_IMPL: Rx Detect Link mask 0xff",),
    ),
    Signature(
        # a fatal machine check the platform reported through APEI ("[Hardware Error]: event severity: fatal"):
        # the node goes down with it
        name="apei-fatal-hardware-error",
        kind=Kind.NODE_REBOOTED,
        # (and the kernel's own fatal machine check, which always panics though the panic line may not reach the
        # log store: "mce: [Hardware Error]: Machine check: Processor context corrupt"; AMD's reason, printed at the
        # next boot, for the last reset: "x86/amd: Previous system reset reason [0x%08x]: an uncorrected error
        # caused a data fabric sync flood event")
        pattern=rx(
            r"\[Hardware Error\]: (?:event severity: fatal|Machine check: Processor context corrupt)"
            r"|Previous system reset reason \[0x[0-9a-f]{8}\]: an uncorrected error"
        ),
        summary="the node's hardware reported a fatal error (APEI)",
        phrases=("event severity: fatal", "Processor context corrupt", "Previous system reset reason"),
        fixed={"reason": "fatal hardware error"},
        examples=(
            "{1}[Hardware Error]: event severity: fatal",
            "mce: [Hardware Error]: Machine check: Processor context corrupt",
            "x86/amd: Previous system reset reason [0x08000800]: an uncorrected error caused a data fabric sync flood"
            " event",
        ),
        near_misses=("{1}[Hardware Error]: event severity: corrected",),
    ),
    Signature(
        # an NVSwitch's fatal error (nvswitch driver "nvidia-nvswitch%d: SXid (PCI:%s): %d, Fatal, Link %d ..."):
        # the node's NVLink fabric, every GPU on it; non-fatal SXids are corrected
        name="nvswitch-fatal-sxid",
        kind=Kind.NVLINK_ERROR,
        pattern=rx(r"nvidia-nvswitch\d{1,2}: SXid \(PCI:[0-9a-fA-F:.]{7,16}\): (?P<sxid>\d{1,6}), Fatal\b"),
        summary="NVSwitch fatal error SXid {sxid}: {line}",
        phrases=("SXid",),
        convert={"sxid": int},
        fixed={"counter": "nvswitch sxid"},
        extract=whole,
        examples=("[6781753.400584] nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up",),
        near_misses=(
            "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error",
        ),
    ),
    Signature(
        # IPoIB's transmit timeout (ipoib_main.c ipoib_timeout: "transmit timeout: latency %d msecs")
        name="ipoib-transmit-timeout",
        kind=Kind.NETWORK_ERROR,
        pattern=rx(r"(?P<device>ib[\w.]{0,16}): transmit timeout: latency (?P<ms>\d{1,9}) msecs"),
        summary="InfiniBand interface {device}: transmit timeout ({ms} ms)",
        phrases=("transmit timeout",),
        convert={"ms": int},
        examples=("[  281.260866] ib1: transmit timeout: latency 1120 msecs",),
        near_misses=("ib1: transmit timeout set to 5000 msecs",),
    ),
    Signature(
        # AWS ENA's own watchdogs resetting the device (ena_netdev.c: "Keep alive watchdog timeout.", "The number of
        # lost tx completions is above the threshold (%d > %d). Reset the device"); the node's traffic stops
        # meanwhile. "Found a Tx that wasn't completed on time" is a notice per late buffer, no fault by itself.
        name="ena-fault",
        kind=Kind.NETWORK_ERROR,
        pattern=rx(
            r"(?:ena [0-9a-fA-F:.]{7,16} )?(?<![\w.-])(?P<device>[\w.-]{1,16}): (?P<detail>Keep alive watchdog timeout(?=\.)"
            r"|The number of lost tx completions is above the threshold[^\n]{0,40}?Reset the device)"
        ),
        summary="ENA {device}: {detail}",
        phrases=("Keep alive watchdog timeout", "lost tx completions is above the threshold"),
        examples=(
            "kernel: ena 0000:00:05.0 eth0: Keep alive watchdog timeout.",
            "kernel: ena 0000:00:05.0 eth0: The number of lost tx completions is above the threshold (129 > 128)."
            " Reset the device",
            "ens5: The number of lost tx completions is above the threshold (361 > 128). Reset the device",
        ),
        near_misses=(
            "ena 0000:00:05.0 eth0: Keep alive watchdog timeout set to 6000 ms",
            "ena 0000:00:05.0 eth0: Found a Tx that wasn't completed on time, qid 2, index 971.",
        ),
    ),
    # --- node agents: what they print about the node a pod runs on ---
    Signature(
        # aws-node-termination-handler: the drain event it acts on, as a Go struct ("Got drain event from channel
        # {...} {EventID:spot-itn-... Kind:SPOT_ITN ...}", v1.x) or in its event store's JSON ("Kind":"SPOT_ITN")
        name="nth-spot-interruption",
        kind=Kind.SPOT_INTERRUPTION,
        pattern=rx(r"""Kind"?:"?(?P<event_type>SPOT_ITN)\b"""),
        summary="aws-node-termination-handler: spot interruption notice",
        phrases=("SPOT_ITN",),
        wildcards=("?*spot_itn",),  # the struct form "Kind:SPOT_ITN" is one token to the analyzer
        fixed={"provider": "aws", "action": "spot-interruption"},
        examples=(
            "2020/04/28 23:00:46 Got drain event from channel {InstanceID:i-027a7181c7dcdf2ff} {EventID:spot-itn-18"
            " Kind:SPOT_ITN Description:Spot ITN received. Instance will be interrupted at 2020-04-28T23:02:46.246Z",
        ),
        near_misses=("monitoring for SPOT_ITN events is disabled (enableSpotInterruptionDraining=false)",),
    ),
    Signature(
        # EC2's instance metadata spot/instance-action document ({"action": "terminate"|"stop"|"hibernate", "time":
        # "..."}, two minutes ahead) as an agent or a script polling it prints it, quoted or JSON-escaped
        name="ec2-spot-instance-action",
        kind=Kind.SPOT_INTERRUPTION,
        pattern=rx(
            r"""\\?"action\\?" ?: ?\\?"(?P<action>terminate|stop|hibernate)\\?", ?\\?"time\\?" ?: ?\\?"\d{4}-"""
            # the same notice as EventBridge delivers it (Karpenter's and NTH's queue mode read these)
            r'|"detail-type" ?: ?"EC2 Spot Instance Interruption Warning"'
        ),
        summary="EC2 spot interruption notice: {action}",
        phrases=(
            "action terminate time",
            "action stop time",
            "action hibernate time",
            "EC2 Spot Instance Interruption Warning",
        ),
        fixed={"provider": "aws", "event_type": "spot-interruption"},
        examples=(
            '{"level":"warn","message":"Spot interruption payload received: {\\"action\\":\\"terminate\\",'
            '\\"time\\":\\"2025-03-31T16:34:24Z\\"}"}',
            '{"action": "stop", "time": "2017-09-18T08:22:00Z"}',
            '{\n    "version": "0",\n    "detail-type": "EC2 Spot Instance Interruption Warning",\n    "source": "aws.ec2"',
        ),
        near_misses=('{"action": "CordonAndDrain", "time": "2023-06-12T11:47:23Z"}',),
    ),
    Signature(
        # SkyPilot's managed-job controller recovering a spot cluster ("Cluster is preempted (status: %s).
        # Recovering...", "The cluster is preempted.")
        name="skypilot-cluster-preempted",
        kind=Kind.SPOT_INTERRUPTION,
        # (not 2024+'s "Cluster is preempted or failed. Recovering...", printed for any loss of the cluster, spot or not)
        pattern=rx(r"\b[Cc]luster is preempted\b(?! or failed)"),
        summary="SkyPilot: the spot cluster was preempted",
        phrases=("cluster is preempted",),
        fixed={"action": "spot-interruption"},
        examples=(
            "(sky-de99-weichiang, pid=734143) I 12-10 21:39:39 controller.py:118] Cluster is preempted (status:"
            " INIT). Recovering...",
            "I 05-04 00:52:46 controller.py:100] The cluster is preempted.",
        ),
        near_misses=(
            "Cluster is provisioned on spot instances; preemption recovery enabled",
            "I 09-12 22:49:49 controller.py:545] Cluster is preempted or failed. Recovering...",
        ),
    ),
    Signature(
        name="nth-scheduled-event",
        kind=Kind.MAINTENANCE_NOTICE,
        pattern=rx(
            r"""Kind"?:"?(?P<event_type>SCHEDULED_EVENT)\b[^\n]{0,300}?Description"?:"?(?P<text>[^"\n]{1,200})"""
        ),
        summary="aws-node-termination-handler: EC2 scheduled event: {text}",
        phrases=("SCHEDULED_EVENT",),
        wildcards=("?*scheduled_event",),
        fixed={"provider": "aws"},
        examples=(
            '{"event":{"EventID":"instance-event-0c6a1ed93bfc96fd4","Kind":"SCHEDULED_EVENT","Description":'
            '"instance-stop will occur between 28 Dec 2020 06:00:00 GMT and  because The instance is running on'
            ' degraded hardware\\n","State":"active"},"message":"Adding new event to the event store"}',
        ),
        near_misses=("monitoring for SCHEDULED_EVENT events is enabled",),
    ),
    Signature(
        # Karpenter's interruption controller (controller.interruption): the SQS message it acts on
        name="karpenter-interruption",
        kind=Kind.SPOT_INTERRUPTION,
        pattern=rx(r""""?messageKind"?[:=] ?"?(?P<event_type>SpotInterruptionKind|spot_interrupted)\b"""),
        summary="Karpenter: spot interruption, cordon and drain",
        phrases=("SpotInterruptionKind", "spot_interrupted"),
        extract=target_nodes,
        fixed={"provider": "aws", "action": "spot-interruption"},
        examples=(
            '2023-06-12T11:47:23.814Z\tDEBUG\tcontroller.interruption\tremoving offering from offerings\t{"messageKind":'
            ' "SpotInterruptionKind", "action": "CordonAndDrain", "capacity-type": "spot"}',
            '{"message": "initiating delete from interruption message", "controller": "interruption", "messageKind":'
            ' "spot_interrupted", "action": "CordonAndDrain"}',
        ),
        near_misses=('{"messageKind": "RebalanceRecommendationKind", "action": "NoAction"}',),
    ),
    Signature(
        # Karpenter's disruption controller taking nodes away for its own reasons (drift, consolidation,
        # emptiness, expiry): "disrupting via drift replace, terminating 1 nodes (1 pods) ..." (v0.32+),
        # "deprovisioning via consolidation delete, terminating 5 machines ..." (v0.2x-0.31), and v1's structured
        # "disrupting node(s)" with its "reason"; a controller's stop, no fault
        name="karpenter-disruption",
        kind=Kind.DRAIN,
        pattern=rx(
            r"(?:disrupting|deprovisioning) via (?P<method>[a-z]{3,16}) (?:replace|delete), terminating"
            r'|"message": ?"disrupting node\(s\)"[^\n]{0,400}?"reason": ?"(?P<reason>[a-z_]{3,32})"'
        ),
        summary="Karpenter: disrupting nodes ({line})",
        phrases=("disrupting via", "deprovisioning via", "disrupting node(s)"),
        fixed={"by": "karpenter"},
        extract=target_nodes,
        examples=(
            '{"level":"INFO","logger":"controller.disruption","message":"disrupting via drift replace, terminating 1'
            ' nodes (1 pods) ip-10-129-90-75.us-west-2.compute.internal/c6a.large/on-demand"}',
            "controller.deprovisioning\tdeprovisioning via consolidation delete, terminating 5 machines"
            " ip-10-11-2-6.us-west-2.compute.internal/t3.xlarge/spot",
            '{"level":"INFO","logger":"controller","message":"disrupting node(s)","controller":"disruption","reason":'
            '"underutilized","decision":"replace","disrupted-node-count":1}',
        ),
        near_misses=('{"message":"disrupting node(s) is blocked by a budget","controller":"disruption"}',),
    ),
    Signature(
        # aws-node-termination-handler (queue mode) draining for an Auto Scaling lifecycle hook ("ASG Lifecycle
        # Termination event received. Instance will be interrupted at %s"): scale-in or instance refresh, a stop
        name="nth-asg-termination",
        kind=Kind.DRAIN,
        # (and its log as it acts: "Requesting instance drain event-id=asg-lifecycle-term-... node-name=...")
        pattern=rx(r"ASG Lifecycle Termination event received|Requesting instance drain event-id=asg-lifecycle-term-"),
        summary="aws-node-termination-handler: the Auto Scaling group is terminating the instance",
        phrases=("ASG Lifecycle Termination event received", "Requesting instance drain"),
        extract=target_nodes,
        fixed={"provider": "aws", "by": "autoscaling"},
        examples=(
            '"Description":"ASG Lifecycle Termination event received. Instance will be interrupted at 2023-01-20'
            ' 22:25:57 +0000 UTC \\n","Kind":"SQS_TERMINATE"',
            "2023/01/20 22:28:00 INF Requesting instance drain event-id=asg-lifecycle-term-3130 instance-id=i-0610"
            " kind=SQS_TERMINATE node-name=ip-172-31-56-70.us-west-2.compute.internal",
        ),
        near_misses=("ASG Lifecycle hook heartbeat sent",),
    ),
    Signature(
        # Azure IMDS Scheduled Events as agents and harnesses log them (JSON or a Python dict): an event its owner
        # asked for (EventSource "User": "restarted as requested by authorized user") is a deliberate stop, not
        # the platform's maintenance
        name="azure-scheduled-event-user",
        kind=Kind.POD_DELETED,
        pattern=rx(
            r"""['"]EventType['"]: ?['"](?P<event_type>Reboot|Redeploy|Freeze|Terminate|Preempt)['"]"""
            r"""[^\n]{0,600}?['"]EventSource['"]: ?['"]User['"]"""
        ),
        summary="the VM's owner asked for a {event_type} (Azure scheduled event from the user)",
        phrases=("EventSource",),
        fixed={"by": "user", "provider": "azure"},
        examples=(
            "Unhandled Azure scheduled event: {'EventId': 'CA9C0DC4', 'EventStatus': 'Scheduled', 'EventType':"
            " 'Reboot', 'ResourceType': 'VirtualMachine', 'Description': 'Virtual machine is going to be restarted as"
            " requested by authorized user.', 'EventSource': 'User', 'DurationInSeconds': -1}",
        ),
        near_misses=(
            "{'EventType': 'Reboot', 'EventSource': 'Platform', 'NotBefore': 'Thu, 16 Mar 2023 14:01:28 GMT'}",
        ),
    ),
    Signature(
        name="azure-scheduled-event",
        kind=Kind.MAINTENANCE_NOTICE,
        pattern=rx(
            r"""['"]EventType['"]: ?['"](?P<event_type>Reboot|Redeploy|Terminate|Preempt)['"]"""
            r"""[^{}]{0,600}?['"]EventSource['"]: ?['"]Platform['"]"""  # (within the event's object, over lines too)
            # IMDS's own order before EventSource existed (api-version 2017-2019): EventId, EventStatus, EventType.
            # A Freeze (seconds of pause) is left to the kubelet's and the node's own evidence in either form.
            r"""|['"]EventStatus['"]: ?['"]Scheduled['"], ?['"]EventType['"]: ?['"](?P<imds_type>Reboot|Redeploy|"""
            r"""Terminate|Preempt)['"]"""
        ),
        summary="Azure scheduled event: {line}",
        phrases=("EventSource", "EventStatus"),
        fixed={"provider": "azure"},
        extract=lambda m, _t: {"event_type": m.group("event_type") or m.group("imds_type"), "line": m.group(0)},
        examples=(
            "{'EventType': 'Reboot', 'EventSource': 'Platform', 'NotBefore': 'Thu, 16 Mar 2023 14:01:28 GMT'}",
            '{"DocumentIncarnation":1,"Events":[{"EventId":"8A506C35-679A-4F78-9D76-C16DBE65EE6F","EventStatus":'
            '"Scheduled","EventType":"Reboot","ResourceType":"VirtualMachine","NotBefore":"Mon, 26 Nov 2018 10:52:34'
            ' GMT"}]}',
        ),
        near_misses=(
            "{'EventType': 'Reboot', 'EventSource': 'User'}",
            '{"EventId":"8A50","EventStatus":"Scheduled","EventType":"Freeze","ResourceType":"VirtualMachine"}',
        ),
    ),
    Signature(
        # EC2's instance metadata scheduled events (latest/meta-data/events/maintenance/scheduled: NotBefore, Code,
        # Description, EventId, State) as agents and scripts print them; a canceled or completed one is no notice
        name="ec2-scheduled-event",
        kind=Kind.MAINTENANCE_NOTICE,
        pattern=rx(
            r""""Code" ?: ?"(?P<event_type>instance-reboot|system-reboot|system-maintenance|instance-retirement|"""
            r"""instance-stop)"(?![^}]{0,600}"State" ?: ?"(?:canceled|completed)")"""
            # AWS Tools for PowerShell's list ("Code         : instance-stop"), a canceled one "[Canceled] ..."
            r"|^Code {1,16}: (?P<ps_type>instance-reboot|system-reboot|system-maintenance|instance-retirement"
            r"|instance-stop)[ \t]*$(?!\n[ \t]{0,4}Description {1,16}: \[(?:Canceled|Completed)\])",
            re.MULTILINE,
        ),
        summary="EC2 scheduled event: {event_type}",
        phrases=("instance-reboot", "system-reboot", "system-maintenance", "instance-retirement", "instance-stop"),
        fixed={"provider": "aws"},
        extract=lambda m, _t: {"event_type": m.group("ps_type")} if m.group("ps_type") else {},
        examples=(
            '[ {\n  "NotBefore" : "25 Feb 2021 02:00:00 GMT",\n  "Code" : "instance-stop",\n  "Description" : "The'
            ' instance is running on degraded hardware",\n  "EventId" : "instance-event-087e363178449a61e",\n'
            '  "State" : "active"\n} ',
            "Code         : instance-stop\nDescription  : The instance is running on degraded hardware\nNotBefore    :"
            " 5/23/2015 12:00:00 AM",
        ),
        near_misses=(
            '{"NotBefore" : "25 Feb 2021 02:00:00 GMT", "Code" : "system-reboot", "Description" : "Canceled -'
            ' scheduled reboot", "EventId" : "instance-event-087e", "State" : "canceled"}',
            "Code         : system-reboot\nDescription  : [Canceled] scheduled reboot",
        ),
    ),
    Signature(
        # AWS Health's scheduled change for an EC2 instance (DescribeEvents and its EventBridge event "AWS Health
        # Event": "eventTypeCode": "AWS_EC2_PERSISTENT_INSTANCE_RETIREMENT_SCHEDULED", ..._REBOOT_MAINTENANCE_SCHEDULED,
        # ..._SYSTEM_REBOOT_MAINTENANCE_SCHEDULED), what Karpenter's interruption queue reads as a ScheduledChange;
        # a closed one is past
        name="aws-health-scheduled-change",
        kind=Kind.MAINTENANCE_NOTICE,
        pattern=rx(
            r'"eventTypeCode" ?: ?"(?P<event_type>AWS_EC2_[A-Z_]{1,60}_SCHEDULED)"'
            r'(?![^}]{0,600}"statusCode" ?: ?"closed")'
        ),
        summary="AWS Health scheduled change: {event_type}",
        phrases=("eventTypeCode",),
        fixed={"provider": "aws"},
        examples=(
            '"eventTypeCategory": "scheduledChange",\n "eventTypeCode": "AWS_EC2_PERSISTENT_INSTANCE_RETIREMENT_SCHEDULED",'
            '\n "statusCode": "upcoming",',
        ),
        near_misses=(
            '"eventTypeCode": "AWS_EC2_PERSISTENT_INSTANCE_RETIREMENT_SCHEDULED", "statusCode": "closed"',
            '"eventTypeCode": "AWS_EC2_OPERATIONAL_ISSUE", "statusCode": "open"',
        ),
    ),
    Signature(
        # Slurm's step daemon cancelling the job at its time limit (slurmstepd: "*** JOB %u ON %s CANCELLED AT %s
        # DUE TO TIME LIMIT ***", also for a STEP): the job's deadline, as a Slurm-on-Kubernetes pod prints it
        name="slurm-time-limit",
        kind=Kind.DEADLINE_EXCEEDED,
        pattern=rx(r"\*\*\* (?:JOB|STEP) [\w.]{1,64}(?: ON \S{1,128})? CANCELLED AT \S{1,40} DUE TO TIME LIMIT \*\*\*"),
        summary="Slurm cancelled the job at its time limit",
        phrases=("DUE TO TIME LIMIT",),
        fixed={"reason": "DeadlineExceeded"},
        examples=(
            "slurmstepd: error: *** JOB 13055114 ON compute-h-17-51 CANCELLED AT 2020-07-11T22:48:26 DUE TO TIME"
            " LIMIT ***",
        ),
        near_misses=("slurmstepd: error: *** JOB 13055114 ON compute-h-17-51 CANCELLED AT 2020-07-11T22:48:26 ***",),
    ),
    Signature(
        # ... and for a task of the step that failed ("... DUE TO TASK FAILURE ***", srun's --kill-on-bad-exit):
        # the other tasks are torn down for it
        name="slurm-task-failure",
        kind=Kind.LAUNCHER_TEARDOWN,
        pattern=rx(
            r"\*\*\* (?:JOB|STEP) [\w.]{1,64}(?: ON \S{1,128})? CANCELLED AT \S{1,40} DUE TO TASK FAILURE \*\*\*"
        ),
        summary="Slurm cancelled the step because one of its tasks failed",
        phrases=("DUE TO TASK FAILURE",),
        examples=(
            "[2026-04-29T23:36:37.809] error: *** STEP 52222788.0 ON nid002888 CANCELLED AT 2026-04-29T23:36:37 DUE TO"
            " TASK FAILURE ***",
        ),
        near_misses=("slurmstepd: error: *** STEP 52222788.0 ON nid002888 CANCELLED AT 2026-04-29T23:36:37 ***",),
    ),
    Signature(
        # ... and for a job of higher priority ("... DUE TO PREEMPTION ***"): the scheduler's preemption
        name="slurm-preemption",
        kind=Kind.PREEMPTED,
        pattern=rx(r"\*\*\* (?:JOB|STEP) [\w.]{1,64}(?: ON \S{1,128})? CANCELLED AT \S{1,40} DUE TO PREEMPTION \*\*\*"),
        summary="Slurm cancelled the job to preempt it for another",
        phrases=("DUE TO PREEMPTION",),
        examples=(
            "slurmstepd: error: *** JOB 32391783 ON cn119 CANCELLED AT 2021-06-18T13:05:36 DUE TO PREEMPTION ***",
        ),
        near_misses=("slurmstepd: error: *** JOB 32391783 ON cn119 CANCELLED AT 2021-06-18T13:05:36 ***",),
    ),
    Signature(
        # torch.distributed.elastic's worker status events (events/__init__.py, "torchelastic.worker.status.<STATE>"
        # with the run's metadata): SUCCEEDED is the run finishing well
        name="torchelastic-status-succeeded",
        kind=Kind.JOB_COMPLETED,
        # (the agent's own lines, agent/server/api.py: "Local worker group finished (SUCCEEDED). Waiting %s seconds
        # for other agents to finish" before 1.10, "[%s] worker group successfully finished. Waiting ..." after)
        pattern=rx(
            r"torchelastic\.worker\.status\.SUCCEEDED|Local worker group finished \(SUCCEEDED\)"
            r"|\] worker group successfully finished\. Waiting"
            # torchelastic 0.2: "[%s] All workers successfully finished."
            r"|\] All workers successfully finished\."
            # the exit barrier it waits at only after its workers succeeded ("Done waiting for other agents. Elapsed:
            # %s seconds"), and DeepSpeed's launcher for each rank that returned 0 ("Process %s exits successfully.")
            r"|Done waiting for other agents\. Elapsed: |\bProcess \d{1,10} exits successfully\."
        ),
        summary="the launcher's workers finished (SUCCEEDED)",
        phrases=(
            "torchelastic.worker.status.SUCCEEDED",
            "worker group finished",
            "worker group successfully finished",
            "All workers successfully finished",
            "waiting for other agents",  # ("api:Done" is one token to the analyzer)
            "exits successfully",
        ),
        examples=(
            '{"name": "torchelastic.worker.status.SUCCEEDED", "source": "WORKER", "timestamp": 0}',
            "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (SUCCEEDED). Waiting 300"
            " seconds for other agents to finish",
            "INFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully finished. Waiting 300"
            " seconds for other agents to finish.",
            "INFO:torch.distributed.elastic.agent.server.api:Done waiting for other agents. Elapsed: 0.0007 seconds",
            "[2024-03-01 10:00:00,000] [INFO] [launch.py:351:main] Process 19637 exits successfully.",
        ),
        near_misses=(
            '{"name": "torchelastic.worker.status.FAILED", "source": "AGENT", "raw_error": "..."}',
            "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (FAILED). Waiting 300 seconds",
        ),
    ),
    Signature(
        # a training loop's own last words when it ran to its end: Lightning's fit loop ("`Trainer.fit` stopped:
        # `max_epochs=%r` reached." / `max_steps=`), Hugging Face Trainer's "Training completed. Do not forget to
        # share your model", Megatron-LM's print_datetime("after training is done")
        name="training-finished",
        kind=Kind.JOB_COMPLETED,
        pattern=rx(
            r"`Trainer\.fit` stopped: `max_(?:epochs|steps)=\d{1,12}` reached"
            r"|Training completed\. Do not forget to share your model|\[after training is done\] datetime"
            # the Trainer's metrics of the finished train() as the example scripts and LLaMA-Factory log them
            # (Trainer.log_metrics("train", ...): "***** train metrics *****"), LLaMA-Factory v1's own stop
            r"|\*{5} train metrics \*{5}|Reached max_steps \(\d{1,12}\), stopping training"
            # torchtitan's train loop ("[titan] %(asctime)s - root - INFO - Training completed"); Lightning's callbacks
            # ending fit on purpose (EarlyStopping's "... Signaling Trainer to stop.", Timer's "Time limit reached.
            # Elapsed time is %s. Signaling Trainer to stop."); Megatron-LM's planned exits (--exit-duration-in-mins,
            # --exit-interval: print_datetime("exiting program after %s minutes" / "at iteration %d"))
            # (EarlyStopping's check_finite, "Monitored metric %s = nan is not finite. ... Signaling Trainer to
            # stop.", is the run's own stop on a non-finite value: nan-guard, earlier in the table, reads that line)
            r"|\[titan\][^\n]{0,80}?INFO - Training completed(?=[ \t]*(?:\n|$))|Signaling Trainer to stop\."
            r"|\[exiting program (?:after [\d.]{1,24} minutes|at iteration \d{1,12})\] datetime"
            # a RayJob's submitter (ray job submit --wait, its CLI's success line "Job '%s' succeeded")
            r"|SUCC cli\.py:\d{1,5} -- Job '[\w.-]{1,128}' succeeded"
            # Keras' EarlyStopping at the end of fit ("Epoch %d: early stopping", Keras 2's "Epoch %05d: early
            # stopping"), llama-recipes' train loop ("max training steps reached, stopping training"), submitit's
            # job once its function returned ("submitit - Job completed successfully")
            r"|(?m:^)Epoch \d{1,6}: early stopping[ \t]*$|max training steps reached, stopping training"
            r"|submitit - Job completed successfully"
        ),
        summary="the training loop ran to its end: {line}",
        phrases=(
            "Trainer.fit stopped",
            "Training completed. Do not forget",
            "after training is done",
            "train metrics",
            "stopping training",
            "succeeded",
            "Training completed",
            "Signaling Trainer to stop",
            "exiting program",
            "early stopping",
            "max training steps reached",
            "Job completed successfully",
        ),
        extract=whole,
        examples=(
            "`Trainer.fit` stopped: `max_epochs=30` reached.",
            "INFO:pytorch_lightning.utilities.rank_zero:`Trainer.fit` stopped: `max_steps=5000` reached.",
            "\n\nTraining completed. Do not forget to share your model on huggingface.co/models =)\n\n",
            "[after training is done] datetime: 2026-04-20 03:17:08",
            "***** train metrics *****\n  epoch                    =        3.0\n  train_loss               =     0.7228",
            "[INFO] Reached max_steps (1635), stopping training.",
            "2023-08-22 15:48:36,522 SUCC cli.py:34 -- Job 'rayjob-sample-ft8lh' succeeded",
            "[rank0]:[titan] 2026-05-18 16:05:29,420 - root - INFO - Training completed",
            "Monitored metric val_loss did not improve in the last 3 records. Best score: 0.412. Signaling Trainer to"
            " stop.",
            "[exiting program after 1190.0357275923093 minutes] datetime: 2021-08-08 01:00:51",
            "Epoch 8: early stopping",
            "Epoch 00014: early stopping",
            "max training steps reached, stopping training, total_train_steps:  6",
            "03/31/2022 21:08:31 - INFO - submitit - Job completed successfully",
        ),
        near_misses=(
            "`Trainer.fit` stopped: No training batches.",
            "[before the start of training step] datetime",
            "***** eval metrics *****",
            "[rank0]:[titan] 2026-05-18 16:05:29,420 - root - INFO - Training completed 100 steps, saving",
        ),
    ),
    Signature(
        # the node lifecycle controller's event, as klog writes it ("Event occurred" object=... reason="NodeNotReady")
        name="node-controller-not-ready",
        kind=Kind.NODE_NOT_READY,
        pattern=rx(r'Event occurred\\?"[^\n]{0,400}?reason=\\?"(?P<reason>NodeNotReady)\\?"'),
        summary="the node controller marked the node NotReady",
        phrases=("Event occurred",),
        examples=(
            'I0901 00:25:09.311469       1 event.go:291] "Event occurred" object="kube-system/coredns-f9fd979d6-w9lb9"'
            ' kind="Pod" apiVersion="v1" type="Warning" reason="NodeNotReady" message="Node is not ready"',
        ),
        near_misses=(
            'I0901 00:25:09.311469 1 event.go:291] "Event occurred" reason="NodeReady" message="Node is ready"',
        ),
    ),
    Signature(
        # the kubelet's eviction manager under a pressure threshold (eviction_manager.go "eviction manager:
        # attempting to reclaim %v", and admission refusing pods "node has conditions: [MemoryPressure]"): the node
        # short of a resource
        name="kubelet-eviction-pressure",
        kind=Kind.NODE_PRESSURE,
        pattern=rx(
            r"[Ee]viction manager: attempting to reclaim\"?(?: resourceName=\\?\")?(?: ?(?P<resource>[\w-]{2,32}))"
            r"|node has conditions: \[(?P<condition>(?:Memory|Disk|PID)Pressure)\]"
            # its next steps: "must evict pod(s) to reclaim %v", "pods ranked for eviction: %s", "pod is evicted
            # successfully", and the Event it records as its journal prints it ("type: 'Warning' reason: 'Evicted'
            # The node was low on resource: %s.")
            r"|[Ee]viction manager: must evict pod\(s\) to reclaim (?P<resource2>[\w-]{2,32})"
            r"|[Ee]viction manager: (?:pods ranked for eviction|pod is evicted successfully)"
            # 1.7-1.9's debug lines as a threshold stays crossed ("eviction manager: thresholds - reclaim not
            # satisfied: threshold [signal=%s, ...]", "eviction manager: node conditions - observed: [%s]")
            r"|[Ee]viction manager: thresholds - reclaim not satisfied: threshold \[signal=(?P<signal>[\w.]{2,40})"
            # (also 1.2x's structured form: "Eviction manager: node conditions - observed" nodeCondition=[...])
            r"|[Ee]viction manager: node conditions - observed(?:: |\"? nodeCondition=)\[\"?(?P<observed>(?:Memory|Disk|PID)Pressure)"
            r"|reason: 'Evicted' The node was low on resource: (?P<resource3>[\w-]{2,32})"
        ),
        summary="the kubelet is short of {resource}{condition}",
        phrases=(
            "attempting to reclaim",
            "node has conditions",
            "must evict pod(s) to reclaim",
            "pods ranked for eviction",
            "pod is evicted successfully",
            "The node was low on resource",
            "reclaim not satisfied",
            "node conditions - observed",
        ),
        # (repeated each 10 s while over the threshold; the cap of signature lines per node keeps the earliest, so
        # hours of one episode in a window can crowd a node's later lines out, as any repeating line can)
        extract=lambda m, _t: {
            "resource": m.group("resource")
            or m.group("resource2")
            or m.group("resource3")
            or _signal_resource(m.group("signal") or "")
            or (m.group("condition") or m.group("observed") or "").removesuffix("Pressure").lower()
        },
        examples=(
            "W0110 14:41:08.646423   23589 eviction_manager.go:332] eviction manager: attempting to reclaim imagefs",
            'I0412 10:01:02.000000    2213 eviction_manager.go:366] "Eviction manager: attempting to reclaim"'
            ' resourceName="ephemeral-storage"',
            "W0120 00:20:07.544864   32406 eviction_manager.go:142] Failed to admit pod kube-proxy-bbrr6_kube-system"
            "(860629c4) - node has conditions: [MemoryPressure]",
            "I0412 09:28:14.769517   14260 eviction_manager.go:344] eviction manager: must evict pod(s) to reclaim"
            " ephemeral-storage",
            'I0528 16:05:54.802914 2269385 eviction_manager.go:627] "Eviction manager: pod is evicted successfully"'
            ' pod="sre/infras-logstash-d484d57fc-rkx95"',
            'I0528 16:05:44.100000 2269385 eviction_manager.go:300] "Eviction manager: node conditions - observed"'
            ' nodeCondition=["MemoryPressure"]',
        ),
        near_misses=("eviction manager: no resources are starved",),
    ),
    Signature(
        # the eviction manager over a threshold with nothing to evict ("eviction thresholds have been met, but no
        # pods are active to evict"), or no way to rank pods for the resource (1.4-1.6's "no ranking function for
        # resource %s", it returns without evicting): its "must evict" a moment before evicted nobody (parse.SETTLED)
        name="kubelet-eviction-none-active",
        kind=None,
        pattern=rx(
            r"eviction thresholds have been met, but no pods are active to evict"
            r"|eviction manager: no ranking function for (?:resource|signal) \S{1,40}"
        ),
        summary="the kubelet had no pod to evict",
        phrases=("no pods are active to evict", "no ranking function for"),
        examples=(
            "E1010 09:05:34.484901 1 eviction_manager.go:355] eviction manager: eviction thresholds have been"
            " met, but no pods are active to evict",
            "E0822 23:51:03.731938    2684 eviction_manager.go:230] eviction manager: no ranking function for resource"
            " imagefs",
            "eviction manager: no ranking function for signal imagefs.available",
        ),
        near_misses=("eviction manager: pods ranked for eviction: trainer-0",),
    ),
    Signature(
        # the kubelet's pod lifecycle event generator stalled ("PLEG is not healthy: pleg was last seen active %v
        # ago; threshold is %v"): the kubelet reports its node NotReady until it recovers. Not the kubelet's first
        # moments, before it ran (a zero time's 2562047h47m16.854775807s, the largest Go duration; "pleg has yet to
        # be successful"). Its "skipping pod synchronization - [container runtime is down]" alone decides nothing:
        # kubelets before 1.13 print it in their first seconds with the runtime up (kubernetes#69613)
        name="kubelet-pleg-unhealthy",
        kind=Kind.NODE_NOT_READY,
        pattern=rx(r"PLEG is not healthy: pleg was last seen active (?!2562047h)"),
        summary="the kubelet stalled (PLEG is not healthy): its node NotReady",
        phrases=("PLEG is not healthy",),
        wildcards=("?*:pleg",),  # "Message:PLEG" in the kubelet's node-status line is one token
        examples=(
            'kubelet: E0413 10:53:52.844381    3263 kubelet.go:2055] "Skipping pod synchronization" err="PLEG is not'
            ' healthy: pleg was last seen active 2h33m12.704970756s ago; threshold is 3m0s"',
            "kubelet_node_status.go:682] Node became not ready: {Type:Ready Status:False Reason:KubeletNotReady"
            " Message:PLEG is not healthy: pleg was last seen active 3m7.629592089s ago; threshold is 3m0s}",
        ),
        near_misses=(
            "PLEG is healthy again",
            "I0409 21:14:19.210702   26014 kubelet.go:1794] skipping pod synchronization - [container runtime is down]",
            "I0705 13:07:12.269821   32911 kubelet.go:1799] skipping pod synchronization - [container runtime is down"
            " PLEG is not healthy: pleg was last seen active 2562047h47m16.854775807s ago; threshold is 3m0s]",
        ),
    ),
    Signature(
        # the node's kernel going down: "Kernel panic - not syncing: %s". A hard lockup, a soft lockup or a hung
        # task alone is not the node down (the panic they lead to where configured says "Kernel panic - not
        # syncing: Hard LOCKUP" itself).
        name="kernel-panic",
        kind=Kind.NODE_REBOOTED,
        pattern=rx(r"(?P<what>Kernel panic - not syncing: [^\n]{0,120})"),
        summary="the node's kernel crashed: {what}",
        phrases=("Kernel panic - not syncing",),
        fixed={"reason": "kernel crash"},
        examples=("kernel:[  840.275175] Kernel panic - not syncing: hung_task: blocked tasks",),
        near_misses=(
            "watchdog: BUG: soft lockup - CPU#3 stuck for 22s! [python:4242]",
            "Oct 11 05:39:13 chi412 kernel: NMI watchdog: Watchdog detected hard LOCKUP on cpu 79",
        ),
    ),
    Signature(
        # the kubelet's graceful node shutdown manager (nodeshutdown_manager_linux.go, 1.21+): "Shutdown manager
        # detected new shutdown event, isNodeShuttingDownNow" event=true, from the node's journal (event=false: the
        # shutdown was called off)
        name="kubelet-node-shutdown",
        kind=Kind.NODE_SHUTDOWN,
        pattern=rx(
            r"Shutdown manager detected new shutdown event[^\n]{0,80}?event=true"
            r"|Shutdown manager killing pod with gracePeriod|Shutdown manager processing shutdown event"
        ),
        summary="the kubelet saw the node shutting down",
        phrases=(
            "Shutdown manager detected new shutdown event",
            "Shutdown manager killing pod",
            "Shutdown manager processing shutdown event",
        ),
        examples=(
            'kubelet[6188]: I0110 07:28:44.397678    6188 nodeshutdown_manager_linux.go:265] "Shutdown manager detected'
            ' new shutdown event, isNodeShuttingDownNow" event=true',
            'I0623 15:42:16.744070    1748 nodeshutdown_manager_linux.go:316] "Shutdown manager killing pod with'
            ' gracePeriod" pod="ml/trainer-0" gracePeriod=15',
        ),
        near_misses=('"Shutdown manager detected new shutdown event, isNodeShuttingDownNow" event=false',),
    ),
    Signature(
        # the kubelet recording its own node NotReady (kubelet.go "Recording %s event message for node %s": the
        # NodeNotReady it posts, before 1.5 without "node")
        name="kubelet-recorded-not-ready",
        kind=Kind.NODE_NOT_READY,
        # (since the kubelet's structured logs: "Recording event message for node" node="x" event="NodeNotReady")
        pattern=rx(
            r"Recording NodeNotReady event message for|\"Recording event message for node\"[^\n]{0,300}?event=\"NodeNotReady\""
        ),
        summary="the kubelet recorded its node NotReady",
        phrases=("Recording NodeNotReady event message", "Recording event message for node"),
        examples=("kubelet.go:2300] Recording NodeNotReady event message for node gpu-3",),
        near_misses=("kubelet.go:2300] Recording NodeReady event message for node gpu-3",),
    ),
    Signature(
        # systemd-logind announcing the machine going down (logind's "System is rebooting.", "System is powering
        # down.", wall's "The system will power off now!" / "The system will reboot now!"): the node goes, whoever
        # asked (a drain or a maintenance notice before it tells a planned stop apart)
        name="node-going-down",
        kind=Kind.NODE_REBOOTED,
        pattern=rx(
            r"systemd-logind(?:\[\d{1,9}\])?:? (?P<what>System is rebooting|System is powering down"
            r"|The system will (?:power off|reboot) now!)"
        ),
        summary="the node is going down: {what}",
        phrases=(
            "System is rebooting",
            "System is powering down",
            "will power off now",
            "will reboot now",
        ),
        fixed={"reason": "node shut down"},
        examples=(
            "Sep 29 11:16:23 node2.cluster.local systemd-logind[1151]: System is rebooting.",
            "Jun 22 14:16:42 gpu-7 systemd-logind[141]: The system will power off now!",
        ),
        near_misses=("systemd-logind[1151]: New session 42 of user ubuntu.",),
    ),
    Signature(
        # nvidia-smi -q's "Remapped Rows" section (Ampere and later): uncorrectable errors whose row remapping is
        # pending until the GPU is reset: an uncorrectable memory error since the last reset
        name="nvsmi-remap-pending",
        kind=Kind.GPU_ECC_DBE,
        pattern=rx(
            r"Remapped Rows\s{1,16}Correctable Error\s{0,40}: \d{1,10}\s{1,40}Uncorrectable Error\s{0,40}: "
            r"(?P<increase>[1-9]\d{0,9})\s{1,40}Pending\s{0,40}: Yes"
        ),
        summary="{increase} uncorrectable memory errors, row remapping pending (the GPU needs a reset)",
        phrases=("Remapped Rows",),
        convert={"increase": int},
        fixed={"counter": "remapped rows pending"},
        examples=(
            "    Remapped Rows\n        Correctable Error                 : 0\n        Uncorrectable Error               :"
            " 4\n        Pending                           : Yes",
        ),
        near_misses=(
            "    Remapped Rows\n        Correctable Error                 : 0\n        Uncorrectable Error               :"
            " 1\n        Pending                           : No",
        ),
    ),
    Signature(
        # nvidia-smi -q's ECC section as a job prints it before or after a failure: Ampere and later count
        # "SRAM Uncorrectable Parity / SEC-DED" and "DRAM Uncorrectable"; only a non-zero count is a fault
        name="nvsmi-uncorrectable-count",
        kind=Kind.GPU_ECC_DBE,
        pattern=rx(
            r"(?P<memory>SRAM|DRAM) Uncorrectable(?: Parity| SEC-DED)?[ \t]{0,40}: (?P<increase>[1-9]\d{0,9})\b"
        ),
        summary="{memory} uncorrectable ECC errors: {increase}",
        phrases=("SRAM Uncorrectable", "DRAM Uncorrectable"),
        convert={"increase": int},
        examples=(
            "        SRAM Uncorrectable Parity         : 0\n        SRAM Uncorrectable SEC-DED        : 0\n"
            "        DRAM Correctable                  : 0\n        DRAM Uncorrectable                : 2",
        ),
        near_misses=("        SRAM Uncorrectable Parity         : 0\n        DRAM Uncorrectable                : 0",),
    ),
    Signature(
        # DCGM's health watches and diagnostics on a GPU's memory (dcgm_errors.h: DCGM_FR_VOLATILE_DBE_DETECTED
        # "Detected %d volatile double-bit ECC error(s) in GPU %u.", DCGM_FR_PENDING_ROW_REMAP "GPU %u has
        # uncorrectable memory errors and row remappings are pending", DCGM_FR_UNCORRECTABLE_ROW_REMAP "GPU %u had
        # uncorrectable memory errors and %u rows were remapped"), also as dcgmi's table wraps them
        name="dcgm-memory-fault",
        kind=Kind.GPU_ECC_DBE,
        pattern=rx(
            r"Detected (?P<increase>[1-9]\d{0,6}) volatile double-bit ECC error\(s\) in GPU \d{1,2}"
            r"|GPU \d{1,2} ha[sd] uncorrectable memory errors"
        ),
        summary="DCGM: uncorrectable GPU memory errors: {line}",
        phrases=("volatile double-bit ECC", "uncorrectable memory errors"),
        fixed={"counter": "dcgm health"},
        extract=whole,
        examples=(
            "| Error                     | GPU 3 has uncorrectable memory errors and row  |",
            "Detected 2 volatile double-bit ECC error(s) in GPU 0.",
        ),
        near_misses=("Detected 0 volatile double-bit ECC error(s) in GPU 0.",),
    ),
    Signature(
        # nvidia-smi -q "Clocks Event Reasons" (R535+; "Clocks Throttle Reasons" before): an active thermal
        # slowdown. "HW Slowdown" alone is no heat: it is also the power brake and the board's external signal,
        # which nvidia-smi names beside it ("HW Power Brake Slowdown")
        name="nvsmi-thermal-slowdown",
        kind=Kind.GPU_THERMAL,
        pattern=rx(r"(?P<reason>HW Thermal Slowdown|SW Thermal Slowdown)[ \t]{0,40}: Active\b"),
        summary="GPU clocks slowed down: {reason} active",
        phrases=("Thermal Slowdown",),
        examples=(
            "        HW Slowdown                       : Active\n            HW Thermal Slowdown           : Active",
        ),
        near_misses=(
            "        HW Slowdown                       : Not Active",
            "        HW Slowdown                       : Active\n            HW Thermal Slowdown           : Not Active"
            "\n            HW Power Brake Slowdown       : Active",
        ),
    ),
    Signature(
        # DCGM's health watches and diagnostics ("GPU %u Thermal violations totaling %.1f seconds started at ...",
        # DCGM_FR_CLOCK_THROTTLE_THERMAL "Clocks are being throttled for GPU %u because of clock throttling
        # starting %.1f seconds into the test. Reason: HW Slowdown / Thermal") and nvidia-smi's clock event reasons.
        name="dcgm-thermal-violation",
        kind=Kind.GPU_THERMAL,
        pattern=rx(
            r"GPU (?P<gpu>\d{1,2}) Thermal violations totaling (?P<seconds>[\d.]{1,12}) ?second"
            r"|[Cc]locks? (?:are being throttled|throttl\w{0,3}) for GPU (?P<gpu2>\d{1,2})[^\n]{0,160}?"
            r"(?P<reason>HW Slowdown|HW Thermal Slowdown|SW Thermal Slowdown|[Tt]hermal)"
            # DCGM_FR_CLOCK_THROTTLE_THERMAL's health message ("Detected clock throttling due to thermal violation
            # in GPU %u.", "clocks event" since the throttle reasons were renamed)
            r"|Detected clocks? (?:event|throttling) due to thermal violation in GPU (?P<gpu3>\d{1,2})"
        ),
        summary="GPU thermal violation: {line}",
        phrases=(
            "Thermal violations totaling",
            "clocks are being throttled",
            "clock throttling",
            "due to thermal violation",
        ),
        extract=whole,
        examples=(
            "| Warning                   | GPU 0 Thermal violations totaling 13.3 second  |",
            "Clocks are being throttled for GPU 3 because of clock throttling starting 2.0 seconds into the test."
            " Reason: HW Slowdown",
            "ERROR [1514002:1514004] [[Health]] Detected a WARNING in health system Thermal: 'Detected clocks event due"
            " to thermal violation in GPU 2. Verify that the cooling on this machine is functional",
        ),
        near_misses=("GPU 0 Thermal violations totaling 0 events: thresholds unchanged by policy",),
    ),
    Signature(
        # torch.distributed.elastic / c10d could not reach the rendezvous store (RendezvousConnectionError, "The
        # client socket has timed out after %s while trying to connect to %s"): the store's host not up yet, gone,
        # or unreachable; or not enough nodes joined before the rendezvous' deadline (RendezvousTimeoutError, raised
        # bare): peers that never came, for whatever reason. It says where, not why, so it decides nothing (no
        # application error either)
        name="rendezvous-unreachable",
        kind=Kind.LOG_LINE,
        pattern=rx(
            r"RendezvousConnectionError|RendezvousTimeoutError"
            r"|The client socket has timed out after \d{1,6}s? while trying to connect"
            # c10d's store-based barrier missing ranks ("Timed out initializing process group in store based
            # barrier on rank: %d, for key: %s (world_size=%d, worker_count=%d, timeout=%s)")
            r"|Timed out initializing process group in store based barrier"
            # TCPStore before 2.0 ("RuntimeError: connect() timed out.", "... Original timeout was %d ms."), its host
            # name that did not resolve (MASTER_ADDR's headless Service not yet in DNS, or its pod gone: "ValueError:
            # host not found: Name or service not known"), Gloo's file store waiting for its peers ("RuntimeError:
            # Wait timeout")
            r"|RuntimeError: connect\(\) timed out\.|ValueError: host not found: (?:Name or service not known|Temporary"
            r" failure in name resolution)|RuntimeError: Socket Timeout\b"
            r"|(?m:^)RuntimeError: Wait timeout[ \t]*$"
            # DeepSpeed's runner checking each host of its hostfile by ssh before it launches ("Using hostfile at %s
            # but host=%s was not reachable via ssh", "Command 'ssh -o PasswordAuthentication=no %s hostname' returned
            # non-zero exit status 255"): ssh's 255 is any failure to reach or log in, a peer's name not yet in DNS
            # as often as its keys
            r"|but host=\S{1,253} was not reachable via ssh"
            # c10d's store and its sockets before 2.0 raising the bare system error ("RuntimeError: Connection reset
            # by peer" from init_process_group's store calls, "Broken pipe", "Connection refused"): the store's host
            # gone or not up, as above
            r"|(?m:^)RuntimeError: (?:Connection reset by peer|Broken pipe|Connection refused)[ \t]*$"
            r"|Command '\[?'?ssh\b[^\n]{1,400}?' returned non-zero exit status 255\."
        ),
        summary="could not reach the rendezvous store: {line}",
        phrases=(
            "RendezvousConnectionError",
            "RendezvousTimeoutError",
            "The client socket has timed out after",
            "store based barrier",
            "connect() timed out",
            "host not found",
            "Wait timeout",
            "Socket Timeout",
            "was not reachable via ssh",
            "RuntimeError: Connection reset by peer",
            "RuntimeError: Broken pipe",
            "RuntimeError: Connection refused",
            "returned non-zero exit status 255",
        ),
        severity=Severity.WARNING,
        extract=whole,
        examples=(
            "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has"
            " failed. See inner exception for details.",
            "[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to"
            " 192.0.0.1:1234",
            "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError",
            "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no worker-1 hostname' returned"
            " non-zero exit status 255.",
        ),
        near_misses=("[I socket.cpp:787] [c10d] The client socket has connected to [::ffff:10.0.0.1]:29500",),
    ),
    Signature(
        # torch.distributed.elastic: the rendezvous closed because another node's agent left or failed; this
        # node's workers are stopped with it
        name="torchelastic-rendezvous-closed",
        kind=Kind.LAUNCHER_TEARDOWN,
        pattern=rx(r"(?:torch\.distributed\.elastic\.rendezvous\.api\.)?RendezvousClosedError"),
        summary="torchelastic: the rendezvous was closed by another node",
        phrases=("RendezvousClosedError",),
        examples=("torch.distributed.elastic.rendezvous.api.RendezvousClosedError",),
        near_misses=("rendezvous closed cleanly after the run completed",),
    ),
    Signature(
        # torch.distributed.DistBackendError (2.1+): the backend (NCCL) failed, also as Ray re-raises it
        # ("RayTaskError(DistBackendError)"), when the line does not carry NCCL's own words (matched above)
        name="dist-backend-error",
        kind=Kind.NCCL_ERROR,
        # (not a message a paste's wrap cut after "NCCL error in: FILE:LINE,": its next line says what the error was)
        pattern=rx(r"\bDistBackendError\b(?!: NCCL error in: \S{1,300},[ \t]*$)"),
        summary="torch.distributed backend error",
        phrases=("DistBackendError",),
        fixed={"detail": "DistBackendError"},
        extract=ranked,
        examples=(
            "ray.exceptions.RayTaskError(DistBackendError): ray::_RayTrainWorker__execute.get_next() (pid=192,"
            " ip=10.0.0.19)",
        ),
        near_misses=("from torch.distributed import DistStoreError",),
    ),
    Signature(
        # a rank setting up its NCCL communicator that never got the unique id from rank 0 through the c10d store
        # (ProcessGroupNCCL "[%d] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d
        # key-value store by key '%s', but store->get('%s') got error: %s"; 1.12-1.13 spelt it "retreiving"): the
        # communicator was never made
        name="nccl-unique-id-not-received",
        kind=Kind.NCCL_ERROR,
        pattern=rx(
            r"is setting up NCCL communicator and retr(?:ie|ei)ving ncclUniqueId from \[\d{1,7}\] via c10d key-value"
            r" store[^\n]{0,200}?got error: (?P<detail>[^\n]{1,120})"
        ),
        summary="NCCL communicator set-up failed: the unique id never came ({detail})",
        phrases=("retrieving ncclUniqueId", "retreiving ncclUniqueId"),
        examples=(
            "RuntimeError: [2] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value"
            " store by key '0', but store->get('0') got error: Socket Timeout",
        ),
        near_misses=(
            "[2] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store",
        ),
    ),
    Signature(
        # nccl-tests' check on an NCCL call ("Test NCCL failure %s:%d '%s'"; the CUDA check is read with the CUDA
        # errors): the communicator failed, with NCCL's own words
        name="nccl-tests-failure",
        kind=Kind.NCCL_ERROR,
        pattern=rx(r"Test NCCL failure \S{1,200}:\d{1,6}\s{1,4}'(?P<detail>[^'\n]{1,200})'"),
        summary="NCCL failed: {detail}",
        phrases=("Test NCCL failure",),
        examples=(
            "DisAI-4090-2: Test NCCL failure common.cu:961 'internal error - please report this issue to the NCCL"
            " developers / '",
        ),
        near_misses=("Test NCCL success common.cu:961",),
    ),
    Signature(
        # multiprocessing's exit finalizers: util._run_finalizers prints a failing finalizer's traceback and goes on
        # (an NFS ".nfs..." file still busy as a temporary directory is removed): no failure of the program's
        name="python-finalizer-error",
        kind=Kind.LOG_LINE,
        pattern=rx(
            r"Traceback \(most recent call last\):\n[^\n]{0,400}multiprocessing[/\\]util\.py\", line \d{1,6}, in _run_finalizers"
        ),
        summary="multiprocessing printed a finalizer's error at exit and went on",
        phrases=("_run_finalizers",),
        examples=(
            'Traceback (most recent call last):\n  File "/usr/lib/python3.7/multiprocessing/util.py", line 265, in'
            " _run_finalizers\n    finalizer()\nOSError: [Errno 16] Device or resource busy: '.nfs000000000'",
        ),
        near_misses=('Traceback (most recent call last):\n  File "train.py", line 3, in <module>\nOSError: x',),
    ),
    Signature(
        # removing a file NFS renamed to ".nfs<inode><counter>" because a process still holds it open (the client's
        # "silly rename"): only a deletion meets it, a temporary directory's clean-up (shutil.rmtree, tempfile's
        # finalizers) at the end of the work, which the run went on from or had finished
        name="nfs-silly-rename-busy",
        kind=Kind.LOG_LINE,
        pattern=rx(r"\[Errno 16\] Device or resource busy: '(?:[^'\n]{0,300}/)?\.nfs[0-9a-fA-F]{8,40}'"),
        summary="a clean-up met a file NFS keeps for a process that holds it open",
        phrases=("Device or resource busy",),
        examples=("OSError: [Errno 16] Device or resource busy: '/tmp/pymp-x/.nfs00000000000f464500000da8'",),
        near_misses=("OSError: [Errno 16] Device or resource busy: '/dev/nvidia0'",),
    ),
    Signature(
        # a program saying it goes on without the GPU it could not use ("Falling back to CPU."): the driver's
        # absence just before it ended nothing (parse.SETTLED)
        name="cpu-fallback",
        kind=Kind.LOG_LINE,
        pattern=rx(r"(?m:^)(?:[^\n]{0,60}?(?:INFO|WARNING|WARN)\b:?\s{1,4})?Falling back to CPU\.?[ \t]*$"),
        summary="the program went on without its GPU",
        phrases=("Falling back to CPU",),
        examples=("Falling back to CPU.", "INFO: Falling back to CPU."),
        near_misses=("Falling back to CPU for op Gather: no CUDA kernel",),
    ),
    Signature(
        # an exception Python chained to a later one ("During handling of the above exception, another exception
        # occurred:", "The above exception was the direct cause of the following exception:"), its traceback or
        # line joined to the words (blocks.pieces): the later exception is the one that ended the program, and a
        # paste or a log that stops at the words has not said it. What the earlier one names by the signatures
        # above (a CUDA error, an out-of-memory, an NCCL error) is still read.
        name="python-exception-chained",
        kind=Kind.LOG_LINE,
        pattern=rx(
            r"(?:During handling of the above exception, another exception occurred"
            r"|The above exception was the direct cause of the following exception):[ \t]*\Z"
        ),
        summary="an exception Python chained to a later one",
        phrases=("During handling of the above exception", "The above exception was the direct cause"),
        examples=(
            "colossalai.gemini.chunk.chunk.ChunkFullError\n\nDuring handling of the above exception, another exception"
            " occurred:",
            "KeyError: 'input_ids'\n\nThe above exception was the direct cause of the following exception:",
        ),
        near_misses=("KeyError: 'input_ids'",),
    ),
    Signature(
        name="python-traceback",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(r"Traceback \(most recent call last\):"),
        summary="{exception}: {message}",
        phrases=("Traceback most recent call last",),
        extract=traceback,
        examples=(
            'Traceback (most recent call last):\n  File "/workspace/train.py", line 412, in <module>\n    main()\n'
            '  File "/workspace/data.py", line 88, in collate\n    ids = [s["input_ids"] for s in samples]\n'
            "KeyError: 'input_ids'",
        ),
        near_misses=("printing the most recent call, last step took 3.1s",),
    ),
    Signature(
        # TensorFlow's tf.train.Coordinator stopping the threads on an exception ("Error reported to Coordinator:
        # %s"): the exception it names is the run's
        name="tf-coordinator-error",
        kind=Kind.APP_EXCEPTION,
        # (not a gRPC transport's error class alone, "<class '...UnavailableError'>, OS Error": a peer or the
        # network gone, which it does not tell apart)
        pattern=rx(
            r"Error reported to Coordinator: (?!<class '[\w.]{0,120}(?:UnavailableError|DeadlineExceededError|AbortedError)'>)"
            r"(?P<message>[^\n]{1,300})"
        ),
        summary="TensorFlow's coordinator stopped the run: {message}",
        phrases=("Error reported to Coordinator",),
        fixed={"exception": "error reported to the coordinator"},
        examples=(
            "2018-06-12 15:00:32,553 INFO (Thread-4-2183) Error reported to Coordinator: /dbfs/FileStore/tables/"
            "checkpoint.tmpb97208e8; Input/output error",
        ),
        near_misses=(
            "INFO:tensorflow:Coordinator stopped with threads still running",
            "Error reported to Coordinator: <class 'tensorflow.python.framework.errors_impl.UnavailableError'>, OS Error",
        ),
    ),
    Signature(
        # Hydra's launcher reporting the task function's exception (hydra/_internal/utils.py run_and_report: "Error
        # executing job with overrides: %s", the exception below it, "Set the environment variable HYDRA_FULL_ERROR=1
        # for a complete stack trace."): whatever the exception was, an NCCL error or a SIGTERM as well as the
        # program's own; the exception decides, and this line only when nothing else does (words.wrapped_error)
        name="hydra-job-error",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(r"Error executing job with overrides: \[[^\n]{0,2000}?\]"),
        summary="the Hydra job raised an exception",
        phrases=("Error executing job with overrides",),
        fixed={"exception": "error in the Hydra job", "wrapper": True},
        examples=("Error executing job with overrides: ['trainer.max_epochs=20', 'model=llama']",),
        near_misses=("Launching 1 jobs locally with overrides: []",),
    ),
    Signature(
        name="python-exception-line",
        kind=Kind.APP_EXCEPTION,
        pattern=FINAL,
        summary="{exception}: {message}",
        # (a dotted class name is one token: "google.api_core.exceptions.forbidden")
        wildcards=(
            "?*error",
            "?*exception",
            "exception",
            "?*interrupt",
            "?*failure",
            "?*.exceptions.?*",
            "?*.errors.?*",
            "?*.exc.?*",
            "?*badzipfile",
            "?*badgzipfile",
            "?*arrowinvalid",
            "?*arrowcancelled",
        ),
        examples=(
            "KeyError: 'input_ids'",
            "[rank3]: ValueError: expected sequence of length 4096 at dim 1 (got 4095)",
            "[default0]:AssertionError: The parameter 388 has already been reduced.",
            "jax._src.traceback_util.UnfilteredStackTrace: jaxlib.xla_extension.XlaRuntimeError: INTERNAL: CustomCall"
            " failed: jaxlib/cuda/cuda_prng_kernels.cc:32: operation cudaGetLastError() failed",
            "ERROR 01-11 13:09:40 engine.py:366] RuntimeError: Error in model execution: FlashAttention only supports"
            " Ampere GPUs or newer.",
            "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
            "torch._dynamo.exc.FailOnRecompileLimitHit: recompile_limit reached with fullgraph=True.",
            "google.api_core.exceptions.Forbidden: 403 GET https://storage.googleapis.com/storage/v1/b/bucket: Caller"
            " does not have storage.buckets.get access to the Google Cloud Storage bucket.",
            "2021-03-10T13:22:37.443Z: [1,0]<stderr>:OSError: Caught OSError in DataLoader worker process 3.",
            "2022-01-23 02:08:36.029 tarfile.ReadError: unexpected end of data",
            "zipfile.BadZipFile: Bad CRC-32 for file 'map_crosswalks.npy'",
        ),
        near_misses=(
            "ERROR: could not connect to the metrics endpoint",
            "step=100 loss=2.3 error_rate=0.01",
            "WARNING:root:Retrying after error: ConnectionError: Connection reset by peer",
            "from google.api_core.exceptions import Forbidden",
        ),
    ),
    Signature(
        # tensors of one op on two devices (ATen's "Expected all tensors to be on the same device, but found at least
        # two devices, %s and %s!", 2.6+'s "... but got %s is on %s, different from other tensors on %s"), also where
        # a logger or a trainer's own words come before it ("GPU circuit breaker OPEN: cuda_error - Expected all
        # ..."): the program put them there, no GPU fault
        name="tensors-on-two-devices",
        kind=Kind.APP_EXCEPTION,
        # (not where the line says it went on: a warning, a retry, a skipped batch, a fallback, a server's "Exception
        # during processing" it serves on after)
        pattern=rx(
            r"(?m:^)(?![^\n]{0,300}?(?:WARN|[Rr]etry|[Rr]etrying|[Ss]kipping|[Ff]all(?:ing)? ?back|Exception during"
            r" processing))[^\n]{0,300}?(?P<message>Expected all tensors to be on the same device)"
        ),
        summary="the program mixed devices in one op: {message}",
        phrases=("Expected all tensors to be on the same device",),
        fixed={"exception": "tensors on two devices"},
        examples=(
            "[ERROR] GPU circuit breaker OPEN: cuda_error - Expected all tensors to be on the same device, but got mat1"
            " is on cpu, different from other tensors on cuda:0 (when checking argument in method wrapper_CUDA_addmm)",
        ),
        near_misses=(
            "moving all tensors to the same device before the step",
            "!!! Exception during processing !!! Expected all tensors to be on the same device, but found at least two"
            " devices, cuda:0 and cpu!",
            "WARNING:root:torch.compile failed (Expected all tensors to be on the same device), falling back to eager",
        ),
    ),
    Signature(
        # the end of DDP's reducer error when a module has parameters the loss did not use (reducer.cpp: "Parameter
        # indices which did not receive grad for rank %d: %s", its DETAIL "Parameters which did not receive grad for
        # rank %d: %s"), seen without the message's head ("Expected to have finished reduction ..."): the program's
        name="ddp-unused-parameters",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(r"(?P<message>Parameter(?:s| indices) which did not receive grad for rank \d{1,6}):"),
        summary="DDP: parameters the loss did not use ({message})",
        phrases=("did not receive grad for rank",),
        fixed={"exception": "DDP unused parameters"},
        examples=("Parameter indices which did not receive grad for rank 0: 0 1 2 3 4 5 6 7",),
        near_misses=("all parameters received grad on rank 0",),
    ),
    Signature(
        # torch.distributed's collective checks (TORCH_DISTRIBUTED_DEBUG=DETAIL, ProcessGroupWrapper: "Detected
        # mismatch between collectives on ranks. Rank %d is running collective: %s, but Rank %d is running
        # collective: %s"): ranks calling different collectives, the program's bug, also where a wrapper logs it in
        # its own words (the bare RuntimeError is read by the exception line above)
        name="collectives-mismatch",
        kind=Kind.APP_EXCEPTION,
        pattern=rx(r"(?P<message>Detected mismatch between collectives on ranks)"),
        summary="ranks called different collectives: {message}",
        phrases=("Detected mismatch between collectives",),
        fixed={"exception": "collective mismatch"},
        examples=(
            "[ERROR] GPU circuit breaker OPEN: cuda_error - Detected mismatch between collectives on ranks. Rank 1 is"
            " running collective: CollectiveFingerPrint(SequenceNumber=101, OpType=ALLGATHER)",
        ),
        near_misses=("Checking for mismatch between collectives on ranks: none found",),
    ),
)


BY_NAME: Mapping[str, Signature] = {s.name: s for s in SIGNATURES}

# Xids the NVIDIA catalog files under application faults or bookkeeping (resolution IGNORE / RESTART_APP, see
# the reference Xid catalog) are not the hardware emergency the GPU_XID default (critical) says.
XID_SEVERITY: Mapping[int, Severity] = {
    13: Severity.ERROR,  # graphics engine exception: usually an application out-of-range access
    31: Severity.ERROR,  # GPU memory page fault: usually an application bug
    43: Severity.WARNING,  # GPU stopped processing: an application fault, the GPU stays healthy
    45: Severity.WARNING,  # preemptive cleanup after another error (follow the other Xid)
    63: Severity.WARNING,  # row remapping / page retirement recorded
    92: Severity.WARNING,  # high single-bit ECC error rate (corrected)
    94: Severity.ERROR,  # contained ECC error: one application affected
    121: Severity.INFO,  # corrected C2C errors
    154: Severity.WARNING,  # recovery action changed: summarizes another Xid
}
