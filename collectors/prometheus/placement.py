"""Where a series is about: its node (kube-state-metrics' ``node``, dcgm-exporter's spellings of its host) and the
workload pod a dcgm-exporter series was attributed to (in every spelling of every release and scrape)."""

from __future__ import annotations

from collections.abc import Container, Mapping

from whathappened.collectors.prometheus.promql import DCGM_NODE_LABELS

EXPORTER_POD = "dcgm-exporter"  # in the names of the GPU Operator's and the Helm chart's exporter pods
# Where a series names its node: kube-state-metrics' node first, then dcgm-exporter's spellings.
NODE_LABELS = ("node", *(label for label in DCGM_NODE_LABELS if label != "node"))


def node_of(labels: Mapping[str, str], known: Container[str] = ()) -> str | None:
    """The node a series is about: the first node label naming a ``known`` node (an old GPU Operator writes the
    exporter's pod name into Hostname, a standalone exporter its container id), else the first present."""
    first = None
    for key in NODE_LABELS:
        value = labels.get(key)
        if value:
            if value in known:
                return value
            if key != "instance":  # a scrape address unless relabelled to a node's name: never a node by itself
                first = first or value
    return first


def dcgm_pod(labels: Mapping[str, str]) -> tuple[str, str] | None:
    """The (namespace, pod) a dcgm-exporter series was attributed to, or None. A scrape that does not honor the
    exporter's labels (a ServiceMonitor without ``honorLabels``) renames them ``exported_pod`` and
    ``exported_namespace`` and puts the exporter's own pod in ``pod``; older releases say ``pod_name`` and
    ``pod_namespace``. On an idle GPU the only pod label a ServiceMonitor leaves is the exporter's own: no
    workload's."""
    if "exported_pod" in labels or "exported_namespace" in labels:
        namespace, pod = labels.get("exported_namespace", ""), labels.get("exported_pod", "")
    elif labels.get("pod"):
        namespace, pod = labels.get("namespace", ""), labels["pod"]
    else:
        namespace, pod = labels.get("pod_namespace", ""), labels.get("pod_name", "")
    return (namespace, pod) if pod and EXPORTER_POD not in pod else None
