"""Label and field selectors as the Kubernetes API server parses and applies them.

Label selectors: ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a,b)``, ``k`` (exists), ``!k``.
``!=`` and ``notin`` also match objects without the key, as in the API server. Field selectors: ``f=v``,
``f==v``, ``f!=v`` over a per-resource set of supported fields; any other field is a 400, as in the server.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Predicate = Callable[[Mapping[str, Any]], bool]


class SelectorError(ValueError):
    """An unparsable selector or an unsupported field: the server answers 400 BadRequest."""


_SET_TERM = re.compile(r"^\s*([^\s!=(),]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")


def _split_terms(selector: str) -> list[str]:
    terms, depth, current = [], 0, ""
    for char in selector:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    terms.append(current)
    return [t.strip() for t in terms if t.strip()]


def _label_term(term: str) -> Predicate:
    match = _SET_TERM.match(term)
    if match:
        key, op, raw = match.groups()
        values = {v.strip() for v in raw.split(",") if v.strip()}
        if op == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    for op in ("==", "!=", "="):
        if op in term:
            key, value = (part.strip() for part in term.split(op, 1))
            if not key:
                raise SelectorError(f"invalid label selector term {term!r}")
            if op == "!=":
                return lambda labels: labels.get(key) != value
            return lambda labels: labels.get(key) == value
    if term.startswith("!"):
        key = term[1:].strip()
        return lambda labels: key not in labels
    if re.fullmatch(r"[A-Za-z0-9./_-]+", term):
        return lambda labels: term in labels
    raise SelectorError(f"unable to parse requirement: {term!r}")


def label_selector(selector: str | None) -> Predicate:
    """A predicate over an object's metadata.labels."""
    if not selector:
        return lambda obj: True
    tests = [_label_term(t) for t in _split_terms(selector)]

    def matches(obj: Mapping[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(test(labels) for test in tests)

    return matches


def _field_value(obj: Mapping[str, Any], path: str) -> str:
    value: Any = obj
    for step in path.split("."):
        value = value.get(step) if isinstance(value, Mapping) else None
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def field_selector(selector: str | None, supported: Mapping[str, str]) -> Predicate:
    """A predicate over the object's fields; ``supported`` maps selector field -> path in the object."""
    if not selector:
        return lambda obj: True
    tests: list[Predicate] = []
    for term in _split_terms(selector):
        op = next((o for o in ("==", "!=", "=") if o in term), None)
        if op is None:
            raise SelectorError(f"invalid field selector: {term!r}")
        field, value = (part.strip() for part in term.split(op, 1))
        if field not in supported:
            raise SelectorError(f"field label not supported: {field}")
        path = supported[field]
        if op == "!=":
            tests.append(lambda obj, p=path, v=value: _field_value(obj, p) != v)
        else:
            tests.append(lambda obj, p=path, v=value: _field_value(obj, p) == v)
    return lambda obj: all(test(obj) for test in tests)


_META = {"metadata.name": "metadata.name", "metadata.namespace": "metadata.namespace"}
_CORE_EVENT = {
    **{
        f"involvedObject.{f}": f"involvedObject.{f}"
        for f in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    },
    "reason": "reason",
    "reportingComponent": "reportingComponent",
    "source": "source.component",
    "type": "type",
}
_NEW_EVENT = {
    **{
        f"regarding.{f}": f"regarding.{f}"
        for f in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    },
    "reason": "reason",
    "reportingController": "reportingController",
    "type": "type",
}

FIELDS: dict[str, dict[str, str]] = {
    "pods": {
        **_META,
        "spec.nodeName": "spec.nodeName",
        "spec.restartPolicy": "spec.restartPolicy",
        "spec.schedulerName": "spec.schedulerName",
        "spec.serviceAccountName": "spec.serviceAccountName",
        "status.phase": "status.phase",
        "status.podIP": "status.podIP",
        "status.nominatedNodeName": "status.nominatedNodeName",
    },
    "events": {**_META, **_CORE_EVENT},
    "events.k8s.io": {**_META, **_NEW_EVENT},
    "nodes": {**_META, "spec.unschedulable": "spec.unschedulable"},
    "namespaces": {**_META, "status.phase": "status.phase"},
    "owners": _META,  # custom resources and Jobs: only metadata.name and metadata.namespace
}
