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
  misaligned        a kernel reads an int from an odd address (the driver's Xid 13, a warp exception)
  trap              a kernel executes a trap instruction (unspecified launch failure; Xid 13)
  cublas-oom        the first matmul after the GPU's memory is taken: cuBLAS cannot make its handle
  cudnn-oom         the first convolution after the GPU's memory is taken: cuDNN's status words
  ordinal           torchrun, two ranks on a one-GPU pod, each picking cuda:LOCAL_RANK (invalid device ordinal)
  no-gpu            a container that sees no GPU (CUDA_VISIBLE_DEVICES empty) asks for one
  oom-child         torchrun, one rank out of GPU memory: the summary around torch's OutOfMemoryError
  shared-range      a kernel indexes its shared memory far out of range (Xid 13's out-of-range words)
  stack-overflow    a kernel recursing until its stack is gone (Xid 13's stack words)
  nccl-after-fault  torchrun, one rank: a kernel's illegal address meets ProcessGroupNCCL's watchdog
  nccl-init-oom     torchrun, one rank: NCCL sets up its communicator on a GPU with no memory left
  loader-killed     a DataLoader worker killed with SIGKILL, as the kernel's OOM killer would
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any

# a kernel writing to an unmapped address (the driver's Xid 31, CUDA's illegal address)
WILD_WRITE = r'extern "C" __global__ void wild() { *(volatile int *)0x10 = 1; }'


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
    wild = cupy.RawKernel(WILD_WRITE, "wild")
    wild((1,), (1,), ())
    print((x * 2).sum().item())  # torch meets the sticky error here, as a training step would


def device_assert() -> None:
    import torch

    x = torch.zeros(4, device="cuda")
    index = torch.tensor([10], device="cuda")
    print(x[index].sum().item())


def misaligned() -> None:
    import cupy
    import torch

    x = torch.ones(4, device="cuda")
    buffer = cupy.zeros(16, dtype=cupy.int32)
    odd = cupy.RawKernel(
        r'extern "C" __global__ void odd(char *p, int *out) { *out = *(volatile int *)(p + 1); }', "odd"
    )
    odd((1,), (1,), (buffer, buffer))
    print((x * 2).sum().item())


def trap() -> None:
    import cupy
    import torch

    x = torch.ones(4, device="cuda")
    stop = cupy.RawKernel(r'extern "C" __global__ void stop() { asm volatile("trap;"); }', "stop")
    stop((1,), (1,), ())
    print((x * 2).sum().item())


def _take_the_memory() -> object:
    import torch

    free, _ = torch.cuda.mem_get_info()
    return torch.empty(free - (4 << 20), dtype=torch.uint8, device="cuda")  # all but 4 MiB, as a full run leaves it


def cublas_oom() -> None:
    import torch

    a = torch.ones(64, 64, device="cuda")
    held = _take_the_memory()
    print((a @ a).sum().item(), held)


def cudnn_oom() -> None:
    import torch

    x = torch.ones(8, 3, 64, 64, device="cuda")
    conv = torch.nn.Conv2d(3, 16, 3).cuda()
    held = _take_the_memory()
    print(conv(x).sum().item(), held)


def ordinal_worker() -> None:
    import torch

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    print(torch.ones(1, device="cuda").sum().item())
    time.sleep(20)


def no_gpu() -> None:
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    import torch

    print(torch.ones(1, device="cuda"))


def shared_range() -> None:
    import cupy
    import torch

    x = torch.ones(4, device="cuda")
    far = cupy.RawKernel(
        r'extern "C" __global__ void far(int i) { __shared__ int s[32]; ((volatile int *)s)[i] = 1; }', "far"
    )
    far((1,), (1,), (cupy.int32(1 << 26),))
    print((x * 2).sum().item())


def stack_overflow() -> None:
    import cupy
    import torch

    x = torch.ones(4, device="cuda")
    deep = cupy.RawKernel(
        r"""extern "C" __device__ int down(volatile int *p, int n) { volatile int pad[64]; pad[n & 63] = n;
            return n == 0 ? *p : down(p, n - 1) + pad[(n + 1) & 63]; }
            extern "C" __global__ void deep(int *p) { *p = down(p, 1 << 24); }""",
        "deep",
    )
    out = cupy.zeros(1, dtype=cupy.int32)
    deep((1,), (1,), (out,))
    print((x * 2).sum().item())


def _one_rank_after_an_all_reduce(timeout_s: int) -> Any:
    """One rank's NCCL process group, its first all_reduce done: the tensor it reduced."""
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    torch.cuda.set_device(0)
    dist.init_process_group("nccl", timeout=timedelta(seconds=timeout_s))
    x = torch.ones(1 << 20, device="cuda")
    dist.all_reduce(x)
    torch.cuda.synchronize()
    print("first all_reduce done", flush=True)
    return x


def nccl_fault_worker() -> None:
    import cupy
    import torch
    import torch.distributed as dist

    x = _one_rank_after_an_all_reduce(30)
    wild = cupy.RawKernel(WILD_WRITE, "wild")
    with cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
        wild((1,), (1,), ())
    dist.all_reduce(x)
    time.sleep(60)


def nccl_oom_worker() -> None:
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(0)
    held = _take_the_memory()
    dist.init_process_group("nccl")
    x = torch.ones(1, device="cuda")
    dist.all_reduce(x)
    torch.cuda.synchronize()
    print(x.item(), held)


def loader_killed() -> None:
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Rows(Dataset[int]):
        def __len__(self) -> int:
            return 1000

        def __getitem__(self, index: int) -> int:
            if index == 8:
                os.kill(os.getpid(), signal.SIGKILL)  # the worker, as the OOM killer takes it
            time.sleep(0.01)
            return index

    for batch in DataLoader(Rows(), batch_size=4, num_workers=2):
        torch.as_tensor(batch)


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
    import cupy
    import torch
    import torch.distributed as dist

    x = _one_rank_after_an_all_reduce(15)
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
    "misaligned": misaligned,
    "trap": trap,
    "cublas-oom": cublas_oom,
    "cudnn-oom": cudnn_oom,
    "ordinal": lambda: _torchrun("ordinal-worker"),
    "no-gpu": no_gpu,
    "oom-child": lambda: _torchrun("oom", ranks=1),
    "shared-range": shared_range,
    "stack-overflow": stack_overflow,
    "nccl-after-fault": lambda: _torchrun("nccl-fault-worker", ranks=1),
    "nccl-init-oom": lambda: _torchrun("nccl-oom-worker", ranks=1),
    "loader-killed": loader_killed,
    "nccl-fault-worker": nccl_fault_worker,
    "nccl-oom-worker": nccl_oom_worker,
    "ordinal-worker": ordinal_worker,
    "nccl-worker": nccl_worker,
    "nccl-hang-worker": nccl_hang_worker,
    "exception-worker": exception_worker,
    "sigkill-worker": sigkill_worker,
}

if __name__ == "__main__":
    CASES[sys.argv[1]]()
