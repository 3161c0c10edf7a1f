"""Stage 2 of the correlator: each death explained on its own by the rule table (rules.py), before any is weighed
against another. The rules see the whole timeline through an index, and the nodes of ranks still running (an
error there is another rank's, not this pod's)."""

from __future__ import annotations

from collections.abc import Sequence

from whathappened.correlate import rules as table
from whathappened.correlate.evidence import Case, Finding
from whathappened.correlate.fates import Fate
from whathappened.correlate.index import TimelineIndex
from whathappened.correlate.rule import Rule, apply
from whathappened.scope import Scope

Explained = tuple[Fate, Finding]


def findings(
    scope: Scope, index: TimelineIndex, found: Sequence[Fate], rules: tuple[Rule, ...] | None = None
) -> tuple[Explained, ...]:
    """``rules``: the table's (read when called, so a row added to it is used) unless given."""
    rules = table.RULES if rules is None else rules
    ended = {f.name for f in found}
    elsewhere = frozenset(p.node for p in scope.pods if p.node and p.name not in ended) - {f.node for f in found}
    return tuple((fate, explain(Case(fate, index, elsewhere), rules)) for fate in found)


def explain(case: Case, rules: tuple[Rule, ...] | None = None) -> Finding:
    """The first rule that explains this death; the last rule always does."""
    for rule in table.RULES if rules is None else rules:
        finding = apply(rule, case)
        if finding is not None:
            return finding
    raise AssertionError("the last rule explains every death")
