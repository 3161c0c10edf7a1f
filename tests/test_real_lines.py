"""Real failure lines, each the only evidence about one pod that ended (a container or kernel log line, a Kubernetes
event, a pod or container status), explained through the installed CLI from a snapshot and live (the Kubernetes API
double and the log store; the hundreds gathered besides them through the same library in this process, from their
snapshots), and fetched by the log store's server-side prefilter. The lines are verbatim from public issues and docs (tests/data/real-lines.jsonl, with their sources);
the signatures and rules are written for the families and versions, never for these strings."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from whathappened.collectors.logs import parse as log_parse
from whathappened.collectors.snapshot.folder import snapshot_collectors

from synth.writer import METRICS_FILE, write_recording
from tests.acceptance import run_cli, scenario_args
from tests.fixtures.search import SearchServer
from tests.real_lines import (
    DEVICE_REAL_LINES,
    MORE_REAL_LINES,
    PLACED,
    SEED,
    RealLine,
    real_lines,
    recording,
    write,
)
from tests.support import Scenario, load_scenario
from whathappened.explain import explain
from whathappened.model import Window
from whathappened.scope import Query

LINES = real_lines()
# Read from their snapshots only: the live path is the same classifier, proven on LINES above.
MORE_LINES = real_lines(path=MORE_REAL_LINES)
# Seen here on a GPU, not gathered from issues: read like the gathered ones.
DEVICE_LINES = real_lines(path=DEVICE_REAL_LINES)
# What the project does not read yet, said here rather than hidden (none of the visible lines).
NOT_YET: dict[str, str] = {}


def _params() -> list[Any]:
    return [
        pytest.param(line, id=line.id, marks=[pytest.mark.xfail(strict=True, reason=NOT_YET[line.id])])
        if line.id in NOT_YET
        else pytest.param(line, id=line.id)
        for line in LINES
    ]


@pytest.fixture(scope="module")
def incidents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Scenario]:
    root = tmp_path_factory.mktemp("real-lines")
    return {line.id: load_scenario(write(line, root / line.id)) for line in LINES}


def _explain_all(incidents: dict[str, Scenario]) -> dict[str, dict[str, Any]]:
    """Every incident through the CLI from its snapshot, a few at once."""

    def explain(scenario: Scenario) -> dict[str, Any]:
        _code, document, stderr = run_cli(*scenario_args(scenario), "--snapshot", str(scenario.path))
        assert document is not None, stderr
        return document

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(incidents, pool.map(explain, incidents.values()), strict=True))


@pytest.fixture(scope="module")
def from_snapshots(incidents: dict[str, Scenario]) -> dict[str, dict[str, Any]]:
    return _explain_all(incidents)


def _causes_in_process(line: RealLine, folder: Path, split: bool = False) -> list[str]:
    scenario = load_scenario(write(line, folder, split=split))
    collectors, missing = snapshot_collectors(scenario.path)
    query = Query(scenario.experiment, scenario.namespace, Window(scenario.start, scenario.end))
    return [verdict.cause for verdict in explain(collectors, query, not_configured=missing).verdicts]


class _Verdicts(dict[str, list[str]]):
    """Each line's verdicts, explained when a test first asks for them: a worker explains only its own share of
    the lines, and no one fixture call holds the time of thousands of them (each test stays well within the
    suite's per-test timeout however many lines are gathered)."""

    def __init__(self, root: Path, lines: list[RealLine], split: bool = False) -> None:
        super().__init__()
        self._root, self._lines, self._split = root, {line.id: line for line in lines}, split

    def __missing__(self, key: str) -> list[str]:
        found = _causes_in_process(self._lines[key], self._root / key, split=self._split)
        self[key] = found
        return found


@pytest.fixture(scope="module")
def more_from_snapshots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The gathered lines' verdicts, through the library the CLI calls (its snapshot collectors and ``explain``) in
    this process: the CLI around it is proven on LINES above, and hundreds of interpreter start-ups are not."""
    return _Verdicts(tmp_path_factory.mktemp("more-real-lines"), MORE_LINES + DEVICE_LINES)


# Log texts of several lines that are one object, which no line of says alone: they are read as one document only
# (a shipper that splits them loses what they say, and so does this project)
ONE_OBJECT = {
    "device-trap-cupy-cudadrivererror-launch-failed-exception-ignored": (
        "Python's 'Exception ignored in:' and the exception it announces"
    ),
    "device-torch211-dataloader-worker-killed-signal-chained-traceback": (
        "Python's chain: the worker's 'is killed by signal: Killed.' named as the direct cause of 'exited"
        " unexpectedly', which alone reads as the program's"
    ),
    "remapped-rows-uncorrectable-pending-yes": "nvidia-smi -q's block: 'Pending : Yes' means nothing without its title",
    "nccltests-cuda-devices-busy-unavailable-reset-required": "nccl-tests prints the CUDA error's text on its own line",
    "maint-aks-nth-testdata-reboot-host-maintenance": "a pretty-printed Scheduled Events document",
    "trap-ec2-imds-maintenance-history-canceled-completed-doc": "a pretty-printed IMDS document",
    "trap-ec2-imds-maintenance-canceled-reboot-doc": "a pretty-printed IMDS document",
    "s1-rdzv-worker-node-store-connection-reset-failed-shutdown-torch201": (
        "a traceback whose frames (the rendezvous store's) say what its 'Connection reset by peer' is about"
    ),
    "r22d-jax-2019-local-client-replica-oom-wrapped": "one log line the paste's terminal wrapped in two",
    "r27q-azure-imds-preempt-platform-simulate-eviction-indented": "a pretty-printed IMDS document",
    "trap-q2-tail-jax-distributed-shutdown-deadline-exceeded-in-atexit": (
        "Python's 'Error in atexit._run_exitfuncs:' and the traceback it announces: sent apart, the traceback reads"
        " as the program's"
    ),
    "r33e-aim-rocksioerror-exception-ignored-db-write": "Python's 'Exception ignored in:' and the exception it announces",
    "r33e-comet-streaming-error-valueerror-training-continued": (
        "Comet's 'Streaming error' and the traceback it logged from its own thread"
    ),
    "r34b-vault-agent-init-template-403-permission-denied-runtime-error": (
        "Vault's agent error and the 403 it names lines below: sent apart, neither says a secret was refused"
    ),
    "r34b-vault-agent-init-k8s-login-403-permission-denied-backoff": (
        "Vault's login error and the 403 it names lines below: sent apart, neither says the login was refused"
    ),
    "r35a-trap-xformers-matching-triton-not-available-traceback": (
        "xformers' logged probe and the ImportError's traceback it caught: sent apart, the traceback reads as the"
        " program's"
    ),
    "r35c-trap-ebusy-nfs-silly-rename-finalizer": (
        "a traceback whose frames (multiprocessing's exit finalizers) say it was printed and gone on from"
    ),
    "r36d-trap-katib-suggestion-grpc-exception-indexerror": (
        "gRPC's logged failure of one call and the handler's traceback: sent apart, the traceback reads as the"
        " program's"
    ),
    "r33a-trap-colossalai-chunkfullerror-during-handling": (
        "an exception and Python's words chaining it to a later one: sent apart, the first reads as the last"
    ),
    "r41s-trap-httpx-404-safetensors-chained-fallback": (
        "an exception whose message runs on over a line of its own, and Python's words chaining it to a later one:"
        " sent apart, the first reads as the last"
    ),
    "r42v-tf-tpu-preempted-hook-thread-keyerror-health": (
        "threading's announcement of a thread's exception and the traceback it prints: sent apart, the traceback"
        " reads as the program's"
    ),
    "r33a-oneflow-old-runtimeexception-error-out-of-memory": (
        "the what() line names no program or device; the class on the line before says it is OneFlow's (whose CUDA"
        " allocator said 'Error: out of memory' before 0.9)"
    ),
}
SEVERAL_LINES = [
    line
    for line in LINES + MORE_LINES + DEVICE_LINES
    if line.where in ("container-log", "kernel-log") and "\n" in line.text.strip() and line.id not in ONE_OBJECT
]


@pytest.fixture(scope="module")
def line_by_line(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The log texts of several lines, each line its own document, as a shipper without a multiline rule sends them."""
    return _Verdicts(tmp_path_factory.mktemp("lines-one-by-one"), SEVERAL_LINES, split=True)


def _cause(document: dict[str, Any]) -> str | None:
    [verdict] = document["verdicts"]
    return str(verdict["cause"])


def test_the_lines_are_the_references_with_their_sources() -> None:
    assert len(LINES) >= 80
    assert all(line.source_url.startswith("http") and line.expected_cause for line in LINES)
    assert {line.where for line in LINES} == {
        "container-log",
        "kernel-log",
        "k8s-event",
        "pod-status",
        "container-status",
    }
    assert sum(line.trap for line in LINES) >= 10


@pytest.mark.parametrize("line", _params())
def test_from_the_snapshot(line: RealLine, from_snapshots: dict[str, dict[str, Any]]) -> None:
    assert _cause(from_snapshots[line.id]) == line.expected_cause


def test_the_gathered_lines_have_their_sources_and_are_new() -> None:
    assert len(MORE_LINES) >= 70 and sum(line.trap for line in MORE_LINES) >= 15
    assert all(line.source_url.startswith("http") and line.expected_cause for line in MORE_LINES)
    assert not {line.text for line in MORE_LINES} & {line.text for line in LINES}
    assert len({line.text for line in MORE_LINES}) == len(MORE_LINES)  # each gathered once
    assert len({line.id for line in LINES + MORE_LINES}) == len(LINES) + len(MORE_LINES)


def test_the_lines_seen_on_a_gpu_say_where_and_are_new() -> None:
    assert len(DEVICE_LINES) >= 20 and sum(line.trap for line in DEVICE_LINES) >= 5
    assert all(line.source_url == "bench/device/check.sh" for line in DEVICE_LINES)
    assert not {line.text for line in DEVICE_LINES} & {line.text for line in LINES + MORE_LINES}
    assert len({line.id for line in LINES + MORE_LINES + DEVICE_LINES}) == len(LINES + MORE_LINES + DEVICE_LINES)


def test_an_incidents_metrics_copied_from_another_are_those_it_would_write(tmp_path: Path) -> None:
    """The harness copies the metrics of an incident that differs only in its line (tests/real_lines.py `write`):
    the copy is byte for byte what the incident writes alone, for every placement, and an incident whose pod ends
    otherwise gets its own."""
    firsts = {line.where: line for line in reversed(MORE_LINES)}
    assert set(firsts) == set(PLACED)
    written: dict[str, bytes] = {}
    for where, line in firsts.items():
        copied = (write(line, tmp_path / "copied" / where) / METRICS_FILE).read_bytes()
        write_recording(recording(line), tmp_path / "alone" / where, seed=SEED)
        assert copied == (tmp_path / "alone" / where / METRICS_FILE).read_bytes(), where
        written[where] = copied
    assert written["container-log"] == written["kernel-log"]
    assert written["container-log"] != written["container-status"]


@pytest.mark.parametrize("line", MORE_LINES + DEVICE_LINES, ids=lambda line: line.id)
def test_more_from_the_snapshot(line: RealLine, more_from_snapshots: dict[str, list[str]]) -> None:
    assert more_from_snapshots[line.id] == [line.expected_cause]


def test_the_log_texts_of_several_lines_are_many() -> None:
    assert len(SEVERAL_LINES) >= 300 and all(
        any(line.id == key for line in LINES + MORE_LINES + DEVICE_LINES) for key in ONE_OBJECT
    )


@pytest.mark.parametrize("line", SEVERAL_LINES, ids=lambda line: line.id)
def test_a_log_text_of_several_lines_read_one_document_per_line(
    line: RealLine, line_by_line: dict[str, list[str]]
) -> None:
    assert line_by_line[line.id] == [line.expected_cause]


@pytest.mark.servers
@pytest.mark.parametrize("line", _params())
def test_live(line: RealLine, incidents: dict[str, Scenario], kube_double: Any, search_server: SearchServer) -> None:
    scenario = incidents[line.id]
    kube = kube_double(scenario)
    indices = search_server.load_scenario(scenario)
    args = [*scenario_args(scenario), "--kubeconfig", str(kube.kubeconfig), *indices.arguments(search_server.url)]
    _code, document, stderr = run_cli(*args)
    assert document is not None, stderr
    assert _cause(document) == line.expected_cause


# Lines node agents print (the visible set has them as container logs): printed instead by the agent's own pod on
# the experiment pod's node, they say the same about that pod.
AGENT_LINES = {
    "spot-nth-itn-2020-struct": "aws-node-termination-handler",
    "maint-nth-scheduled-event-degraded-hw": "aws-node-termination-handler",
    "spot-karpenter-interruption-2023": "karpenter",
    "hw-xid69-device-plugin-2020": "nvidia-device-plugin-daemonset",
    "device-plugin-xidcriticalerror-xid48-marking-unhealthy": "nvidia-device-plugin-daemonset",
    "spot-karpenter-interruption-json-spack": "karpenter",
    "karpenter-drift-replace-disrupting-log-v037": "karpenter",
    "karpenter-v1-disrupting-underutilized-replace": "karpenter",
    "nth-asg-lifecycle-termination-sqs": "aws-node-termination-handler",
    "gpud-xid79-detected-on-pci": "gpud",
    "gpud-remapped-rows-error-gpu-is-lost": "gpud",
    "h4-device-plugin-xid94-kubectl-timestamps": "nvidia-device-plugin-daemonset",
    "trap-h4-nma-interfacenotup-nodelocaldns-dummy": "eks-node-monitoring-agent",
    "h4-nvsentinel-syslog-monitor-healthy-after-gpu-reset": "nvsentinel-syslog-health-monitor",
    "i4-nth-asg-lifecycle-requesting-drain": "aws-node-termination-handler",
    "spot-k1-nth-aemm-got-interruption-event-2020": "aws-node-termination-handler",
    "spot-k1-karpenter-stern-json-removing-offering-g4dn": "karpenter",
    "trap-k1-nth-imds-rebalance-event-store-wrapped": "aws-node-termination-handler",
}


@pytest.mark.servers
@pytest.mark.parametrize(
    "line", [line for line in LINES + MORE_LINES if line.id in AGENT_LINES], ids=lambda line: line.id
)
def test_a_node_agents_line_on_the_pods_node(
    line: RealLine, tmp_path: Path, kube_double: Any, search_server: SearchServer
) -> None:
    scenario = load_scenario(write(line, tmp_path / line.id, agent=AGENT_LINES[line.id]))
    _code, document, stderr = run_cli(*scenario_args(scenario), "--snapshot", str(scenario.path))
    assert document is not None, stderr
    assert _cause(document) == line.expected_cause
    kube, indices = kube_double(scenario), search_server.load_scenario(scenario)
    args = [*scenario_args(scenario), "--kubeconfig", str(kube.kubeconfig), *indices.arguments(search_server.url)]
    _code, live, stderr = run_cli(*args)
    assert live is not None, stderr
    assert _cause(live) == line.expected_cause
    assert all(v["pod"] != f"{AGENT_LINES[line.id]}-x7k2p" for v in live["verdicts"])  # the agent is no suspect


@pytest.mark.servers
def test_the_server_prefilter_fetches_every_line(search_server: SearchServer) -> None:
    """Only the failure lines come back from the signature filter, so each must pass it (traps included: what
    they say is judged after the fetch)."""
    matched = [line.text for line in LINES + MORE_LINES if log_parse.match_line(line.text) is not None]
    missing = search_server.prefilter_misses("real-lines", matched)
    assert len(matched) >= 80 and missing == []
