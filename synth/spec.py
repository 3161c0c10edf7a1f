"""The incident model the stories fill in and the writers read: nodes, pods, Kubernetes events, log lines and
the metric tracks (GPU faults, node conditions, maintenance notices) of one recorded incident.

Nodes and GPUs are frozen values. Pods, events and the Recording are builders: a story creates a healthy
experiment first and then edits the pods its fault touches, which reads far better than rebuilding frozen copies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

Phase = Literal["Pending", "Running", "Succeeded", "Failed", "Unknown"]


def iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def iso_us(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def at(base: datetime, **delta: float) -> datetime:
    return base + timedelta(**delta)


@dataclass(frozen=True, slots=True)
class Gpu:
    index: int
    uuid: str
    pci_bus_id: str  # as DCGM prints it: 00000000:18:00.0

    @property
    def kernel_pci(self) -> str:
        """The form NVRM kernel lines use: 0000:18:00."""
        return self.pci_bus_id[4:14]

    @property
    def device(self) -> str:
        return f"nvidia{self.index}"


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    ip: str
    cloud: str  # azure | aws | gcp | onprem
    provider_id: str | None
    instance_type: str
    zone: str
    gpu_product: str  # node label form: NVIDIA-H100-80GB-HBM3
    model_name: str  # DCGM modelName: NVIDIA H100 80GB HBM3
    gpus: tuple[Gpu, ...]
    cpu: str
    memory: str
    labels: tuple[tuple[str, str], ...]
    kubelet_version: str
    kernel_version: str
    os_image: str
    created: datetime
    pod_cidr: str
    driver_version: str = "550.127.08"


@dataclass(frozen=True, slots=True)
class Owner:
    kind: str
    name: str
    api_version: str
    uid: str


@dataclass(slots=True)
class Run:
    """One finished run of a container (a restart leaves the earlier ones in lastState and in metrics)."""

    started: datetime
    finished: datetime
    exit_code: int
    reason: str  # Error | OOMKilled | Completed | ContainerStatusUnknown


@dataclass(slots=True)
class Pod:
    name: str
    namespace: str
    uid: str
    labels: dict[str, str]
    owner: Owner | None
    container: str
    image: str
    command: list[str]
    created: datetime
    node: Node | None = None
    gpu_indices: tuple[int, ...] = ()
    ip: str = ""
    scheduled: datetime | None = None
    started: datetime | None = None
    gpu_request: int = 8
    memory: str = "1600Gi"
    cpu: str = "88"
    restart_policy: str = "Never"
    priority_class: str = ""
    priority: int = 0
    annotations: dict[str, str] = field(default_factory=dict)
    hostname: str = ""
    subdomain: str = ""
    generate_name: str = ""
    rank0: int = 0
    local_ranks: int = 8
    # how it ended (None: still running at captured_at)
    finished: datetime | None = None
    exit_code: int | None = None
    term_reason: str | None = None
    term_message: str | None = None
    final_phase: Phase | None = None
    status_reason: str | None = None
    status_message: str | None = None
    disruption: tuple[str, str, datetime] | None = None  # DisruptionTarget reason, message, time
    deletion_at: datetime | None = None  # deletionTimestamp, pod still shown (Terminating)
    gone_at: datetime | None = None  # removed from the API at this time
    runs: list[Run] = field(default_factory=list)  # earlier runs (restarts)
    waiting: tuple[str, str] | None = None  # reason, message of a waiting container
    kubelet_lost_at: datetime | None = None  # node stopped reporting: status frozen as it was
    liveness_probe: dict[str, Any] | None = None
    unschedulable_message: str | None = None
    # False: the API server refused to make the pod (its controller's FailedCreate): no scheduler ever saw it
    admitted: bool = True
    active_deadline_seconds: int | None = None
    ready: bool = True

    @property
    def phase(self) -> Phase:
        if self.final_phase is not None:
            return self.final_phase
        return "Running" if self.started is not None else "Pending"


@dataclass(slots=True)
class KEvent:
    """A core/v1 Event. `new_api` events (scheduler, some controllers) carry eventTime and no first/last time."""

    at: datetime
    reason: str
    message: str
    kind: str  # involvedObject kind
    name: str
    namespace: str  # the event's own namespace: "default" for Node events
    component: str
    type: str = "Normal"
    host: str = ""
    uid: str = ""
    field_path: str = ""
    api_version: str = "v1"
    last: datetime | None = None
    count: int = 1
    new_api: bool = False
    action: str = ""
    related: dict[str, str] | None = None
    reporting_instance: str = ""

    @property
    def last_seen(self) -> datetime:
        return self.last or self.at


@dataclass(frozen=True, slots=True)
class LogLine:
    at: datetime
    message: str
    pod: str = ""  # container log of this pod, or
    node: str = ""  # a kernel log line of this node
    stream: str = "stdout"
    severity: str = "err"


@dataclass(frozen=True, slots=True)
class Maintenance:
    node: str
    provider: str
    event_id: str
    event_type: str
    seen: datetime  # first scrape that saw it
    not_before: datetime
    until: datetime  # last time the exporter reported it (node gone or event over)


@dataclass(frozen=True, slots=True)
class Ramp:
    """A gauge moving linearly from `low` to `high` between two times, then holding."""

    start: datetime
    end: datetime
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class Counter:
    """An extra per-GPU counter family (ECC, NVLink CRC, thermal violation): steps at the given times."""

    metric: str
    node: str
    gpu: int
    steps: tuple[tuple[datetime, float], ...]
    kind: str = "counter"


@dataclass(frozen=True, slots=True)
class Meta:
    name: str
    description: str
    experiment: str
    namespace: str
    label_key: str
    start: datetime
    end: datetime
    captured_at: datetime
    expected: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class DcgmStyle:
    """How this cluster's dcgm-exporter labels its series (releases differ; the product must read all). The label
    templates per release are in tests/data/real-formats/dcgm-exporter-exposition-templates-by-version.txt."""

    hostname_label: str = "Hostname"  # "hostname" since dcgm-exporter #655
    xid_err_labels: bool = False  # err_code/err_msg attributes on DCGM_FI_DEV_XID_ERRORS (3.3.6-3.4.2 on)
    pci_bus_id: bool = True  # the pci_bus_id label (3.3.7-3.5.0 on)
    driver_label: bool = True  # DCGM_FI_DRIVER_VERSION (2.4.6-2.6.10 on)
    # how the workload's pod reaches Prometheus: "pod" (honorLabels true, GMP, static scrapes), "old-namespace"
    # (--use-old-namespace: pod_name/pod_namespace/container_name), "exported" (a ServiceMonitor without
    # honorLabels: exported_pod/exported_namespace/exported_container, pod and namespace naming the exporter)
    pod_labels: str = "pod"
    # what Hostname holds: the node's name, or (GPU Operator before Oct 2023) the exporter pod's own name, when
    # only a label the scrape config adds (``node_label``) names the node
    hostname_is_exporter: bool = False
    node_label: str = ""
    # the 1.x-compatibility counters file (etc/1.x-compatibility-metrics.csv): dcgm_xid_errors, dcgm_gpu_utilization
    old_names: bool = False
    fields: tuple[str, ...] = (
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_XID_ERRORS",
        "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_FB_USED",
    )


# kube_pod_status_reason by kube-state-metrics release (internal/store/pod.go): up to v2.19 one series per listed
# reason, 0 or 1; from v2.20 only the reasons that hold (value 1), plus kube_pod_status_disruption_reason.
KSM_REASONS_BY_RELEASE: dict[str, tuple[str, ...]] = {
    "v2.13": ("Evicted", "NodeAffinity", "NodeLost", "Shutdown", "UnexpectedAdmissionError"),
    "v2.19": (
        "Evicted",
        "NodeAffinity",
        "NodeLost",
        "PreemptionByScheduler",
        "SchedulingGated",
        "Shutdown",
        "TerminationByKubelet",
        "UnexpectedAdmissionError",
    ),
}


@dataclass(slots=True)
class Recording:
    meta: Meta
    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    events: list[KEvent] = field(default_factory=list)
    logs: list[LogLine] = field(default_factory=list)
    scrape_seconds: int = 30
    ksm_scrape_seconds: int = 0  # 0: same as scrape_seconds
    dcgm: DcgmStyle = field(default_factory=DcgmStyle)
    ksm_release: str = "v2.20"
    # kube-prometheus-stack scrapes kube-state-metrics with honorLabels true; the standalone chart's
    # ServiceMonitor does not, and the workload's pod labels become exported_namespace/exported_pod/...
    ksm_honor_labels: bool = True
    # kube_pod_container_resource_requests (every kube-state-metrics release writes it): written where a story
    # needs it (the fleet's month, whose GPU-hours come from it); the committed incidents were recorded without
    ksm_resource_requests: bool = False
    k8s_release: str = ""  # how pod status reasons are worded (synth.kube.STATUS_BY_RELEASE); "" the current way  # kube-state-metrics' emission style (KSM_REASONS_BY_RELEASE)
    xids: dict[tuple[str, int], list[tuple[datetime, int]]] = field(default_factory=dict)
    gpu_gone: dict[tuple[str, int], datetime] = field(default_factory=dict)
    gpu_temp: dict[tuple[str, int], Ramp] = field(default_factory=dict)
    counters: list[Counter] = field(default_factory=list)
    node_lost: dict[str, datetime] = field(default_factory=dict)  # exporters unreachable from then on
    node_ready: dict[str, list[tuple[datetime, str]]] = field(default_factory=dict)  # true | false | unknown
    node_conditions: dict[str, list[tuple[str, datetime, bool]]] = field(default_factory=dict)
    cordoned: dict[str, datetime] = field(default_factory=dict)
    taints: dict[str, list[tuple[str, str, str, datetime]]] = field(default_factory=dict)  # key, value, effect
    node_gone: dict[str, datetime] = field(default_factory=dict)  # Node object deleted
    node_labels: dict[str, dict[str, str]] = field(default_factory=dict)  # labels added to the Node object
    node_api_conditions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # replaces defaults
    # annotations added to the Node object: name -> key -> (value, from when)
    node_annotations: dict[str, dict[str, tuple[str, datetime]]] = field(default_factory=dict)
    maintenance: list[Maintenance] = field(default_factory=list)
    log_skew: dict[str, float] = field(default_factory=dict)  # node -> seconds its clock is ahead
    archive_events: bool = False
    shipper: str = "filebeat"  # whose documents logs.ndjson holds (synth.shippers)
    event_ttl: timedelta = timedelta(hours=1)

    def pod(self, name: str) -> Pod:
        for pod in self.pods:
            if pod.name == name:
                return pod
        raise KeyError(name)

    def node(self, name: str) -> Node:
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(name)

    def say(self, pod: Pod, t: datetime, message: str, stream: str = "stderr") -> None:
        self.logs.append(LogLine(at=t, message=message, pod=pod.name, stream=stream))

    def kernel(self, node: Node | str, t: datetime, message: str, severity: str = "err") -> None:
        name = node if isinstance(node, str) else node.name
        self.logs.append(LogLine(at=t, message=message, node=name, severity=severity))
