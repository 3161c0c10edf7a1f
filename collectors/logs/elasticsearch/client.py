"""The log store's client: the official ``elasticsearch`` client (the one module that imports it), set up to speak
plain JSON to Elasticsearch and OpenSearch alike, and the request layer the log collector goes through: every
request counted, logged for ``--debug`` without its query or credentials, its failure turned into one scrubbed
``SourceError``, safe to use from the few threads that run independent searches at once.

Importing the client is a large share of a CLI run's start-up: ``elastic_transport`` imports its optional
aiohttp and httpx nodes whenever those packages are installed (0.3-0.5 s here), although this collector is
synchronous and only ever uses urllib3. They are kept out while the client is imported (``_sync_only``).
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from whathappened.config import ElasticsearchSettings
from whathappened.errors import SourceError, SourceForbidden, SourceTimeout, SourceUnreachable


@contextlib.contextmanager
def _sync_only(*optional: str) -> Iterator[None]:
    """While the block runs, ``import NAME`` raises ImportError for these not-yet-imported optional packages
    (a ``None`` in ``sys.modules`` is Python's documented way to say so); afterwards they import as usual."""
    absent = [name for name in optional if name not in sys.modules]
    for name in absent:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in absent:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


with _sync_only("aiohttp", "httpx"):
    from elastic_transport import ConnectionError as TransportConnectionError
    from elastic_transport import ConnectionTimeout, HttpHeaders, TlsError, TransportError, Urllib3HttpNode
    from elastic_transport._node import NodeApiResponse
    from elastic_transport.client_utils import DEFAULT, DefaultType
    from elasticsearch import ApiError, Elasticsearch, UnsupportedProductError

__all__ = [
    "Elasticsearch",
    "OpenSearchNode",
    "PlainJsonNode",
    "Requests",
    "client_options",
    "detect_flavor",
    "make_client",
    "status_error",
    "where_of",
]

# --- the client ---------------------------------------------------------------------------------------------

_PLAIN = {
    "application/vnd.elasticsearch+json": "application/json",
    "application/vnd.elasticsearch+x-ndjson": "application/x-ndjson",
}


def _plain_mimetype(value: str) -> str:
    base = value.split(";", 1)[0].strip()
    return _PLAIN.get(base, value)


class PlainJsonNode(Urllib3HttpNode):
    """Sends plain ``application/json``: the client's ``compatible-with=N`` media type makes OpenSearch-API
    servers answer 406, and Elasticsearch 7, 8 and 9 all accept plain JSON."""

    def perform_request(
        self,
        method: str,
        target: str,
        body: bytes | None = None,
        headers: HttpHeaders | None = None,
        request_timeout: DefaultType | float | None = DEFAULT,
    ) -> NodeApiResponse:
        plain = HttpHeaders(headers or {})
        for name in ("content-type", "accept"):
            if name in plain:
                plain[name] = _plain_mimetype(plain[name])
        return super().perform_request(method, target, body, plain, request_timeout)


class OpenSearchNode(PlainJsonNode):
    """For OpenSearch only: it never sends ``X-Elastic-Product``, so the client's product check would refuse
    every answer. The header is added to responses of a server we already identified as OpenSearch."""

    def perform_request(
        self,
        method: str,
        target: str,
        body: bytes | None = None,
        headers: HttpHeaders | None = None,
        request_timeout: DefaultType | float | None = DEFAULT,
    ) -> NodeApiResponse:
        response = super().perform_request(method, target, body, headers, request_timeout)
        if "x-elastic-product" not in response.meta.headers:
            response.meta.headers = response.meta.headers.copy()
            response.meta.headers["x-elastic-product"] = "Elasticsearch"
        return response


def client_options(
    settings: ElasticsearchSettings, *, verify_tls: bool = True, timeout_s: float = 10.0
) -> dict[str, Any]:
    """Keyword arguments for ``Elasticsearch(...)`` from the settings: auth, CA, TLS verification (on by
    default), no silent retries (requests stay countable; a 429 is reported, not hammered)."""
    options: dict[str, Any] = {
        "request_timeout": timeout_s,
        "max_retries": 0,
        "retry_on_status": (),
        "verify_certs": verify_tls,
    }
    if settings.cloud_id:
        options["cloud_id"] = settings.cloud_id
    elif settings.url:
        options["hosts"] = [settings.url]
    else:
        raise SourceError("no Elasticsearch/OpenSearch URL or cloud id configured", status="not_configured")
    if settings.api_key:
        options["api_key"] = settings.api_key.reveal()
    elif settings.bearer_token:
        options["bearer_auth"] = settings.bearer_token.reveal()
    elif settings.username:
        options["basic_auth"] = (settings.username, settings.password.reveal() if settings.password else "")
    if settings.ca_file:
        options["ca_certs"] = settings.ca_file
    if not verify_tls:
        options["ssl_show_warn"] = False
    return options


def make_client(
    settings: ElasticsearchSettings, *, flavor: str, verify_tls: bool = True, timeout_s: float = 10.0
) -> Elasticsearch:
    """A client for ``flavor`` ``elasticsearch`` or ``opensearch`` (see ``detect_flavor``)."""
    node_class = OpenSearchNode if flavor == "opensearch" else PlainJsonNode
    return Elasticsearch(node_class=node_class, **client_options(settings, verify_tls=verify_tls, timeout_s=timeout_s))


def detect_flavor(client: Elasticsearch) -> str:
    """``opensearch`` or ``elasticsearch`` from ``GET /``, asked below the client's product check."""
    response = client.transport.perform_request("GET", "/", headers={"accept": "application/json"})
    body: Mapping[str, Any] = response.body if isinstance(response.body, Mapping) else {}
    version = body.get("version")
    version = version if isinstance(version, Mapping) else {}
    distribution = str(version.get("distribution", "")).lower()
    return (
        "opensearch"
        if distribution == "opensearch" or "opensearch" in str(body.get("tagline", "")).lower()
        else "elasticsearch"
    )


# --- errors -------------------------------------------------------------------------------------------------

_STATUS_TEXT = {
    401: ("authentication failed (HTTP 401): check the API key, user or token", SourceForbidden),
    403: ("access denied (HTTP 403): the credentials may not read these indices", SourceForbidden),
    406: ("the server refused the request's content type (HTTP 406)", SourceError),
    429: ("the server is rate limiting requests (HTTP 429)", SourceError),
}


def status_error(status: int, where: str) -> SourceError:
    text, cls = _STATUS_TEXT.get(status, (f"the server answered HTTP {status}", SourceError))
    return cls(f"{where}: {text}")


def _source_error(exc: Exception, where: str) -> SourceError:
    """One scrubbed line per failure; messages are ours, so no URL credentials or keys can leak."""
    if isinstance(exc, UnsupportedProductError):
        return SourceError(f"{where} is neither Elasticsearch nor OpenSearch")
    if isinstance(exc, ApiError):
        return status_error(exc.meta.status, where)
    if isinstance(exc, ConnectionTimeout):
        return SourceTimeout(f"{where} did not answer in time")
    if isinstance(exc, TlsError):
        return SourceUnreachable(f"{where}: TLS handshake or certificate verification failed")
    if isinstance(exc, TransportConnectionError):
        return SourceUnreachable(f"cannot connect to {where}")
    return SourceError(f"{where}: {type(exc).__name__}")


def where_of(settings: ElasticsearchSettings) -> str:
    """The server as errors name it: scheme, host and port only (never a user, password or path)."""
    if settings.cloud_id:
        return "Elastic Cloud deployment"
    if not settings.url:
        return "the log store"
    parts = urlsplit(settings.url)
    return f"{parts.scheme}://{parts.hostname}:{parts.port}" if parts.port else f"{parts.scheme}://{parts.hostname}"


# --- requests -----------------------------------------------------------------------------------------------


class Requests:
    """Every request of one collector: the client made on first use, a count, a ``--debug`` line each."""

    def __init__(self, client: Elasticsearch | Callable[[], Elasticsearch], where: str) -> None:
        self._factory = client
        self._client: Elasticsearch | None = client if isinstance(client, Elasticsearch) else None
        self._lock = threading.Lock()  # the count and the log
        self._connecting = threading.Lock()  # one client even when the first requests start at once
        self.where = where
        self.count = 0
        self.log: list[str] = []

    def counted(self, extra: int = 1) -> None:
        """A request made outside ``call`` (the flavor probe)."""
        with self._lock:
            self.count += extra

    def call(self, request: Callable[[Elasticsearch], Any]) -> Any:
        number = 0
        try:
            client = self._connect()
            with self._lock:
                self.count += 1
                number = self.count
            response = request(client)
        except (ApiError, TransportError) as exc:
            with self._lock:
                self.log.append(f"request {number or self.count}: {type(exc).__name__}")
            raise _source_error(exc, self.where) from None
        meta = getattr(response, "meta", None)
        if meta is not None:  # for --debug: the outcome only; the query and the credentials stay out
            with self._lock:
                self.log.append(f"request {number}: {meta.status} in {meta.duration:.2f} s")
        return response.body if hasattr(response, "body") else response

    def search(self, index: str, body: Mapping[str, Any]) -> Mapping[str, Any]:
        params = dict(body)
        if "_source" in params:
            params["source"] = params.pop("_source")
        return self.call(lambda c: c.search(index=index, ignore_unavailable=True, allow_no_indices=True, **params))

    def msearch(self, searches: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        """Header and body pairs, sent at once; one answer per pair, or a SourceError (the first failed one)."""
        answer = self.call(lambda c: c.msearch(searches=list(searches)))
        responses = answer.get("responses") if isinstance(answer, Mapping) else None
        if not isinstance(responses, list) or len(responses) != len(searches) // 2:
            raise SourceError(f"{self.where}: the server's _msearch answer does not match its searches")
        for response in responses:
            if not isinstance(response, Mapping):
                raise SourceError(f"{self.where}: the server's _msearch answer does not match its searches")
            if "error" in response:
                raise status_error(int(response.get("status") or 500), self.where)
        return responses

    def field_caps(self, index: str, fields: Sequence[str]) -> tuple[Mapping[str, Any], list[str]]:
        """The fields' capabilities and the concrete indices asked about. ``include_unmapped`` lists, per field,
        the indices that do not map it: which shipper wrote which index is read from that."""
        # GET with the field list as a parameter: some OpenSearch-API servers read a POST's (empty) body instead.
        answer = self.call(
            lambda c: c.perform_request(
                "GET",
                f"/{index}/_field_caps",
                params={
                    "fields": ",".join(fields),
                    "include_unmapped": "true",
                    "ignore_unavailable": "true",
                    "allow_no_indices": "true",
                },
                headers={"accept": "application/json"},
            )
        )
        caps = answer.get("fields", {}) if isinstance(answer, Mapping) else {}
        indices = answer.get("indices", []) if isinstance(answer, Mapping) else []
        listed = [str(i) for i in indices] if isinstance(indices, list) else []
        return (caps if isinstance(caps, Mapping) else {}), listed

    def _connect(self) -> Elasticsearch:
        with self._connecting:
            if self._client is None:
                factory = self._factory
                assert callable(factory)
                self._client = factory()
            return self._client
