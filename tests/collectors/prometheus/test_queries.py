"""The PromQL builders: short, anchored alternations; every query under VictoriaMetrics' 16 KB limit; a large
scope's edges located coarsely, then asked exactly over a few spans."""

from __future__ import annotations

import re
from types import MappingProxyType

from whathappened.collectors.prometheus import edges as pe
from whathappened.collectors.prometheus import queries as pq
from whathappened.collectors.prometheus.answers import SeriesBuilder
from whathappened.collectors.prometheus.promql import CANONICAL, Selectors, chunked_or, regex_union
from whathappened.collectors.prometheus.signals import SIGNALS, UTIL_COLLAPSE, Where

NODES = tuple(f"aks-h100pool-28731945-vmss{n:06d}" for n in range(512))
PODS = tuple(("research", f"llama-405b-pretrain-r2-workers-0-{n}-x{n:04x}") for n in range(512))
UUIDS = tuple(f"GPU-{n:08x}-4a1b-9c2d-{n:012x}" for n in range(4096))
MODELS = ("NVIDIA H100 80GB HBM3",)
PRESENT = [s.metric for s in SIGNALS] + ["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"]


def test_regex_union_matches_exactly_the_names() -> None:
    names = ["gpu-node-0017", "gpu-node-0018", "gpu-node-0200", "gpu.node+x"]
    pattern = re.compile(regex_union(names))
    assert all(pattern.fullmatch(n) for n in names)
    assert not any(pattern.fullmatch(n) for n in ["gpu-node-001", "gpu-node-00170", "gpuXnode+x", "gpu-node-0019"])
    assert regex_union([]) == "$^"


def test_step_follows_the_window() -> None:
    assert pq.pick_step(2 * 3600) == 15
    assert pq.pick_step(24 * 3600) == 15
    assert pq.pick_step(7 * 86400) == 75
    assert 7 * 86400 / pq.pick_step(7 * 86400) <= 11_000
    # every coarse point is a fine point too
    assert all(pe.coarse_step(step) % step == 0 and 200 <= pe.coarse_step(step) <= 400 for step in (15, 30, 45, 75))


def test_or_lists_are_split_under_the_limit() -> None:
    parts = [f"x{i} " + "y" * 100 for i in range(30)]
    queries = chunked_or(parts, 1000)
    assert all(len(q) <= 1000 for q in queries)
    assert sorted(" or ".join(queries).split(" or ")) == sorted(parts)
    assert len(chunked_or(parts[:5], 10_000, pieces=4)) == 4


def a_whole_job_failing() -> pe.Targets:
    """A large incident: 512 nodes x 8 GPUs and 512 pods; every pod's lifecycle signals changed, every GPU's
    utilization collapsed, 64 GPUs ran hot, two logged an Xid, and every node's conditions moved."""
    return pe.Targets(
        MappingProxyType(
            {
                UTIL_COLLAPSE: frozenset(UUIDS),
                "DCGM_FI_DEV_GPU_TEMP": frozenset(UUIDS[:64]),
                "DCGM_FI_DEV_XID_ERRORS": frozenset(UUIDS[100:102]),
            }
        ),
        MappingProxyType({s.metric: frozenset(NODES) for s in SIGNALS if s.where is Where.NODE}),
        MappingProxyType({s.metric: frozenset(PODS) for s in SIGNALS if s.where is Where.POD}),
        MappingProxyType({u: NODES[i // 8] for i, u in enumerate(UUIDS)}),
    )


def test_a_large_scope_stays_under_victoriametrics_query_limit_and_the_query_budget() -> None:
    sel = Selectors(NODES, PODS, CANONICAL)
    targets = a_whole_job_failing()
    flags = chunked_or(pq.flag_parts(sel, PRESENT, "21900s", MODELS), pieces=4)
    locate = pe.locate_queries(targets, CANONICAL, MODELS, 15, pieces=4)
    edges = pe.edge_queries(targets, CANONICAL, MODELS, 15)
    discovery = [
        pq.PodMatch(
            "llama-405b-pretrain-r2", "research", tuple(f"k{i}.example.com/name" for i in range(10)), "21600s"
        ).found(),
        pq.pods_active_query(PODS, "21900s", "21600s"),
        pq.pods_series_query("kube_pod_info", PODS, "21600s"),
        pq.pods_alive_query(PODS),
    ]
    queries = [*flags, *locate, *edges, *discovery, pq.gpus_last_seen_query(NODES)]
    assert max(len(q) for q in queries) < 16_384
    # 4,096 GPUs are matched by their nodes, 512 pods by their names' common prefix: no 150 KB UUID lists
    assert 'pod=~"llama-405b-pretrain-r2-workers-0-.+"' in " ".join(edges)
    assert max(q.count("-4a1b-9c2d-") for q in locate + edges) <= 3 * 64  # the 64 hot GPUs at most, not 4,096
    # round 1, locate, and the edges over at most three spans
    assert (len(flags), len(locate), len(edges)) <= (10, 8, 4), (len(flags), len(locate), len(edges))


def test_a_few_gpus_are_matched_by_uuid() -> None:
    targets = pe.Targets(gpus=MappingProxyType({"DCGM_FI_DEV_XID_ERRORS": frozenset(UUIDS[:3])}))
    [query] = pe.edge_queries(targets, CANONICAL, MODELS, 15)
    assert f'UUID=~"{regex_union(UUIDS[:3])}"' in query and "Hostname" not in query
    assert '"__old", "1"' in query  # the values before each change come in the same answer


def test_located_points_become_at_most_three_spans() -> None:
    coarse = 300
    points = [600, 900, 1200, 5000 * 300, 5001 * 300, 9000 * 300, 20_000 * 300, 20_003 * 300]
    spans = pe.spans(points, coarse)
    assert len(spans) == 3
    assert spans[0] == (600, 1200)  # neighbours join first
    assert spans[-1] == (20_000 * 300, 20_003 * 300)
    covered = [p for p in points if any(a <= p <= b for a, b in spans)]
    assert covered == points  # merging never drops a located point
    assert pe.spans([], coarse) == []


def test_located_answers_limit_the_targets_to_their_span() -> None:
    answers = [
        {"metric": {"__metric": "DCGM_FI_DEV_XID_ERRORS", "UUID": UUIDS[100]}, "values": [[600, "1"]]},
        {
            "metric": {"__metric": "kube_pod_status_phase", "namespace": "research", "pod": PODS[1][1]},
            "values": [[9000, "1"]],
        },
    ]
    found = pe.located(answers)
    targets = a_whole_job_failing()
    early = targets.only(pe.hits_within(found, 0, 1000))
    assert dict(early.gpus) == {"DCGM_FI_DEV_XID_ERRORS": frozenset({UUIDS[100]})} and not early.pods
    late = targets.only(pe.hits_within(found, 1000, 10_000))
    assert dict(late.pods) == {"kube_pod_status_phase": frozenset({PODS[1]})} and not late.gpus
    assert not targets.without("kube_pod_status_phase", PODS).pods.get("kube_pod_status_phase")


def test_round_one_answers_name_targets_per_signal() -> None:
    answers = [
        {"metric": {"__metric": "DCGM_FI_DEV_XID_ERRORS", "UUID": UUIDS[5], "Hostname": NODES[0]}},
        {"metric": {"__metric": UTIL_COLLAPSE, "UUID": UUIDS[9], "Hostname": NODES[1]}},
        {"metric": {"__metric": "kube_node_spec_unschedulable", "node": NODES[2]}},
        # matched by the nodes' prefix, not the experiment's: left out
        {"metric": {"__metric": "DCGM_FI_DEV_XID_ERRORS", "UUID": "GPU-elsewhere", "Hostname": "gpu-node-other"}},
        {"metric": {"__metric": "kube_node_spec_unschedulable", "node": "gpu-node-other"}},
    ]
    sel = Selectors(tuple(NODES[:3]), PODS[:2])
    targets = pq.targets_of(answers, sel, PODS[:2], ["kube_pod_status_phase", "DCGM_FI_DEV_XID_ERRORS"])
    # a GPU flagged for its utilization is not searched for Xid edges, nor the other way round
    assert dict(targets.gpus) == {"DCGM_FI_DEV_XID_ERRORS": {UUIDS[5]}, UTIL_COLLAPSE: {UUIDS[9]}}
    assert dict(targets.nodes) == {"kube_node_spec_unschedulable": {NODES[2]}}
    assert dict(targets.pods) == {"kube_pod_status_phase": frozenset(PODS[:2])}
    assert targets.gpu_nodes[UUIDS[9]] == NODES[1]


def test_round_one_matches_many_nodes_by_their_prefix_and_few_exactly() -> None:
    """A long alternation of node names costs Prometheus a regex run on every value of the label; round 1 reads
    every sample of its metrics anyway, so many nodes are matched by their common prefix (targets_of filters)."""
    many = [f"aks-ndh100v5-55849415-vmss{i:06x}" for i in range(1000)]
    wide = pq.flag_parts(Selectors(tuple(many), ()), ["DCGM_FI_DEV_XID_ERRORS"], "7500s", [])
    assert 'Hostname=~"aks-ndh100v5-55849415-vmss000.+"' in wide[0] and len(wide[0]) < 1_000
    few = pq.flag_parts(Selectors(tuple(many[:3]), ()), ["DCGM_FI_DEV_XID_ERRORS"], "7500s", [])
    assert 'Hostname=~"aks-ndh100v5-55849415-vmss00000(?:0|1|2)"' in few[0]


def test_edge_answers_become_sparse_series_with_the_sample_before() -> None:
    builder = SeriesBuilder()
    labels = {"__metric": "DCGM_FI_DEV_XID_ERRORS", "Hostname": "n1", "gpu": "5"}
    rise = {"__metric": "kube_pod_status_phase", "namespace": "ns", "pod": "p", "phase": "Failed"}
    builder.add_edges(
        [
            {"metric": labels, "values": [[1000, "79"], [2000, "NaN"], [3000, "13"]]},
            {"metric": {**labels, "__old": "1"}, "values": [[1000, "0"]]},  # none for 3000: not a change
            {"metric": rise, "values": [[1500, "1"]]},
        ],
        15,
    )
    by_name = {s.name: s for s in builder.series()}
    assert by_name["DCGM_FI_DEV_XID_ERRORS"].samples == ((985.0, 0.0), (1000.0, 79.0))
    assert by_name["kube_pod_status_phase"].samples == ((1485.0, 0.0), (1500.0, 1.0))
    assert "__metric" not in by_name["kube_pod_status_phase"].labels
    assert "__old" not in by_name["DCGM_FI_DEV_XID_ERRORS"].labels


def test_last_seen_of_thousands_of_vanished_gpus_is_split_under_the_limit() -> None:
    """A node pool scaled away after the job leaves every GPU 'vanished': no single 150 KB query."""
    from whathappened.collectors.prometheus.queries import last_seen_queries

    queries = last_seen_queries(UUIDS, NODES, CANONICAL)
    assert len(queries) > 1 and max(len(q) for q in queries) < 15_000
    assert len(queries) <= 16 and sum(q.count("-4a1b-9c2d-") for q in queries) == len(UUIDS)  # each GPU once
    assert last_seen_queries((), NODES, CANONICAL) == []
