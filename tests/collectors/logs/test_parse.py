"""The pure rules both log collectors share: which containers ended (and get their last lines), discovery from
label fields and archived Events (first key wins, namespaces respected), and the per-pod cap."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from whathappened.collectors.logs import parse as log_parse

from whathappened.kinds import Kind
from whathappened.model import ContainerInfo, PodInfo, Window
from whathappened.scope import Query, Scope

T0 = datetime(2026, 11, 20, 6, tzinfo=UTC)
WINDOW = Window(T0, T0 + timedelta(hours=2))
ECS = log_parse.mapping_for("ecs")


def line(
    pod: str, minute: int, message: str, labels: dict[str, str] | None = None, ns: str = "ml"
) -> tuple[str, dict[str, Any]]:
    doc = {
        "@timestamp": (T0 + timedelta(minutes=minute)).isoformat(),
        "message": message,
        "kubernetes": {
            "namespace": ns,
            "pod": {"name": pod},
            "node": {"name": f"node-{pod[-1]}"},
            "container": {"name": "trainer"},
            "labels": labels or {},
        },
    }
    return "logs-k8s-x", doc


def test_ended_targets_earliest_first_and_capped() -> None:
    ended = T0 + timedelta(minutes=30)
    pods = (
        PodInfo(
            "b", "ml", containers=(ContainerInfo("trainer", state="terminated", finished=ended + timedelta(minutes=5)),)
        ),
        PodInfo("a", "ml", containers=(ContainerInfo("trainer", state="terminated", finished=ended),)),
        PodInfo("running", "ml", phase="Running", containers=(ContainerInfo("trainer", state="running"),)),
        PodInfo(
            "restarted",
            "ml",
            phase="Running",
            containers=(ContainerInfo("trainer", state="running", last_finished=ended),),
        ),
        PodInfo("gone", "ml"),  # only the log store knew it: ended by the window's end
        PodInfo("init", "ml", phase="Running", containers=(ContainerInfo("setup", state="terminated", init=True),)),
    )
    scope = Scope(Query("e", "ml", WINDOW), pods)
    targets = log_parse.ended_targets(scope)
    assert [(t.pod, t.end) for t in targets] == [
        ("a", ended),
        ("restarted", ended),
        ("b", ended + timedelta(minutes=5)),
        ("gone", WINDOW.end),
    ]
    assert len(log_parse.ended_targets(scope, log_parse.Limits(last_line_containers=1))) == 1
    assert log_parse.ended_targets(scope, log_parse.Limits(last_lines=0)) == []


def test_last_lines_stop_at_the_containers_end() -> None:
    pod = PodInfo(
        "w-0", "ml", containers=(ContainerInfo("trainer", state="terminated", finished=T0 + timedelta(minutes=10)),)
    )
    docs = [line("w-0", m, f"line {m}") for m in range(20)]
    events = log_parse.events_from_documents(
        docs, Scope(Query("e", "ml", WINDOW), (pod,)), ECS, log_parse.Limits(last_lines=3)
    )
    assert [e.summary for e in events if e.kind == Kind.LOG_LINE] == ["line 8", "line 9", "line 10"]


def test_discovery_first_label_key_wins_and_respects_namespace() -> None:
    docs = [
        line("job-0", 1, "x", {"training_kubeflow_org/job-name": "run7"}),
        line("inst-0", 1, "x", {"app_kubernetes_io/instance": "run7"}),
        line("other-0", 1, "x", {"training_kubeflow_org/job-name": "run7"}, ns="elsewhere"),
    ]
    found = log_parse.discover_from_documents(docs, Query("run7", "ml", WINDOW), ECS)
    assert [p.name for p in found.pods] == ["job-0"] and found.pods[0].node == "node-0"
    assert found.pods[0].labels == {"training.kubeflow.org/job-name": "run7"}
    assert [n.name for n in found.nodes] == ["node-0"] and found.candidates == ()
    everywhere = log_parse.discover_from_documents(docs, Query("run7", None, WINDOW), ECS)
    assert sorted(p.name for p in everywhere.pods) == ["job-0", "other-0"]


def test_discovery_outside_the_window_finds_nothing_but_candidates_inside() -> None:
    docs = [line("job-0", 500, "x", {"experiment": "run7"}), line("job-1", 5, "x", {"experiment": "run8"})]
    found = log_parse.discover_from_documents(docs, Query("run7", "ml", WINDOW), ECS)
    assert found.pods == () and found.candidates == ("run8",)


def test_discovery_from_archived_event_labels_as_is_or_dedotted() -> None:
    event = {
        "kind": "Event",
        "reason": "Started",
        "message": "Started container trainer",
        "involvedObject": {
            "kind": "Pod",
            "name": "w-3",
            "namespace": "ml",
            "labels": {"jobset_sigs_k8s_io/jobset-name": "big"},
        },
        "source": {"component": "kubelet", "host": "node-9"},
        "lastTimestamp": (T0 + timedelta(minutes=3)).isoformat(),
    }
    found = log_parse.discover_from_documents([("kube-events-x", event)], Query("big", "ml", WINDOW), ECS)
    assert [(p.name, p.node) for p in found.pods] == [("w-3", "node-9")]


def test_cap_keeps_the_earliest_signature_lines_per_pod() -> None:
    pod = PodInfo("w-0", "ml", phase="Running")
    docs = [line("w-0", m, f"NCCL WARN failure {m}") for m in (9, 3, 5, 7)]
    events = log_parse.events_from_documents(
        docs, Scope(Query("e", "ml", WINDOW), (pod,)), ECS, log_parse.Limits(per_pod=2)
    )
    assert [e.attrs["detail"] for e in events] == ["failure 3", "failure 5"]


def test_a_line_search_for_thousands_of_ranks_asks_by_their_names_prefix() -> None:
    """4,096 ranks and their nodes are a megabyte of terms, sent with every page: past a thousand names sharing a
    prefix, the search asks for the prefix (their other lines are dropped when read, as any line of another pod);
    a few names stay exact."""
    from whathappened.collectors.logs.elasticsearch import query as log_query

    pods = [f"llama4-scout-pretrain-4096n-workers-0-{i}-x{i % 97:02d}" for i in range(4096)]
    nodes = [f"aks-ndh100v5-55849415-vmss{i:06x}" for i in range(4096)]
    resolved = {ECS.pod: f"{ECS.pod}.keyword", ECS.node: f"{ECS.node}.keyword"}
    wide = str(log_query.signature_lines(ECS, WINDOW, pods, ["pretrain"], nodes, resolved))
    assert "{'prefix': {'kubernetes.pod.name.keyword': 'llama4-scout-pretrain-4096n-workers-0-'}}" in wide
    few = str(log_query.signature_lines(ECS, WINDOW, pods[:3], ["pretrain"], nodes[:3], resolved))
    assert "'terms': {'kubernetes.pod.name.keyword': [" in few and "prefix" not in few
    # the 8,192 names cost a few hundred characters more than three of each (the signatures' phrases are the rest)
    assert "'aks-ndh100v5-55849415-vmss000'" in wide and len(wide) < len(few) + 1_000


def _kernel(second: float, message: str) -> tuple[str, dict[str, Any]]:
    at = T0 + timedelta(minutes=30, seconds=second)
    return "logs-node-x", {"@timestamp": at.isoformat(), "message": message, "host": {"name": "node-0"}}


PORT_FATAL = "pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) error received: 0000:00:03.0"
GPU_UNRECOVERED = "nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)"


def _gpu_losses(*docs: tuple[str, dict[str, Any]]) -> list[Any]:
    pod = PodInfo("w-0", "ml", node="node-0", phase="Failed")
    events = log_parse.events_from_documents(list(docs), Scope(Query("e", "ml", WINDOW), (pod,)), ECS)
    return [e for e in events if e.kind == Kind.GPU_XID]


def test_a_fatal_pcie_error_the_port_received_and_the_gpu_below_it_unrecovered_are_the_gpu_lost() -> None:
    # a kernel log shipped line by line: the port's half and the GPU's half of one AER report, in either order
    for docs in (
        [_kernel(0, PORT_FATAL), _kernel(0.001, GPU_UNRECOVERED)],
        [_kernel(0, GPU_UNRECOVERED), _kernel(0.9, PORT_FATAL)],
    ):
        [lost] = _gpu_losses(*docs)
        assert (lost.attrs["pci"], lost.attrs["xid"], lost.subject.node) == ("0000:03:00", 79, "node-0")
    # one document holding both is read whole, once
    [whole] = _gpu_losses(_kernel(0, f"{PORT_FATAL}\n{GPU_UNRECOVERED}\n{GPU_UNRECOVERED}"))
    assert whole.attrs["pci"] == "0000:03:00"


def test_either_half_of_an_aer_report_alone_or_apart_is_no_gpu_lost() -> None:
    assert _gpu_losses(_kernel(0, PORT_FATAL)) == []
    assert _gpu_losses(_kernel(0, GPU_UNRECOVERED)) == []  # err.c prints it after non-fatal errors too
    assert _gpu_losses(_kernel(0, PORT_FATAL), _kernel(5, GPU_UNRECOVERED)) == []  # two reports, not one
    non_fatal = "pcieport 0000:00:03.0: AER: Uncorrected (Non-Fatal) error received: 0000:00:03.0"
    assert _gpu_losses(_kernel(0, non_fatal), _kernel(0.001, GPU_UNRECOVERED)) == []


def _node_kinds(*docs: tuple[str, dict[str, Any]]) -> list[Kind]:
    pod = PodInfo("w-0", "ml", node="node-0", phase="Failed")
    return [e.kind for e in log_parse.events_from_documents(list(docs), Scope(Query("e", "ml", WINDOW), (pod,)), ECS)]


def test_a_nic_link_back_up_within_seconds_is_a_flap_not_a_network_error() -> None:
    down = "ixgbe 0000:af:00.1 enp175s0f1: NIC Link is Down"
    up = "ixgbe 0000:af:00.1 enp175s0f1: NIC Link is Up 10 Gbps, Flow Control: RX/TX"
    assert _node_kinds(_kernel(0, down), _kernel(1, up)) == []
    assert _node_kinds(_kernel(0, f"{down}\n{up}")) == []
    assert _node_kinds(_kernel(0, down), _kernel(60, up)) == [Kind.NETWORK_ERROR]  # down a minute: the traffic stopped
    other = "ixgbe 0000:af:00.0 enp175s0f0: NIC Link is Up 10 Gbps, Flow Control: RX/TX"
    assert _node_kinds(_kernel(0, down), _kernel(1, other)) == [Kind.NETWORK_ERROR]  # another port came up


def test_an_eviction_manager_with_no_pod_to_evict_evicted_nobody() -> None:
    must = "eviction_manager.go:344] eviction manager: must evict pod(s) to reclaim ephemeral-storage"
    none = (
        "eviction_manager.go:355] eviction manager: eviction thresholds have been met, but no pods are active to evict"
    )
    assert _node_kinds(_kernel(0, must), _kernel(0.001, none)) == []
    assert _node_kinds(_kernel(0, must)) == [Kind.NODE_PRESSURE]


def _container(second: float, message: str) -> tuple[str, dict[str, Any]]:
    at = T0 + timedelta(minutes=30, seconds=second)
    doc = {"@timestamp": at.isoformat(), "message": message, "kubernetes": {"pod": {"name": "w-0"}, "namespace": "ml"}}
    return "logs-k8s-x", doc


def test_the_net_plugins_warnings_as_it_fails_to_start_are_its_fallback() -> None:
    """aws-ofi-nccl's WARNs while it fails to start, then its "initialization failed": NCCL goes on without it."""
    endpoint = (
        "ip-10-36-29-253:82:2548 [0] nccl_net_ofi_domain_get_ep:969 NCCL WARN NET/OFI Creating new endpoint for"
        " domain 0x7f7dc3a992c0 failed: Invalid argument"
    )
    fallback = "ip-10-36-29-253:82:2548 [0] nccl_net_ofi_create_plugin:335 NCCL WARN NET/OFI aws-ofi-nccl initialization failed"
    _settles(fallback, endpoint, Kind.NCCL_ERROR, after=0.001, too_late=30)
    other_process = fallback.replace(":82:2548", ":83:2549")
    assert Kind.NCCL_ERROR in _node_kinds(_container(0, endpoint), _container(0.001, other_process))
    # NCCL's own fallbacks mid-run settle nothing: a peer's connection closed stays an error
    closed = "gpu-3:311:402 [0] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer 10.0.0.7<41033>"
    magic = "gpu-3:311:999 [0] misc/socket.cc:483 NCCL WARN socketFinalizeAccept: wrong magic 7 != 3"
    assert Kind.NCCL_ERROR in _node_kinds(_container(0, closed), _container(0.5, magic))


def test_llama_cpps_failed_allocation_it_retries_without_pipeline_parallelism_is_no_oom() -> None:
    """llama.cpp's cudaMalloc failing, then "retrying without pipeline parallelism": it caught its OOM and went on."""
    oom = (
        "1.06.520.077 E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 51748.72 MiB on device 1: cudaMalloc"
        " failed: out of memory"
    )
    retry = "1.06.520.107 W sched_reserve: compute buffer allocation failed, retrying without pipeline parallelism"
    _settles(retry, oom, Kind.CUDA_OOM, after=0.03, too_late=60)


def test_an_out_of_memory_error_fairseq_caught_is_no_oom_but_another_ranks_is() -> None:
    """THC's line as the error was raised, then fairseq's first releases catching it ("ran out of memory on GPU #2,
    skipping batch"): it went on. Only THC's line is settled so: a fatal out-of-memory error of another rank (its
    traceback's final line) a moment before stays one."""
    thc = "THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCStorage.cu line=58 error=2 : out of memory"
    _settles("| WARNING: ran out of memory on GPU #2, skipping batch", thc, Kind.CUDA_OOM, after=0.01, too_late=60)
    _settles("| WARNING: ran out of memory, retrying batch", thc, Kind.CUDA_OOM, after=0.01, too_late=60)
    fatal = "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    skipped = "[rank0]: | WARNING: ran out of memory, skipping batch"
    assert Kind.CUDA_OOM in _node_kinds(_container(0, fatal), _container(0.5, skipped))


def test_a_failed_attempt_a_builder_or_a_search_caught_is_no_oom() -> None:
    """TensorRT's builder timing a tactic, scikit-learn's search scoring a fit as nan: the out-of-memory error just
    before was caught, and the run went on."""
    trt = "[E] [TRT] ../rtSafe/safeRuntime.cpp (25) - Cuda Error in allocate: 2 (out of memory)"
    _settles(
        "WARNING: Get cuda error during getBestTactic: (Unnamed Layer* 1) [ElementWise]", trt, Kind.CUDA_OOM, 0.1, 60
    )
    rmm = "MemoryError: std::bad_alloc: CUDA error at: rmm/mr/device/cuda_memory_resource.hpp:70: cudaErrorMemoryAllocation"
    fit = "_validation.py:615: FitFailedWarning: Estimator fit failed. The score on this train-test partition for these"
    _settles(fit, rmm, Kind.CUDA_OOM, after=0.5, too_late=60)


def test_a_searchs_warning_before_the_traceback_it_holds_settles_it_too() -> None:
    """scikit-learn prints its FitFailedWarning with the failed fit's traceback after it, in one document."""
    warning = (
        "_validation.py:615: FitFailedWarning: Estimator fit failed. The score on this train-test partition for these"
        ' parameters will be set to nan. Details: \nTraceback (most recent call last):\n  File "fit.py", line 3, in'
        " f\nMemoryError: std::bad_alloc: out_of_memory: CUDA error at: rmm/mr/device/cuda_memory_resource.hpp:70:"
        " cudaErrorMemoryAllocation out of memory"
    )
    assert Kind.CUDA_OOM not in _node_kinds(_container(0, warning))
    assert Kind.CUDA_OOM in _node_kinds(_container(0, warning.split("\n", 1)[1]))


def test_the_oom_killers_report_of_a_node_agents_kill_is_no_pods() -> None:
    """The kernel's whole report of a kill of fluent-bit's pipeline (in its own memory cgroup): none of its lines is
    a pod's program killed; the same report of a python process is."""
    report = (
        "flb-pipeline invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=996\n"
        "memory: usage 262144kB, limit 262144kB, failcnt 4123\n"
        "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=x,mems_allowed=0,oom_memcg=/kubepods/pod1,"
        "task_memcg=/kubepods/pod1/c1,task=flb-pipeline,pid=1360652,uid=0\n"
        "Memory cgroup out of memory: Killed process 1360652 (flb-pipeline) total-vm:1307336kB, anon-rss:259736kB"
    )
    assert Kind.KERNEL_OOM not in _node_kinds(_kernel(0, report))
    assert Kind.KERNEL_OOM in _node_kinds(_kernel(0, report.replace("flb-pipeline", "python")))


def test_a_program_that_falls_back_to_the_cpu_did_not_end_for_want_of_a_driver() -> None:
    driver = "CudaWarning: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU"
    _settles("Falling back to CPU.", driver, Kind.CONFIG_ERROR, after=0.01, too_late=60)


def test_a_refusal_on_the_pods_filesystem_the_container_went_on_from_decides_nothing() -> None:
    """An entrypoint's chown refused on a volume, then the program running and raising: the program's exception
    is what ended it; the chown alone is the pod's spec."""
    chown = "chown: changing ownership of '/data/lost+found': Operation not permitted"
    raised = "ValueError: bad shape"
    assert Kind.CONFIG_ERROR not in _node_kinds(_container(0, chown), _container(300, raised))
    assert Kind.CONFIG_ERROR in _node_kinds(_container(0, chown))


def test_a_shared_memory_segment_cuda_refused_is_no_full_dev_shm() -> None:
    """NCCL's segment not made because CUDA refused to register it a moment before: not /dev/shm too small."""
    cuda = "[1] misc/shmutils.cc:103 NCCL WARN Cuda failure 'invalid argument'"
    segment = "[1] misc/shmutils.cc:114 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-Nz (size 96)"
    assert Kind.NCCL_ERROR in _node_kinds(_container(0, cuda), _container(0.01, segment))
    assert Kind.CONFIG_ERROR not in _node_kinds(_container(0, cuda), _container(0.01, segment))
    assert Kind.CONFIG_ERROR in _node_kinds(_container(0, segment))
    assert Kind.CONFIG_ERROR in _node_kinds(_container(0, cuda), _container(30, segment))


def test_a_supervisors_program_it_started_again_at_once_ended_nothing() -> None:
    """supervisord's "exited: x (exit status 1; not expected)" is the program's failure, unless it is "spawned:"
    again moments later (the container goes on); gunicorn's worker crash and its next worker alike."""
    exited = "2025-10-12 10:25:35,461 WARN exited: worker (exit status 1; not expected)"
    spawned = "2025-10-12 10:25:36,463 INFO spawned: 'worker' with pid 16409"
    gave_up = "2025-10-12 10:25:36,463 INFO gave up: worker entered FATAL state, too many start retries too quickly"
    _settles(spawned, exited, Kind.APP_EXCEPTION, after=1, too_late=60)
    assert Kind.APP_EXCEPTION in _node_kinds(_container(0, exited), _container(1, gave_up))
    other = spawned.replace("'worker'", "'nginx'")  # another program started at boot settles nothing
    assert Kind.APP_EXCEPTION in _node_kinds(_container(0, exited), _container(1, other))
    crashed = "[2023-04-18 09:58:48 +0000] [1] [WARNING] Worker with pid 8 was terminated due to signal 11"
    booted = "[2023-04-18 09:58:48 +0000] [1] [INFO] Booting worker with pid: 9"
    _settles(booted, crashed, Kind.APP_EXCEPTION, after=0.2, too_late=60)


def _settles(later: str, earlier: str, kind: Kind, after: float, too_late: float) -> None:
    """``later`` printed ``after`` seconds after ``earlier`` settles it, as two documents or one; ``earlier`` alone,
    or ``later`` ``too_late`` seconds after it, settles nothing."""
    assert kind not in _node_kinds(_container(0, earlier), _container(after, later))
    assert kind not in _node_kinds(_container(0, f"{earlier}\n{later}"))
    assert kind in _node_kinds(_container(0, earlier))
    assert kind in _node_kinds(_container(0, earlier), _container(too_late, later))


def test_the_eviction_managers_signal_is_named_as_its_other_lines_name_the_resource() -> None:
    """A threshold's signal ("allocatableMemory.available", "nodefs.inodesFree") as the kubelet names its resource
    (memory, inodes, ephemeral-storage, pids); its structured conditions line as well as the 1.7-1.9 one."""
    cases = {
        "eviction manager: thresholds - reclaim not satisfied: threshold [signal=allocatableMemory.available,"
        " quantity=100Mi]": "memory",
        "eviction manager: thresholds - reclaim not satisfied: threshold [signal=nodefs.inodesFree, quantity=5%]": (
            "inodes"
        ),
        "eviction manager: thresholds - reclaim not satisfied: threshold [signal=imagefs.available, quantity=15%]": (
            "ephemeral-storage"
        ),
        "eviction manager: thresholds - reclaim not satisfied: threshold [signal=pid.available, quantity=10%]": "pids",
        'I0528 16:05:44.100000 2269385 eviction_manager.go:300] "Eviction manager: node conditions - observed"'
        " nodeCondition=[MemoryPressure]": "memory",
        "eviction manager: node conditions - observed: [DiskPressure]": "disk",
    }
    for text, resource in cases.items():
        hit = log_parse.match_line(text)
        assert hit is not None and hit.signature.name == "kubelet-eviction-pressure", text
        assert hit.attrs["resource"] == resource, text
