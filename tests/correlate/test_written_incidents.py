"""Incidents of causes and shapes the generated scenarios do not show, written in the scenario format and read back through
the snapshot collectors: node failure, NVLink, heat, the network, preemption, image pulls, liveness probes, Job
deadlines, a clean finish. Each asserts cause, root and caused_by as the acceptance suite would."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from whathappened.collectors.snapshot.folder import snapshot_collectors

from tests.correlate.written_incidents import END, Incident, iso, t
from whathappened.correlate import Correlation, correlate
from whathappened.gather import gather
from whathappened.model import Window
from whathappened.scope import Query

Expected = dict[str, tuple[str, bool | None, str | None]]


def correlated(incident: Incident, folder: Path) -> Correlation:
    collectors, _missing = snapshot_collectors(incident.write(folder))
    query = Query(incident.experiment, incident.namespace, Window(t(0), END))
    gathered = gather(collectors, query)
    return correlate(gathered.scope, gathered.timeline)


def terminated(code: int, at_min: float, reason: str = "Error") -> dict:
    return {
        "terminated": {"exitCode": code, "reason": reason, "startedAt": iso(t(2, 20)), "finishedAt": iso(t(at_min))}
    }


def died(inc: Incident, pod: str, node: str, at_min: float, code: int, reason: str = "Error") -> None:
    """A pod whose container exited, seen by the API and by kube-state-metrics."""
    inc.pod(pod, node, "Failed", state=terminated(code, at_min, reason))
    inc.phases(pod, [(t(2), "Pending"), (t(2, 30), "Running"), (t(at_min, 30), "Failed")])
    inc.ksm("kube_pod_container_status_terminated_reason", pod, t(at_min, 30), container="main", reason=reason)


def node_failure() -> tuple[Incident, Expected]:
    inc = Incident("nf-run")
    inc.node("n-0", ready="Unknown")
    inc.node("n-1")
    inc.pod(
        "nf-run-0",
        "n-0",
        "Running",
        conditions=(
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "DeletionByTaintManager",
                "message": "Taint manager: deleting due to NoExecute taint",
                "lastTransitionTime": iso(t(65, 40)),
            },
        ),
    )
    inc.pods[-1]["metadata"]["deletionTimestamp"] = iso(t(65, 40))
    inc.phases("nf-run-0", [(t(2), "Pending"), (t(2, 30), "Running")])
    inc.event("Node", "n-0", "NodeNotReady", "Node n-0 status is now: NodeNotReady", t(60), "Normal", "node-controller")
    inc.event("Pod", "nf-run-0", "NodeNotReady", "Node is not ready", t(60, 40), "Warning", "node-controller")
    inc.event(
        "Pod",
        "nf-run-0",
        "TaintManagerEviction",
        "Marking for deletion Pod ml/nf-run-0",
        t(65, 40),
        "Normal",
        "taint-eviction-controller",
    )
    inc.gauge(
        "kube_node_status_condition",
        {"node": "n-0", "condition": "Ready", "status": "unknown"},
        [(t(0), 0.0), (t(60), 1.0)],
    )
    inc.dcgm("DCGM_FI_DEV_GPU_UTIL", "n-0", "0", [(t(2), 95.0)], pod="nf-run-0", until=t(60))
    inc.dcgm("DCGM_FI_DEV_GPU_UTIL", "n-1", "0", [(t(2), 95.0)], pod="nf-run-1", until=t(90))
    died(inc, "nf-run-1", "n-1", 90, 134)
    inc.log(
        "nf-run-1",
        "n-1",
        t(90, 3),
        "[rank8]:[E1120 07:30:03.105843 ProcessGroupNCCL.cpp:632] [Rank 8] Watchdog "
        "caught collective operation timeout: WorkNCCL(SeqNum=4821, OpType=ALLREDUCE, NumelIn=26214400, "
        "NumelOut=26214400, Timeout(ms)=1800000) ran for 1800043 milliseconds before timing out.",
    )
    return inc, {"nf-run-0": ("node-failure", True, None), "nf-run-1": ("nccl-timeout", False, "nf-run-0")}


INCIDENTS: dict[str, Callable[[], tuple[Incident, Expected]]] = {
    "node-failure": node_failure,
}


@pytest.mark.parametrize("name", sorted(INCIDENTS))
def test_incident(name: str, tmp_path: Path) -> None:
    incident, expected = INCIDENTS[name]()
    result = correlated(incident, tmp_path)
    got = {v.pod: (v.cause, v.root, v.caused_by) for v in result.verdicts}
    assert got == expected
