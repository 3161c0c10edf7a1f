"""Message formats as the real software prints them: torch.distributed / NCCL, torchrun, CUDA, NVRM, mlx5, kubelet.

Sources: ../shared/reference (failure-taxonomies.md §7, xid-catalog.md §1/§4, k8s-events.md §2) and the shared
scenarios. Only the variable parts are filled in here.
"""

from __future__ import annotations

from datetime import datetime

NCCL_VERSION = "2.21.5"


def glog_stamp(t: datetime) -> str:
    """torch's glog-style prefix time: E1120 07:21:15.412001."""
    return t.strftime("%m%d %H:%M:%S.%f")


def pg_init(rank: int, world: int) -> str:
    return f"[rank{rank}]: Initializing process group: backend=nccl world_size={world}"


def nccl_ib_info(host: str, pid: int, ip: str) -> str:
    return f"{host}:{pid}:{pid + 131} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [RO]; OOB eth0:{ip}<0>"


def step_line(step: int, loss: float, tps: int) -> str:
    return f"step={step} loss={loss:.4f} lr=3.0e-04 tokens_per_sec={tps} mfu=0.41"


def megatron_line(it: int, total: int, loss: float, ms: float) -> str:
    return (
        f" iteration {it:>8}/{total:>8} | consumed samples: {it * 1024:>12} | elapsed time per iteration (ms): {ms:.1f} | "
        f"learning rate: 3.000E-04 | global batch size:  1024 | lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: 0.412 |"
    )


def checkpoint_line(step: int, path: str) -> str:
    return f"Saving model checkpoint to {path}/checkpoint-{step}"


def megatron_checkpoint(it: int, path: str) -> str:
    return f"  successfully saved checkpoint from iteration {it:>8} to {path}"


def nccl_remote_error(rank: int, t: datetime, peer: int) -> list[str]:
    return [
        f"[rank{rank}]:[E{glog_stamp(t)} ProcessGroupNCCL.cpp:1590] [PG ID 0 PG GUID 0(default_pg) Rank {rank}] Process group watchdog "
        f"thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version {NCCL_VERSION}",
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
        f"torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, remote process exited or "
        f"there was a network error, NCCL version {NCCL_VERSION} (peer rank {peer})",
    ]


def nccl_timeout(rank: int, t: datetime, seq: int, op: str, numel: int, timeout_ms: int) -> list[str]:
    return [
        f"[rank{rank}]:[E{glog_stamp(t)} ProcessGroupNCCL.cpp:632] [Rank {rank}] Watchdog caught collective operation timeout: "
        f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel}, NumelOut={numel}, Timeout(ms)={timeout_ms}) ran for {timeout_ms + 43} "
        "milliseconds before timing out.",
        f"[rank{rank}]:[E{glog_stamp(t)} ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank {rank}] To avoid data inconsistency, "
        "we are taking the entire process down.",
    ]


def nccl_ib_completion_error(host: str, pid: int, dev: int, peer_ip: str) -> str:
    return (
        f"{host}:{pid}:{pid + 190} [{dev}] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer {peer_ip}<33092> "
        "with error 12, opcode 0, len 0, vendor err 129 (Send)"
    )


def cuda_error(error: str) -> str:
    return (
        f"RuntimeError: CUDA error: {error}\nCUDA kernel errors might be asynchronously reported at some other API call, so the "
        "stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
    )


def child_failed(script: str, t: datetime, host: str, rank: int, local_rank: int, exitcode: int, pid: int) -> str:
    return (
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
        "============================================================\n"
        f"{script} FAILED\n"
        "------------------------------------------------------------\n"
        "Failures:\n  <NO_OTHER_FAILURES>\n"
        "------------------------------------------------------------\n"
        "Root Cause (first observed failure):\n[0]:\n"
        f"  time      : {t.strftime('%Y-%m-%d_%H:%M:%S')}\n  host      : {host}\n  rank      : {rank} (local_rank: {local_rank})\n"
        f"  exitcode  : {exitcode} (pid: {pid})\n  error_file: <N/A>\n"
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
        "============================================================"
    )


def torchrun_failed(local_rank: int, pid: int, exitcode: int) -> str:
    return f"ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: {exitcode}) local_rank: {local_rank} (pid: {pid}) of binary: /usr/bin/python"


def sigterm_closing(pid: int) -> str:
    return f"torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process {pid} closing signal SIGTERM"


SIGTERM_AGENT = (
    "torch.distributed.elastic.agent.server.api: [WARNING] Received Signals.SIGTERM death signal, shutting down workers"
)


def signal_exception(pid: int, signal: int = 15) -> str:
    return f"torch.distributed.elastic.multiprocessing.api.SignalException: Process {pid} got signal: {signal}"


def traceback(frames: list[tuple[str, int, str, str]], final: str) -> str:
    lines = ["Traceback (most recent call last):"]
    for path, line, func, code in frames:
        lines += [f'  File "{path}", line {line}, in {func}', f"    {code}"]
    return "\n".join([*lines, final])


def nvrm_gpu_at(pci: str, uuid: str) -> str:
    return f"NVRM: GPU at PCI:{pci}: {uuid}"


def nvrm_xid(pci: str, xid: int, text: str, pid: int | None = None, name: str = "python") -> str:
    who = f"pid={pid}, name={name}, " if pid is not None else "pid='<unknown>', name=<unknown>, "
    return f"NVRM: Xid (PCI:{pci}): {xid}, {who}{text}"


def pulled(image: str, seconds: float, size: int) -> str:
    return (
        f'Successfully pulled image "{image}" in {seconds:.3f}s ({seconds + 0.4:.3f}s including waiting). '
        f"Image size: {size} bytes."
    )
