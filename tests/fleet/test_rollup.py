"""The fleet's grouping and roll-ups on hand-made cases: ends into incidents by gap, the taxonomy's counts and
shares, the lemon list's threshold (infrastructure roots only), GPUs by UUID or node and index, weekly buckets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from whathappened.fleet.incidents import GAP, FleetIncident, incidents
from whathappened.fleet.rollup import rollup
from whathappened.fleet.survey import Case, XidSeen
from whathappened.model import PodEnd, Window

T0 = datetime(2026, 11, 2, 6, 0, tzinfo=UTC)  # a Monday
T1 = T0 + timedelta(days=2)


def end(experiment: str, pod: str, minutes: float, how: str = "failed", namespace: str = "ml") -> PodEnd:
    return PodEnd(namespace, pod, experiment, T0 + timedelta(minutes=minutes), how, "node-a")


def test_ends_of_one_experiment_within_the_gap_are_one_incident() -> None:
    gap = GAP.total_seconds() / 60
    ends = [
        end("llama", "w-0", 0),
        end("llama", "w-1", 30),  # the watchdog's collateral
        end("llama", "w-0", 30 + gap + 1),  # the next attempt's death
        end("bert", "w-0", 10),
        end("llama", "w-0", 5, namespace="other"),  # the same name elsewhere is another experiment
    ]
    found = incidents(ends)
    assert [(i.namespace, i.experiment, len(i.ends)) for i in found] == [
        ("ml", "llama", 2),
        ("other", "llama", 1),
        ("ml", "bert", 1),
        ("ml", "llama", 1),
    ]
    within = Window(T0 - timedelta(hours=1), T0 + timedelta(days=1))
    narrow = found[0].window(within)
    assert narrow.start == within.start and narrow.end == T0 + timedelta(minutes=60)  # clipped; 30 min settle


def case(experiment: str, cause: str, category: str, node: str | None, gpu: str | None, days: float, deaths: int = 1,
         gpu_hours: float = 0.0, xids: tuple[XidSeen, ...] = ()) -> Case:  # fmt: skip
    ends = tuple(end(experiment, f"w-{i}", days * 1440) for i in range(deaths))
    return Case(FleetIncident("ml", experiment, ends), cause, category, True, "explained", "w-0", node, gpu, "",
                gpu_hours, xids)  # fmt: skip


def test_the_taxonomy_and_the_lemons() -> None:
    cases = [
        case("a", "gpu-fallen-off-bus", "infrastructure", "n1", "GPU-1", 0, 4, 32.0, (XidSeen("n1", "GPU-1", 79, T0),)),
        case(
            "b", "gpu-fallen-off-bus", "infrastructure", "n1", "GPU-1", 2, 2, 8.0, (XidSeen("n1", "GPU-1", 79, T1),) * 2
        ),
        case("c", "gpu-memory-error", "infrastructure", "n1", "GPU 3", 9, 1, 4.0, (XidSeen("n1", "GPU 3", 48, T1),)),
        case("d", "oom-killed", "application", "n2", None, 9, 1),
        case("e", "deleted", "user", "n2", None, 10, 3),
        case("f", "unknown", "unknown", None, None, 10, 2),
    ]
    result = rollup(cases, threshold=3)
    causes = {r["cause"]: (r["incidents"], r["pod_deaths"], r["share"], r["gpu_hours_lost"]) for r in result.by_cause}
    assert causes == {
        "gpu-fallen-off-bus": (2, 6, round(2 / 6, 4), 40.0),
        "gpu-memory-error": (1, 1, round(1 / 6, 4), 4.0),
        "oom-killed": (1, 1, round(1 / 6, 4), 0.0),
        "deleted": (1, 3, round(1 / 6, 4), 0.0),
        "unknown": (1, 2, round(1 / 6, 4), 0.0),
    }
    assert result.by_cause[0]["cause"] == "gpu-fallen-off-bus"  # most incidents first
    assert result.totals == {"incidents": 6, "pod_deaths": 13, "gpu_hours_lost": 44.0}
    nodes = {
        r["node"]: (r["root_incidents"], r["experiments_killed"], r["xids_seen"], r["verdict"]) for r in result.by_node
    }
    assert nodes == {"n1": (3, 3, 3, "replace")}  # n2's roots are an OOM and a deletion: not the node's fault
    gpus = {r["gpu"]: (r["root_incidents"], r["xid_codes"], r["verdict"]) for r in result.by_gpu}
    assert gpus == {"GPU-1": (2, [79], "watch"), "n1 GPU 3": (1, [48], "watch")}
    weeks = {(r["week"], r["cause"]): r["incidents"] for r in result.weekly}
    assert weeks[("2026-11-02", "gpu-fallen-off-bus")] == 2 and weeks[("2026-11-09", "deleted")] == 1
    experiments = {r["experiment"]: r["incidents"] for r in result.by_experiment}
    assert experiments == {"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1}


def test_nothing_rolls_up_to_empty_tables() -> None:
    result = rollup([])
    assert (result.by_cause, result.by_node, result.by_gpu, result.by_experiment, result.weekly) == ([], [], [], [], [])
    assert result.totals == {"incidents": 0, "pod_deaths": 0, "gpu_hours_lost": 0.0}
