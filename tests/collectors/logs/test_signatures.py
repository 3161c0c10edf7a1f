"""The failure-signature table: each signature on real lines (with the attributes it must parse) and a near
miss it must not match; the server-side pre-filter must let every matching line through (checked on a real
OpenSearch-API server); hostile input (1 MB lines, broken UTF-8, odd JSON types) crashes nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from whathappened.collectors.logs import parse as log_parse
from whathappened.collectors.logs.signatures import BY_NAME, SIGNATURES

from tests.fixtures.search import SearchServer
from whathappened.kinds import Kind
from whathappened.model import PodInfo, Window
from whathappened.scope import Query, Scope

WINDOW = Window(datetime(2026, 11, 20, 6, tzinfo=UTC), datetime(2026, 11, 20, 8, tzinfo=UTC))


@pytest.mark.parametrize("signature", SIGNATURES, ids=[s.name for s in SIGNATURES])
def test_every_example_is_caught_by_its_own_signature(signature) -> None:
    assert signature.examples and signature.near_misses
    for line in signature.examples:
        found = log_parse.match_line(line)
        assert found is not None and found.signature.name == signature.name, (line, found)


@pytest.mark.parametrize("signature", SIGNATURES, ids=[s.name for s in SIGNATURES])
def test_near_misses_do_not_match(signature) -> None:
    for line in signature.near_misses:
        assert signature.pattern.search(line) is None, line


def test_signature_names_are_unique_and_kinds_are_vocabulary() -> None:
    assert len(BY_NAME) == len(SIGNATURES)
    assert all(s.kind is None or s.kind in Kind for s in SIGNATURES)


# (line, signature, attrs it must carry): real formats from the drivers, NCCL, torch and launchers
REAL_LINES: list[tuple[str, str, dict[str, Any]]] = [
    (
        "Dec  2 11:38:47 worker4 kernel: [  219.470994] NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', "
        "name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at "
        "physAddr 0x7fffa8860 partition 7, subpartition 1.",
        "nvrm-xid",
        {"xid": 48, "pci": "0000:07:00"},
    ),
    (
        "NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9). RST: No, D-RST: No",
        "nvrm-xid",
        {"xid": 94, "pci": "0000:01:00", "gpu_instance": 5, "pid": 7194},
    ),
    (
        "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149",
        "nvrm-xid",
        {"xid": 45, "pid": 1818990, "process": "python3", "text": "Ch 00000001 caused by previous Xid 149"},
    ),
    (
        "NVRM: Xid (PCI:0009:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)",
        "nvrm-xid",
        {"xid": 154, "text": "GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)"},
    ),
    (
        "NVRM: The NVIDIA GPU 0000:b3:00.0\n NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
        " NVRM: fallen off the bus and is not responding to commands.",
        "nvrm-fallen-off-bus-at-probe",
        {"xid": 79, "pci": "0000:b3:00"},
    ),
    (
        "Out of memory: Killed process 2793 (pt_main_thread) total-vm:102745988kB, anon-rss:95230612kB",
        "kernel-oom-killer",
        {"pid": 2793, "process": "pt_main_thread", "anon_rss_kb": 95230612},
    ),
    (
        "[rank1]:[E1111 17:01:37] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=14863, "
        "OpType=ALLREDUCE, NumelIn=14845952, NumelOut=14845952, Timeout(ms)=1800000) ran for 1800048 milliseconds "
        "before timing out.",
        "nccl-watchdog-timeout",
        {"rank": 1, "seq": 14863, "op": "ALLREDUCE", "timeout_ms": 1800000, "ran_ms": 1800048},
    ),
    (
        "[E ProcessGroupNCCL.cpp:414] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(OpType=ALLREDUCE,"
        " TensorShape=[1024], Timeout(ms)=1800000) ran for 1800123 milliseconds before timing out.",
        "nccl-watchdog-timeout",
        {"rank": 3, "op": "ALLREDUCE", "timeout_ms": 1800000},
    ),
    (
        "node-2:5776:5902 [0] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer 10.2.0.5<33092> "
        "with error 12, opcode 0, len 0, vendor err 129 (Recv)",
        "nccl-ib-completion-error",
        {"ib_status": 12, "ib_status_name": "RETRY_EXC_ERR", "peer": "10.2.0.5<33092>", "opcode": 0},
    ),
    (
        "NCCL WARN NET/IB : Got completion from peer 7.247.232.133 with status=4 opcode=0 len=0 vendor err 81 (Send)",
        "nccl-ib-completion-error",
        {"ib_status": 4, "ib_status_name": "LOC_PROT_ERR"},
    ),
    (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, remote "
        "process exited or there was a network error, NCCL version 2.21.5 (peer rank 16)",
        "nccl-remote-error",
        {"remote": True, "peer_rank": 16},
    ),
    (
        "  what():  NCCL error: unhandled system error, NCCL version 2.10.3",
        "nccl-system-error",
        {"detail": "unhandled system error"},
    ),
    (
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "cuda-error",
        {"error": "an illegal memory access was encountered"},
    ),
    (
        "RuntimeError: CUDA error: uncorrectable ECC error encountered",
        "cuda-error",
        {"error": "uncorrectable ECC error encountered"},
    ),
    ("RuntimeError: CUDA error: out of memory", "cuda-oom", {}),
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 3 has a total capacity of "
        "79.11 GiB of which 1.02 GiB is free.",
        "cuda-oom",
        {"tried": "1.95 GiB", "gpu": "3"},
    ),
    (
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n===\ntrain.py FAILED\n---\nFailures:\n"
        "  <NO_OTHER_FAILURES>\n---\nRoot Cause (first observed failure):\n[0]:\n  time      : 2024-01-01_12:00:00\n"
        "  host      : gpu-node-7\n  rank      : 11 (local_rank: 3)\n  exitcode  : -6 (pid: 12345)\n"
        "  error_file: <N/A>\n  traceback : Signal 6 (SIGABRT) received by PID 12345",
        "torchelastic-child-failed",
        {"failed_rank": 11, "local_rank": 3, "exit_code": -6, "pid": 12345, "host": "gpu-node-7", "signal": "SIGABRT"},
    ),
    (
        # torch prints the other ranks (those it sent SIGTERM) under "Failures:" before the root cause; as seen on an
        # H100 with torch 2.11 (bench/device/check.sh)
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n====\n/work/train.py FAILED\n----\n"
        "Failures:\n[1]:\n  time      : 2026-11-27_12:50:46\n  host      : localhost\n  rank      : 0 (local_rank: 0)\n"
        "  exitcode  : -15 (pid: 788)\n  error_file: <N/A>\n  traceback : Signal 15 (SIGTERM) received by PID 788\n"
        "----\nRoot Cause (first observed failure):\n[0]:\n  time      : 2026-11-27_12:50:46\n  host      : worker-3\n"
        "  rank      : 1 (local_rank: 1)\n  exitcode  : 1 (pid: 789)\n  error_file: <N/A>\n"
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n====",
        "torchelastic-child-failed",
        {"failed_rank": 1, "local_rank": 1, "exit_code": 1, "pid": 789, "host": "worker-3", "script": "/work/train.py"},
    ),
    (
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 2806) of "
        "binary: /usr/bin/python3",
        "torchelastic-worker-failed",
        {"exit_code": 1, "local_rank": 0, "pid": 2806},
    ),
    (
        "mpirun noticed that process rank 3 with PID 1234 on node gpu-node-7 exited on signal 9 (Killed).",
        "mpirun-rank-exited",
        {"failed_rank": 3, "signal": 9, "host": "gpu-node-7"},
    ),
    (
        "  successfully saved checkpoint from iteration    2000 to /checkpoints/llama-70b [ t 1/8, p 1/4 ]",
        "checkpoint-megatron",
        {"step": 2000, "path": "/checkpoints/llama-70b"},
    ),
    (
        "[INFO|trainer.py:3305] 2024-05-02 10:01:02,123 >> Saving model checkpoint to /output/checkpoint-500",
        "checkpoint-hf-trainer",
        {"step": 500, "path": "/output/checkpoint-500"},
    ),
    (
        "Saved checkpoint to /ckpt/llama/step_1200 (step=1200)",
        "checkpoint-generic",
        {"step": 1200, "path": "/ckpt/llama/step_1200"},
    ),
    ("ice 0000:17:00.0 ens1f0: NIC Link is Down", "nic-link-down", {"device": "ens1f0"}),
    (
        'Traceback (most recent call last):\n  File "/workspace/train.py", line 412, in <module>\n    main()\n'
        '  File "/usr/lib/python3/site-packages/torch/nn/modules/module.py", line 1532, in _call_impl\n'
        "    return forward_call(*args, **kwargs)\nValueError: Expected input batch_size (32) to match target (16).",
        "python-traceback",
        {
            "exception": "ValueError",
            "file": "/usr/lib/python3/site-packages/torch/nn/modules/module.py",
            "line": 1532,
            "message": "Expected input batch_size (32) to match target (16).",
        },
    ),
    ("[rank3]: ValueError: expected sequence of length 4096", "python-exception-line", {"exception": "ValueError"}),
    (
        "RuntimeError: The server socket has failed to listen on any local network address. port: 98, useIpv6: 0,"
        " code: -13, name: EACCES, message: permission denied",
        "store-port-in-use",
        {"reason": "port not permitted"},
    ),
    (
        "The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).",
        "store-port-in-use",
        {"reason": "port in use"},
    ),
]


@pytest.mark.parametrize(("line", "name", "attrs"), REAL_LINES, ids=[f"{i}-{r[1]}" for i, r in enumerate(REAL_LINES)])
def test_real_lines_parse_their_attributes(line: str, name: str, attrs: dict[str, Any]) -> None:
    found = log_parse.match_line(line)
    assert found is not None and found.signature.name == name
    assert attrs.items() <= dict(found.attrs).items(), dict(found.attrs)


def test_traceback_attributes_join_a_more_specific_kind() -> None:
    line = (
        'Traceback (most recent call last):\n  File "/workspace/train.py", line 88, in step\n    loss.backward()\n'
        "RuntimeError: CUDA error: an illegal memory access was encountered"
    )
    found = log_parse.match_line(line)
    assert found is not None and found.signature.kind == Kind.CUDA_ERROR
    assert found.attrs["file"] == "/workspace/train.py" and found.attrs["line"] == 88


def _doc(message: Any, at: str = "2026-11-20T07:00:00Z") -> dict[str, Any]:
    return {
        "@timestamp": at,
        "message": message,
        "kubernetes": {"namespace": "ns", "pod": {"name": "p-0"}, "node": {"name": "n-0"}, "container": {"name": "c"}},
    }


def test_hostile_documents_crash_nothing() -> None:
    huge = "x" * 1_048_576 + " RuntimeError: CUDA error: unspecified launch failure"
    broken = b"\xff\xfe NCCL WARN bad \xc3\x28 bytes".decode("utf-8", errors="surrogateescape")
    docs = [
        ("logs-x", _doc(huge)),
        ("logs-x", _doc(broken)),
        ("logs-x", _doc(["NCCL WARN a", "list"])),
        ("logs-x", _doc(12345)),
        ("logs-x", _doc({"nested": "object"})),
        ("logs-x", _doc(None)),
        ("logs-x", {"@timestamp": ["not", "a", "time"], "message": "x"}),
        ("logs-x", {"@timestamp": "2026-11-20T07:00:00Z", "kubernetes": "not an object", "message": "NCCL WARN x"}),
        ("kube-events-x", {"involvedObject": "broken", "reason": "Killing"}),
        ("logs-x", {"@timestamp": True, "message": "NCCL WARN y"}),
    ]
    scope = Scope(Query("e", "ns", WINDOW), (PodInfo(name="p-0", namespace="ns", phase="Failed"),))
    events = log_parse.events_from_documents(docs, scope, log_parse.mapping_for("ecs"))
    kinds = [e.kind for e in events if e.kind != Kind.LOG_LINE]
    assert Kind.CUDA_ERROR in kinds and kinds.count(Kind.NCCL_ERROR) >= 2
    assert all(len(e.summary) <= 300 for e in events)
    assert all(len(v) <= 200 for e in events for v in e.attrs.values() if isinstance(v, str))
    assert log_parse.discover_from_documents(docs, Query("e", "ns", WINDOW), log_parse.mapping_for("ecs")).pods == ()


@pytest.mark.servers
@pytest.mark.parametrize("preset", ["ecs", "fluent-bit"])
def test_server_prefilter_lets_every_signature_line_through(search_server: SearchServer, preset: str) -> None:
    """Each example line indexed as a document must come back from the signature filter on a real server."""
    lines = [line for s in SIGNATURES for line in s.examples] + [r[0] for r in REAL_LINES]
    missing = search_server.prefilter_misses(f"prefilter-{preset}", lines, preset)
    assert missing == []


@pytest.mark.servers
def test_a_one_megabyte_line_through_the_live_collector(search_server: SearchServer) -> None:
    from whathappened.collectors.logs.elasticsearch.collector import LogCollector, make_client

    from whathappened.config import ElasticsearchSettings

    huge = "tensor dump " * 90_000 + "\nRuntimeError: CUDA error: unspecified launch failure"
    weird = "NCCL WARN bad bytes \ufffd\ufffd( and a lone \udcff surrogate".encode("utf-8", "surrogatepass").decode(
        "utf-8", "replace"
    )
    bulk = "\n".join(
        json.dumps(value)
        for value in (
            {"create": {"_index": "logs-k8s-x"}},
            _doc(huge),
            {"create": {"_index": "logs-k8s-x"}},
            _doc(weird, at="2026-11-20T07:00:01Z"),
        )
    )
    search_server.load_ndjson("hostile", bulk)
    settings = ElasticsearchSettings(url=search_server.url, log_index="hostile--logs-*", event_index="hostile--none-*")
    collector = LogCollector(make_client(settings, flavor="opensearch"), settings)
    scope = Scope(Query("e", "ns", WINDOW), (PodInfo(name="p-0", namespace="ns", phase="Running"),))
    events = collector.collect(scope)
    assert [e.kind for e in events] == [Kind.CUDA_ERROR, Kind.NCCL_ERROR]
    assert all(len(e.summary) <= 300 for e in events)
    assert len(events[0].raw["line"]) <= 4000


def test_a_deepspeed_line_relayed_from_another_node_is_that_nodes_rank() -> None:
    own = log_parse.match_line(
        "[ERROR] [launch.py:324:sigkill_handler] ['python', 'train.py'] exits with return code = 1"
    )
    relayed = log_parse.match_line(
        "worker-1: [ERROR] [launch.py:324:sigkill_handler] ['python'] exits with return code = 1"
    )
    assert own is not None and relayed is not None
    assert own.attrs["exit_code"] == relayed.attrs["exit_code"] == 1
    assert "relayed" not in own.attrs and relayed.attrs["relayed"] is True


def test_an_abort_after_an_nccl_failure_is_no_crash_of_the_process() -> None:
    crash = log_parse.match_line("Fatal Python error: Segmentation fault")
    assert crash is not None and crash.signature.name == "segfault" and crash.attrs["exception"] == "Segmentation fault"
    aborted = log_parse.match_line("Fatal Python error: Aborted")
    assert aborted is None or aborted.signature.name != "segfault"
