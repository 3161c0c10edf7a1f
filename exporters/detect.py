"""Which cloud this host runs in, and which Kubernetes node it is.

Detection asks the metadata service itself, in the one way each cloud answers and the others do not: GCE sets a
``Metadata-Flavor: Google`` response header, Azure answers ``/metadata/instance`` only with ``Metadata: true``,
and AWS hands out an IMDSv2 token. All three listen on 169.254.169.254, so a connection failure there means none
of them does and detection stops at once instead of timing out three times. When no ``--metadata-url`` is given,
the DMI vendor string (no network at all) is tried first.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Mapping
from pathlib import Path

import httpx
from whathappened.exporters import aws, azure, gcp
from whathappened.exporters._metadata_http import DEFAULT_BASE_URL, request

from whathappened.errors import SourceError, SourceTimeout, SourceUnreachable

DMI_VENDOR = Path("/sys/class/dmi/id/sys_vendor")
_DMI_HINTS = {"microsoft corporation": "azure", "amazon ec2": "aws", "google": "gcp"}


def provider_from_dmi(path: Path = DMI_VENDOR) -> str | None:
    try:
        vendor = path.read_text().strip().casefold()
    except OSError:
        return None
    return _DMI_HINTS.get(vendor)


def _is_gcp(client: httpx.Client, base: str) -> bool:
    response = request(client, "GET", f"{base}{gcp.INSTANCE_PATH}id", headers=gcp.HEADERS, missing_ok=True)
    return response is not None and response.headers.get("Metadata-Flavor") == "Google"


def _is_azure(client: httpx.Client, base: str) -> bool:
    params = {"api-version": azure.COMPUTE_API_VERSION, "format": "json"}
    response = request(
        client, "GET", f"{base}{azure.COMPUTE_PATH}", headers=azure.HEADERS, params=params, missing_ok=True
    )
    return response is not None


def _is_aws(client: httpx.Client, base: str) -> bool:
    headers = {aws.TOKEN_TTL_HEADER: "60"}
    response = request(client, "PUT", f"{base}{aws.TOKEN_PATH}", headers=headers, missing_ok=True)
    return response is not None and bool(response.text.strip())


_PROBES: tuple[tuple[str, Callable[[httpx.Client, str], bool]], ...] = (
    ("gcp", _is_gcp),
    ("azure", _is_azure),
    ("aws", _is_aws),
)


def detect_provider(client: httpx.Client, base_url: str | None = None, dmi: Path = DMI_VENDOR) -> str:
    """``azure``, ``aws`` or ``gcp``; SourceUnreachable when no metadata service answers."""
    if base_url is None:
        hint = provider_from_dmi(dmi)
        if hint is not None:
            return hint
    base = (base_url or DEFAULT_BASE_URL).rstrip("/")
    for name, probe in _PROBES:
        try:
            if probe(client, base):
                return name
        except (SourceUnreachable, SourceTimeout):
            raise
        except SourceError:
            continue  # this cloud's API answered "no" (400, 403, 405...): try the next one
    raise SourceUnreachable(f"no cloud metadata service (Azure, AWS, GCE) answered at {httpx.URL(base).host}")


def node_name(
    flag: str | None, env: Mapping[str, str] | None = None, hostname: Callable[[], str] = socket.gethostname
) -> str:
    """``--node``, then ``NODE_NAME`` (the Downward API sets it in deploy/), then the host name."""
    environ = os.environ if env is None else env
    return flag or environ.get("NODE_NAME") or hostname()
