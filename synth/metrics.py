"""The Prometheus history of a Recording: dcgm-exporter, kube-state-metrics and whathappened exporter series.

Every series is sampled on the scrape grid from the window start; a series exists only while its target
reports it (a GPU that fell off the bus, a node that died or a deleted pod stops having samples).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime

from synth.ids import Ids
from synth.openmetrics import OpenMetricsWriter, labels_text
from synth.spec import Node, Pod, Recording

XID_TEXT = {
    0: "No Error",
    13: "Graphics Engine Exception",
    31: "GPU memory page fault",
    43: "GPU stopped processing",
    45: "Preemptive cleanup, due to previous errors -- Most likely to see when running multiple cuda",
    48: "Double Bit ECC Error",
    62: "Internal micro-controller halt",
    63: "ECC page retirement or row remapping recording event",
    64: "ECC page retirement or row remapper recording failure",
    74: "NVLINK Error",
    79: "GPU has fallen off the bus",
    92: "High single-bit ECC error rate",
    94: "Contained ECC error",
    95: "Uncontained ECC error",
    119: "GSP RPC Timeout",
    120: "GSP Error",
    140: "Unrecovered ECC Error",
    154: "GPU Recovery Action Changed",
}
HELP = {
    "DCGM_FI_DEV_GPU_UTIL": "GPU utilization (in %).",
    "DCGM_FI_DEV_XID_ERRORS": "Value of the last XID error encountered.",
    "DCGM_FI_DEV_GPU_TEMP": "GPU temperature (in C).",
    "DCGM_FI_DEV_POWER_USAGE": "Power draw (in W).",
    "DCGM_FI_DEV_FB_USED": "Framebuffer memory used (in MiB).",
}
# dcgm-exporter's 1.x-compatibility names (its etc/1.x-compatibility-metrics.csv) of the fields written here; a
# field that file has no row for is not exported in that mode
OLD_NAMES = {
    "DCGM_FI_DEV_GPU_UTIL": "dcgm_gpu_utilization",
    "DCGM_FI_DEV_XID_ERRORS": "dcgm_xid_errors",
    "DCGM_FI_DEV_GPU_TEMP": "dcgm_gpu_temp",
    "DCGM_FI_DEV_POWER_USAGE": "dcgm_power_usage",
    "DCGM_FI_DEV_FB_USED": "dcgm_fb_used",
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": "dcgm_ecc_dbe_volatile_total",
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": "dcgm_nvlink_flit_crc_error_count_total",
    "DCGM_FI_DEV_THERMAL_VIOLATION": "dcgm_thermal_violation",
}
_PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
_KSM_REASONS = {
    "Evicted",
    "NodeAffinity",
    "NodeLost",
    "PreemptionByScheduler",
    "Shutdown",
    "TerminationByKubelet",
    "UnexpectedAdmissionError",
}
KSM = (("instance", "10.244.0.17:8080"), ("job", "kube-state-metrics"))
# kube-state-metrics scraped through the standalone chart's ServiceMonitor, whose honorLabels defaults to false:
# the target's own labels win and the series' namespace, pod and container become exported_<name>
KSM_SERVICEMONITOR = (
    ("container", "kube-state-metrics"),
    ("endpoint", "http"),
    ("instance", "10.244.0.17:8080"),
    ("job", "kube-state-metrics"),
    ("namespace", "monitoring"),
    ("pod", "kube-state-metrics-7d9c8b5f4-q2xkz"),
    ("service", "kube-state-metrics"),
)


def scraped(
    labels: Sequence[tuple[str, str]], target: Sequence[tuple[str, str]], honor_labels: bool = True
) -> list[tuple[str, str]]:
    """The series' labels as Prometheus stores them (its honor_labels rule): with honor_labels the series' own
    labels win and the target's are added where missing; without it a clashing label of the series is renamed
    exported_<name> and the target's label takes its place."""
    if honor_labels:
        own = {k for k, _ in labels}
        return [*labels, *((k, v) for k, v in target if k not in own)]
    clash = {k for k, _ in target}
    return [*((f"exported_{k}" if k in clash else k, v) for k, v in labels), *target]


class Grid:
    """The scrape timestamps of the window, pre-formatted once: most of the work is string concatenation."""

    def __init__(self, start: datetime, end: datetime, step: int) -> None:
        self.t0 = int(start.timestamp())
        self.step = step
        self.times = list(range(self.t0, int(end.timestamp()) + 1, step))
        self.stamps = [f" {t}\n" for t in self.times]

    def index(self, t: datetime | None, default: int) -> int:
        """First grid index at or after t."""
        if t is None:
            return default
        k = -(-(int(t.timestamp()) - self.t0) // self.step)
        return min(max(k, 0), len(self.times))


class Noise:
    """Cycling tables of plausible values: cheap per sample and deterministic per seed."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed)
        self.util = [str(rng.randint(93, 99)) for _ in range(256)]
        self.temp_busy = [str(rng.randint(60, 68)) for _ in range(256)]
        self.temp_idle = [str(rng.randint(33, 36)) for _ in range(256)]
        self.power_busy = [f"{rng.uniform(615, 690):.3f}" for _ in range(256)]
        self.power_idle = [f"{rng.uniform(70, 76):.3f}" for _ in range(256)]
        self.fb_busy = [str(rng.randint(72000, 74500)) for _ in range(256)]

    @staticmethod
    def offset(*parts: object) -> int:
        return sum(ord(c) for c in "".join(map(str, parts))) % 251


def _sanitize(key: str) -> str:
    return "label_" + re.sub(r"[^a-zA-Z0-9_]", "_", key)


def _holds(pod: Pod, rec: Recording) -> tuple[datetime, datetime] | None:
    if pod.node is None or pod.started is None:
        return None
    start = pod.runs[0].started if pod.runs else pod.started
    end = pod.finished or pod.kubelet_lost_at or rec.meta.end
    return start, end


def pods_by_node(rec: Recording) -> dict[str, list[Pod]]:
    out: dict[str, list[Pod]] = {}
    for pod in rec.pods:
        if pod.node is not None:
            out.setdefault(pod.node.name, []).append(pod)
    return out


def _gpu_segments(
    rec: Recording, grid: Grid, node: Node, gpu: int, by_node: dict[str, list[Pod]]
) -> list[tuple[Pod | None, int, int]]:
    """Grid index ranges of the GPU's life, each with the pod holding it (None: idle)."""
    stop = len(grid.times)
    for limit in (rec.gpu_gone.get((node.name, gpu)), rec.node_lost.get(node.name), rec.node_gone.get(node.name)):
        if limit is not None:
            stop = min(stop, grid.index(limit, stop))
    held = []
    for pod in by_node.get(node.name, ()):
        span = _holds(pod, rec)
        if span is not None and pod.node is node and gpu in pod.gpu_indices:
            held.append((grid.index(span[0], stop), min(grid.index(span[1], stop), stop), pod))
    held.sort(key=lambda h: h[0])
    out: list[tuple[Pod | None, int, int]] = []
    cursor = 0
    for begin, end, pod in held:
        if begin > cursor:
            out.append((None, cursor, min(begin, stop)))
        if end > begin:
            out.append((pod, begin, end))
        cursor = max(cursor, end)
    if cursor < stop:
        out.append((None, cursor, stop))
    return [seg for seg in out if seg[2] > seg[1]]


def exporter_pod(node: Node) -> str:
    """The GPU Operator's dcgm-exporter pod on ``node`` (a DaemonSet pod: name and a 5-character suffix)."""
    return f"nvidia-dcgm-exporter-{Ids(0).suffix('dcgm-exporter', node.name)}"


class DcgmWriter:
    def __init__(self, rec: Recording, grid: Grid, noise: Noise) -> None:
        self.rec, self.grid, self.noise = rec, grid, noise
        self.by_node = pods_by_node(rec)

    def _base(self, node: Node, gpu: int) -> list[tuple[str, str]]:
        g, style = node.gpus[gpu], self.rec.dcgm
        return [
            ("gpu", str(g.index)),
            ("uuid" if style.pod_labels == "old-namespace" else "UUID", g.uuid),  # --use-old-namespace
            *([("pci_bus_id", g.pci_bus_id)] if style.pci_bus_id else []),
            ("device", g.device),
            ("modelName", node.model_name),
            (style.hostname_label, exporter_pod(node) if style.hostname_is_exporter else node.name),
            *([("DCGM_FI_DRIVER_VERSION", node.driver_version)] if style.driver_label else []),
            *([(style.node_label, node.name)] if style.node_label and style.node_label != "instance" else []),
        ]

    def _target(self, node: Node) -> list[tuple[str, str]]:
        """The labels the scrape adds: a ServiceMonitor without honorLabels names the exporter's own pod; the
        GPU Operator's suggested relabelling writes the node's name into ``instance``."""
        instance = node.name if self.rec.dcgm.node_label == "instance" else f"{node.ip}:9400"
        if self.rec.dcgm.pod_labels != "exported":
            return [("instance", instance), ("job", "dcgm-exporter")]
        exporter = exporter_pod(node)
        return [
            ("container", "nvidia-dcgm-exporter"),
            ("endpoint", "gpu-metrics"),
            ("instance", instance),
            ("job", "nvidia-dcgm-exporter"),
            ("namespace", "gpu-operator"),
            ("pod", exporter),
            ("service", "nvidia-dcgm-exporter"),
        ]

    def _attrs(self, pod: Pod | None, xid: int | None) -> list[tuple[str, str]]:
        names = {
            "pod": ("container", "namespace", "pod"),
            "old-namespace": ("container_name", "pod_namespace", "pod_name"),
            "exported": ("exported_container", "exported_namespace", "exported_pod"),
        }[self.rec.dcgm.pod_labels]
        out: list[tuple[str, str]] = []
        if pod is not None:
            out.append((names[0], pod.container))
        if xid is not None:
            out += [("err_code", str(xid)), ("err_msg", XID_TEXT.get(xid, "Unknown Error"))]
        if pod is not None:
            out += [(names[1], pod.namespace), (names[2], pod.name)]
        return out

    def _name(self, field: str) -> str | None:
        """The field's metric name in this exporter's counters file (None: not exported)."""
        return OLD_NAMES.get(field) if self.rec.dcgm.old_names else field

    def write(self, out: OpenMetricsWriter, field: str, kind: str = "gauge") -> None:
        name = self._name(field)
        if name is None:
            return
        out.family(name, kind, HELP.get(field, ""))
        for node in self.rec.nodes:
            for gpu in range(len(node.gpus)):
                self._gpu(out, field, node, gpu, name)

    def _gpu(self, out: OpenMetricsWriter, field: str, node: Node, gpu: int, name: str) -> None:
        by_labels: dict[str, list[tuple[int, int, Pod | None]]] = {}
        order: list[str] = []
        for pod, begin, end in _gpu_segments(self.rec, self.grid, node, gpu, self.by_node):
            for b, e, xid in self._xid_split(node, gpu, begin, end, field):
                key = f"{name}{{{labels_text(self._base(node, gpu) + self._attrs(pod, xid) + self._target(node))}}} "
                if key not in by_labels:
                    by_labels[key] = []
                    order.append(key)
                by_labels[key].append((b, e, pod))
        for key in order:
            values: list[str] = []
            stamps: list[str] = []
            for b, e, pod in by_labels[key]:
                values += self._values(field, node, gpu, pod, b, e)
                stamps += self.grid.stamps[b:e]
            out.series(key, values, stamps)

    def _xid_split(
        self, node: Node, gpu: int, begin: int, end: int, field: str
    ) -> Iterator[tuple[int, int, int | None]]:
        """dcgm-exporter labels the Xid gauge with err_code/err_msg, so each new Xid value starts a new series."""
        if field != "DCGM_FI_DEV_XID_ERRORS" or not self.rec.dcgm.xid_err_labels:
            yield begin, end, None
            return
        cuts = [(begin, 0)]
        for t, code in self.rec.xids.get((node.name, gpu), []):
            k = self.grid.index(t, end)
            if k <= begin:
                cuts[0] = (begin, code)
            elif k < end:
                cuts.append((k, code))
        for i, (b, code) in enumerate(cuts):
            e = cuts[i + 1][0] if i + 1 < len(cuts) else end
            if e > b:
                yield b, e, code

    def _values(self, field: str, node: Node, gpu: int, pod: Pod | None, b: int, e: int) -> list[str]:
        off = Noise.offset(node.name, gpu, field)
        n = self.noise
        busy = pod is not None
        if field == "DCGM_FI_DEV_XID_ERRORS":
            return self._step_values(self.rec.xids.get((node.name, gpu), []), b, e)
        ramp = self.rec.gpu_temp.get((node.name, gpu))
        if field == "DCGM_FI_DEV_GPU_TEMP" and ramp is not None:
            return [self._ramp(ramp, k, n.temp_busy[(k + off) & 255]) for k in range(b, e)]
        table = {
            "DCGM_FI_DEV_GPU_UTIL": n.util if busy else None,
            "DCGM_FI_DEV_GPU_TEMP": n.temp_busy if busy else n.temp_idle,
            "DCGM_FI_DEV_POWER_USAGE": n.power_busy if busy else n.power_idle,
            "DCGM_FI_DEV_FB_USED": n.fb_busy if busy else None,
        }.get(field)
        if table is None:
            return ["0"] * (e - b)
        return [table[(k * 7 + off) & 255] for k in range(b, e)]

    def _ramp(self, ramp: object, k: int, normal: str) -> str:
        from synth.spec import Ramp

        assert isinstance(ramp, Ramp)
        t = self.grid.times[k]
        t0, t1 = ramp.start.timestamp(), ramp.end.timestamp()
        if t < t0:
            return normal
        frac = min((t - t0) / max(t1 - t0, 1), 1.0)
        return str(round(ramp.low + (ramp.high - ramp.low) * frac))

    def _step_values(self, steps: Sequence[tuple[datetime, float]], b: int, e: int) -> list[str]:
        """A step function on the grid: each change holds until the next (the Xid gauge never resets by itself)."""
        values = ["0"] * (e - b)
        for t, v in sorted(steps):
            k = max(self.grid.index(t, e), b)
            values[k - b :] = [_num(v)] * (e - k)
        return values

    def counters(self, out: OpenMetricsWriter) -> None:
        families: dict[str, list[object]] = {}
        for c in self.rec.counters:
            families.setdefault(c.metric, []).append(c)
        for metric, items in families.items():
            name = self._name(metric)
            if name is None:
                continue
            out.family(name, "counter" if metric.endswith("_total") else "gauge")
            for node in self.rec.nodes:
                for gpu in range(len(node.gpus)):
                    steps = [s for c in items if c.node == node.name and c.gpu == gpu for s in c.steps]  # type: ignore[attr-defined]
                    self._counter_series(out, name, node, gpu, sorted(steps))

    def _counter_series(
        self, out: OpenMetricsWriter, metric: str, node: Node, gpu: int, steps: list[tuple[datetime, float]]
    ) -> None:
        for pod, b, e in _gpu_segments(self.rec, self.grid, node, gpu, self.by_node):
            key = f"{metric}{{{labels_text(self._base(node, gpu) + self._attrs(pod, None) + self._target(node))}}} "
            values = self._step_values(steps, b, e)
            out.series(key, values, self.grid.stamps[b:e])


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}"


Track = Callable[[int], str]


def _write_track(
    out: OpenMetricsWriter,
    grid: Grid,
    name: str,
    labels: list[tuple[str, str]],
    b: int,
    e: int,
    value: Track,
    honor_labels: bool = True,
) -> None:
    """A kube-state-metrics series over grid points [b, e), scraped with or without honorLabels."""
    if e > b:
        target = KSM if honor_labels else KSM_SERVICEMONITOR
        out.series(
            f"{name}{{{labels_text(scraped(labels, target, honor_labels))}}} ",
            [value(grid.times[k]) for k in range(b, e)],
            grid.stamps[b:e],
        )


def _ts(t: datetime | None) -> float:
    return t.timestamp() if t is not None else float("inf")
