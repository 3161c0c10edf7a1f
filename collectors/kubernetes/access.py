"""What the Kubernetes collector may do and how it says what went wrong; no client library imported here.

``PERMISSIONS`` is the collector's whole footprint on the API: deploy/base/rbac.yaml grants exactly these and a
test holds the two together. Error messages are built from what we were doing ("cannot list events in
namespace research"), never from the transport's text, so no header, token or client key can reach them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from whathappened.errors import SourceError, SourceForbidden, SourceTimeout, SourceUnreachable


@dataclass(frozen=True, slots=True)
class Permission:
    group: str  # "" for the core API
    resource: str
    verbs: tuple[str, ...]


PERMISSIONS: tuple[Permission, ...] = (
    Permission("", "pods", ("list",)),
    Permission("", "pods/log", ("get",)),
    Permission("", "events", ("list",)),
    Permission("events.k8s.io", "events", ("list",)),  # only where core/v1 events are not readable
    Permission("", "nodes", ("get", "list")),
    Permission("", "namespaces", ("get",)),
)


@dataclass(frozen=True, slots=True)
class Call:
    """One request the collector makes, named as RBAC names it."""

    verb: str
    resource: str
    namespace: str | None = None
    group: str = ""

    def describe(self) -> str:
        where = f"in namespace {self.namespace}" if self.namespace else "at cluster scope"
        group = f" (API group {self.group})" if self.group else ""
        return f"{self.verb} {self.resource}{group} {where}"


class Expired(Exception):
    """410 Gone on a continue token: the list must start again."""


def retry_after(headers: Mapping[str, str] | None, default: float = 1.0) -> float:
    raw = (headers or {}).get("Retry-After") or (headers or {}).get("retry-after")
    try:
        return max(0.0, float(raw)) if raw is not None else default
    except ValueError:
        return default


def status_error(status: int, call: Call) -> Exception:
    """The exception for an HTTP error status while making ``call``."""
    if status == 401:
        return SourceForbidden(f"credentials rejected (401 Unauthorized): cannot {call.describe()}")
    if status == 403:
        return SourceForbidden(f"cannot {call.describe()} (403 Forbidden: grant it, see deploy/base/rbac.yaml)")
    if status == 410:
        return Expired()
    if status == 404:
        return SourceError(f"not found (404) while trying to {call.describe()}")
    if status == 429:
        return SourceTimeout(f"throttled (429) until past the deadline while trying to {call.describe()}")
    if status in (502, 503, 504):
        return SourceUnreachable(f"API server unavailable ({status}) while trying to {call.describe()}")
    return SourceError(f"API server answered {status} while trying to {call.describe()}")


def transport_error(kind: str, call: Call, server: str) -> SourceError:
    """``kind`` is refused | dns | timeout | tls | broken."""
    if kind == "timeout":
        return SourceTimeout(f"no answer from {server} in time while trying to {call.describe()}")
    if kind == "tls":
        return SourceError(f"TLS handshake with {server} failed while trying to {call.describe()}")
    reason = {"refused": "connection refused", "dns": "name not resolved", "broken": "connection broken"}[kind]
    return SourceUnreachable(f"cannot reach the Kubernetes API at {server} ({reason})")


def safe_server(url: str) -> str:
    """scheme://host:port of the API server, without any userinfo or path."""
    scheme, _, rest = url.partition("://")
    host = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    return f"{scheme}://{host}" if rest else url
