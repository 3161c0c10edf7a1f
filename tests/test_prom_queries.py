"""The PromQL builders: short, anchored alternations; every query under VictoriaMetrics' 16 KB limit."""

from __future__ import annotations

import re

from whathappened.collectors import _prom_queries as pq
from whathappened.collectors._prom_signals import SIGNALS


def test_regex_union_matches_exactly_the_names() -> None:
    names = ["gpu-node-0017", "gpu-node-0018", "gpu-node-0200", "gpu.node+x"]
    pattern = re.compile(pq.regex_union(names))
    assert all(pattern.fullmatch(n) for n in names)
    assert not any(pattern.fullmatch(n) for n in ["gpu-node-001", "gpu-node-00170", "gpuXnode+x", "gpu-node-0019"])
    assert pq.regex_union([]) == "$^"


def test_step_follows_the_window() -> None:
    assert pq.pick_step(2 * 3600) == 15
    assert pq.pick_step(24 * 3600) == 15
    assert pq.pick_step(7 * 86400) == 75
    assert 7 * 86400 / pq.pick_step(7 * 86400) <= 11_000


def test_or_lists_are_split_under_the_limit() -> None:
    parts = [f"x{i} " + "y" * 100 for i in range(30)]
    queries = pq.chunked_or(parts, 1000)
    assert all(len(q) <= 1000 for q in queries)
    assert sorted(" or ".join(queries).split(" or ")) == sorted(parts)
    assert len(pq.chunked_or(parts[:5], 10_000, pieces=4)) == 4


def test_a_large_scope_stays_under_victoriametrics_query_limit() -> None:
    nodes = tuple(f"aks-h100pool-28731945-vmss{n:06d}" for n in range(512))
    pods = tuple(("research", f"llama-405b-pretrain-r2-workers-0-{n}") for n in range(512))
    uuids = tuple(f"GPU-{n:08x}-4a1b-9c2d-{n:012x}" for n in range(64))
    sel = pq.Selectors(nodes, pods, "Hostname", uuids)
    present = [s.metric for s in SIGNALS] + ["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"]
    queries = [
        *pq.chunked_or(pq.flag_parts(sel, present, "21900s", ["NVIDIA H100 80GB HBM3"])),
        *[q for pair in pq.change_queries(sel, present, 15) for q in pair],
        *pq.rise_queries(sel, present, 15, ["NVIDIA H100 80GB HBM3"]),
        pq.pods_active_query(pods, "21900s", "21600s"),
        pq.nodes_last_seen_query(nodes),
        pq.gpus_vanished_query(sel, "21600s"),
        pq.PodMatch(
            "llama-405b-pretrain-r2", "research", tuple(f"k{i}.example.com/name" for i in range(10)), "21600s"
        ).active("21900s"),
    ]
    assert max(len(q) for q in queries) < 16_384
    assert len(queries) <= 20  # with every watched family present; discovery adds at most 6


def test_edge_answers_become_sparse_series_with_the_sample_before() -> None:
    builder = pq.SeriesBuilder()
    labels = {"__metric": "DCGM_FI_DEV_XID_ERRORS", "Hostname": "n1", "gpu": "5"}
    builder.add_edges(
        [{"metric": labels, "values": [[1000, "79"], [2000, "NaN"]]}], 15, [{"metric": labels, "values": [[1000, "0"]]}]
    )
    rise = {"__metric": "kube_pod_status_phase", "namespace": "ns", "pod": "p", "phase": "Failed"}
    builder.add_edges([{"metric": rise, "values": [[1500, "1"]]}], 15, None)
    by_name = {s.name: s for s in builder.series()}
    assert by_name["DCGM_FI_DEV_XID_ERRORS"].samples == ((985.0, 0.0), (1000.0, 79.0))
    assert by_name["kube_pod_status_phase"].samples == ((1485.0, 0.0), (1500.0, 1.0))
    assert "__metric" not in by_name["kube_pod_status_phase"].labels
