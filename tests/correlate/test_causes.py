"""The cause table is the one place a cause is declared (CONTRACT.md section 3): the shipped JSON Schema, the
renderers' titles, the collateral sentences' plain words and the next steps all come from it or are checked
against it here, so a cause added or renamed in one place and not the others fails."""

from __future__ import annotations

import json
import string

from tests.support import REPO
from whathappened.correlate import templates
from whathappened.correlate.causes import CAUSES, NO_FAULT
from whathappened.render.common import title_of
from whathappened.render.jsonout import SCHEMA_FILE, schema, with_causes

# The facts a next step may name (correlate.facts): a misspelt one would read as a blank.
FACTS = {"pod", "node", "fault_node", "gpu", "what", "fix", "exception"}


def test_the_shipped_schema_file_is_the_table_s() -> None:
    """The file consumers read agrees with the table the code reads (after a new row: ``make schema``)."""
    shipped = json.loads((REPO / "whathappened" / SCHEMA_FILE).read_text())
    assert shipped == with_causes(shipped), "the cause table changed: run `make schema`"
    assert schema()["$defs"]["cause"]["enum"] == list(CAUSES)


def enums(node: object) -> list[list[str]]:
    """Every enum in the schema, wherever it stands."""
    if isinstance(node, dict):
        return ([node["enum"]] if "enum" in node else []) + [e for v in node.values() for e in enums(v)]
    if isinstance(node, list):
        return [e for v in node for e in enums(v)]
    return []


def test_the_shipped_schema_s_categories_are_the_table_s() -> None:
    [categories] = [e for e in enums(schema()) if "infrastructure" in e]
    assert set(categories) == {row.category for row in CAUSES.values()}


def test_every_cause_has_a_title_plain_words_and_a_next_step_naming_only_known_facts() -> None:
    for code, row in CAUSES.items():
        assert row.title and row.plain and row.next_step, code
        assert title_of(code) == row.title and row.title[0].isupper()
        named = {field for _, field, _, _ in string.Formatter().parse(row.next_step) if field}
        assert named <= FACTS, (code, named - FACTS)
    assert title_of("not-a-cause") == "not-a-cause"  # an unknown code is shown as it is, never dropped


def test_next_steps_come_from_the_table_and_no_fault_is_never_retried_as_a_fault() -> None:
    facts = {"pod": "w-0", "node": "node-a", "fault_node": "node-a", "gpu": "GPU 5"}
    assert templates.next_step("gpu-fallen-off-bus", facts) == (
        "cordon node-a and open a hardware ticket for GPU 5; resubmitting is safe"
    )
    assert templates.next_step("not-a-cause", facts) == templates.fill(CAUSES["unknown"].next_step, facts)
    assert all(not CAUSES[code].retryable and CAUSES[code].tier == 0 for code in NO_FAULT)
