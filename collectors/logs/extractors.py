"""What a signature is (``Signature``) and the functions that pull a matched line's attributes out of it: ranks,
NCCL work items, InfiniBand statuses, traceback frames, checkpoint paths, CUDA OOM sizes, the Xid a later Xid was
caused by. The table of signatures is signatures.py."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from whathappened.collectors.logs.linescan import contains_any, required_literals

from whathappened.kinds import Kind
from whathappened.model import EMPTY, Severity

Extractor = Callable[[re.Match[str], str], Mapping[str, Any]]


@dataclass(frozen=True)
class Signature:  # see the module docstring; ``literals`` is derived from ``pattern``, never written by hand
    name: str
    kind: Kind | None
    pattern: re.Pattern[str]
    summary: str  # str.format over the attrs; a missing attr falls back to the line itself
    examples: tuple[str, ...]
    near_misses: tuple[str, ...]
    phrases: tuple[str, ...] = ()
    regexp: str | None = None
    wildcards: tuple[str, ...] = ()
    convert: Mapping[str, Callable[[str], Any]] = field(default_factory=lambda: EMPTY)
    fixed: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    extract: Extractor | None = None
    severity: Severity | None = None
    literals: tuple[str, ...] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        object.__setattr__(self, "literals", required_literals(self.pattern))

    def search(self, line: str) -> re.Match[str] | None:
        """The pattern's first match in a line already normalized and bounded (``linescan``), searched only when
        the line holds one of the literals every match must contain."""
        return self.pattern.search(line) if contains_any(line, self.literals) else None


def pid(text: str) -> int | None:
    digits = text.strip("'\"<>")
    return int(digits) if digits.isdigit() else None


def known(text: str) -> str | None:
    """Drivers print ``<unknown>`` where there is no process context."""
    return None if text.strip("'\"") in ("", "<unknown>") else text


# --- extraction helpers (the few attributes a single regex cannot carry) -------------------------------------

_WORK_FIELD = re.compile(r"(SeqNum|OpType|NumelIn|NumelOut|Timeout\(ms\))=([^,)\s]+)")
_RANK = re.compile(r"\[Rank (\d+)\]|\[rank(\d+)\]")


def _rank(text: str) -> dict[str, Any]:
    match = _RANK.search(text)
    if not match:
        return {}
    return {"rank": int(match.group(1) or match.group(2))}


def nccl_work(match: re.Match[str], text: str) -> Mapping[str, Any]:
    """torch's WorkNCCL(SeqNum=.., OpType=.., Timeout(ms)=..) description, in any field order."""
    names = {
        "SeqNum": "seq",
        "OpType": "op",
        "NumelIn": "numel_in",
        "NumelOut": "numel_out",
        "Timeout(ms)": "timeout_ms",
    }
    attrs: dict[str, Any] = _rank(text)
    for key, value in _WORK_FIELD.findall(match.group(0)):
        attrs[names[key]] = value if key == "OpType" else _int_or_text(value)
    return attrs


def _int_or_text(value: str) -> int | str:
    return int(value) if value.lstrip("-").isdigit() else value


def ranked(_match: re.Match[str], text: str) -> Mapping[str, Any]:
    return _rank(text)


# libibverbs enum ibv_wc_status, zero-based: what "error N" / "status=N" in NCCL's NET/IB WARN means.
IBV_WC_STATUS = (
    "SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_EEC_OP_ERR", "LOC_PROT_ERR", "WR_FLUSH_ERR", "MW_BIND_ERR",
    "BAD_RESP_ERR", "LOC_ACCESS_ERR", "REM_INV_REQ_ERR", "REM_ACCESS_ERR", "REM_OP_ERR", "RETRY_EXC_ERR",
    "RNR_RETRY_EXC_ERR", "LOC_RDD_VIOL_ERR", "REM_INV_RD_REQ_ERR", "REM_ABORT_ERR", "INV_EECN_ERR",
    "INV_EEC_STATE_ERR", "FATAL_ERR", "RESP_TIMEOUT_ERR", "GENERAL_ERR",
)  # fmt: skip


def ib_status(match: re.Match[str], _text: str) -> Mapping[str, Any]:
    status = int(match.group("status"))
    name = IBV_WC_STATUS[status] if 0 <= status < len(IBV_WC_STATUS) else str(status)
    return {"ib_status": status, "ib_status_name": name, "network": True}


_FRAME = re.compile(  # leading blanks fenced, as in _CHILD_FIELDS below
    r'^[ \t]{0,64}File "(?P<file>[^"\n]{1,1024})", line (?P<line>\d{1,9})(?:, in (?P<func>\S{1,256}))?', re.MULTILINE
)
# A traceback's final line: "ExceptionName: message" at the start of a line, or after a log prefix that ends in a
# closing bracket or a pipe and a blank ("2025-01-11 13:09:40 engine.py:366] ", "[default2]:[rank2]: ", "(pid=42) ",
# "vllm-1  | ", srun's "3: ", torchrun's "[default0]:" glued to it), never after words ("WARNING: retrying after error: ConnectionError: ..." is no final line, the
# program went on) nor after a "[WARNING]" level (Dynamo logging the error it fell back to eager from); Python's bare
# "Exception" too.
FINAL = re.compile(
    r"^(?:[^\n]{0,160}?(?<!\[WARNING)(?<!\[WARN)[\])>|]:?[ \t]{1,8}"
    # torchrun's --tee tags glued to the line ("[default0]:AssertionError: ...", "[default0]:[rank0]:...")
    r"|(?:\[default\d{1,6}\]:)?\[(?:rank\d{1,6}|default\d{1,6}|stderr|stdout)\]:?[ \t]{0,8}"
    # Open MPI's --tag-output ("[1,0]<stderr>:", horovodrun's gloo launcher "[2]<stderr>:"), srun's --label ("3: "),
    # a log's own timestamp ("2022-01-23 02:08:36.029 "), and pytest's mark of an exception in its report ("E   ")
    r"|[^\n]{0,80}?\[\d{1,6}(?:,\d{1,6})?\]<std(?:err|out)>:[ \t]{0,8}|\d{1,5}:[ \t]{1,8}|E {3}"
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?Z?:?[ \t]{1,8}"
    # a log viewer's timestamp in full-width brackets ("【2023-07-09 22:14:41】")
    r"|【\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[^】\n]{0,12}】[ \t]{0,8})?"
    # JAX's traceback filtering printing its own class before the exception it carries (0.2's "FilteredStackTrace: ",
    # later "jax._src.traceback_util.UnfilteredStackTrace: ")
    r"(?:(?:jax\.(?:_src\.)?traceback_util\.)?(?:Unfiltered|Filtered)StackTrace:[ \t]{1,8})?"
    r"(?P<exception>(?:[A-Za-z_]\w*\.)*(?:[A-Za-z_]\w*(?:Error|Exception|Interrupt|Failure)|Exception)\b"
    # a class from a package's exceptions or errors module, whatever its name (google.api_core.exceptions.Forbidden,
    # torch._dynamo.exc.FailOnRecompileLimitHit, sqlalchemy.exc.OperationalError)
    r"|(?:[A-Za-z_]\w*\.)+(?:exceptions|errors|exc)\.[A-Z]\w*(?=:|$)"
    # the standard library's few that end otherwise (zipfile.BadZipFile, gzip.BadGzipFile)
    r"|(?:[A-Za-z_]\w*\.)*Bad(?:Zip|Gzip)File(?=:|$)"
    # pyarrow's own classes that end otherwise (pyarrow.lib.ArrowInvalid, ArrowCancelled)
    r"|(?:pyarrow\.lib\.)?Arrow(?:Invalid|Cancelled)(?=:|$)"
    # and the socket module's lower-case ones (socket.gaierror, socket.herror, socket.timeout)
    r"|socket\.(?:gaierror|herror|timeout)(?=:|$)"
    # pynvml's class per NVML error, those the program's own calls earn (not Unknown, GpuIsLost, DriverNotLoaded:
    # the GPU or the driver, read by their signatures or deciding nothing)
    r"|(?:[A-Za-z_]\w*\.)*NVMLError_(?:NoPermission|NotSupported|InvalidArgument|NotFound|InsufficientSize)(?=:|$))"
    # (TensorFlow 1.x's session repeats its final error as "UnknownError (see above for traceback): %s")
    r"(?: \(see above for traceback\))?(?::[ \t]*(?P<message>.*))?$",
    re.MULTILINE,
)


def traceback_attrs(text: str) -> dict[str, Any]:
    """exception, message, file, line, function of a Python traceback in ``text`` (innermost frame)."""
    start = text.find("Traceback (most recent call last)")
    if start < 0:
        return {}
    body = text[start:]
    attrs: dict[str, Any] = {}
    # the exception Python named as this one's direct cause, read with it by blocks.pieces ("raise ... from e"):
    # the later exception may only relay it (DataLoader's "exited unexpectedly" over "is killed by signal: Killed.")
    before = text[:start].rstrip("\n").rpartition("\n")[2]
    if before and FINAL.match(before):
        attrs["caused_by"] = before.strip()[:500]
    frames = list(_FRAME.finditer(body))
    if frames:
        last = frames[-1]
        attrs.update(file=last.group("file"), line=int(last.group("line")))
        if last.group("func"):
            attrs["function"] = last.group("func")
        body = body[last.end() :]
    finals = list(FINAL.finditer(body))
    if finals:
        final = finals[-1]
        attrs["exception"] = final.group("exception")
        if final.group("message"):
            attrs["message"] = final.group("message").strip()
    return attrs


def traceback(_match: re.Match[str], text: str) -> Mapping[str, Any]:
    return traceback_attrs(text)


# A line of a ChildFailedError record: leading blanks fenced (an unbounded ^\s* under MULTILINE is quadratic on a
# page of blanks), and Accelerate's "stderr: " on each line where its test command relays the launcher's output
RECORD_LINE = r"^(?:std(?:err|out): )?[ \t]{0,64}"
_EXIT_AND_PID = r"exitcode[ \t]{0,8}:[ \t]{0,8}-?\d{1,9}[ \t]{0,8}\(pid:[ \t]{0,8}"
# a record's "exitcode  : %d (pid: %d)" line
RECORD_EXIT = RECORD_LINE + _EXIT_AND_PID + r"\d{1,9}\)"


def _field(pattern: str) -> re.Pattern[str]:
    return re.compile(RECORD_LINE + pattern, re.MULTILINE)


_CHILD_FIELDS = (
    ("failed_rank", _field(r"rank[ \t]{0,8}:[ \t]{0,8}(\d{1,9})"), int),
    ("local_rank", re.compile(r"\(local_rank:[ \t]{0,8}(\d{1,9})\)"), int),
    ("exit_code", _field(r"exitcode[ \t]{0,8}:[ \t]{0,8}(-?\d{1,9})"), int),
    ("pid", _field(_EXIT_AND_PID + r"(\d{1,9})\)"), int),
    ("host", _field(r"host[ \t]{0,8}:[ \t]{0,8}(\S{1,256})"), str),
    ("signal", re.compile(r"Signal \d{1,3} \((SIG[A-Z]{1,12})\) received", re.MULTILINE), str),
    ("script", re.compile(r"(?:^|: )[ \t]{0,64}(\S{1,512}) FAILED[ \t\r]{0,64}$", re.MULTILINE), str),
)


# torch.distributed.elastic's ChildFailedError template prints "Failures:" (the other ranks, often the ones it sent
# SIGTERM) before "Root Cause (first observed failure):"; the record under the latter is the one that failed first.
_ROOT_CAUSE = _field(r"Root Cause \(first observed failure\):")


def child_failed(match: re.Match[str], text: str) -> Mapping[str, Any]:
    """torch.distributed.elastic's ChildFailedError summary block: the root cause record's rank, exit code, host
    (the first record where the text holds no Root Cause section, as when a paste or a shipper cut it)."""
    attrs: dict[str, Any] = {}
    following = text.find("ChildFailedError", match.end())  # another summary after this one is not this one's
    limit = len(text) if following < 0 else following
    root = _ROOT_CAUSE.search(text, match.start(), limit)
    start = root.end() if root else match.start()
    for name, regex, convert in _CHILD_FIELDS:
        # the title's script name is above both sections; a record's fields come from the root cause's alone
        found = regex.search(text, match.start() if name == "script" else start, limit)
        if found:
            attrs[name] = convert(found.group(1))
    return attrs


_STEP = re.compile(r"(?:global[_ ]step|step|iteration|iter)[\s=:_-]*(\d+)", re.IGNORECASE)
_PATH = re.compile(r"""(?:to|at|in|:)\s+['"]?((?:/|gs://|s3://|az://|hdfs://)[^\s'",]+)""")


def checkpoint(match: re.Match[str], text: str) -> Mapping[str, Any]:
    attrs: dict[str, Any] = {}
    groups = match.groupdict()
    step = groups.get("step") or _first(_STEP, text)
    path = groups.get("path") or _first(_PATH, text)
    if step:
        attrs["step"] = int(step)
    if path:
        attrs["path"] = path.rstrip(".")
    return attrs


_OOM_TRIED = re.compile(r"Tried to allocate (?P<tried>[\d.]+ ?[KMGT]i?B)")
_OOM_GPU = re.compile(r"\bGPU (?P<gpu>\d+)\b")


def cuda_oom(_match: re.Match[str], text: str) -> Mapping[str, Any]:
    attrs = {}
    tried, gpu = _OOM_TRIED.search(text), _OOM_GPU.search(text)
    if tried:
        attrs["tried"] = tried.group("tried")
    if gpu:
        attrs["gpu"] = gpu.group("gpu")
    return attrs


def first_ints(**fields: tuple[str, ...]) -> Extractor:
    """Integer attributes, each from the first of its groups that matched: a signature's alternatives spell one
    field in groups of their own (a regex names a group once)."""

    def extract(match: re.Match[str], _text: str) -> Mapping[str, Any]:
        found = {
            name: next((match.group(g) for g in groups if match.group(g) is not None), None)
            for name, groups in fields.items()
        }
        return {name: int(value) for name, value in found.items() if value is not None}

    return extract


def cuda_error(match: re.Match[str], _text: str) -> Mapping[str, Any]:
    """One ``error`` whichever form said it: the runtime's string, or the driver's name in words."""
    for error, code in (
        ("runtime_error", "runtime_code"),
        ("thc_error", "thc_code"),
        ("paddle_error", "paddle_code"),
        ("cudart_error", "cudart_code"),
    ):
        if match.group(error):
            return {"error": match.group(error), "code": int(match.group(code))}
    for name in (
        "test_error",
        "lib_status",
        "check_error",
        "sample_error",
        "trt_error",
        "busy_error",
        "file_error",
        "lgbm_error",
        "ggml_error",
        "failed_error",
        "sample_failure",
        "kernel_error",
        "nvvs_error",
        "nvshmem_error",
    ):
        if match.group(name):
            return {"error": match.group(name)}
    name = match.group("driver_error")
    if name:
        found = {"error": name[len("CUDA_ERROR_") :].lower().replace("_", " "), "cuda_code": name}
        detail = match.group("driver_detail")
        return {**found, "detail": detail} if detail else found  # ("CUDA_ERROR_CONTAINED: ... over nvlink ...")
    return {}


# The kubelet's cgroup of a pod, in the lines the OOM killer prints with its kill: cgroup v1 "Task in
# /kubepods/burstable/pod<uid>/<container> killed as a result of limit of ...", cgroup v2 "oom-kill:constraint=
# CONSTRAINT_MEMCG,...,oom_memcg=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid with _>.slice".
_POD_CGROUP = re.compile(
    r"kubepods[/a-z._-]{0,64}?pod(?P<uid>[0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12})"
)


def oom_pod(_match: re.Match[str], text: str) -> Mapping[str, Any]:
    found = _POD_CGROUP.search(text)
    return {"pod_uid": found.group("uid").replace("_", "-")} if found else {}


# RM appends the root cause of a sympathetic report: "Ch 00000008 caused by previous Xid 95" (kernel_rc.c
# rootCauseXidStr, R535+)
_CAUSED_BY = re.compile(r"caused by previous Xid (\d{1,3})")


def xid_cause(match: re.Match[str], _text: str) -> Mapping[str, Any]:
    found = _CAUSED_BY.search(match.group("text") or "")
    return {"caused_by_xid": int(found.group(1))} if found else {}


# pdsh and mpirun prefix each line a launcher relays from another node with that node's name ("worker-1: [...]")
_RELAYED = re.compile(r"^[\w.-]{1,253}: \[")


def relayed(_match: re.Match[str], text: str) -> Mapping[str, Any]:
    """``relayed``: the line is another node's, printed by the launcher pod."""
    return {"relayed": True} if _RELAYED.match(text) else {}


# The nodes a cluster-wide controller's line is about (it runs on a node of its own): Karpenter's "terminating N
# nodes (M pods) <node>/<type>/<capacity>" and v1's "disrupted-nodes":[{"Node":{"name":...}}], its interruption
# message's "Node": {"name": ...}, aws-node-termination-handler's "NodeName":"..." and node-name=...
_TARGET_NODES = (
    re.compile(r"(?<![\w.-])([\w.-]{1,253})/[\w.-]{1,64}/(?:spot|on-demand|reserved)\b"),  # a name's start only
    re.compile(r'"Node":\s{0,4}\{\s{0,4}"name":\s{0,4}"([^"\s]{1,253})"'),
    re.compile(r'"NodeName":\s{0,4}"([^"\s]{1,253})"'),
    re.compile(r'"node":\s{0,4}"([^"\s]{1,253})"'),  # Karpenter v0.2x-0.3x structured fields
    re.compile(r"\bnode-name=([\w.-]{1,253})"),
)


def named_nodes(text: str) -> tuple[str, ...]:
    """The nodes a controller's line names, each once, in the order found."""
    return tuple(dict.fromkeys(name for regex in _TARGET_NODES for name in regex.findall(text)))


def target_nodes(match: re.Match[str], text: str) -> Mapping[str, Any]:
    """``nodes``: the nodes the line names, space-separated, with the whole line."""
    names = named_nodes(text)
    return {"line": match.group(0), "nodes": " ".join(names)} if names else {"line": match.group(0)}


def whole(match: re.Match[str], _text: str) -> Mapping[str, Any]:
    return {"line": match.group(0)}


def _first(regex: re.Pattern[str], text: str) -> str | None:
    found = regex.search(text)
    return found.group(1) if found else None


def rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)
