"""dcgm-exporter and kube-state-metrics as real clusters expose them (verbatim samples in tests/data/real-formats,
copied with SOURCES.md from shared/reference): each exposition through the project's parser as a scrape stores
it, each series' node and pod read as the collector reads them, and the status-reason styles of each
kube-state-metrics release through the offline analysis (only a reason at 1 is true)."""

from __future__ import annotations

import csv
import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from whathappened.collectors.prometheus.model import Series, canonical_labels, canonical_series
from whathappened.collectors.prometheus.openmetrics import parse_openmetrics
from whathappened.collectors.prometheus.placement import dcgm_pod, node_of
from whathappened.collectors.prometheus.series import events_from_series, placed_on_nodes
from whathappened.collectors.prometheus.signals import SIGNALS
from whathappened.collectors.prometheus.vocab import canonical_metric

from synth.spec import KSM_REASONS_BY_RELEASE
from tests.support import REPO
from whathappened.kinds import Kind
from whathappened.model import PodInfo, Window
from whathappened.scope import Query, Scope

SAMPLES = REPO / "tests" / "data" / "real-formats"
SCRAPED_AT = 1_775_000_000


def scraped(name: str) -> list[Series]:
    """An exposition as one scrape stores it (each sample stamped with the scrape's time)."""
    lines = [
        line if not line.strip() or line.startswith("#") else f"{line} {SCRAPED_AT}"
        for line in (SAMPLES / name).read_text(encoding="utf-8").splitlines()
    ]
    series, problems = parse_openmetrics("\n".join(lines) + "\n# EOF\n")
    assert problems == []
    return series


# file -> (the node its Hostname names, the model, how many series)
EXPOSITIONS = {
    "dcgm-exporter-4.x-gpuoperator-kops-aws-L4-metrics.txt": ("i-030791dc5a37cd257", "NVIDIA L4", 23),
    "dcgm-exporter-4.x-gpuoperator-vks-A100vGPU-metrics.txt": (
        "conformance-test-np1-qcqc8-bpdtl-wv2gs",
        "GRID A100-10C",  # a vGPU profile's model name
        11,
    ),
    "dcgm-exporter-4.x-helm-upcloud-L40S-metrics.txt": ("gpu1-wl8sg", "NVIDIA L40S", 23),
}


@pytest.mark.parametrize("name", sorted(EXPOSITIONS))
def test_dcgm_exposition_of_an_idle_gpu(name: str) -> None:
    node, model, count = EXPOSITIONS[name]
    series = [s for s in scraped(name) if s.name.startswith("DCGM_")]
    assert len(series) == count
    for one in series:
        assert node_of(one.labels, {node}) == node and one.labels["modelName"] == model
        assert re.fullmatch(r"GPU-[0-9a-f-]{36}", one.labels["UUID"]) and one.labels["gpu"] == "0"
        assert dcgm_pod(one.labels) is None  # no workload on the GPU: nobody to blame


def api_result(name: str) -> list[dict[str, str]]:
    data = json.loads((SAMPLES / name).read_text(encoding="utf-8"))["data"]
    if "activeTargets" in data:
        return [t["labels"] for t in data["activeTargets"]]
    return [r["metric"] for r in data["result"]]


def test_helm_servicemonitor_names_the_exporter_not_a_workload() -> None:
    """honorLabels false on an idle GPU: pod, namespace, container name the exporter itself."""
    [labels] = api_result("prom-api-query-dcgm-helm-servicemonitor-upcloud.json")
    assert labels["pod"] == "dcgm-exporter-zxgzh" and dcgm_pod(labels) is None
    assert node_of(labels, {"gpu1-wl8sg"}) == "gpu1-wl8sg"


def test_annotation_scrape_with_a_relabelled_nodename() -> None:
    [labels] = api_result("prom-api-query-dcgm-service-endpoints-ericsson.json")
    assert node_of(labels, {"cp-bm14r7"}) == "cp-bm14r7" and dcgm_pod(labels) is None


def test_a_service_dns_instance_names_no_node() -> None:
    """A static scrape of the Service's DNS name: instance identifies no node, and nothing is made up."""
    [labels] = api_result("prom-api-query-dcgm-eks-rafay.json")
    assert node_of(labels, {"ip-10-0-1-20.ec2.internal"}) is None and dcgm_pod(labels) is None


def test_relabelled_node_wins_over_a_hostname_that_is_the_exporter_pod() -> None:
    """Before Oct 2023 the GPU Operator wrote the exporter's pod name into Hostname."""
    labels = {
        "Hostname": "nvidia-dcgm-exporter-57pvc",
        "kubernetes_node": "gpu-node-7",
        "pod": "nvidia-dcgm-exporter-57pvc",
    }
    assert node_of(labels, {"gpu-node-7"}) == "gpu-node-7" and dcgm_pod(labels) is None
    renamed = {**labels, "exported_pod": "llama-worker-3", "exported_namespace": "research"}
    assert dcgm_pod(renamed) == ("research", "llama-worker-3")


COUNTER_FILES = sorted(p.name for p in SAMPLES.glob("dcgm-exporter-*.csv"))


@pytest.mark.parametrize("name", COUNTER_FILES)
def test_default_counters_need_nothing_that_is_off_by_default(name: str) -> None:
    """Every release's counter list (comment lines are off): the Xid gauge is on; what the collector reads besides
    is either on or optional (ECC totals, NVLink errors, violations are off by default in every release, and the
    analysis goes on without them, the kernel log being the Xids' ground truth)."""
    enabled = {canonical_metric(row) for row in counter_rows(name) if not row.startswith("#")}
    assert {"DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_FB_USED"} <= enabled
    assert "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL" not in enabled
    read = {s.metric for s in SIGNALS if s.metric.startswith("DCGM_")}
    assert read - enabled, "the collector also reads counters a default install leaves off"


def counter_rows(name: str) -> list[str]:
    """The metric names of a counters file, each commented-out row (off by default) as ``#name``."""
    rows = []
    for row in csv.reader((SAMPLES / name).read_text(encoding="utf-8").splitlines()):
        first = row[0].strip() if row else ""
        bare = first.lstrip("#").strip()
        if bare.lower().startswith("dcgm_") and " " not in bare:
            rows.append(("#" if first.startswith("#") else "") + bare)
    return rows


def test_every_1x_compatibility_name_reads_as_its_field() -> None:
    """The 1.x-compatibility counters file (dcgm_xid_errors, dcgm_gpu_utilization, lower-case profiling names): each
    name, on or off, is read as the DCGM field it stands for, every field the collector reads among them."""
    old = {row.lstrip("#") for row in counter_rows("dcgm-exporter-3.3.9-3.6.1-1.x-compatibility-metrics.csv")}
    assert len(old) > 30 and all(name.startswith("dcgm_") for name in old)
    fields = {canonical_metric(name) for name in old}
    assert all(field.startswith("DCGM_FI_") for field in fields) and len(fields) == len(old)
    current = {row.lstrip("#") for row in counter_rows("dcgm-exporter-3.3.9-3.6.1-default-counters.csv")}
    assert fields - current <= {"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"} | {f for f in fields if "_PROF_" in f}
    read = {s.metric for s in SIGNALS if s.metric.startswith("DCGM_FI_")}
    assert read - fields <= {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_ROW_REMAP_FAILURE"}


# dcgm-exporter's 1.x names with the exporter's pod in Hostname (NVIDIA/dcgm-exporter#188), and --use-old-namespace
# with MIG (#272), verbatim from shared/reference/real-formats.md section 1.3
OLD_NAME_LINES = (
    'dcgm_gpu_utilization{gpu="0",UUID="GPU-c1f38265-5e7c-0a81-14a0-240a35ea8160",device="nvidia0",'
    'Hostname="dcgm-exporter-6ldbb",container="",namespace="",pod=""} 0',
    'dcgm_fi_prof_gr_engine_active{gpu="0",uuid="GPU-ed1353d6-52ba-8793-7230-4d5d3eb68167",device="nvidia0",'
    'modelName="NVIDIA A100 80GB PCIe",GPU_I_PROFILE="3g.40gb",GPU_I_ID="1",container_name="",pod_name="",'
    'pod_namespace=""} 0.000000',
)


def test_old_names_and_the_old_namespace_uuid_read_in_the_current_spelling() -> None:
    series, problems = parse_openmetrics("\n".join(f"{line} {SCRAPED_AT}" for line in OLD_NAME_LINES) + "\n# EOF\n")
    assert problems == []
    util, prof = (canonical_series(s) for s in series)
    assert util.name == "DCGM_FI_DEV_GPU_UTIL" and util.labels["UUID"] == "GPU-c1f38265-5e7c-0a81-14a0-240a35ea8160"
    assert prof.name == "DCGM_FI_PROF_GR_ENGINE_ACTIVE" and "uuid" not in prof.labels
    assert prof.labels["UUID"] == "GPU-ed1353d6-52ba-8793-7230-4d5d3eb68167" and prof.labels["GPU_I_ID"] == "1"
    assert dcgm_pod(prof.labels) is None and dcgm_pod(util.labels) is None


def test_ksm_scraped_without_honor_labels_names_the_workload_not_kube_state_metrics() -> None:
    """The standalone chart's ServiceMonitor (honorLabels false): the pod's namespace, pod and container are
    renamed exported_*, the target's (kube-state-metrics' own) take their place; read back, the workload's win and
    a container label the series never had (the target's) is dropped."""
    info = {
        "exported_namespace": "research", "exported_pod": "llama-worker-3", "node": "gpu-node-7", "uid": "u-1",
        "container": "kube-state-metrics", "endpoint": "http", "namespace": "monitoring",
        "pod": "kube-state-metrics-7d9c8b5f4-q2xkz", "service": "kube-state-metrics", "job": "kube-state-metrics",
    }  # fmt: skip
    read = canonical_labels(info)
    assert (read["namespace"], read["pod"], read["node"]) == ("research", "llama-worker-3", "gpu-node-7")
    assert "container" not in read and not any(k.startswith("exported_") for k in read)
    terminated = {**info, "exported_container": "pytorch", "reason": "OOMKilled"}
    assert canonical_labels(terminated)["container"] == "pytorch"
    honored = {"namespace": "research", "pod": "llama-worker-3", "container": "pytorch"}
    assert canonical_labels(honored) is honored


def reason_series(name: str) -> list[Series]:
    return [s for s in scraped(name) if s.name == "kube_pod_status_reason"]


def test_ksm_v2_13_lists_every_reason_and_the_generator_writes_the_same_list() -> None:
    reasons = {s.labels["reason"] for s in reason_series("ksm-v2.13.0-test-exposition.txt")}
    assert reasons == set(KSM_REASONS_BY_RELEASE["v2.13"])


def test_ksm_v2_20_reasons_are_the_v2_19_list_and_other() -> None:
    reasons = {s.labels["reason"] for s in reason_series("ksm-v2.20-test-exposition-status-reason.txt")}
    assert reasons == set(KSM_REASONS_BY_RELEASE["v2.19"]) | {"Other"}


START = datetime(2026, 11, 20, 6, tzinfo=UTC)
LABELS = {"namespace": "ns4", "pod": "pod4", "uid": "uid4"}


def reasons_over_time(holds: dict[str, int], listed: tuple[str, ...]) -> list[Series]:
    """One series per listed reason, a sample a minute for an hour, 1 from minute ``holds[reason]`` on."""
    stamps = [(START + timedelta(minutes=m)).timestamp() for m in range(60)]
    return [
        Series(
            "kube_pod_status_reason",
            {**LABELS, "reason": r},
            [(t, 1.0 if i >= holds.get(r, 99) else 0.0) for i, t in enumerate(stamps)],
        )
        for r in listed
    ]


@pytest.mark.parametrize("release", sorted(KSM_REASONS_BY_RELEASE))
def test_only_a_reason_at_one_is_true(release: str) -> None:
    """Up to v2.19 every listed reason is a series: those at 0 say nothing; the evicted pod's Evicted turning 1
    is its eviction, and from v2.19 TerminationByKubelet is its DisruptionTarget condition, not a failure."""
    series = reasons_over_time({"Evicted": 30, "TerminationByKubelet": 30}, KSM_REASONS_BY_RELEASE[release])
    scope = Scope(Query("e", "ns4", Window(START, START + timedelta(hours=1))), (PodInfo("pod4", "ns4"),))
    found = sorted((e.kind, e.attrs.get("reason")) for e in events_from_series(series, scope))
    expected = [(Kind.EVICTED, "Evicted")]
    if "TerminationByKubelet" in KSM_REASONS_BY_RELEASE[release]:
        expected.append((Kind.DISRUPTION_TARGET, "TerminationByKubelet"))
    assert found == sorted(expected)
    at = {e.at for e in events_from_series(series, scope)}
    assert at == {START + timedelta(minutes=30)}


def test_gpu_feature_discovery_labels_name_the_gpus() -> None:
    """GFD's node labels (a vGPU node on vSphere): the product and count the node parser reads."""
    from whathappened.collectors.kube_objects.parse import parse_node

    labels = json.loads((SAMPLES / "gpu-feature-discovery-node-labels-vks-A100vGPU.json").read_text(encoding="utf-8"))
    node = parse_node({"metadata": {"name": "conformance-test-np1", "labels": labels}, "status": {}})
    assert (node.gpu_product, node.gpu_count) == ("GRID-A100-40C", 1)


TEMPLATE = re.compile(r"^\{\{ \$counter\.FieldName \}\}\{(.*)$")


def release_templates() -> list[tuple[str, str]]:
    """(release, the GPU series' label template) from dcgm-exporter's render code, per release tag."""
    release, found = "", []
    for line in (
        (SAMPLES / "dcgm-exporter-exposition-templates-by-version.txt").read_text(encoding="utf-8").splitlines()
    ):
        if line.startswith("### "):
            release = line.split()[1]
        elif (match := TEMPLATE.match(line)) and match.group(1).startswith('gpu="'):
            found.append((release, match.group(1)))
    return found


@pytest.mark.parametrize(("release", "template"), release_templates(), ids=[r for r, _ in release_templates()])
def test_every_release_template_renders_series_the_reader_places(release: str, template: str) -> None:
    """Each release's GPU label template, rendered for a GPU on node ``gpu-7`` (MIG and Hostname branches on):
    the reader finds the node, never takes the GPU for a pod's, and keeps its UUID label where the series is
    matched by it."""
    values = {
        "GPU": "3", "UUID": "UUID", "GPUUUID": "GPU-0e5c5b6e-1f1d-4b5a-9d55-1f7c0c8c1b2a", "GPUPCIBusID": "00000000:B8:00.0",
        "GPUDevice": "nvidia3", "GPUModelName": "NVIDIA H100 80GB HBM3", "MigProfile": "1g.10gb", "GPUInstanceID": "7",
        "Hostname": "gpu-7",
    }  # fmt: skip
    rendered = re.sub(r"\{\{if [^}]*\}\}|\{\{end\}\}", "", template)
    rendered = re.sub(r"\{\{ ?\$metric\.(\w+) ?\}\}", lambda m: values[m.group(1)], rendered)
    labels = dict(re.findall(r'(\w+)="([^"]*)"', rendered))
    assert labels["UUID"].startswith("GPU-") and labels["gpu"] == "3"
    # a template without the Hostname branch (the exporter run without a node name) names no node: none is made up
    named = "gpu-7" if re.search(r"[Hh]ostname=", template) else None
    assert node_of(labels, {"gpu-7"}) == named and dcgm_pod(labels) is None
    assert ("pci_bus_id" in labels) == (release >= "3.3.7")


def test_an_exporter_that_names_itself_is_placed_on_its_node_through_kube_state_metrics() -> None:
    """An older GPU Operator, not relabelled, writes its own pod's name into Hostname (NVIDIA/dcgm-exporter#188's
    shape): the series is placed on the node kube-state-metrics saw that pod on; a Hostname no pod explains (a
    standalone exporter's container id) stays as it is, and no node is made up."""
    xid = Series(
        "DCGM_FI_DEV_XID_ERRORS",
        {"gpu": "0", "UUID": "GPU-c1f38265-5e7c-0a81-14a0-240a35ea8160", "Hostname": "nvidia-dcgm-exporter-6ldbb"},
        ((SCRAPED_AT, 0.0),),
    )
    docker = Series("DCGM_FI_DEV_XID_ERRORS", {**xid.labels, "Hostname": "424773df46e0"}, xid.samples)
    exporter = Series(
        "kube_pod_info",
        {"namespace": "gpu-operator", "pod": "nvidia-dcgm-exporter-6ldbb", "node": "gpu-node-7"},
        ((SCRAPED_AT, 1.0),),
    )
    placed, unexplained, _ = placed_on_nodes([xid, docker, exporter], frozenset({"gpu-node-7"}))
    assert node_of(placed.labels, {"gpu-node-7"}) == "gpu-node-7" and placed.labels["UUID"] == xid.labels["UUID"]
    assert unexplained is docker and node_of(unexplained.labels, {"gpu-node-7"}) == "424773df46e0"


def test_mig_instances_each_name_their_pod_and_the_xid_reaches_both() -> None:
    """A MIG-partitioned A100 under --use-old-namespace (the label set of NVIDIA/dcgm-exporter#272, with a pod on
    each instance): the Xid the parent GPU raised reaches the pod on each instance, which each event names."""
    base = (
        'gpu="0",uuid="GPU-ed1353d6-52ba-8793-7230-4d5d3eb68167",device="nvidia0",modelName="NVIDIA A100 80GB PCIe",'
        'GPU_I_PROFILE="3g.40gb",GPU_I_ID="{i}",Hostname="gpu-node-7",container_name="c",pod_name="{pod}",'
        'pod_namespace="research"'
    )
    lines = [
        f"dcgm_xid_errors{{{base.format(i=i, pod=pod)}}} {0 if k < 10 else 48} {SCRAPED_AT + 30 * k}"
        for k in range(20)
        for i, pod in (("1", "trainer-0"), ("2", "trainer-1"))
    ]
    series, problems = parse_openmetrics("\n".join(lines) + "\n# EOF\n")
    assert problems == []
    start = datetime.fromtimestamp(SCRAPED_AT - 60, UTC)
    query = Query("trainer", "research", Window(start, start + timedelta(hours=1)))
    pods = tuple(PodInfo(name=n, namespace="research", node="gpu-node-7") for n in ("trainer-0", "trainer-1"))
    xids = [e for e in events_from_series(series, Scope(query, pods)) if e.kind == Kind.GPU_XID]
    assert [(e.subject.pod, e.subject.gpu, e.attrs["xid"], e.attrs["gpu_instance"]) for e in xids] == [
        ("trainer-0", "0", 48, "1"),
        ("trainer-1", "0", 48, "2"),
    ]
    assert {e.attrs["uuid"] for e in xids} == {"GPU-ed1353d6-52ba-8793-7230-4d5d3eb68167"}
    assert {e.attrs["mig_profile"] for e in xids} == {"3g.40gb"}
