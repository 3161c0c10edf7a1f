"""Kubernetes objects as `kubectl get pods,events,nodes -o json` prints them at the moment of capture."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

from synth.spec import KEvent, Node, Pod, Recording, Run, iso, iso_us

TOLERATIONS = [
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
]


def _hex(*parts: object, length: int = 64) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:length]


def container_id(pod: Pod, run: int) -> str:
    return _hex("container", pod.uid, run)


def machine_id(node: str) -> str:
    """The node's /etc/machine-id as journald and the log shippers report it."""
    return _hex("machine", node, length=32)


def k8s_list(kind: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "items": items, "kind": kind, "metadata": {"resourceVersion": "48213377"}}


def _cond(kind: str, status: str, t: datetime, reason: str | None = None, message: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"lastProbeTime": None, "lastTransitionTime": iso(t), "status": status, "type": kind}
    if reason:
        out["reason"] = reason
    if message:
        out["message"] = message
    return out


def _terminated(pod: Pod, run: Run, index: int, message: str | None = None) -> dict[str, Any]:
    if run.reason == "ContainerStatusUnknown":
        return {
            "exitCode": 137,
            "finishedAt": None,
            "message": "The container could not be located when the pod was terminated",
            "reason": "ContainerStatusUnknown",
            "startedAt": None,
        }
    out: dict[str, Any] = {
        "containerID": f"containerd://{container_id(pod, index)}",
        "exitCode": run.exit_code,
        "finishedAt": iso(run.finished),
        "reason": run.reason,
        "startedAt": iso(run.started),
    }
    if message:
        out["message"] = message
    return out


def _container_status(pod: Pod, now: datetime) -> dict[str, Any] | None:
    if pod.scheduled is None or pod.node is None:
        return None
    digest = _hex("image", pod.image)
    status: dict[str, Any] = {
        "image": pod.image,
        "imageID": f"{pod.image.split(':')[0]}@sha256:{digest}" if pod.started else "",
        "lastState": {},
        "name": pod.container,
        "ready": False,
        "restartCount": len(pod.runs),
        "started": False,
    }
    runs = len(pod.runs)
    if pod.runs:
        status["lastState"] = {"terminated": _terminated(pod, pod.runs[-1], runs - 1)}
    if pod.finished is not None and pod.finished <= now and pod.kubelet_lost_at is None:
        final = Run(pod.started or pod.finished, pod.finished, pod.exit_code or 0, pod.term_reason or "Error")
        status["state"] = {"terminated": _terminated(pod, final, runs, pod.term_message)}
        status["containerID"] = f"containerd://{container_id(pod, runs)}"
    elif pod.waiting is not None:
        reason, message = pod.waiting
        status["state"] = {"waiting": {"message": message, "reason": reason}}
    elif pod.started is not None:
        status["state"] = {"running": {"startedAt": iso(pod.started)}}
        status["containerID"] = f"containerd://{container_id(pod, runs)}"
        status["ready"] = pod.ready
        status["started"] = True
    else:
        status["state"] = {"waiting": {"reason": "ContainerCreating"}}
    return status


def _conditions(pod: Pod, now: datetime) -> list[dict[str, Any]]:
    if pod.scheduled is None and not pod.admitted:
        return []
    if pod.scheduled is None:
        message = pod.unschedulable_message or "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
        return [_cond("PodScheduled", "False", pod.created + timedelta(seconds=1), "Unschedulable", message)]
    ready_at = pod.started or pod.scheduled
    ready = "True" if pod.started and pod.finished is None and pod.waiting is None and pod.ready else "False"
    not_ready_at = pod.finished or pod.kubelet_lost_at or ready_at
    if pod.kubelet_lost_at is not None:
        ready, not_ready_at = "False", pod.kubelet_lost_at + timedelta(seconds=40)
    started = pod.started is not None
    conds = [
        _cond("PodReadyToStartContainers", "True" if started else "False", ready_at),
        _cond("Initialized", "True", pod.scheduled),
        _cond("Ready", ready, ready_at if ready == "True" else not_ready_at),
        _cond("ContainersReady", ready, ready_at if ready == "True" else not_ready_at),
        _cond("PodScheduled", "True", pod.scheduled),
    ]
    if pod.disruption is not None and pod.disruption[2] <= now:
        reason, message, t = pod.disruption
        conds.append(_cond("DisruptionTarget", "True", t, reason, message))
    return conds


def _metadata(pod: Pod) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "annotations": {"kubectl.kubernetes.io/default-container": pod.container, **pod.annotations},
        "creationTimestamp": iso(pod.created),
        "labels": dict(pod.labels),
        "name": pod.name,
        "namespace": pod.namespace,
        "resourceVersion": str(int(_hex("rv", pod.uid, length=6), 16) % 9_000_000 + 1_000_000),
        "uid": pod.uid,
    }
    if pod.generate_name:
        meta["generateName"] = pod.generate_name
    if pod.owner is not None:
        o = pod.owner
        meta["ownerReferences"] = [
            {
                "apiVersion": o.api_version,
                "blockOwnerDeletion": True,
                "controller": True,
                "kind": o.kind,
                "name": o.name,
                "uid": o.uid,
            }
        ]
    if pod.deletion_at is not None:
        meta["deletionGracePeriodSeconds"] = 30
        meta["deletionTimestamp"] = iso(pod.deletion_at + timedelta(seconds=30))
    return meta


def _spec(pod: Pod) -> dict[str, Any]:
    limits = {"cpu": pod.cpu, "memory": pod.memory, "nvidia.com/gpu": str(pod.gpu_request)}
    requests = {"cpu": pod.cpu, "memory": pod.memory, "nvidia.com/gpu": str(pod.gpu_request)}
    container: dict[str, Any] = {
        "command": pod.command,
        "image": pod.image,
        "imagePullPolicy": "IfNotPresent",
        "name": pod.container,
        "resources": {"limits": limits, "requests": requests},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }
    if pod.liveness_probe:
        container["livenessProbe"] = pod.liveness_probe
    spec: dict[str, Any] = {
        "containers": [container],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": pod.priority,
        "restartPolicy": pod.restart_policy,
        "schedulerName": "volcano" if "volcano.sh/job-name" in pod.labels else "default-scheduler",
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": TOLERATIONS,
    }
    if pod.priority_class:
        spec["priorityClassName"] = pod.priority_class
    if pod.node is not None and pod.scheduled is not None:
        spec["nodeName"] = pod.node.name
    if pod.hostname:
        spec["hostname"] = pod.hostname
        spec["subdomain"] = pod.subdomain
    if pod.active_deadline_seconds:
        spec["activeDeadlineSeconds"] = pod.active_deadline_seconds
    return spec


# How a Kubernetes release words a pod's status reason (real-formats.md section 5): 1.21's graceful node shutdown
# said Shutdown, 1.22 said Terminated and left the pod Running, 1.31+ kubelets evict with no status reason (only
# the DisruptionTarget condition says so). Release -> status reason -> (reason or None, message or None, phase).
STATUS_BY_RELEASE: dict[str, dict[str, tuple[str | None, str | None, str | None]]] = {
    "1.21": {"Terminated": ("Shutdown", "Node is shutting, evicting pods", None)},
    "1.22": {"Terminated": ("Terminated", None, "Running")},
    "1.32": {"Evicted": (None, None, None)},
}
BEFORE_DISRUPTION_TARGET = frozenset({"1.21", "1.22"})  # the condition arrived in 1.26


def pod_object(pod: Pod, now: datetime, release: str = "") -> dict[str, Any]:
    conditions = _conditions(pod, now)
    if release in BEFORE_DISRUPTION_TARGET:
        conditions = [c for c in conditions if c["type"] != "DisruptionTarget"]
    status: dict[str, Any] = {"conditions": conditions, "phase": pod.phase, "qosClass": "Guaranteed"}
    if pod.kubelet_lost_at is not None:
        status["phase"] = "Running"  # the kubelet that would have reported the end is gone
    reason, message = pod.status_reason, pod.status_message
    worded = STATUS_BY_RELEASE.get(release, {}).get(reason or "")
    if worded is not None:
        reason, message = worded[0], worded[1] or (message if worded[0] else None)
        status["phase"] = worded[2] or status["phase"]
    if reason:
        status["reason"] = reason
    if message:
        status["message"] = message
    if pod.node is not None and pod.scheduled is not None:
        status["hostIP"] = pod.node.ip
        status["hostIPs"] = [{"ip": pod.node.ip}]
        status["startTime"] = iso(pod.scheduled)
        if pod.started:
            status["podIP"] = pod.ip
            status["podIPs"] = [{"ip": pod.ip}]
    cs = _container_status(pod, now)
    if cs is not None:
        status["containerStatuses"] = [cs]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": _metadata(pod), "spec": _spec(pod), "status": status}


def _node_conditions(node: Node, rec: Recording, now: datetime) -> list[dict[str, Any]]:
    heartbeat = now - timedelta(seconds=37)
    lost = rec.node_lost.get(node.name)
    if lost is not None and lost <= now:
        heartbeat = lost - timedelta(seconds=7)
    base = node.created + timedelta(hours=2)
    rows = [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ]
    conds = []
    for kind, status, reason, message in rows:
        transition = base
        if lost is not None and lost <= now:
            status, reason, message = "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status."
            transition = lost + timedelta(seconds=40)
        conds.append(
            {
                "lastHeartbeatTime": iso(heartbeat),
                "lastTransitionTime": iso(transition),
                "message": message,
                "reason": reason,
                "status": status,
                "type": kind,
            }
        )
    if node.cloud == "azure":
        conds.append(
            {
                "lastHeartbeatTime": iso(heartbeat),
                "lastTransitionTime": iso(base),
                "message": "VM has no scheduled event",
                "reason": "NoVMEventScheduled",
                "status": "False",
                "type": "VMEventScheduled",
            }
        )
    for override in rec.node_api_conditions.get(node.name, []):
        conds = [c for c in conds if c["type"] != override["type"]]
        conds.append({"lastHeartbeatTime": iso(heartbeat), **override})
    return conds


def node_object(
    node: Node, rec: Recording, now: datetime, extra_labels: dict[str, str] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"podCIDR": node.pod_cidr, "podCIDRs": [node.pod_cidr]}
    if node.provider_id:
        spec["providerID"] = node.provider_id
    taints = [
        {"effect": effect, "key": key, "timeAdded": iso(t), **({"value": value} if value else {})}
        for key, value, effect, t in rec.taints.get(node.name, [])
        if t <= now
    ]
    cordoned = rec.cordoned.get(node.name)
    if cordoned is not None and cordoned <= now:
        spec["unschedulable"] = True
        taints.insert(
            0, {"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable", "timeAdded": iso(cordoned)}
        )
    if taints:
        spec["taints"] = taints
    gpus = str(len(node.gpus))
    capacity = {
        "cpu": node.cpu,
        "ephemeral-storage": "2919126152Ki",
        "memory": node.memory,
        "nvidia.com/gpu": gpus,
        "pods": "110",
    }
    allocatable = {**capacity, "cpu": str(int(node.cpu) - 1), "memory": f"{int(node.memory[:-2]) - 40}Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                **{k: v for k, (v, since) in rec.node_annotations.get(node.name, {}).items() if since <= now},
            },
            "creationTimestamp": iso(node.created),
            "labels": {**dict(node.labels), **(extra_labels or {})},
            "name": node.name,
            "resourceVersion": str(int(_hex("rv", node.name, length=6), 16) % 9_000_000 + 1_000_000),
            "uid": _hex("node-uid", node.name, length=32),
        },
        "spec": spec,
        "status": {
            "addresses": [{"address": node.ip, "type": "InternalIP"}, {"address": node.name, "type": "Hostname"}],
            "allocatable": allocatable,
            "capacity": capacity,
            "conditions": _node_conditions(node, rec, now),
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": _hex("boot", node.name, length=32),
                "containerRuntimeVersion": "containerd://1.7.23",
                "kernelVersion": node.kernel_version,
                "kubeProxyVersion": "",
                "kubeletVersion": node.kubelet_version,
                "machineID": _hex("machine", node.name, length=32),
                "operatingSystem": "linux",
                "osImage": node.os_image,
                "systemUUID": _hex("system", node.name, length=32),
            },
        },
    }


def event_object(e: KEvent, index: int) -> dict[str, Any]:
    involved: dict[str, Any] = {"apiVersion": e.api_version, "kind": e.kind, "name": e.name}
    if e.kind != "Node":
        involved["namespace"] = e.namespace
    if e.uid:
        involved["uid"] = e.uid
    if e.field_path:
        involved["fieldPath"] = e.field_path
        involved["resourceVersion"] = str(5000 + index)
    out: dict[str, Any] = {
        "apiVersion": "v1",
        "involvedObject": involved,
        "kind": "Event",
        "message": e.message,
        "metadata": {
            "creationTimestamp": iso(e.at),
            "name": f"{e.name}.{_hex('event', e.name, e.reason, e.at.isoformat(), index, length=16)}",
            "namespace": e.namespace,
            "resourceVersion": str(100000 + index),
            "uid": _hex("event-uid", e.name, e.reason, index, length=32),
        },
        "reason": e.reason,
        "reportingComponent": e.component,
        "reportingInstance": e.reporting_instance or e.host,
        "type": e.type,
    }
    if e.new_api:
        # Written through events.k8s.io/v1: the core/v1 view has eventTime and no first/last timestamps.
        out.update({"eventTime": iso_us(e.at), "firstTimestamp": None, "lastTimestamp": None, "source": {}})
        if e.action:
            out["action"] = e.action
        if e.related:
            out["related"] = e.related
    else:
        out.update(
            {
                "count": e.count,
                "eventTime": None,
                "firstTimestamp": iso(e.at),
                "lastTimestamp": iso(e.last_seen),
                "source": {"component": e.component, **({"host": e.host} if e.host else {})},
            }
        )
    return out
