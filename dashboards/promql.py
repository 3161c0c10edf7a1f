"""PromQL building blocks the dashboards share: catalogued metric names, the experiment's pods and nodes, DCGM nodes.

Every metric goes through ``metric()``, which refuses a name that is not in the catalog, so a dashboard can only
name what the exporter, dcgm-exporter or kube-state-metrics expose. ``metric_names()`` reads the names back out of
a finished expression, for the generator's final check and for the tests.

Grafana template variables stay in the text (``$experiment``, ``${label_key:regex}``, ``$__range``); the
dashboards interpolate them at query time.
"""

from __future__ import annotations

import re

from whathappened.exporters.catalog import known_metric_names

from whathappened.scope import DEFAULT_LABEL_KEYS

PROM_DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


class UnknownMetric(ValueError):
    """A dashboard named a metric the catalog does not list."""


def metric(name: str, matchers: str = "") -> str:
    """A selector for a catalogued metric, with optional label matchers (``'phase="Failed"'``)."""
    if name not in known_metric_names():
        raise UnknownMetric(f"{name} is not in exporters/catalog.py")
    return f"{name}{{{matchers}}}" if matchers else name


def ksm_label(key: str) -> str:
    """The label kube-state-metrics gives a pod label key: ``label_`` plus the key with non-alphanumerics as ``_``."""
    return "label_" + re.sub(r"[^a-zA-Z0-9_]", "_", key)


# The contract's experiment label keys as kube-state-metrics names them, in the contract's order.
EXPERIMENT_LABELS: tuple[tuple[str, str], ...] = tuple((key, ksm_label(key)) for key in DEFAULT_LABEL_KEYS)

# Selected on the Experiment dashboard by the $label_key variable (all of them by default).
LABEL_KEY_FILTER = "${label_key:regex}"
POD_NAMESPACE = 'namespace=~"$namespace"'


def _over_range(selector: str, over_range: bool) -> str:
    # Tables query one instant at the end of the range; max_over_time keeps pods deleted before that instant.
    return f"max_over_time({selector}[$__range])" if over_range else selector


def _keyed_pod_labels(value_matcher: str, over_range: bool) -> str:
    """``kube_pod_labels`` once per experiment label key, each copy tagged ``key="label_..."`` so it can be picked."""
    branches = []
    for _, label in EXPERIMENT_LABELS:
        selector = metric("kube_pod_labels", f"{POD_NAMESPACE}, {label}{value_matcher}")
        branches.append(f'label_replace({_over_range(selector, over_range)}, "key", "{label}", "", "")')
    return _or(branches)


def _or(branches: list[str]) -> str:
    return "\n  or ".join(branches)


def _picked(keyed: str) -> str:
    # label_replace sets picked="yes" only where the key matches the $label_key selection; the `and on (picked)`
    # then drops the rest. PromQL has no other way to filter on a label computed inside the expression.
    return (
        f'label_replace(\n  {keyed},\n  "picked", "yes", "key", "{LABEL_KEY_FILTER}")\n'
        'and on (picked) label_replace(vector(1), "picked", "yes", "", "")'
    )


def experiment_pods(over_range: bool = False) -> str:
    """One series per (namespace, pod) whose selected experiment label key equals ``$experiment``."""
    keyed = _keyed_pod_labels('="$experiment"', over_range)
    return f"group by (namespace, pod) (\n{_picked(keyed)}\n)"


def experiment_names() -> str:
    """Every experiment name under the selected label keys in the range, as an ``experiment`` label."""
    branches = []
    for _, label in EXPERIMENT_LABELS:
        selector = metric("kube_pod_labels", f'{POD_NAMESPACE}, {label}!=""')
        named = f'label_replace({_over_range(selector, True)}, "experiment", "$1", "{label}", "(.+)")'
        branches.append(f'label_replace({named}, "key", "{label}", "", "")')
    return f"count by (experiment) (\n{_picked(_or(branches))}\n)"


def experiment_nodes(over_range: bool = False) -> str:
    """One series per node that ran one of the experiment's pods."""
    info = _over_range(metric("kube_pod_info", f'{POD_NAMESPACE}, node!=""'), over_range)
    return f"group by (node) (\n{info}\nand on (namespace, pod) {experiment_pods(over_range)}\n)"


def with_node(expr: str) -> str:
    """Give DCGM series a ``node`` label: an existing ``node`` label first, else ``Hostname`` or ``hostname``.

    dcgm-exporter names the host ``Hostname`` before 4.x and ``hostname`` after; with NODE_NAME set (the Helm
    chart sets it) that is the Kubernetes node name. Scrape configs that relabel a ``node`` label win.
    """
    joined = f'label_join({expr}, "node_or_host", ";", "node", "Hostname", "hostname")'
    picked = f'label_replace({joined}, "node", "$1", "node_or_host", ";*([^;]+).*")'
    return f'label_replace({picked}, "node_or_host", "", "", "")'


def on_experiment_pods(expr: str, over_range: bool = False) -> str:
    return f"{expr}\nand on (namespace, pod) {experiment_pods(over_range)}"


def on_experiment_nodes(expr: str, over_range: bool = False) -> str:
    return f"{expr}\nand on (node) {experiment_nodes(over_range)}"


def tagged(expr: str, label: str, value: str) -> str:
    """Add a constant label, so parts joined with ``or`` keep distinct label sets."""
    return f'label_replace({expr}, "{label}", "{value}", "", "")'


# --- reading names back out of an expression ----------------------------------------------------------------

_LABEL_VALUES = re.compile(r"^\s*label_values\((?P<expr>.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$", re.DOTALL)
_QUERY_RESULT = re.compile(r"^\s*query_result\((?P<expr>.*)\)\s*$", re.DOTALL)


def variable_promql(query: str) -> str:
    """The PromQL inside a Grafana Prometheus variable query (``label_values(expr, label)``, ``query_result(expr)``)."""
    for pattern in (_LABEL_VALUES, _QUERY_RESULT):
        match = pattern.match(query)
        if match:
            return match.group("expr")
    return query


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"' + r"|'(?:[^'\\]|\\.)*'")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_MATCHERS = re.compile(r"\{[^}]*\}")
_RANGES = re.compile(r"\[[^\]]*\]")
_IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_KEYWORDS = frozenset(
    {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset"}
)


def metric_names(expr: str) -> frozenset[str]:
    """The metric names an expression selects (function names, keywords, labels and strings removed)."""
    text = _STRING.sub('""', expr)
    text = _GROUPING.sub(" ", text)
    text = _MATCHERS.sub(" ", text)
    text = _RANGES.sub(" ", text)
    names = set()
    for match in _IDENT.finditer(text):
        rest = text[match.end() :].lstrip()
        word = match.group(0)
        if rest.startswith("(") or word in _KEYWORDS or _is_number_suffix(text, match.start()):
            continue
        names.add(word)
    return frozenset(names)


def _is_number_suffix(text: str, start: int) -> bool:
    # "1e3", "0x1f", "5m": identifiers glued to a digit are part of a number or duration, not a metric.
    return start > 0 and (text[start - 1].isdigit() or text[start - 1] == ".")
