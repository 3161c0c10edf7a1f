"""Our OpenMetrics parser and writer, on real exposition lines (dcgm-exporter, kube-state-metrics)."""

from __future__ import annotations

import time

from whathappened.collectors.prometheus.openmetrics import parse_openmetrics, write_openmetrics
from whathappened.collectors.prometheus.series import Series

# dcgm-exporter's own line (linode/lke-ai-conformance, see shared/reference/dcgm-metrics.txt) with a timestamp.
DCGM = (
    'DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-a8394b51-c086-568a-9f1a-c1e1c934c44c",pci_bus_id="00000000:00:02.0",'
    'device="nvidia0",modelName="NVIDIA RTX 4000 Ada Generation",Hostname="lke529760-766837-0a634ab30000",'
    'DCGM_FI_DRIVER_VERSION="580.95.05",container="cuda",err_code="0",err_msg="No Error",namespace="default",'
    'pod="cuda-75454ffb9f-8ljq7",pod_uid=""} 0'
)
KSM = 'kube_pod_container_status_last_terminated_reason{container="container7",namespace="ns6",pod="pod6",reason="OOMKilled",uid="uid6"} 1'


def test_recorded_lines_with_second_timestamps() -> None:
    text = "\n".join(
        [
            "# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.",
            "# TYPE DCGM_FI_DEV_XID_ERRORS gauge",
            f"{DCGM} 1795154400",
            f"{DCGM.replace('} 0', '} 79')} 1795154430.5",
            "# TYPE kube_pod_container_status_last_terminated_reason gauge",
            f"{KSM} 1795154400",
            "# EOF",
        ]
    )
    series, problems = parse_openmetrics(text)
    assert problems == []
    xid, ksm = series
    assert xid.name == "DCGM_FI_DEV_XID_ERRORS"
    assert xid.labels["Hostname"] == "lke529760-766837-0a634ab30000"
    assert xid.labels["pod_uid"] == ""
    assert xid.samples == ((1795154400.0, 0.0), (1795154430.5, 79.0))
    assert ksm.labels["reason"] == "OOMKilled"


def test_escapes_exemplars_special_values_and_millisecond_timestamps() -> None:
    text = "\n".join(
        [
            'm{a="quote \\" here",b="back\\\\slash",c="new\\nline",d="} and {"} 1 1795154400',
            'm{a="x"} NaN 1795154400',
            'm{a="x"} +Inf 1795154430',
            'c_total{a="y"} 3 1795154400 # {trace_id="abc"} 1 1795154400',
            "plain 7 1795154400000",
            "# EOF",
        ]
    )
    series, problems = parse_openmetrics(text)
    assert problems == []
    by = {(s.name, s.labels.get("a")): s for s in series}
    odd = by[("m", 'quote " here')]
    assert (odd.labels["b"], odd.labels["c"], odd.labels["d"]) == ("back\\slash", "new\nline", "} and {")
    nan_then_inf = by[("m", "x")].samples
    assert nan_then_inf[0][1] != nan_then_inf[0][1] and nan_then_inf[1][1] == float("inf")
    assert by[("c_total", "y")].samples == ((1795154400.0, 3.0),)
    assert by[("plain", None)].samples == ((1795154400.0, 7.0),)


def test_bad_lines_are_named_and_skipped() -> None:
    text = "\n".join(
        [
            'good{a="1"} 1 1795154400',
            'bad{a="1" 1 1795154400',
            'good{a="1"} one 1795154430',
            "good_no_time 1",
            '9starts_with_digit{a="1"} 1 1795154400',
            'dup{a="1",a="2"} 1 1795154400',
            'good{a="1"} 2 1795154460',
        ]
    )
    series, problems = parse_openmetrics(text)
    assert [s.samples for s in series] == [((1795154400.0, 1.0), (1795154460.0, 2.0))]
    assert [p.split(":")[0] for p in problems] == ["line 2", "line 3", "line 4", "line 5", "line 6", "line 8"]
    assert "EOF" in problems[-1]


def test_out_of_order_samples_are_sorted() -> None:
    series, _ = parse_openmetrics('m{a="1"} 2 1795154430\nm{a="1"} 1 1795154400\n# EOF\n')
    assert series[0].samples == ((1795154400.0, 1.0), (1795154430.0, 2.0))


def test_writer_round_trip() -> None:
    original = [
        Series(
            "DCGM_FI_DEV_XID_ERRORS",
            {"Hostname": "n1", "gpu": "5", "err_msg": 'say "hi"\\'},
            ((1795154400.0, 0.0), (1795154430.0, 79.0)),
        ),
        Series("whathappened:dcgm_last_seen_timestamp_seconds", {"Hostname": "n1"}, ((1795161600.0, 1795161600.0),)),
        Series("kube_node_spec_unschedulable", {"node": "n1"}, ((1795154400.5, 1.0),)),
    ]
    text = write_openmetrics(original, {"DCGM_FI_DEV_XID_ERRORS": "gauge"})
    assert text.endswith("# EOF\n")
    assert "1795154400000" not in text
    again, problems = parse_openmetrics(text)
    assert problems == []
    assert sorted((s.name, dict(s.labels), s.samples) for s in again) == sorted(
        (s.name, dict(s.labels), s.samples) for s in original
    )


def test_a_large_history_parses_quickly() -> None:
    labels = 'Hostname="gpu-node-{n}",UUID="GPU-{n:04d}-{g}",device="nvidia{g}",gpu="{g}",modelName="NVIDIA H100 80GB HBM3",pod="p-{n}"'
    lines = ["# TYPE DCGM_FI_DEV_GPU_UTIL gauge"]
    for n in range(16):
        for g in range(8):
            key = "DCGM_FI_DEV_GPU_UTIL{" + labels.format(n=n, g=g) + "}"
            lines.extend(f"{key} {90 + i % 7} {1795154400 + 15 * i}" for i in range(1440))
    lines.append("# EOF")
    text = "\n".join(lines)
    began = time.process_time()
    series, problems = parse_openmetrics(text)
    spent = time.process_time() - began
    assert problems == [] and len(series) == 128 and all(len(s.samples) == 1440 for s in series)
    assert spent < 5.0, f"184k lines took {spent:.1f} s of CPU"
