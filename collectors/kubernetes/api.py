"""GET-only access to the Kubernetes API through the official client's ApiClient, without its generated API classes,
and that client built from kubeconfig or in-cluster configuration as kubectl builds it: the one module that
imports the ``kubernetes`` package.

``kubernetes.client.CoreV1Api`` costs about 0.6 CPU-s to import (tens of thousands of lines of pydantic-validated
methods) and the first call of each of its methods builds a pydantic schema; the collector reads every answer raw
and hands it to the pure parsers anyway. So a request is built here with ``ApiClient.param_serialize`` (the
Configuration's host, bearer token, exec/OIDC token refresh, as kubernetes.config loaded them) and sent with
``ApiClient.call_api`` (its urllib3 pool: TLS, client certificates, proxy). That is exactly the path the generated
methods take, minus the pydantic layer.

Read-only by construction: ``KubeApi.get`` is the only way out and its method is the constant "GET"; the paths
are the ones below, one per permission in collectors.kubernetes.access.PERMISSIONS. The only writes are
``KubeWrites``, built by ``whathappened watch`` alone and only with its opt-in --write-events or --annotate: create an
Event, merge-patch an owner's annotations (deploy/writes/ grants exactly these).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import urllib3
import yaml
from kubernetes import config
from kubernetes.client import ApiClient, Configuration
from kubernetes.client.api_client import RequestSerialized
from kubernetes.client.exceptions import ApiException

from whathappened.config import KubernetesSettings
from whathappened.errors import SourceError

JSON = "application/json"
# What kubectl asks for when it needs only names and labels: the server drops spec and status.
METADATA_ONLY = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
LOG = "text/plain"
# Connections kept per API server. The client's default is 5 per CPU; on a 1-CPU pod the collector's concurrent
# log reads would outnumber it, and urllib3 would open, drop and warn about the extra connections.
CONNECTIONS = 8
_SA_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")

# Endpoint -> path template. Each is one permission of PERMISSIONS (list pods, get pods/log, ...).
PATHS: dict[str, str] = {
    "pods": "/api/v1/namespaces/{namespace}/pods",
    "all-pods": "/api/v1/pods",  # every namespace: the CLI's -A, and a watch of the whole cluster
    "pod-log": "/api/v1/namespaces/{namespace}/pods/{name}/log",
    "events": "/api/v1/namespaces/{namespace}/events",
    "events-v1": "/apis/events.k8s.io/v1/namespaces/{namespace}/events",
    "node": "/api/v1/nodes/{name}",
    "nodes": "/api/v1/nodes",
    "namespace": "/api/v1/namespaces/{name}",
}


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: bytes
    headers: Mapping[str, str]


class KubeApi:
    """One method, ``get``: the API server's answer to a GET of one of ``PATHS``, whatever its status."""

    def __init__(self, api_client: ApiClient) -> None:
        self._client = api_client

    @property
    def host(self) -> str:
        return str(self._client.configuration.host)

    def get(
        self,
        endpoint: str,
        where: Mapping[str, str] | None = None,
        params: Sequence[tuple[str, Any]] = (),
        accept: str = JSON,
        timeout: tuple[float, float] | None = None,
    ) -> Answer:
        """Any status comes back as an Answer; no answer at all raises Unanswered."""
        response = self._send(endpoint, where, params, accept, timeout)
        try:
            body = response.read()
        except urllib3.exceptions.HTTPError as error:
            raise Unanswered(transport_kind(error)) from None
        return Answer(int(response.status), body or b"", response.headers or {})

    def lines(
        self,
        endpoint: str,
        where: Mapping[str, str] | None = None,
        params: Sequence[tuple[str, Any]] = (),
        timeout: tuple[float, float] | None = None,
    ) -> tuple[int, Mapping[str, str], Iterator[bytes]]:
        """A streamed GET (a WATCH): the status, the headers, and the body's lines as they arrive (the connection
        goes back to the pool when they end). No answer, at the start or mid-stream, raises Unanswered."""
        response = self._send(endpoint, where, params, JSON, timeout)
        raw = response.response

        def each() -> Iterator[bytes]:
            rest = b""
            try:
                for chunk in raw.stream(1 << 16, decode_content=True):
                    *complete, rest = (rest + chunk).split(b"\n")
                    yield from (line for line in complete if line.strip())
                if rest.strip():
                    yield rest
            except urllib3.exceptions.HTTPError as error:
                raise Unanswered(transport_kind(error)) from None
            finally:
                raw.release_conn()

        return int(response.status), response.headers or {}, each()

    def _send(
        self,
        endpoint: str,
        where: Mapping[str, str] | None,
        params: Sequence[tuple[str, Any]],
        accept: str,
        timeout: tuple[float, float] | None,
    ) -> Any:
        """The one request builder: its method is the constant GET. No answer raises Unanswered."""
        request = self._client.param_serialize(
            method="GET",
            resource_path=PATHS[endpoint],
            path_params=dict(where or {}),
            query_params=[(k, v) for k, v in params if v is not None],
            header_params={"Accept": accept},
            auth_settings=["BearerToken"],
        )
        return _call(self._client, request, timeout)


def _call(client: ApiClient, request: RequestSerialized, timeout: tuple[float, float] | None) -> Any:
    try:
        return client.call_api(*request, _request_timeout=timeout)
    except ApiException as error:  # the client's REST layer turns a TLS failure into a status-0 ApiException
        raise Unanswered("tls" if not error.status else "broken") from None
    except urllib3.exceptions.HTTPError as error:
        raise Unanswered(transport_kind(error)) from None


MERGE_PATCH = "application/merge-patch+json"  # RFC 7386: custom resources take it (no strategic merge there)
WRITE_TIMEOUT = (5.0, 10.0)


class KubeWrites:
    """The watch's two opt-in writes; each returns the API server's status, 0 when there was no answer."""

    def __init__(self, api_client: ApiClient) -> None:
        self._client = api_client

    def create_event(self, namespace: str, event: Mapping[str, Any]) -> int:
        return self._write("POST", PATHS["events"].format(namespace=namespace), event, JSON)

    def merge_patch(self, path: str, patch: Mapping[str, Any]) -> int:
        """``path``: a namespaced object's (collectors.kube_objects.owners.Owner.path)."""
        if not path.startswith(("/api/", "/apis/")) or "/namespaces/" not in path:
            raise ValueError(f"not a namespaced object's path: {path}")
        return self._write("PATCH", path, patch, MERGE_PATCH)

    def _write(self, method: str, path: str, body: Mapping[str, Any], content_type: str) -> int:
        request = self._client.param_serialize(
            method=method,
            resource_path=path,
            header_params={"Accept": JSON, "Content-Type": content_type},
            body=dict(body),
            auth_settings=["BearerToken"],
        )
        try:
            response = _call(self._client, request, WRITE_TIMEOUT)
            response.read()
        except (Unanswered, urllib3.exceptions.HTTPError):
            return 0
        return int(response.status)


class Unanswered(Exception):
    """No HTTP answer: ``kind`` is refused | dns | timeout | tls | broken (no transport text: it may hold secrets)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def transport_kind(error: BaseException) -> str:
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


# --- building the client as kubectl does ---


def _kubeconfig_path(settings: KubernetesSettings) -> str:
    return settings.kubeconfig or os.environ.get("KUBECONFIG") or str(Path("~/.kube/config").expanduser())


def _use_in_cluster(settings: KubernetesSettings, path: str) -> bool:
    if settings.in_cluster is not None:
        return settings.in_cluster
    exists = any(Path(p).expanduser().is_file() for p in path.split(os.pathsep) if p)
    return not exists and "KUBERNETES_SERVICE_HOST" in os.environ


def build_api_client(settings: KubernetesSettings, verify_tls: bool = True) -> tuple[ApiClient, str]:
    """An ApiClient and the default namespace, from kubeconfig (KUBECONFIG, --context) or in-cluster config."""
    cfg = Configuration()
    path = _kubeconfig_path(settings)
    try:
        if _use_in_cluster(settings, path):
            config.load_incluster_config(client_configuration=cfg)
            namespace = _SA_NAMESPACE.read_text().strip() if _SA_NAMESPACE.is_file() else "default"
        else:
            config.load_kube_config(config_file=path, context=settings.context, client_configuration=cfg)
            namespace = _context_namespace(path, settings.context)
    except (config.ConfigException, OSError, ValueError, yaml.YAMLError, TypeError, AttributeError) as error:
        # a file that is not YAML, or YAML of the wrong shape, is as unusable as a missing one
        status = "not_configured" if not _any_file(path) else "failed"
        raise SourceError(f"no usable Kubernetes configuration ({_config_problem(error)})", status=status) from None
    cfg.retries = False  # every request is ours to count, retry (429) and time out
    cfg.connection_pool_maxsize = max(cfg.connection_pool_maxsize or 0, CONNECTIONS)
    if not verify_tls:
        cfg.verify_ssl = False
    return ApiClient(cfg), namespace


def _any_file(path: str) -> bool:
    return any(Path(p).expanduser().is_file() for p in path.split(os.pathsep) if p)


def _config_problem(error: BaseException) -> str:
    if isinstance(error, yaml.YAMLError):
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        return f"the kubeconfig is not valid YAML{where}"
    text = str(error)
    # The loader's messages name files and contexts, never credentials; keep them short all the same.
    return text.splitlines()[0][:200] if text else type(error).__name__


def _context_namespace(path: str, context: str | None) -> str:
    contexts, active = config.list_kube_config_contexts(config_file=path)
    chosen = next((c for c in contexts if c.get("name") == context), None) if context else active
    return str(((chosen or {}).get("context") or {}).get("namespace") or "default")
