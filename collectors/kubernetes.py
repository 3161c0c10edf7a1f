"""The live Kubernetes source, on the official ``kubernetes`` client: pods, events, nodes and last log lines.

Requests stay flat as experiments grow: pods come from server-side label selectors (one LIST per label key
tried, paginated), events from one LIST per namespace plus one LIST of node events, nodes from one LIST (or a
GET each when there are only a few), and only the logs of containers that failed are read one by one. Every
payload is read raw (``_preload_content=False``) and goes through the same pure parsers as a snapshot
(collectors/_kube_parse.py), so a live answer and a recorded one give the same timeline.

Read-only by construction: the only calls are list_* and read_*; collectors/_kube_access.PERMISSIONS names
them and deploy/rbac.yaml grants exactly those.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import urllib3
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from whathappened.collectors._kube_access import (
    Call,
    Expired,
    retry_after,
    safe_server,
    status_error,
    transport_error,
)
from whathappened.collectors._kube_parse import (
    WINDOW_SLACK,
    discover_from_objects,
    events_from_objects,
    failed_containers,
    log_events,
    parse_node,
    scope_event_objects,
)

from whathappened.config import KubernetesSettings, Settings
from whathappened.errors import SourceError, SourceForbidden, SourceTimeout
from whathappened.model import NodeInfo, Subject, TimelineEvent
from whathappened.scope import Discovery, Query, Scope

BULK_PAGE = 10_000  # events and nodes are filtered here, so fetch them in few, large pages
NODE_GET_MAX = 3  # up to this many nodes, GET each instead of listing every node of the cluster
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_METADATA_ONLY = {"Accept": "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"}
_SA_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
Fetch = Callable[..., Any]


class KubernetesCollector:
    name = "kubernetes"

    def __init__(
        self,
        api_client: client.ApiClient,
        namespace: str = "default",
        settings: Settings | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.requests = 0
        self.detail = ""
        self.request_log: list[str] = []  # "list pods in namespace research: 200", for --debug (no secrets)
        self.namespace = namespace
        self._settings = settings or Settings()
        self._core = client.CoreV1Api(api_client)
        self._events_api = client.EventsV1Api(api_client)
        self._server = safe_server(str(api_client.configuration.host))
        self._clock, self._sleep = clock, sleep
        self._deadline: float | None = None
        self._pods: dict[tuple[str, str], dict[str, Any]] = {}
        self._nodes: dict[str, dict[str, Any]] = {}
        self._events: list[Mapping[str, Any]] = []
        self._listed_nodes = False
        self._gone_nodes: set[str] = set()

    # --- the Collector protocol ---

    def discover(self, query: Query) -> Discovery:
        self._start()
        namespace = self._namespace(query)
        scoped = replace(query, namespace=namespace)
        candidates: tuple[str, ...] = ()
        if namespace is None:
            found = self._pods_by_labels(scoped)
        else:
            found, candidates = self._pods_in_namespace(scoped, namespace)
        discovery = discover_from_objects(found, scoped)
        self._pods = {p_key(o): o for o in found}
        nodes = self._fetch_nodes({p.node for p in discovery.pods if p.node})
        return Discovery(pods=discovery.pods, nodes=tuple(nodes), candidates=candidates or discovery.candidates)

    def collect(self, scope: Scope) -> list[TimelineEvent]:
        if self._deadline is None:
            self._start()
        self._fetch_nodes(set(scope.node_names))
        self._events = scope_event_objects(self._fetch_events(scope), scope)
        wanted = {p.key for p in scope.pods}
        pods = [o for key, o in self._pods.items() if key in wanted]
        timeline = events_from_objects(pods, self._events, self._nodes.values(), scope, self.name)
        logs, log_note = self._failed_logs(pods, scope)
        nodes = [n for n in scope.node_names if n in self._nodes]
        self.detail = f"{len(pods)} pods, {len(self._events)} events, {len(nodes)} nodes{log_note}"
        return timeline + logs

    def export_snapshot(self, folder: Path) -> None:
        """Write what was fetched as kubernetes/{pods,events,nodes}.json in kubectl's List shape."""
        target = folder / "kubernetes"
        target.mkdir(parents=True, exist_ok=True)
        shapes = (
            ("pods", "PodList", "Pod", list(self._pods.values())),
            ("events", "EventList", "Event", self._events),
            ("nodes", "NodeList", "Node", list(self._nodes.values())),
        )
        for name, list_kind, kind, items in shapes:
            typed = [{"apiVersion": "v1", "kind": kind, **item} for item in items]
            body = {"apiVersion": "v1", "kind": list_kind, "metadata": {"resourceVersion": ""}, "items": typed}
            (target / f"{name}.json").write_text(json.dumps(body, indent=1, default=str))

    # --- resolution ---

    def _namespace(self, query: Query) -> str | None:
        if query.namespace is not None:
            return query.namespace
        return None if self._settings.all_namespaces else self.namespace

    def _pods_in_namespace(self, query: Query, namespace: str) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
        """One metadata-only LIST picks the label key that wins (or the owners), then one selector LIST.

        Two requests whichever of the ten label keys matches, and exact first-key-wins semantics; the
        metadata of a namespace's pods is small, and the full pods still come through a server-side selector.
        """
        call = Call("list", "pods", namespace)
        listed = self._list(call, self._core.list_namespaced_pod, namespace, page=BULK_PAGE, _headers=_METADATA_ONLY)
        metadata = [{"metadata": item.get("metadata") or {}} for item in listed]
        chosen = discover_from_objects(metadata, query)
        if not chosen.pods:
            self._check_namespace(namespace)
            return [], chosen.candidates
        key = next((k for k in query.label_keys if any(p.labels.get(k) == query.experiment for p in chosen.pods)), None)
        if key is not None:
            selector = f"{key}={query.experiment}"
            return self._list(
                call, self._core.list_namespaced_pod, namespace, label_selector=selector
            ), chosen.candidates
        # Found through owner references only: no selector names them, so read the namespace's pods.
        wanted = {p.key for p in chosen.pods}
        everything = self._list(call, self._core.list_namespaced_pod, namespace)
        return [o for o in everything if p_key(o) in wanted], chosen.candidates

    def _pods_by_labels(self, query: Query) -> list[dict[str, Any]]:
        """All namespaces: one server-side selector LIST per label key, in order, until one matches."""
        value = query.experiment
        if len(value) > 63 or not _LABEL_VALUE.match(value):
            return []  # not a valid label value: no selector can match it
        for key in query.label_keys:
            found = self._list(
                Call("list", "pods"), self._core.list_pod_for_all_namespaces, label_selector=f"{key}={value}"
            )
            if found:
                return found
        return []

    def _check_namespace(self, namespace: str) -> None:
        try:
            found = self._get_optional(Call("get", "namespaces"), self._core.read_namespace, namespace)
        except SourceForbidden:
            return  # not allowed to look: the empty result stands on its own
        if found is None:
            raise SourceError(f"namespace {namespace} not found")

    # --- fetching ---

    def _fetch_nodes(self, names: set[str]) -> list[NodeInfo]:
        missing = {n for n in names if n not in self._nodes and n not in self._gone_nodes}
        if missing and not self._listed_nodes:
            if len(missing) <= NODE_GET_MAX:
                for name in sorted(missing):
                    node = self._get_optional(Call("get", "nodes"), self._core.read_node, name)
                    if node is None:
                        self._gone_nodes.add(name)  # deleted (spot reclaim, scale-down): do not ask again
                    else:
                        self._nodes[name] = node
            else:
                for node in self._list(Call("list", "nodes"), self._core.list_node, page=BULK_PAGE):
                    self._nodes[node["metadata"]["name"]] = node
                self._listed_nodes = True
        return [parse_node(self._nodes[n]) for n in sorted(names) if n in self._nodes]

    def _fetch_events(self, scope: Scope) -> list[Mapping[str, Any]]:
        found: list[Mapping[str, Any]] = []
        for namespace in scope.namespaces:
            found += self._list_events(namespace, None)
        if scope.node_names and "default" not in scope.namespaces:
            # kubelet, node-problem-detector and node-termination-handler record node events in "default"
            found += self._list_events("default", "involvedObject.kind=Node")
        return found

    def _list_events(self, namespace: str, fields: str | None) -> list[dict[str, Any]]:
        call = Call("list", "events", namespace)
        try:
            return self._list(call, self._core.list_namespaced_event, namespace, field_selector=fields, page=BULK_PAGE)
        except SourceForbidden as forbidden:
            # Some roles grant only the newer events API; it serves the same objects.
            new_fields = fields.replace("involvedObject.", "regarding.") if fields else None
            fetch = self._events_api.list_namespaced_event
            try:
                newer = Call("list", "events", namespace, "events.k8s.io")
                return self._list(newer, fetch, namespace, field_selector=new_fields, page=BULK_PAGE)
            except SourceForbidden:
                raise forbidden from None

    def _failed_logs(self, pods: list[dict[str, Any]], scope: Scope) -> tuple[list[TimelineEvent], str]:
        """The last lines of the containers that failed first: where a failure began is in the earliest ends,
        and a 512-rank job whose ranks all died must not cost 512 log reads."""
        ended = sorted(
            ((_finished(obj, container, previous), n, obj, container, previous)
             for n, obj in enumerate(pods) for container, previous in failed_containers(obj)),
            key=lambda item: (item[0], item[1]),
        )  # fmt: skip
        limit = self._settings.kubernetes.log_containers
        lines: list[TimelineEvent] = []
        for _, _, obj, container, previous in ended[:limit]:
            try:
                lines += self._log(obj, container, previous)
            except SourceForbidden as error:
                return lines, f"; logs skipped: {error}"
        start, end = scope.window.start - WINDOW_SLACK, scope.window.end + WINDOW_SLACK
        return [e for e in lines if start <= e.at <= end], ""

    def _log(self, obj: Mapping[str, Any], container: str, previous: bool) -> list[TimelineEvent]:
        meta = obj["metadata"]
        call = Call("get", "pods/log", meta["namespace"])
        raw = self._get_optional(
            call,
            self._core.read_namespaced_pod_log,
            meta["name"],
            meta["namespace"],
            container=container,
            previous=previous,
            tail_lines=self._kube.log_lines,
            timestamps=True,
            decode=False,
        )
        subject = Subject(meta["namespace"], meta["name"], container, (obj.get("spec") or {}).get("nodeName"))
        return log_events(raw or b"", subject, previous, self.name)

    # --- requests ---

    @property
    def _kube(self) -> KubernetesSettings:
        return self._settings.kubernetes

    def _start(self) -> None:
        self._deadline = self._clock() + self._settings.deadline_s

    def _list(self, call: Call, fetch: Fetch, *args: Any, page: int | None = None, **kwargs: Any) -> list[Any]:
        """Every item, following continue tokens; a 410 on a continue token starts the list again."""
        items: list[Any] = []
        token: str | None = None
        restarts = 0
        while True:
            try:
                body = self._request(call, fetch, *args, limit=page or self._kube.page_size, _continue=token, **kwargs)
            except Expired:
                if token is None or restarts >= 3:
                    raise SourceError(f"the list expired again and again while trying to {call.describe()}") from None
                items, token, restarts = [], None, restarts + 1
                continue
            if not isinstance(body, dict) or "items" not in body:
                # a proxy's error page or a truncated answer that still parsed: not an empty list
                raise SourceError(f"the API server's answer is not a list while trying to {call.describe()}")
            items += body.get("items") or []
            token = (body.get("metadata") or {}).get("continue") or None
            if token is None:
                return items

    def _get_optional(self, call: Call, fetch: Fetch, *args: Any, decode: bool = True, **kwargs: Any) -> Any:
        """A GET whose 404 (or 400 for a log that is gone) means simply 'not there any more'."""
        try:
            return self._request(call, fetch, *args, decode=decode, **kwargs)
        except _Absent:
            return None

    def _request(self, call: Call, fetch: Fetch, *args: Any, decode: bool = True, **kwargs: Any) -> Any:
        while True:
            remaining = (self._deadline or 0.0) - self._clock()
            if remaining <= 0:
                raise SourceTimeout(f"deadline reached before trying to {call.describe()}")
            self.requests += 1
            try:
                response = fetch(
                    *args, _preload_content=False, _request_timeout=(min(remaining, 10.0), remaining), **kwargs
                )
                self.request_log.append(f"{call.describe()}: {response.status}")
                return json.loads(response.data) if decode else response.data
            except ApiException as error:
                self.request_log.append(f"{call.describe()}: {error.status}")
                wait = retry_after(error.headers)
                if error.status == 429 and wait < (self._deadline or 0.0) - self._clock():
                    self._sleep(wait)  # the server asked us to wait this long
                    continue
                if (
                    call.verb == "get"
                    and error.status in (400, 404)
                    and call.resource in ("nodes", "namespaces", "pods/log")
                ):
                    raise _Absent() from None
                raise status_error(int(error.status or 0), call) from None
            except urllib3.exceptions.HTTPError as error:
                self.request_log.append(f"{call.describe()}: {_transport_kind(error)}")
                raise transport_error(_transport_kind(error), call, self._server) from None


class _Absent(Exception):
    """The object asked for does not exist (any more)."""


def _transport_kind(error: BaseException) -> str:
    reason = getattr(error, "reason", None) or error
    if isinstance(reason, urllib3.exceptions.NameResolutionError):
        return "dns"
    if isinstance(reason, urllib3.exceptions.NewConnectionError):
        return "refused"
    if isinstance(reason, urllib3.exceptions.TimeoutError):
        return "timeout"
    if isinstance(reason, urllib3.exceptions.SSLError):
        return "tls"
    return "broken"


def p_key(obj: Mapping[str, Any]) -> tuple[str, str]:
    return (obj["metadata"].get("namespace", ""), obj["metadata"].get("name", ""))


# --- building the client as kubectl does ---


def _kubeconfig_path(settings: KubernetesSettings) -> str:
    return settings.kubeconfig or os.environ.get("KUBECONFIG") or str(Path("~/.kube/config").expanduser())


def _use_in_cluster(settings: KubernetesSettings, path: str) -> bool:
    if settings.in_cluster is not None:
        return settings.in_cluster
    exists = any(Path(p).expanduser().is_file() for p in path.split(os.pathsep) if p)
    return not exists and "KUBERNETES_SERVICE_HOST" in os.environ


def build_api_client(settings: KubernetesSettings, verify_tls: bool = True) -> tuple[client.ApiClient, str]:
    """An ApiClient and the default namespace, from kubeconfig (KUBECONFIG, --context) or in-cluster config."""
    cfg = client.Configuration()
    path = _kubeconfig_path(settings)
    try:
        if _use_in_cluster(settings, path):
            config.load_incluster_config(client_configuration=cfg)
            namespace = _SA_NAMESPACE.read_text().strip() if _SA_NAMESPACE.is_file() else "default"
        else:
            config.load_kube_config(config_file=path, context=settings.context, client_configuration=cfg)
            namespace = _context_namespace(path, settings.context)
    except (config.ConfigException, OSError, ValueError) as error:
        status = "not_configured" if not _any_file(path) else "failed"
        raise SourceError(f"no usable Kubernetes configuration ({_config_problem(error)})", status=status) from None
    cfg.retries = False  # every request is ours to count, retry (429) and time out
    if not verify_tls:
        cfg.verify_ssl = False
    return client.ApiClient(cfg), namespace


def _any_file(path: str) -> bool:
    return any(Path(p).expanduser().is_file() for p in path.split(os.pathsep) if p)


def _config_problem(error: BaseException) -> str:
    text = str(error)
    # The loader's messages name files and contexts, never credentials; keep them short all the same.
    return text.splitlines()[0][:200] if text else type(error).__name__


def _context_namespace(path: str, context: str | None) -> str:
    contexts, active = config.list_kube_config_contexts(config_file=path)
    chosen = next((c for c in contexts if c.get("name") == context), None) if context else active
    return str(((chosen or {}).get("context") or {}).get("namespace") or "default")


def create_collector(settings: Settings) -> KubernetesCollector:
    """The collector for these settings (the CLI's entry point)."""
    api_client, namespace = build_api_client(settings.kubernetes, settings.verify_tls)
    return KubernetesCollector(api_client, namespace, settings)


def _finished(obj: Mapping[str, Any], container: str, previous: bool) -> str:
    """When that container instance ended, as RFC 3339 text (sorts as time); unknown sorts last."""
    block_of = obj.get("status") or {}
    for status in [*(block_of.get("initContainerStatuses") or []), *(block_of.get("containerStatuses") or [])]:
        if status.get("name") == container:
            block = (status.get("lastState") if previous else status.get("state")) or {}
            return str((block.get("terminated") or {}).get("finishedAt") or "9999")
    return "9999"
