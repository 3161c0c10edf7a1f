"""The Prometheus HTTP client: auth, CA, extra headers, retries, and a response hook that counts traffic.

prometheus-api-client is the one third-party client of the Prometheus side and lives here. Secrets stay in the
session (headers, auth), never in a URL or a message: URLs are shown without credentials.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import requests
from prometheus_api_client import PrometheusApiClientException, PrometheusConnect
from urllib3.util.retry import Retry

from whathappened.config import PrometheusSettings
from whathappened.errors import SourceError, SourceForbidden, SourceTimeout, SourceUnreachable

DEFAULT_TIMEOUT_S = 15.0


@dataclass
class Traffic:
    """What the session's response hook saw: requests, bytes, warnings, and each thread's last response."""

    count: int = 0
    bytes: int = 0
    warnings: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    last: threading.local = field(default_factory=threading.local)

    def hook(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        with self.lock:
            self.count += 1
            self.bytes += len(response.content)
            # for --debug: method, path and outcome only (queries can be long; credentials never travel here)
            method = response.request.method if response.request is not None else "?"
            self.log.append(
                f"{method} {urlsplit(response.url).path}: {response.status_code}, {len(response.content)} bytes, "
                f"{response.elapsed.total_seconds():.2f} s"
            )
        self.last.response = response
        if response.status_code == 200 and b'"warnings"' in response.content[:4096]:
            try:
                found = response.json().get("warnings") or []
            except ValueError:
                found = []
            with self.lock:
                self.warnings.extend(str(w) for w in found if str(w) not in self.warnings)


def make_client(
    settings: PrometheusSettings,
    verify_tls: bool = True,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    session: requests.Session | None = None,
) -> tuple[PrometheusConnect, Traffic]:
    """A client with auth, CA, extra headers and a response hook that counts traffic; secrets stay in the session."""
    if not settings.url:
        raise SourceError("no Prometheus URL configured", status="not_configured")
    session = session or requests.Session()  # a caller's session: its adapters, proxies and certificates
    if verify_tls and settings.ca_file:
        ca_file = Path(settings.ca_file).expanduser()
        if not ca_file.is_file():
            raise SourceError(f"the CA file {ca_file} does not exist")
        session.verify = str(ca_file)  # the cluster's own CA, for an in-cluster or private Prometheus
    else:
        session.verify = verify_tls
    headers = dict(settings.headers)
    token = settings.bearer_token.reveal() if settings.bearer_token else None
    if settings.bearer_token_file:
        try:
            token = Path(settings.bearer_token_file).expanduser().read_text().strip()
        except OSError as exc:
            raise SourceError(f"cannot read the bearer token file ({exc.strerror})") from None
    if token:
        headers["Authorization"] = f"Bearer {token}"
    traffic = Traffic()
    session.hooks["response"].append(traffic.hook)
    url, user, password = _split_credentials(settings.url)
    auth = (settings.username, settings.password.reveal() if settings.password else "") if settings.username else None
    if auth is None and user and not token:
        auth = (user, password)  # credentials written into the URL, as curl would take them
    # Queries are reads: retrying a POST once on a gateway error is safe.
    retry = Retry(
        total=1,
        connect=1,
        read=False,  # a read timeout is the answer: report it, do not wait twice
        status=1,
        backoff_factor=0.2,
        status_forcelist=(502, 503, 504),
        allowed_methods=frozenset({"GET", "POST"}),
        raise_on_status=False,
    )
    client = PrometheusConnect(
        url=url,
        headers=headers,
        disable_ssl=not verify_tls,
        retry=retry,
        auth=auth,
        session=session,
        timeout=timeout_s,
        method="POST",
    )
    return client, traffic


def _split_credentials(url: str) -> tuple[str, str, str]:
    """The URL without user:password, and those (URL-decoded): no request or message carries them in the URL."""
    parts = urlsplit(url.rstrip("/"))
    bare = public_url(url).rstrip("/") + (f"?{parts.query}" if parts.query else "")
    return bare, unquote(parts.username or ""), unquote(parts.password or "")


def public_url(url: str) -> str:
    """The URL without user:password, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def error_text(response: requests.Response | None) -> str:
    """The server's own error text (Prometheus' ``error`` field, or the start of a plain body)."""
    if response is None:
        return ""
    try:
        body = response.json()
        if isinstance(body, Mapping):
            kind, error = body.get("errorType"), body.get("error")
            return f"{kind}: {error}" if kind and error else str(error or "")[:300]
    except ValueError:
        pass
    return response.text.strip()[:300]


def answered(request: Callable[[], Any], url: str, traffic: Traffic) -> list[dict[str, Any]]:
    """The result of one query API call, or the SourceError that says in one line what went wrong."""
    try:
        result = request()
    except requests.exceptions.Timeout:
        raise SourceTimeout(f"Prometheus at {url} did not answer in time") from None
    except requests.exceptions.SSLError:
        raise SourceUnreachable(f"TLS handshake with {url} failed (certificate not trusted?)") from None
    except requests.exceptions.ConnectionError:
        raise SourceUnreachable(f"cannot connect to Prometheus at {url}") from None
    except PrometheusApiClientException:
        raise _http_error(url, traffic) from None
    except (ValueError, KeyError, TypeError):
        raise SourceError(f"Prometheus at {url} sent an answer that is not the query API's JSON") from None
    if not isinstance(result, list):
        raise SourceError(f"Prometheus at {url} sent an unexpected result type")
    return result


def _http_error(url: str, traffic: Traffic) -> SourceError:
    response: requests.Response | None = getattr(traffic.last, "response", None)
    status = response.status_code if response is not None else 0
    text = error_text(response)
    message = f"Prometheus at {url} answered HTTP {status}" + (f": {text}" if text else "")
    if status in (401, 403):
        return SourceForbidden(message)
    if status in (408, 504):
        return SourceTimeout(message)
    return SourceError(message)
