"""The HTML report as text: structure, stable hooks, escaping of hostile log lines, self-containment. The reports
are built by hand from the model types (reports.py and below); the browser tests (test_html_browser.py) load the same
pages in Chromium and the real scenarios through the CLI."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from tests.render.reports import HOSTILE, SOURCES, T0, at, ev, index_of, maintenance_report, xid79_report
from whathappened.kinds import Kind, severity_of
from whathappened.model import (
    NodeInfo,
    PodInfo,
    Report,
    SourceReport,
    SourceStatus,
    Subject,
    TimelineEvent,
    Verdict,
    Window,
)
from whathappened.render.common import shown_events
from whathappened.render.html import render_html
from whathappened.render.html_lanes import build_lanes, natural, utilization_by_pod


def oom_report() -> Report:
    """A tokenizer job's container is OOM-killed three times by the kernel; no GPU and no node trouble."""
    pod, node = "tokenize-pile-shard42-7xk2p", "cpu-pool-d64-7"
    events = []
    for n, minute in enumerate((31, 49, 67)):
        events += [
            ev(
                minute,
                Kind.KERNEL_OOM,
                f"Memory cgroup out of memory: Killed process {41230 + n} (python)",
                node=node,
                process="python",
                pid=41230 + n,
            ),
            ev(
                minute + 0.02,
                Kind.OOM_KILLED,
                "pytorch OOMKilled (exit 137)",
                "kubernetes",
                pod=pod,
                node=node,
                exit_code=137,
            ),
            ev(
                minute + 0.5,
                Kind.CONTAINER_RESTARTED,
                f"restart {n + 1}",
                "kubernetes",
                pod=pod,
                node=node,
                restarts=n + 1,
            ),
        ]
    timeline = tuple(sorted(events, key=lambda e: e.at))
    chain = (index_of(timeline, Kind.KERNEL_OOM), index_of(timeline, Kind.OOM_KILLED))
    root = Verdict(
        pod,
        "data",
        node,
        "oom-killed",
        "application",
        False,
        True,
        None,
        0.95,
        "The container exceeded its 64 GiB memory limit and was killed, three times.",
        chain,
        ended=at(67.02),
    )
    return Report(
        "tokenize-pile",
        "data",
        Window(T0, at(120)),
        SOURCES,
        (PodInfo(pod, "data", node=node, started=at(1)),),
        (NodeInfo(node),),
        timeline,
        (root,),
        root,
        "Raise the memory limit or stream the shard.",
        None,
        chain,
    )


def hostile_report() -> Report:
    """Every string a cluster controls carries markup and script: none of it may become markup or run."""
    base = xid79_report()
    evil = [
        TimelineEvent(
            at(70),
            "logs",
            Kind.APP_EXCEPTION.value,
            severity_of(Kind.APP_EXCEPTION),
            HOSTILE,
            Subject("team-lm", f"pod-{HOSTILE}", None, f"node-{HOSTILE}"),
            {"exception": HOSTILE},
            raw={"message": HOSTILE},
        ),
        TimelineEvent(
            at(71),
            "logs",
            f"kind-{HOSTILE}",
            severity_of(Kind.LOG_LINE),
            HOSTILE,
            Subject(node="gpu-node-17"),
            raw=HOSTILE,
        ),
    ]
    timeline = tuple(sorted((*base.timeline, *evil), key=lambda e: e.at))
    bad = Verdict(
        f"pod-{HOSTILE}",
        "team-lm",
        f"node-{HOSTILE}",
        "application-error",
        "application",
        False,
        None,
        None,
        0.5,
        HOSTILE,
        (timeline.index(evil[0]),),
    )
    shift = {old: timeline.index(e) for old, e in enumerate(base.timeline)}
    return Report(
        experiment=f"exp-{HOSTILE}",
        namespace=f"ns-{HOSTILE}",
        window=base.window,
        sources=(*base.sources, SourceReport(f"src-{HOSTILE}", SourceStatus.FAILED, HOSTILE)),
        pods=base.pods,
        nodes=base.nodes,
        timeline=timeline,
        verdicts=(*base.verdicts, bad),
        root_cause=base.root_cause,
        next_step=HOSTILE,
        chain=tuple(shift[i] for i in base.chain),
    )


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self.scripts += tag == "script"


def parse(page: str) -> _Collect:
    collector = _Collect()
    collector.feed(page)
    return collector


def hooks(page: str, name: str) -> list[str]:
    return [a[name] or "" for _, a in parse(page).tags if name in a]


def whole_picture(page: str) -> str:
    """The page up to the close-up picture, which repeats some lanes."""
    return page.split('data-view="focus"')[0]


def test_xid79_page_has_lanes_markers_chain_and_verdicts() -> None:
    full = render_html(xid79_report())
    page = whole_picture(full)
    lanes = hooks(page, "data-lane")
    assert lanes[:2] == ["node:gpu-node-17", "pod:gpt-neox-20b-sweep3-workers-0-0"]
    assert {f"node:gpu-node-{n}" for n in range(17, 21)} <= set(lanes)
    assert {f"pod:gpt-neox-20b-sweep3-workers-0-{n}" for n in range(4)} <= set(lanes)
    kinds = hooks(page, "data-kind")
    for kind in ("gpu-xid", "nccl-timeout", "container-terminated", "cuda-error", "checkpoint-saved"):
        assert kind in kinds
    assert 'data-cause="gpu-fallen-off-bus"' in page
    assert 'data-chain="4"' in page  # all four steps of the chain are on the picture
    assert 'data-util="gpt-neox-20b-sweep3-workers-0-0"' in page
    assert "57.3 GPU-hours" in page
    assert full.count('<tr class="verdict') == 4


def test_node_only_events_sit_on_the_node_lane_and_pod_events_on_the_pod_lane() -> None:
    report = xid79_report()
    lanes = {lane.key: lane for lane in build_lanes(report, shown_events(report)).lanes}
    node_kinds = {e.kind for _, e in lanes["node:gpu-node-19"].events}
    pod_kinds = {e.kind for _, e in lanes["pod:gpt-neox-20b-sweep3-workers-0-2"].events}
    assert node_kinds == {"gpu-xid"}
    assert {"gpu-xid", "cuda-error", "container-terminated"} <= pod_kinds


def test_utilization_from_samples_and_from_a_bare_drop() -> None:
    report = xid79_report()
    series = utilization_by_pod(report.timeline)
    assert len(series["gpt-neox-20b-sweep3-workers-0-0"]) == 45
    drop = ev(30, Kind.GPU_UTIL_DROP, "drop", "prometheus", pod="p", node="n", before=90, after=5)
    steps = utilization_by_pod([drop])["p"]
    assert [v for _, v in steps] == [90.0, 90.0, 5.0]
    assert steps[-1][0] == drop.at


def test_maintenance_and_oom_pages_mark_their_key_events() -> None:
    page = render_html(maintenance_report())
    kinds = hooks(page, "data-kind")
    assert {"maintenance-notice", "node-cordoned", "drain", "eviction-api", "nccl-error"} <= set(kinds)
    assert "node:aks-gpu-12345678-vmss000002" in hooks(page, "data-lane")
    oom = render_html(oom_report())
    assert {"kernel-oom", "oom-killed"} <= set(hooks(oom, "data-kind"))
    assert hooks(whole_picture(oom), "data-lane") == ["node:cpu-pool-d64-7", "pod:tokenize-pile-shard42-7xk2p"]


def test_hostile_text_stays_text() -> None:
    page = render_html(hostile_report())
    parsed = parse(page)
    assert parsed.scripts == 1  # only the page's own script
    assert not [t for t, _ in parsed.tags if t == "img"]
    assert not [a for _, a in parsed.tags if any(k.startswith("on") for k in a)]
    assert "<script>window" not in page and "<img" not in page
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page
    assert page.count("</details>") == page.count("<details>")


def test_close_up_only_when_the_root_evidence_is_crowded() -> None:
    page = render_html(xid79_report())
    close_up = page.split('data-view="focus"')[1].split("</svg>")[0]
    assert 'data-lane="pod:gpt-neox-20b-sweep3-workers-0-2"' in close_up
    assert 'data-lane="pod:gpt-neox-20b-sweep3-workers-0-0"' not in close_up  # nothing of its own near the failure
    assert 'data-chain="3"' in close_up
    assert 'data-view="focus"' not in render_html(maintenance_report())  # three minutes fit one picture


def test_page_is_self_contained_with_a_strict_policy() -> None:
    page = render_html(xid79_report())
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "@import" not in page and "url(" not in page
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    assert "default-src &#x27;none&#x27;" in policy.group(1)
    assert "script-src &#x27;sha256-" in policy.group(1)


def test_empty_report_renders() -> None:
    report = Report("quiet-run", None, Window(T0, at(60)), SOURCES, (), (), ())
    page = render_html(report)
    # sources answered but held not one event of the window: no evidence, never drawn as "no failure"
    assert "No answer" in page and "No failure found" not in page and 'data-tone="no-evidence"' in page
    assert "No pods or nodes to draw" in page


def test_pods_on_no_node_get_a_group_lane_and_a_pending_bar() -> None:
    pods = tuple(PodInfo(f"big-{i}", "lm", created=at(1)) for i in range(2))
    events = tuple(
        ev(
            1.5 + i,
            Kind.FAILED_SCHEDULING,
            "0/64 nodes are available: 64 Insufficient nvidia.com/gpu.",
            "kubernetes",
            pod=p.name,
        )
        for i, p in enumerate(pods)
    )
    verdicts = tuple(
        Verdict(p.name, "lm", None, "unschedulable", "scheduling", False, None, None, 0.9, "never scheduled", (i,))
        for i, p in enumerate(pods)
    )
    report = Report("big", "lm", Window(T0, at(60)), SOURCES, pods, (), events, verdicts)
    page = render_html(report)
    assert hooks(whole_picture(page), "data-lane") == ["unscheduled", "pod:big-0", "pod:big-1"]
    assert page.count('class="life pending"') == 2
    assert "No failure found" not in page and "does not decide" in page


def test_chain_steps_that_share_a_spot_share_a_badge() -> None:
    page = whole_picture(render_html(xid79_report()))
    steps = hooks(page, "data-step")
    assert sorted(int(s) for group in steps for s in group.split()) == [1, 2, 3, 4]
    from whathappened.render.html_svg import _steps_text

    assert _steps_text([1, 3, 4, 5, 6, 7]) == "1,3–7"
    assert _steps_text([2]) == "2"


def test_a_big_experiment_keeps_the_root_lanes_and_folds_collateral_verdicts() -> None:
    pods = tuple(PodInfo(f"run-worker-{i}", "lm", node=f"node-{i // 8}", started=at(1)) for i in range(200))
    events = [ev(50, Kind.GPU_XID, "Xid 79", "logs", node="node-12", xid=79)]
    events += [ev(60 + i / 100, Kind.NCCL_TIMEOUT, "timeout", pod=p.name, node=p.node) for i, p in enumerate(pods)]
    timeline = tuple(sorted(events, key=lambda e: e.at))
    root_pod = pods[99]  # on node-12
    verdicts = tuple(
        Verdict(
            p.name,
            "lm",
            p.node,
            "nccl-timeout",
            "unknown",
            True,
            p is root_pod,
            None if p is root_pod else root_pod.name,
            0.8,
            "x",
        )
        for p in pods
    )
    report = Report("run", "lm", Window(T0, at(120)), SOURCES, pods, (), timeline, verdicts, verdicts[99], chain=(0,))
    page = render_html(report)
    lanes = hooks(whole_picture(page), "data-lane")
    assert 10 < len(lanes) <= 48
    assert "node:node-12" in lanes and "pod:run-worker-99" in lanes
    assert all(f"node:{p.node}" in lanes for p in pods if f"pod:{p.name}" in lanes)  # every pod under its node
    node_lanes = [lane for lane in lanes if lane.startswith("node:")]
    assert node_lanes == sorted(node_lanes, key=natural) != sorted(node_lanes)  # node-2 before node-10
    assert "quieter lanes are not drawn" in page
    assert "160 more verdicts" in page
    assert page.index('data-pod="run-worker-99"') < page.index('data-pod="run-worker-0"')  # the root first


def test_undecodable_log_bytes_still_make_a_utf8_page(tmp_path) -> None:
    base = oom_report()
    odd = ev(
        70, Kind.APP_EXCEPTION, "bad bytes \udcff\udcfe and a NUL \x00 and \x1b[31mcolour\x1b[0m", pod=base.pods[0].name
    )
    report = Report(
        base.experiment, base.namespace, base.window, base.sources, base.pods, base.nodes, (*base.timeline, odd)
    )
    page = render_html(report)
    (tmp_path / "r.html").write_text(page, encoding="utf-8")  # raises on a lone surrogate
    assert "bad bytes ?? and a NUL" in page
