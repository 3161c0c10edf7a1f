"""The one Xid catalog (whathappened.xids): every code once with its meaning and family, the correlator's Xid
classes and the Prometheus side's texts taken from it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from whathappened.collectors.prometheus.openmetrics import parse_openmetrics
from whathappened.collectors.prometheus.series import events_from_series

from whathappened.correlate import words
from whathappened.kinds import Kind
from whathappened.model import PodInfo, Window
from whathappened.scope import Query, Scope
from whathappened.xids import _ROWS, CATALOG, Family, codes, meaning

SCRAPED_AT = 1_775_000_000


def scope_at() -> Scope:
    start = datetime.fromtimestamp(SCRAPED_AT - 60, UTC)
    query = Query("trainer", "research", Window(start, start + timedelta(hours=1)))
    return Scope(query, (PodInfo(name="trainer-0", namespace="research", node="gpu-node-7"),))


def test_every_code_is_listed_once_with_a_meaning_and_a_family() -> None:
    assert len(CATALOG) == len(_ROWS) and all(row.meaning for row in _ROWS)
    assert sorted(CATALOG) == [row.code for row in _ROWS]  # kept in code order, so a reader finds a code
    assert set().union(*(codes(f) for f in Family)) == set(CATALOG)


def test_the_correlator_s_classes_are_the_catalog_s_families() -> None:
    assert words.FALLEN_OFF_BUS_XIDS == codes(Family.FALLEN_OFF_BUS) == {79}
    assert codes(Family.MEMORY) == words.MEMORY_XIDS and {48, 64, 94, 95} <= words.MEMORY_XIDS
    assert words.NVLINK_XIDS == codes(Family.NVLINK) == {74, *range(144, 151)}
    assert words.APPLICATION_XIDS == codes(Family.APPLICATION) == {13, 31, 43}
    assert codes(Family.HARDWARE) == words.HARDWARE_XIDS and {62, 119, 120, 154} <= words.HARDWARE_XIDS
    assert {63, 92} == codes(Family.CORRECTED) and codes(Family.SYMPATHETIC) == {45}
    assert meaning(None) is None and meaning(999) is None


def test_an_xid_gauge_says_the_catalog_s_meaning_with_or_without_err_msg() -> None:
    """dcgm-exporter's err_msg changes with the value and is merged away with err_code (one series per GPU): the
    event's text is the catalog's, the same whichever release wrote the gauge."""
    lines = []
    for k in range(6):
        value = 0 if k < 3 else 119
        for gpu, msg in (("0", ""), ("1", ',err_code="119",err_msg="GSP RPC Timeout (exporter words)"')):
            labels = f'gpu="{gpu}",UUID="GPU-{gpu}",Hostname="gpu-node-7",pod="trainer-0",namespace="research"'
            lines.append(f"DCGM_FI_DEV_XID_ERRORS{{{labels}{msg if value else ''}}} {value} {SCRAPED_AT + 30 * k}")
    series, problems = parse_openmetrics("\n".join(lines) + "\n# EOF\n")
    assert problems == []
    texts = {e.subject.gpu: e.attrs["text"] for e in events_from_series(series, scope_at()) if e.kind == Kind.GPU_XID}
    assert texts == {"0": "GSP RPC Timeout", "1": "GSP RPC Timeout"}
