"""Optional: record maintenance notices as Kubernetes Events on this Node, so the CLI finds them without Prometheus.

House style keeps the ``kubernetes`` client in collectors/kubernetes/collector.py only, and this needs one POST, so it speaks
to the API server with httpx and the pod's in-cluster service account (token re-read on every call, because
projected tokens rotate). Needs ``create`` on ``events`` (deploy/base/exporter-rbac.yaml). Reasons follow
aws-node-termination-handler's (``ScheduledEvent``, ``SpotInterruption``, ``RebalanceRecommendation``), which
readers of node events already know. Each notice is recorded once; a failed POST is logged and retried next poll.
"""

from __future__ import annotations

import logging
import os
import ssl
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from whathappened.collectors.kube_objects.event_objects import event_object
from whathappened.exporters import catalog
from whathappened.exporters._metadata_http import request
from whathappened.exporters.notices import SPOT_EVENT_TYPES, Clock, Notice

from whathappened.errors import ConfigError, SourceError

log = logging.getLogger("whathappened.exporter.events")

SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
COMPONENT = "whathappened-exporter"


@dataclass(frozen=True, slots=True)
class InCluster:
    api_url: str
    token_file: Path
    ca_file: Path


def in_cluster(env: Mapping[str, str] | None = None, account: Path = SERVICE_ACCOUNT) -> InCluster:
    environ = os.environ if env is None else env
    host, port = environ.get("KUBERNETES_SERVICE_HOST"), environ.get("KUBERNETES_SERVICE_PORT", "443")
    if not host or not (account / "token").is_file():
        raise ConfigError("--node-events and --label-node need to run in a pod (no in-cluster service account found)")
    host = f"[{host}]" if ":" in host else host
    return InCluster(f"https://{host}:{port}", account / "token", account / "ca.crt")


def reason_for(notice: Notice) -> str:
    if notice.event_type in SPOT_EVENT_TYPES:
        return "SpotInterruption"
    if notice.event_type in catalog.REBALANCE_EVENT_TYPES:
        return "RebalanceRecommendation"
    return "ScheduledEvent"


def event_body(notice: Notice, node: str, now: Clock, namespace: str = "default") -> dict[str, Any]:
    # Node events carry the node name as uid, as the kubelet writes them.
    involved = {"apiVersion": "v1", "kind": "Node", "name": node, "uid": node}
    return event_object(involved, namespace, reason_for(notice), notice.describe(now()), now(), COMPONENT, node, node)


class NodeEventRecorder:
    """A notice sink for the poll loop: one Event per new notice."""

    def __init__(
        self,
        client: httpx.Client,
        api_url: str,
        token: Callable[[], str],
        node: str,
        clock: Clock,
        namespace: str = "default",
    ) -> None:
        self._client = client
        self._url = f"{api_url.rstrip('/')}/api/v1/namespaces/{namespace}/events"
        self._token = token
        self._node = node
        self._clock = clock
        self._namespace = namespace
        self._recorded: set[str] = set()

    def __call__(self, notices: Sequence[Notice]) -> None:
        self._recorded &= {n.event_id for n in notices}
        for notice in notices:
            if notice.event_id in self._recorded:
                continue
            try:
                self._post(notice)
            except SourceError as exc:
                log.warning("could not record node event for %s: %s", notice.event_id, exc)
                continue
            self._recorded.add(notice.event_id)

    def _post(self, notice: Notice) -> None:
        headers = {"Authorization": f"Bearer {self._token()}"}
        request(
            self._client,
            "POST",
            self._url,
            headers=headers,
            body=event_body(notice, self._node, self._clock, self._namespace),
        )


def in_cluster_recorder(node: str, clock: Clock, env: Mapping[str, str] | None = None) -> NodeEventRecorder:
    cluster = in_cluster(env)
    client = httpx.Client(verify=ssl.create_default_context(cafile=str(cluster.ca_file)), timeout=5.0)
    return NodeEventRecorder(client, cluster.api_url, lambda: cluster.token_file.read_text().strip(), node, clock)
