"""Adding a cause is one row in the cause table plus the rule that finds it: nothing else. With both added here
(and nowhere else), a death is explained by the new cause, its category, retryable flag and next step come from
the row, the JSON validates against the schema, and every renderer shows the row's title."""

from __future__ import annotations

import io
import json

import jsonschema
import pytest

from tests.correlate.builders import START, at, ev, exited, pod, scope_of, timeline_of
from whathappened.correlate import rules
from whathappened.correlate.causes import CAUSES, Cause
from whathappened.correlate.evidence import POD
from whathappened.correlate.rule import Rule
from whathappened.explain import assemble
from whathappened.gather import Gathered
from whathappened.kinds import Kind
from whathappened.model import SourceReport, SourceStatus
from whathappened.render.html import render_html
from whathappened.render.jsonout import render_json, schema
from whathappened.render.markdown import render_markdown
from whathappened.render.terminal import render_terminal

ROW = Cause(
    "local-disk-failure",
    "infrastructure",
    True,
    3,
    "Local disk failed",
    "its node's local disk failing",
    "cordon {node} and replace its local disk; resubmitting is safe",
)
RULE = Rule(
    "local-disk",
    "local-disk-failure",
    0.9,
    "{pod} died at {died} after the local disk of {node} failed ({what} at {at}).",
    frozenset({Kind.LOG_LINE}),
    on=POD,
    where=lambda event: "[Errno 5] Input/output error" in event.summary,
)


@pytest.fixture()
def added(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(CAUSES, ROW.code, ROW)
    monkeypatch.setattr(rules, "RULES", (RULE, *rules.RULES))


def test_one_row_and_its_rule_reach_the_verdict_the_schema_and_every_renderer(added: None) -> None:
    worker = pod("w-0", node="node-a")
    events = [
        ev(Kind.CONTAINER_STARTED, START, "w-0", "node-a"),
        ev(Kind.LOG_LINE, at(10), "w-0", "node-a", source="logs", summary="OSError: [Errno 5] Input/output error"),
        exited("w-0", "node-a", at(10, 30), 1),
    ]
    source = SourceReport(name="kubernetes", status=SourceStatus.OK, detail="")
    report = assemble(Gathered(scope=scope_of([worker]), timeline=timeline_of(events), sources=(source,)))

    root = report.root_cause
    assert root is not None and root.cause == "local-disk-failure"
    assert (root.category, root.retryable) == ("infrastructure", True)
    assert root.next_step == "cordon node-a and replace its local disk; resubmitting is safe"
    assert "after the local disk of node-a failed" in root.summary

    document = json.loads(render_json(report))
    jsonschema.validate(document, schema())  # the schema's cause enum comes from the table
    assert document["root_cause"]["cause"] == "local-disk-failure"
    assert "Local disk failed" in render_markdown(report)
    assert "Local disk failed" in render_html(report)
    out = io.StringIO()
    render_terminal(report, out=out, width=120, color=False)
    assert "Local disk failed" in out.getvalue()


def test_without_the_row_the_schema_refuses_the_code() -> None:
    """The other side: the schema is the table's, so a code the table lacks is refused."""
    assert "local-disk-failure" not in schema()["$defs"]["cause"]["enum"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate("local-disk-failure", {**schema(), "$ref": "#/$defs/cause"})
