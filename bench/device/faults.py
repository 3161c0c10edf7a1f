"""Real failures on a real GPU, for the words the stack prints (PyTorch, CUDA, NCCL, torchrun) and for the Xids
the driver raises. ``python faults.py CASE``; each case fails the way a training job does and prints what the
stack prints. Needs PyTorch and CuPy; only plain device allocations (no managed memory).

Cases:
  oom               torch asks for more than is left after a 60 % allocation
  illegal-address   a kernel writes to an unmapped address; torch meets the error at its next synchronize
  device-assert     an out-of-range index on the GPU (ATen's device-side assert)
  nccl-duplicate    torchrun, two ranks on the one GPU: NCCL refuses them (the words of a wrong device mapping)
  nccl-timeout      torchrun, one rank: a kernel stuck for 45 s holds its all_reduce, the watchdog times it out
  child-exception   torchrun, two ranks: rank 1 raises, the launcher tears rank 0 down
  child-sigkill     torchrun, two ranks: rank 1 is killed with SIGKILL
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time


def oom() -> None:
    import torch

    free, _ = torch.cuda.mem_get_info()
    held = torch.empty(int(free * 0.6), dtype=torch.uint8, device="cuda")
    more = torch.empty(int(free * 0.6), dtype=torch.uint8, device="cuda")
    print(held.numel() + more.numel())


def illegal_address() -> None:
    import cupy
    import torch

    x = torch.ones(4, device="cuda")
    wild = cupy.RawKernel(r'extern "C" __global__ void wild() { *(volatile int *)0x10 = 1; }', "wild")
    wild((1,), (1,), ())
    print((x * 2).sum().item())  # torch meets the sticky error here, as a training step would


def device_assert() -> None:
    import torch

    x = torch.zeros(4, device="cuda")
    index = torch.tensor([10], device="cuda")
    print(x[index].sum().item())


def _torchrun(mode: str, ranks: int = 2) -> None:
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        str(ranks),
        "--master-port",
        "29533",
        __file__,
        mode,
    ]
    env = dict(os.environ, NCCL_DEBUG="WARN", TORCH_NCCL_ASYNC_ERROR_HANDLING="1")
    sys.exit(subprocess.run(command, env=env, timeout=150, check=False).returncode)


def nccl_worker() -> None:
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    torch.cuda.set_device(0)
    dist.init_process_group("nccl", timeout=timedelta(seconds=15))
    rank = dist.get_rank()
    x = torch.ones(1 << 20, device="cuda")
    dist.all_reduce(x)
    torch.cuda.synchronize()
    print(f"rank {rank}: first all_reduce done", flush=True)
    if rank == 1:
        time.sleep(120)  # a hung rank: never joins the second collective
    dist.all_reduce(x)
    torch.cuda.synchronize()
    print(f"rank {rank}: second all_reduce done", flush=True)


def nccl_hang_worker() -> None:
    from datetime import timedelta

    import cupy
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(0)
    dist.init_process_group("nccl", timeout=timedelta(seconds=15))
    x = torch.ones(1 << 20, device="cuda")
    dist.all_reduce(x)
    torch.cuda.synchronize()
    print("first all_reduce done", flush=True)
    # A kernel stuck for 45 s ahead of the collective on its stream, as a hung peer would leave it (a kernel that
    # never ends also hung the watchdog's abort and dump: the process never died).
    spin = cupy.RawKernel(
        r"""extern "C" __global__ void spin() {
            unsigned long long start, now;
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
            do { __nanosleep(100000); asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); }
            while (now - start < 45000000000ULL);
        }""",
        "spin",
    )
    with cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
        spin((1,), (1,), ())
    dist.all_reduce(x)
    time.sleep(120)


def exception_worker() -> None:
    rank = int(os.environ["RANK"])
    time.sleep(2)
    if rank == 1:
        raise ValueError("shard 7 of the training set has 0 rows")
    time.sleep(60)


def sigkill_worker() -> None:
    rank = int(os.environ["RANK"])
    time.sleep(2)
    if rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)


CASES = {
    "oom": oom,
    "illegal-address": illegal_address,
    "device-assert": device_assert,
    "nccl-duplicate": lambda: _torchrun("nccl-worker"),
    "nccl-timeout": lambda: _torchrun("nccl-hang-worker", ranks=1),
    "child-exception": lambda: _torchrun("exception-worker"),
    "child-sigkill": lambda: _torchrun("sigkill-worker"),
    "nccl-worker": nccl_worker,
    "nccl-hang-worker": nccl_hang_worker,
    "exception-worker": exception_worker,
    "sigkill-worker": sigkill_worker,
}

if __name__ == "__main__":
    CASES[sys.argv[1]]()
