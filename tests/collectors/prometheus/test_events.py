"""Series -> events on recorded shapes: each anomaly, and a near miss for each that must stay silent."""

from __future__ import annotations

from datetime import UTC, datetime

from whathappened.collectors.prometheus.series import LAST_SEEN, Series, events_from_series

from whathappened.model import PodInfo, Window
from whathappened.scope import Query, Scope

T0 = 1795154400.0  # 2026-11-20T06:00:00Z, the window start
WINDOW = Window(datetime.fromtimestamp(T0, UTC), datetime.fromtimestamp(T0 + 7200, UTC))
NODE, NS, POD = "gpu-node-19", "team-lm", "run-worker-2"
GPU = {
    "Hostname": NODE,
    "UUID": "GPU-3982b923-68d9-1c75-a7ea-e1845c4aca6e",
    "device": "nvidia5",
    "gpu": "5",
    "modelName": "NVIDIA H100 80GB HBM3",
}
HELD = {**GPU, "container": "pytorch", "namespace": NS, "pod": POD}
PODINFO = PodInfo(
    name=POD,
    namespace=NS,
    node=NODE,
    started=datetime.fromtimestamp(T0 + 120, UTC),
    created=datetime.fromtimestamp(T0 + 90, UTC),
)


def scope(gpus: dict[str, tuple[str, ...]] | None = None) -> Scope:
    return Scope(Query("run", NS, WINDOW), (PODINFO,), gpus=gpus or {})


def series(name: str, labels: dict[str, str], values: list[float], start: float = T0, every: float = 30.0) -> Series:
    return Series(name, labels, tuple((start + i * every, v) for i, v in enumerate(values)))


def kinds(found: list) -> list[tuple[str, str]]:
    return [(e.at.strftime("%H:%M:%S"), e.kind) for e in found]


# --- dcgm ----------------------------------------------------------------------------------------------------


def test_xid_change_is_reported_once_with_its_pod() -> None:
    xid = series("DCGM_FI_DEV_XID_ERRORS", HELD, [0, 0, 79, 79, 79])
    [event] = events_from_series([xid], scope())
    assert (event.kind, event.attrs["xid"], event.subject.pod, event.subject.gpu) == ("gpu-xid", 79, POD, "5")
    assert event.at == datetime.fromtimestamp(T0 + 60, UTC)
    assert event.attrs["uuid"] == GPU["UUID"]


def test_labels_renamed_by_a_scrape_that_does_not_honor_them_name_the_training_pod() -> None:
    # A ServiceMonitor without honorLabels: Prometheus keeps the target's pod (the exporter) in pod/namespace and
    # renames the exporter's own labels exported_pod/exported_namespace.
    renamed = {
        **GPU,
        "namespace": "gpu-operator",
        "pod": "nvidia-dcgm-exporter-7xk2p",
        "exported_namespace": NS,
        "exported_pod": POD,
        "exported_container": "pytorch",
    }
    xid = series("DCGM_FI_DEV_XID_ERRORS", renamed, [0, 0, 79, 79, 79])
    util = series("DCGM_FI_DEV_GPU_UTIL", renamed, [95.0] * 40)
    found = events_from_series([xid, util], scope())
    [event] = [e for e in found if e.kind == "gpu-xid"]
    assert (event.subject.namespace, event.subject.pod, event.subject.gpu) == (NS, POD, "5")
    [strip] = [e for e in found if e.kind == "gpu-utilization"]
    assert (strip.subject.pod, strip.attrs["gpus"]) == (POD, 1)
    # an idle GPU the exporter reports with no pod of ours: no pod, not the exporter's
    idle = {**renamed, "exported_namespace": "", "exported_pod": ""}
    [lone] = events_from_series([series("DCGM_FI_DEV_XID_ERRORS", idle, [0, 0, 13])], scope())
    assert (lone.subject.pod, lone.subject.namespace) == (None, None)


def test_xid_that_predates_the_pod_is_no_event() -> None:
    # The gauge already held 79 when the pod's series began; it went back to 0 after a reset.
    stale = series("DCGM_FI_DEV_XID_ERRORS", HELD, [79, 79, 79, 0, 0], start=T0 + 120)
    before = series("DCGM_FI_DEV_XID_ERRORS", GPU, [79, 79, 79])
    assert events_from_series([stale, before], scope()) == []


def test_xid_with_err_code_labels_is_one_series() -> None:
    # dcgm-exporter's err_code/err_msg labels change with the value: the series name changes, the GPU does not.
    quiet = series("DCGM_FI_DEV_XID_ERRORS", {**HELD, "err_code": "0", "err_msg": "No Error"}, [0, 0, 0])
    loud = series(
        "DCGM_FI_DEV_XID_ERRORS",
        {**HELD, "err_code": "48", "err_msg": "DBE (Double Bit Error) ECC Error"},
        [48, 48],
        start=T0 + 90,
    )
    [event] = events_from_series([quiet, loud], scope())
    assert (event.attrs["xid"], event.attrs["text"]) == (48, "Double Bit ECC Error")
    assert event.at == datetime.fromtimestamp(T0 + 90, UTC)


def test_xid_count_metric_and_gauge_are_one_happening() -> None:
    gauge = series("DCGM_FI_DEV_XID_ERRORS", HELD, [0, 0, 79, 79])
    count = series("DCGM_EXP_XID_ERRORS_COUNT", {**HELD, "xid": "79", "window_size_in_ms": "300000"}, [0, 0, 1, 1])
    assert kinds(events_from_series([gauge, count], scope())) == [("06:01:00", "gpu-xid")]


def test_ecc_counters_increase_and_reset() -> None:
    dbe = series("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", HELD, [0, 0, 2, 2])
    sbe = series("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", HELD, [5, 5, 5, 9])
    reset = series("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", HELD, [3, 3, 0, 0])  # exporter restart: near miss
    found = events_from_series([dbe, sbe, reset], scope())
    assert kinds(found) == [("06:01:00", "gpu-ecc-dbe"), ("06:01:30", "gpu-ecc-sbe")]
    assert [e.attrs["increase"] for e in found] == [2.0, 4.0]


def test_retired_pages_row_remap_nvlink_and_violations() -> None:
    found = events_from_series(
        [
            series("DCGM_FI_DEV_RETIRED_DBE", HELD, [0, 1, 1]),
            series("DCGM_FI_DEV_ROW_REMAP_FAILURE", HELD, [0, 0, 1]),
            series("DCGM_FI_DEV_ROW_REMAP_FAILURE", {**HELD, "gpu": "6"}, [1, 1, 1]),  # failed before the window
            series("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", HELD, [10, 10, 10, 14]),
            series("DCGM_FI_DEV_THERMAL_VIOLATION", HELD, [0, 0, 0, 0, 2.5e9]),
            series("DCGM_FI_DEV_POWER_VIOLATION", HELD, [7e9, 7e9, 7e9]),  # flat: near miss
        ],
        scope(),
    )
    assert kinds(found) == [
        ("06:00:30", "gpu-retired-pages"),
        ("06:01:00", "gpu-row-remap-failure"),
        ("06:01:30", "nvlink-error"),
        ("06:02:00", "gpu-thermal"),
    ]
    assert found[0].attrs["cause"] == "dbe"
    assert found[3].attrs["violation_us"] == 2.5e6


def test_temperature_over_threshold_and_the_threshold_itself() -> None:
    hot = series("DCGM_FI_DEV_GPU_TEMP", HELD, [70, 80, 88, 90, 84, 89])
    edge = series("DCGM_FI_DEV_GPU_TEMP", {**HELD, "gpu": "6"}, [85, 85, 85])  # at, not over: near miss
    found = events_from_series([hot, edge], scope())
    assert kinds(found) == [("06:01:00", "gpu-thermal"), ("06:02:30", "gpu-thermal")]
    assert found[0].attrs["temperature"] == 88


def test_utilization_collapse_while_the_pod_runs() -> None:
    busy_then_hung = [95.0] * 40 + [0.0] * 20
    ramp_up = [0.0] * 20 + [95.0] * 40  # idle while loading data, then busy: near miss
    found = events_from_series(
        [
            series("DCGM_FI_DEV_GPU_UTIL", HELD, busy_then_hung),
            series("DCGM_FI_DEV_GPU_UTIL", {**HELD, "gpu": "6"}, ramp_up),
            series("DCGM_FI_DEV_GPU_UTIL", GPU | {"gpu": "7"}, busy_then_hung),  # nobody of ours: near miss
        ],
        scope(),
    )
    [drop, strip] = sorted(found, key=lambda e: e.kind != "gpu-util-drop")
    assert (drop.kind, drop.subject.gpu, drop.subject.pod) == ("gpu-util-drop", "5", POD)
    assert (strip.kind, strip.subject.pod, strip.attrs["gpus"]) == ("gpu-utilization", POD, 2)  # GPUs 5 and 6
    # the first sample whose last 5 minutes average <= 10 %: nine idle samples and one busy (9.5 %)
    assert drop.at == datetime.fromtimestamp(T0 + 30 * 48, UTC)


def test_framebuffer_near_full_for_its_model() -> None:
    full = series("DCGM_FI_DEV_FB_USED", HELD, [70000, 80500, 80900])
    roomy = series("DCGM_FI_DEV_FB_USED", {**HELD, "gpu": "6"}, [70000, 78000, 78500])  # 95 %: near miss
    [event] = events_from_series([full, roomy], scope())
    assert (event.kind, event.attrs["used_mib"], event.attrs["total_mib"]) == ("gpu-memory-full", 80500, 81920)


def test_gpu_missing_only_when_the_rest_of_its_node_goes_on() -> None:
    gone = series("DCGM_FI_DEV_XID_ERRORS", HELD, [0] * 20)
    others = [series("DCGM_FI_DEV_XID_ERRORS", {**GPU, "gpu": str(g)}, [0] * 100) for g in (0, 1)]
    whole_node = [
        series("DCGM_FI_DEV_XID_ERRORS", {**GPU, "Hostname": "gpu-node-20", "gpu": str(g)}, [0] * 20) for g in (0, 1)
    ]
    s = Scope(Query("run", NS, WINDOW), (PODINFO, PodInfo(name="w3", namespace=NS, node="gpu-node-20")))
    [missing] = events_from_series([gone, *others, *whole_node], s)
    assert (missing.kind, missing.subject.node, missing.subject.gpu, missing.subject.pod) == (
        "gpu-missing",
        NODE,
        "5",
        POD,
    )
    assert missing.at == datetime.fromtimestamp(T0 + 19 * 30, UTC)


def test_gpu_missing_from_last_seen_series_as_the_live_collector_reads_them() -> None:
    labels = {"Hostname": NODE, "gpu": "5", "UUID": GPU["UUID"], "namespace": NS, "pod": POD}
    gone = Series(LAST_SEEN, labels, ((T0 + 570, T0 + 570),))
    node = Series(LAST_SEEN, {"Hostname": NODE, "modelName": GPU["modelName"]}, ((T0 + 7200, T0 + 7200),))
    [missing] = events_from_series([gone, node], scope())
    assert (missing.subject.gpu, missing.subject.pod, missing.at) == ("5", POD, datetime.fromtimestamp(T0 + 570, UTC))


def test_exporter_without_pod_labels_is_joined_by_node_and_gpu_while_the_pod_lived() -> None:
    before_pod = series("DCGM_FI_DEV_XID_ERRORS", GPU, [0, 43, 43])  # 06:00:30, before the pod started
    during = series(
        "DCGM_FI_DEV_XID_ERRORS", {**GPU, "Hostname": NODE, "gpu": "5", "UUID": "u"}, [0, 79], start=T0 + 600
    )
    found = events_from_series([before_pod, during], scope({NODE: ("5",)}))
    assert [(e.attrs["xid"], e.subject.pod) for e in found] == [(43, None), (79, POD)]
    other_gpu = events_from_series([during], scope({NODE: ("3",)}))
    assert [e.subject.pod for e in other_gpu] == [None]


def test_an_xid_first_seen_in_the_gpus_next_series_is_an_edge() -> None:
    """The rank died seconds after the Xid, before the exporter's next scrape: the GPU's pod series ends at 0 and
    its pod-less series begins at 48. The change is across the two series of one GPU; a counter that moved with
    it too. A series that begins with the value the GPU had is no edge."""
    held = series("DCGM_FI_DEV_XID_ERRORS", HELD, [0, 0, 0])
    after = {k: v for k, v in HELD.items() if k not in ("pod", "namespace", "container")}
    free = series("DCGM_FI_DEV_XID_ERRORS", after, [48, 48, 48], start=T0 + 90)
    dbe_held = series("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", HELD, [0, 0, 0])
    dbe_free = series("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", after, [2, 2, 2], start=T0 + 90)
    found = events_from_series([held, free, dbe_held, dbe_free], scope())
    assert [(e.kind, e.at.timestamp() - T0) for e in found] == [("gpu-ecc-dbe", 90), ("gpu-xid", 90)]
    quiet = series("DCGM_FI_DEV_XID_ERRORS", after, [0, 0], start=T0 + 90)
    assert events_from_series([held, quiet], scope()) == []


# The project's exporter: one counter per GPU and Xid code, made at that code's first Xid (exporters/gpu.py), its
# labels as seen on an H100 (bench/README.md) plus the scrape's instance and job.
NVML_GPU = {
    "gpu": "5",
    "node": NODE,
    "uuid": GPU["UUID"],
    # what the shipped ServiceMonitor's scrape adds without honorLabels: the exporter's own pod, not the workload
    "container": "exporter",
    "instance": "10.0.0.5:9977",
    "job": "whathappened-exporter",
    "namespace": "whathappened",
    "pod": "whathappened-exporter-7xk2p",
}


def test_the_exporters_xid_counter_made_in_the_window_and_each_increase_are_xids() -> None:
    made = series("whathappened_gpu_xid_errors_total", {**NVML_GPU, "xid": "13"}, [1, 1, 2], T0 + 600, every=600)
    found = events_from_series([made], scope({NODE: ("5",)}))
    assert [(e.kind, e.at.timestamp() - T0, e.attrs["xid"], e.subject.pod, e.subject.gpu) for e in found] == [
        ("gpu-xid", 600, 13, POD, "5"),
        ("gpu-xid", 1800, 13, POD, "5"),
    ]
    assert found[0].attrs["uuid"] == GPU["UUID"] and found[0].summary.startswith("Xid 13 on GPU 5 on gpu-node-19")


def test_the_exporters_xid_counter_already_there_is_no_xid_but_a_restart_that_counts_again_is() -> None:
    old = series("whathappened_gpu_xid_errors_total", {**NVML_GPU, "xid": "31"}, [3, 3, 3], start=T0 - 600)
    assert events_from_series([old], scope({NODE: ("5",)})) == []
    # scraped again after an hour's gap (the exporter restarted, its counter made anew by another Xid 31)
    again = Series(old.name, old.labels, (*old.samples, (T0 + 3000, 1.0), (T0 + 3030, 1.0)))
    assert kinds(events_from_series([again], scope({NODE: ("5",)}))) == [("06:50:00", "gpu-xid")]
    elsewhere = series("whathappened_gpu_xid_errors_total", {**NVML_GPU, "node": "gpu-node-99", "xid": "79"}, [1])
    assert events_from_series([elsewhere], scope({NODE: ("5",)})) == []


def test_an_xid_both_exporters_saw_is_one_happening_on_the_pod_one_of_them_names() -> None:
    gauge = series("DCGM_FI_DEV_XID_ERRORS", HELD, [0, 0, 0, 0, 0, 79, 79])
    counter = series("whathappened_gpu_xid_errors_total", {**NVML_GPU, "xid": "79"}, [1, 1], start=T0 + 150)
    # dcgm-exporter names the pod on its series; the project's exporter does not, and where no GPU allocation is
    # known its Xid has no pod: the one happening keeps the pod
    for gpus in ({NODE: ("5",)}, None):
        [event] = events_from_series([counter, gauge], scope(gpus))
        assert (event.at.timestamp() - T0, event.attrs["xid"], event.subject.pod) == (150, 79, POD)


def test_series_of_other_nodes_are_ignored() -> None:
    elsewhere = series("DCGM_FI_DEV_XID_ERRORS", {**HELD, "Hostname": "gpu-node-99"}, [0, 79])
    assert events_from_series([elsewhere], scope()) == []


# --- kube-state-metrics and the exporter -----------------------------------------------------------------------


POD_LABELS = {"namespace": NS, "pod": POD, "uid": "u-1"}


def test_pod_lifecycle_and_termination() -> None:
    found = events_from_series(
        [
            series("kube_pod_status_phase", {**POD_LABELS, "phase": "Running"}, [0, 1, 1, 0], start=T0 + 60),
            series("kube_pod_status_phase", {**POD_LABELS, "phase": "Failed"}, [0, 0, 0, 1], start=T0 + 60),
            series(
                "kube_pod_container_status_terminated_reason",
                {**POD_LABELS, "container": "pytorch", "reason": "OOMKilled"},
                [1, 1],
                start=T0 + 150,
            ),
            series("kube_pod_status_reason", {**POD_LABELS, "reason": "Evicted"}, [1], start=T0 + 150),
            series(
                "kube_pod_status_disruption_reason",
                {**POD_LABELS, "reason": "TerminationByKubelet"},
                [1],
                start=T0 + 120,
            ),
            series("kube_pod_status_phase", {**POD_LABELS, "phase": "Pending"}, [1, 1, 1]),  # since before the window
        ],
        scope(),
    )
    assert kinds(found) == [
        ("06:01:30", "pod-phase"),
        ("06:02:00", "disruption-target"),
        ("06:02:30", "container-terminated"),
        ("06:02:30", "evicted"),
        ("06:02:30", "oom-killed"),
        ("06:02:30", "pod-phase"),
    ]
    assert found[0].attrs["phase"] == "Running" and found[-1].attrs["phase"] == "Failed"
    assert found[2].subject.container == "pytorch" and found[2].subject.node == NODE


def test_restarts_with_last_termination_and_exit_code() -> None:
    container = {**POD_LABELS, "container": "pytorch"}
    found = events_from_series(
        [
            series("kube_pod_container_status_restarts_total", container, [0, 0, 3, 3]),
            series(
                "kube_pod_container_status_last_terminated_reason",
                {**container, "reason": "OOMKilled"},
                [1, 1],
                start=T0 + 60,
            ),
            series("kube_pod_container_status_last_terminated_exitcode", container, [137, 137], start=T0 + 60),
            series("kube_pod_container_status_last_terminated_timestamp", container, [T0 + 55, T0 + 55], start=T0 + 60),
        ],
        scope(),
    )
    assert kinds(found) == [
        ("06:01:00", "container-restarted"),
        ("06:01:00", "container-terminated"),
        ("06:01:00", "oom-killed"),
    ]
    assert found[0].attrs["restarts"] == 3
    assert (found[1].attrs["exit_code"], found[1].attrs["previous"], found[1].attrs["finished"]) == (
        137,
        True,
        "2026-11-20T06:00:55Z",
    )


def test_node_cordon_ready_taint_and_pressure() -> None:
    node = {"node": NODE}
    found = events_from_series(
        [
            series("kube_node_spec_unschedulable", node, [0, 1, 1, 0]),
            series("kube_node_status_condition", {**node, "condition": "Ready", "status": "true"}, [1, 1, 0, 0]),
            series(
                "kube_node_status_condition", {**node, "condition": "Ready", "status": "false"}, [0, 0, 1, 1]
            ),  # mirror: ignored
            series(
                "kube_node_status_condition", {**node, "condition": "MemoryPressure", "status": "true"}, [0, 0, 0, 1]
            ),
            series(
                "kube_node_spec_taint",
                {**node, "key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"},
                [1],
                start=T0 + 30,
            ),
            series("kube_node_spec_unschedulable", {"node": "other-node"}, [0, 1]),  # not ours
        ],
        scope(),
    )
    assert kinds(found) == [
        ("06:00:30", "node-cordoned"),
        ("06:00:30", "node-tainted"),
        ("06:01:00", "node-not-ready"),
        ("06:01:30", "node-pressure"),
        ("06:01:30", "node-uncordoned"),
    ]
    assert found[1].attrs["taint"] == "node.kubernetes.io/unschedulable:NoSchedule"
    assert found[3].attrs["resource"] == "memory"


def test_maintenance_notices_with_not_before() -> None:
    azure = {"node": NODE, "provider": "azure", "event_id": "C7061BAC", "event_type": "Reboot"}
    aws = {"node": NODE, "provider": "aws", "event_id": "spot-itn-1", "event_type": "spot-interruption"}
    found = events_from_series(
        [
            series("whathappened_node_maintenance_scheduled", azure, [1, 1], start=T0 + 60),
            series("whathappened_node_maintenance_not_before_timestamp_seconds", azure, [T0 + 960] * 2, start=T0 + 60),
            series("whathappened_node_maintenance_scheduled", aws, [1], start=T0 + 300),
            series(
                "whathappened_node_maintenance_scheduled", {**azure, "event_id": "old"}, [1, 1]
            ),  # known at the start
        ],
        scope(),
    )
    assert kinds(found) == [("06:01:00", "maintenance-notice"), ("06:05:00", "spot-interruption")]
    assert found[0].attrs["not_before"] == datetime.fromtimestamp(T0 + 960, UTC)
    assert found[0].attrs["event_id"] == "C7061BAC"
    assert "not_before" not in found[1].attrs
