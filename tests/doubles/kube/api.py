"""The API semantics of the test double: discovery documents, list/get with selectors and pagination, logs."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tests.doubles.kube.selectors import FIELDS, SelectorError, field_selector, label_selector
from tests.doubles.kube.store import OWNERS, LogLine, Store

KINDS = {"pods": "Pod", "events": "Event", "nodes": "Node", "namespaces": "Namespace"}
NAMESPACED = {"pods", "events"}
READ_VERBS = ["get", "list", "watch"]
_OWNER_GROUPS = {group: version for group, version, _ in OWNERS.values()}
GONE_MESSAGE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list."
)
REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    410: "Expired",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
}


class ApiError(Exception):
    def __init__(self, code: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.headers = dict(headers or {})


def status_body(code: int, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": REASONS.get(code, "Unknown"),
        "code": code,
    }


@dataclass(frozen=True)
class Route:
    group: str  # "" for core, "events.k8s.io"
    resource: str
    namespace: str | None
    name: str | None
    subresource: str | None = None

    @property
    def plural(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource


def route(path: str) -> Route | None:
    parts = [p for p in path.split("/") if p]
    if parts[:2] == ["api", "v1"]:
        group, rest = "", parts[2:]
    elif parts[:3] == ["apis", "events.k8s.io", "v1"]:
        group, rest = "events.k8s.io", parts[3:]
    elif len(parts) > 3 and parts[0] == "apis" and _OWNER_GROUPS.get(parts[1]) == parts[2]:
        group, rest = parts[1], parts[3:]
    else:
        return None
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3:
        return None
    name = rest[1] if len(rest) > 1 else None
    return Route(group, rest[0], namespace, name, rest[2] if len(rest) > 2 else None)


def _resource(
    name: str, kind: str, namespaced: bool, short: list[str] | None = None, writes: tuple[str, ...] = ()
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "name": name,
        "singularName": kind.lower(),
        "namespaced": namespaced,
        "kind": kind,
        "verbs": [*READ_VERBS, *writes],
    }
    if short:
        doc["shortNames"] = short
    return doc


def discovery(path: str, host: str) -> dict[str, Any] | None:
    """The discovery documents, or None when ``path`` is not one."""
    cidrs = [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}]
    events_group = {
        "name": "events.k8s.io",
        "versions": [{"groupVersion": "events.k8s.io/v1", "version": "v1"}],
        "preferredVersion": {"groupVersion": "events.k8s.io/v1", "version": "v1"},
    }
    owner_groups = [
        {
            "name": group,
            "versions": [{"groupVersion": f"{group}/{version}", "version": version}],
            "preferredVersion": {"groupVersion": f"{group}/{version}", "version": version},
        }
        for group, version in _OWNER_GROUPS.items()
    ]
    docs: dict[str, dict[str, Any]] = {
        "/version": {
            "major": "1",
            "minor": "31",
            "gitVersion": "v1.31.0-whathappened-double",
            "platform": "linux/amd64",
        },
        "/api": {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": cidrs},
        "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": [events_group, *owner_groups]},
        "/apis/events.k8s.io": {"kind": "APIGroup", "apiVersion": "v1", **events_group},
        "/api/v1": {
            "kind": "APIResourceList",
            "groupVersion": "v1",
            "resources": [
                _resource("pods", "Pod", True, ["po"]),
                {"name": "pods/log", "singularName": "", "namespaced": True, "kind": "Pod", "verbs": ["get"]},
                _resource("events", "Event", True, ["ev"], ("create",)),
                _resource("nodes", "Node", False, ["no"]),
                _resource("namespaces", "Namespace", False, ["ns"]),
            ],
        },
        "/apis/events.k8s.io/v1": {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": "events.k8s.io/v1",
            "resources": [_resource("events", "Event", True, ["ev"])],
        },
    }
    for group in owner_groups:
        docs[f"/apis/{group['name']}"] = {"kind": "APIGroup", "apiVersion": "v1", **group}
        version = group["preferredVersion"]["groupVersion"]
        resources = [
            _resource(plural.split(".")[0], kind, True, writes=("patch",))
            for plural, (g, _, kind) in OWNERS.items()
            if g == group["name"]
        ]
        docs[f"/apis/{version}"] = {"kind": "APIResourceList", "groupVersion": version, "resources": resources}
    return docs.get(path.rstrip("/") or "/")


def _encode(token: Mapping[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(token).encode()).decode()


def _decode(token: str) -> dict[str, Any]:
    try:
        decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(token.encode()))
        return decoded
    except (ValueError, TypeError) as exc:
        raise ApiError(400, "continue key is not valid: illegal base64 data") from exc


def _view(store: Store, r: Route) -> list[dict[str, Any]]:
    if r.plural in OWNERS:
        owned = store.objects(r.plural)
        return owned if r.namespace is None else [o for o in owned if o["metadata"].get("namespace") == r.namespace]
    if r.resource not in KINDS or (r.group == "events.k8s.io" and r.resource != "events"):
        raise ApiError(404, "the server could not find the requested resource")
    objects = store.objects(r.resource)
    if r.namespace is not None:
        if r.resource not in NAMESPACED:
            raise ApiError(404, "the server could not find the requested resource")
        objects = [o for o in objects if o.get("metadata", {}).get("namespace") == r.namespace]
    if r.group == "events.k8s.io":
        objects = [store.as_v1(o) for o in objects]
    return objects


def _narrowed(store: Store, r: Route, params: Mapping[str, str]) -> list[dict[str, Any]]:
    """The view, cut down first through the involved-object index when the selector names one (speed only)."""
    selector = params.get("fieldSelector") or ""
    named = [
        t.split("=", 1)[1] for t in selector.split(",") if t.startswith(("involvedObject.name=", "regarding.name="))
    ]
    if r.resource != "events" or not named or "!" in selector:
        return _view(store, r)
    subset = store.events_about(named[0].lstrip("="))
    narrowed = [o for o in subset if r.namespace is None or o.get("metadata", {}).get("namespace") == r.namespace]
    return [store.as_v1(o) for o in narrowed] if r.group else narrowed


def _fields(r: Route) -> Mapping[str, str]:
    """The field selectors this list takes."""
    if r.plural in OWNERS:
        return FIELDS["owners"]
    return FIELDS["events.k8s.io" if r.group else r.resource] if r.resource in KINDS else {}


def list_objects(store: Store, r: Route, params: Mapping[str, str]) -> dict[str, Any]:
    matches = matcher(r, params)
    key = (r.group, r.resource, r.namespace, params.get("labelSelector"), params.get("fieldSelector"))
    matched = store.matched(key, lambda: [o for o in _narrowed(store, r, params) if matches(o)])
    start = 0
    if params.get("continue"):
        token = _decode(params["continue"])
        start = int(token.get("start", 0))
    limit = int(params.get("limit") or 0)
    page = matched[start : start + limit] if limit > 0 else matched[start:]
    metadata: dict[str, Any] = {"resourceVersion": store.resource_version}
    if limit > 0 and start + limit < len(matched):
        metadata["continue"] = _encode({"rv": store.resource_version, "start": start + limit})
        metadata["remainingItemCount"] = len(matched) - start - limit
    group, version, kind = OWNERS.get(r.plural) or (r.group, "v1", KINDS[r.resource])
    api_version = f"{group}/{version}" if group else "v1"
    return {"kind": f"{kind}List", "apiVersion": api_version, "metadata": metadata, "items": page}


def matcher(r: Route, params: Mapping[str, str]) -> Callable[[Mapping[str, Any]], bool]:
    """Whether one object belongs to this list (namespace, label and field selectors): what a watch streams."""
    fields = _fields(r)
    try:
        labels = label_selector(params.get("labelSelector"))
        wanted = field_selector(params.get("fieldSelector"), fields)
    except SelectorError as exc:
        raise ApiError(400, str(exc)) from exc

    def matches(obj: Mapping[str, Any]) -> bool:
        namespace = (obj.get("metadata") or {}).get("namespace")
        return (r.namespace is None or namespace == r.namespace) and labels(obj) and wanted(obj)

    return matches


def encode_list(listing: Mapping[str, Any], encode: Callable[[Mapping[str, Any]], bytes]) -> bytes:
    """``json.dumps(listing).encode()``, byte for byte, with each item's bytes from ``encode`` (cached)."""
    head = json.dumps({k: v for k, v in listing.items() if k != "items"})
    return head[:-1].encode() + b', "items": [' + b", ".join(encode(o) for o in listing["items"]) + b"]}"


def metadata_only(listing: Mapping[str, Any]) -> dict[str, Any]:
    """A list as the server serves it for ``Accept: ...;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1``."""
    items = [
        {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o.get("metadata", {})}
        for o in listing["items"]
    ]
    return {
        "kind": "PartialObjectMetadataList",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": listing["metadata"],
        "items": items,
    }


def get_object(store: Store, r: Route) -> dict[str, Any]:
    for obj in _view(store, Route(r.group, r.resource, r.namespace, None)):
        if obj.get("metadata", {}).get("name") == r.name:
            return obj
    raise ApiError(404, f'{r.plural} "{r.name}" not found')


def _instances(pod: Mapping[str, Any], container: str) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """The current and previous (lastState.terminated) instance of a container, as their status blocks."""
    statuses = pod.get("status") or {}
    for status in (statuses.get("initContainerStatuses") or []) + (statuses.get("containerStatuses") or []):
        if status.get("name") != container:
            continue
        state = status.get("state") or {}
        current = next((state[k] for k in ("running", "terminated") if state.get(k)), {})
        return current, (status.get("lastState") or {}).get("terminated") or {}
    return {}, {}


def _lines_of(lines: list[LogLine], instance: Mapping[str, Any]) -> list[LogLine]:
    """An instance's lines: by container id where the log store has them, else by its lifetime."""
    short = str(instance.get("containerID") or "").split("://")[-1]
    by_id = [line for line in lines if short and line.container_id == short]
    if by_id:
        return by_id
    start, end = instance.get("startedAt") or "", instance.get("finishedAt") or "9999"
    return [line for line in lines if start[:19] <= line.timestamp[:19] <= end[:19]]


def _nano(timestamp: str) -> str:
    head, _, tail = timestamp.rstrip("Z").partition(".")
    return f"{head}.{(tail or '0')[:9].ljust(9, '0')}Z"


def pod_log(store: Store, r: Route, params: Mapping[str, str]) -> str:
    pod = get_object(store, Route("", "pods", r.namespace, r.name))
    spec = pod.get("spec") or {}
    names = [c.get("name") for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])]
    default = ((pod.get("metadata") or {}).get("annotations") or {}).get("kubectl.kubernetes.io/default-container")
    regular = [c.get("name") for c in spec.get("containers") or []]
    container = params.get("container") or (regular[0] if len(regular) == 1 else default)
    if not container:
        raise ApiError(400, f"a container name must be specified for pod {r.name}, choose one of: {names}")
    if container not in names:
        raise ApiError(400, f"container {container} is not valid for pod {r.name}")
    current, last = _instances(pod, container)
    previous = params.get("previous") in ("true", "1")
    if previous and not last:
        raise ApiError(400, f'previous terminated container "{container}" in pod "{r.name}" not found')
    lines = _lines_of(
        store.logs.lines.get((r.namespace or "", r.name or "", container), []), last if previous else current
    )
    if params.get("tailLines"):
        lines = lines[-int(params["tailLines"]) :] if int(params["tailLines"]) > 0 else []
    stamp = params.get("timestamps") in ("true", "1")
    return "".join(f"{_nano(line.timestamp)} {line.message}\n" if stamp else f"{line.message}\n" for line in lines)
