"""Optional (``--label-node``): the node label ``whathappened.io/maintenance-due=true`` while host maintenance is due
within the preflight window, removed when it is not, so nodeAffinity, Kueue admission checks or NVSentinel rules
keep new work off the node before it starts (README: the affinity snippet).

One merge PATCH of the Node when the answer changes (the first poll always says it), with the pod's in-cluster
service account as node_events.py uses it; needs ``patch`` on ``nodes`` (deploy/base/exporter-rbac.yaml). A failed
PATCH is logged and tried again at the next poll.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta

import httpx
from whathappened.exporters._metadata_http import request
from whathappened.exporters.node_events import in_cluster
from whathappened.exporters.notices import Clock, Notice, evaluate

from whathappened.errors import SourceError

log = logging.getLogger("whathappened.exporter.labels")

LABEL = "whathappened.io/maintenance-due"


class NodeLabeler:
    """A notice sink for the poll loop: the label set while maintenance is due within ``window``, else removed."""

    def __init__(
        self,
        client: httpx.Client,
        api_url: str,
        token: Callable[[], str],
        node: str,
        clock: Clock,
        window: timedelta,
    ) -> None:
        self._client = client
        self._url = f"{api_url.rstrip('/')}/api/v1/nodes/{node}"
        self._token = token
        self._clock = clock
        self._window = window
        self._labelled: bool | None = None  # unknown until the first PATCH went through

    def __call__(self, notices: Sequence[Notice]) -> None:
        due = bool(evaluate(notices, self._clock(), self._window).due)
        if due == self._labelled:
            return
        headers = {"Authorization": f"Bearer {self._token()}", "Content-Type": "application/merge-patch+json"}
        body = {"metadata": {"labels": {LABEL: "true" if due else None}}}  # null removes it
        try:
            request(self._client, "PATCH", self._url, headers=headers, body=body)
        except SourceError as exc:
            log.warning("could not %s the node label %s: %s", "set" if due else "remove", LABEL, exc)
            return
        self._labelled = due


def in_cluster_labeler(node: str, clock: Clock, window: timedelta, env: Mapping[str, str] | None = None) -> NodeLabeler:
    cluster = in_cluster(env)
    client = httpx.Client(verify=ssl.create_default_context(cafile=str(cluster.ca_file)), timeout=5.0)
    token = cluster.token_file.read_text
    return NodeLabeler(client, cluster.api_url, lambda: token().strip(), node, clock, window)
