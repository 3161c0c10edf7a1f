"""The GPU utilization strip's offline aggregation on hand-made series: buckets, means, spellings, the event.

The live query's side is checked against real Prometheus and VictoriaMetrics in test_live.py (every scenario's
events, these included, equal the offline analysis of the recorded file); here the bucket rule itself is pinned.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from types import MappingProxyType

from whathappened.collectors.prometheus.model import Series
from whathappened.collectors.prometheus.series import events_from_series
from whathappened.collectors.prometheus.util import (
    PACK,
    POD_GPUS,
    POD_UTIL,
    derive_pod_util,
    grid,
    pod_util_queries,
    series_of_answer,
    util_step,
)

from whathappened.model import NodeInfo, PodInfo, Window
from whathappened.scope import Query, Scope

T0 = 1_795_154_400  # 2026-11-20T06:00:00Z, a whole multiple of 60 s
WINDOW = Window(datetime.fromtimestamp(T0, UTC), datetime.fromtimestamp(T0 + 7200, UTC))  # 2 h: a 60 s step
POD = ("team-lm", "trainer-0")


def gpu(uuid: str, samples: list[tuple[float, float]], **labels: str) -> Series:
    names = {"Hostname": "node-1", "UUID": uuid, "gpu": uuid[-1], "namespace": POD[0], "pod": POD[1]}
    names.update(labels)
    return Series("DCGM_FI_DEV_GPU_UTIL", MappingProxyType({k: v for k, v in names.items() if v}), tuple(samples))


def by_name(series: list[Series]) -> dict[str, Series]:
    return {s.name: s for s in series}


def test_step_is_about_120_points_in_whole_multiples_of_15_s() -> None:
    assert [util_step(s) for s in (600, 3600, 7200, 6 * 3600, 7 * 86400)] == [15, 30, 60, 180, 5040]
    first, last = grid(WINDOW, 60)
    assert (first, last) == (T0 + 60, T0 + 7200)
    assert (last - first) // 60 + 1 == 120


def test_buckets_are_left_open_and_right_closed_and_gpus_are_averaged() -> None:
    # GPU 0 scraped every 30 s on the grid; GPU 1 only once a minute, 10 s after it
    zero = gpu("GPU-0", [(T0 + 30, 10.0), (T0 + 60, 20.0), (T0 + 90, 30.0), (T0 + 120, 41.0)])
    one = gpu("GPU-1", [(T0 + 70, 90.0), (T0 + 130, 70.0)])
    found = by_name(derive_pod_util([zero, one], frozenset({POD}), WINDOW))
    util = found[POD_UTIL]
    assert dict(util.labels) == {"namespace": POD[0], "pod": POD[1]}
    # (T0, T0+60]: GPU 0 only (15); (T0+60, T0+120]: GPU 0 (30+41)/2 and GPU 1 90; (T0+120, T0+180]: GPU 1 70
    assert util.samples == ((T0 + 60, 15.0), (T0 + 120, (35.5 + 90.0) / 2), (T0 + 180, 70.0))
    assert found[POD_GPUS].samples == ((T0 + 120, 2.0),)  # the peak only


def test_older_spelling_other_pods_and_samples_outside_the_window() -> None:
    older = gpu("GPU-2", [(T0 + 45, 50.0), (T0 + 7200, 60.0), (T0 + 7230, 99.0)], namespace="", pod="")
    older = Series(
        older.name, MappingProxyType({**older.labels, "pod_name": POD[1], "pod_namespace": POD[0]}), older.samples
    )
    stranger = gpu("GPU-3", [(T0 + 60, 100.0)], pod="someone-else")
    unattributed = gpu("GPU-4", [(T0 + 60, 100.0)], pod="")
    before = gpu("GPU-5", [(T0, 100.0)])  # the window's start closes a bucket outside the grid
    found = by_name(derive_pod_util([older, stranger, unattributed, before], frozenset({POD}), WINDOW))
    assert found[POD_UTIL].samples == ((T0 + 60, 50.0), (T0 + 7200, 60.0))


def test_a_nan_spoils_its_bucket_and_readings_are_clamped_as_in_promql() -> None:
    series = gpu("GPU-0", [(T0 + 30, math.nan), (T0 + 90, 40.0), (T0 + 150, 9.2e18), (T0 + 210, -5.0)])
    other = gpu("GPU-1", [(T0 + 45, 80.0), (T0 + 105, 60.0)])
    found = by_name(derive_pod_util([series, other], frozenset({POD}), WINDOW))
    # (T0, T0+60] holds a NaN: the whole point goes, as sum() over it is NaN; dcgm's blank sentinel counts as 100
    assert found[POD_UTIL].samples == ((T0 + 120, 50.0), (T0 + 180, 100.0), (T0 + 240, 0.0))
    assert found[POD_GPUS].samples == ((T0 + 120, 2.0),)


def test_one_event_per_pod_with_the_strip_from_raw_and_from_a_query_answer_alike() -> None:
    pod = PodInfo(name=POD[1], namespace=POD[0], node="node-1")
    scope = Scope(Query("trainer", POD[0], WINDOW), (pod,), (NodeInfo(name="node-1"),))
    raw = [
        gpu("GPU-0", [(T0 + 60 * i, 90.0 + (i % 3)) for i in range(1, 11)]),
        gpu("GPU-1", [(T0 + 60 * i, 80.0) for i in range(2, 11)]),
    ]
    [event] = [e for e in events_from_series(raw, scope) if e.kind == "gpu-utilization"]
    assert (event.at.timestamp(), event.subject.pod, event.subject.node) == (T0 + 60, POD[1], "node-1")
    assert event.attrs["samples"][:3] == [[T0 + 60, 91.0], [T0 + 120, 86.0], [T0 + 180, 85.0]]
    assert (event.attrs["gpus"], event.attrs["step"], len(event.attrs["samples"])) == (2, 60, 10)
    assert event.attrs["mean"] == round(sum(v for _, v in event.attrs["samples"]) / 10, 2)
    assert event.summary == "GPU utilization of trainer-0: mean 86% over 2 GPUs"
    # the same values as a server's answer (summed in another order) give the same event
    counts = [1] + [2] * 9  # GPU-1 begins at the second point
    packed = [[t, repr(n * PACK + v * n + 1e-9)] for (t, v), n in zip(event.attrs["samples"], counts, strict=True)]
    answer = [{"metric": {"namespace": POD[0], "pod": POD[1]}, "values": packed}]
    [again] = [e for e in events_from_series(series_of_answer(answer), scope) if e.kind == "gpu-utilization"]
    assert (again.identity, dict(again.attrs)) == (event.identity, dict(event.attrs))


def test_queries_read_both_pod_label_spellings_and_pack_mean_and_count() -> None:
    queries = pod_util_queries('"team-lm"', '"trainer-(?:0|1)"', 60)
    # one per pod-label spelling, no `or` to match; the gauge in its current and its 1.x-compatibility name
    assert [q.count('{__name__=~"DCGM_FI_DEV_GPU_UTIL|dcgm_gpu_utilization",') for q in queries] == [1, 1, 1]
    assert 'exported_namespace=~"team-lm",exported_pod=~"trainer-(?:0|1)"' in queries[2]
    assert all("[59999ms]" in q for q in queries)  # (t - 60 s, t] on every server
    assert 'pod_name=~"trainer-(?:0|1)",pod=""' in queries[1]
    assert all(q.count("sum by (namespace, pod)") == 1 and "+ 1e+06)" in q for q in queries)


def test_a_pod_answered_in_both_spellings_is_one_strip() -> None:
    key = {"namespace": "team-lm", "pod": "trainer-0"}
    answers = [
        {"metric": key, "values": [[60, repr(PACK + 90.0)], [120, repr(PACK + 80.0)]]},  # one GPU, current labels
        {"metric": key, "values": [[60, repr(PACK + 70.0)]]},  # another GPU, older labels
    ]
    by_name = {s.name: s for s in series_of_answer(answers)}
    assert by_name[POD_UTIL].samples == ((60.0, 80.0), (120.0, 80.0))
    assert by_name[POD_GPUS].samples == ((60.0, 2.0),)
