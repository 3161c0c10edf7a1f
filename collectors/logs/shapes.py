"""Which shipper wrote which index, told by the index mappings (``_field_caps``), so that a store holding
Filebeat's data streams beside Fluent Bit's ``logstash-*`` and Vector's ``vector-*`` indices is read without a
flag: each concrete index goes to the first preset whose pod and namespace fields it maps, indices that map none
(a node's journald or syslog) to a node shape that knows every shipper's host and text fields, and each group's
time, text and host fields are narrowed to those its indices map (a sort on a field no index has orders nothing;
a text filter on every shipper's fields would multiply the signature clauses).

Pure: field caps in, shapes out.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, timedelta
from typing import Any

from whathappened.collectors.logs.fields import NODE_MAPPING, FieldMapping, Reading

from whathappened.model import Window

UNMAPPED = "unmapped"
NO_VALUE = frozenset({UNMAPPED, "object", "nested"})
# The default log pattern of the contract names Filebeat's and Elastic Agent's indices; where the user gave no
# pattern, the other shippers' default index names are searched too (ignored when absent).
SHIPPER_DEFAULT_INDICES: tuple[str, ...] = ("logstash-*", "vector-*", "fluentd*", "fluent-bit*", "ss4o_logs-*")
# Likewise for archived Events: Metricbeat's and Elastic Agent's metrics data stream and the names
# kubernetes-event-exporter's README and users give its index.
ARCHIVER_DEFAULT_INDICES: tuple[str, ...] = ("metrics-kubernetes.event-*", "kubernetes-events*", "k8s-events*")


def with_defaults(pattern: str, default: str, others: Sequence[str]) -> str:
    """The user's pattern; left at the contract's default, the other producers' default index names too."""
    return ",".join([pattern, *others]) if pattern == default else pattern


# A daily (or hourly) index's name ends in its day: Filebeat's and Logstash's ``%{+yyyy.MM.dd}``, Fluentd's and
# Fluent Bit's ``logstash_format``, Vector's ``%Y.%m.%d``, an archiver's ``kube-events-2026.11.20``. Each
# shipper names the index by the document's own timestamp (a line shipped late still goes to its own day), in
# UTC by default; a shipper set to local time (Fluentd's ``utc_index false``) is off by at most 14 hours, the
# widest UTC offset, which is the margin kept either side. A rollover or data stream backing index ends in its
# generation (``-000001``): its date is when it was created, not what it holds, so it is never left out.
_DAY = re.compile(r"(?<!\d)(\d{4})([.\-_]?)(\d{2})\2(\d{2})(?:[.\-_T]\d{2})?$")
DAY_MARGIN = timedelta(hours=14)
# A search's index list travels in its request line where it goes alone (Elasticsearch reads 4 KB by default).
MAX_INDEX_LIST = 3000


def day_of(index: str) -> date | None:
    """The day a daily index's name ends in; None when it ends in none (or in no real day)."""
    found = _DAY.search(index)
    if found is None:
        return None
    try:
        return date(int(found.group(1)), int(found.group(3)), int(found.group(4)))
    except ValueError:
        return None


@dataclass(frozen=True)
class Shape:
    """Indices written by one shipper (``index`` as sent in a search) and how to read them; ``members`` are the
    concrete indices behind ``index`` when field caps listed them."""

    index: str
    mapping: FieldMapping
    members: tuple[str, ...] = ()

    def index_for(self, window: Window) -> str:
        """``index`` without the daily indices whose day lies outside the window (widened by ``DAY_MARGIN``): a
        narrow window over a month of daily indices searches one or two days' worth, not thirty. The whole
        expression when nothing is left out, when nothing would be left, or when the list would not fit."""
        first = (window.start - DAY_MARGIN).astimezone(UTC).date()
        last = (window.end + DAY_MARGIN).astimezone(UTC).date()
        kept = [i for i in self.members if (day := day_of(i)) is None or first <= day <= last]
        names = list(dict.fromkeys(searched_as(i) for i in kept))
        listed = ",".join(names)
        if not kept or len(kept) == len(self.members) or len(listed) > MAX_INDEX_LIST:
            return self.index
        # only names the expression itself reaches: an index behind an alias may be closed to the user (a
        # filtered alias is how a tenant is given part of a store), its alias is not
        wanted = [part for part in self.index.split(",") if part and not part.startswith("-")]
        if not all(any(fnmatch.fnmatchcase(name, part) for part in wanted) for name in names):
            return self.index
        return listed


_BACKING = re.compile(r"^\.ds-(.+)-\d{4}\.\d{2}\.\d{2}-\d{6}$")


def searched_as(index: str) -> str:
    """The name a search gives ``index`` by: a data stream's backing index (``.ds-<stream>-<date>-<generation>``)
    by its stream, which is what a user's pattern and privileges name."""
    backing = _BACKING.match(index)
    return backing.group(1) if backing else index


def asked_fields(reading: Reading) -> list[str]:
    """Every field the detection and the exact-match resolution look at: each preset's scalar fields, their
    ``.keyword`` sub-fields, and its label fields by wildcard (one pattern a preset, however many labels)."""
    scalar: list[str] = []
    for mapping in (*reading.presets(), NODE_MAPPING):
        scalar += [mapping.pod, mapping.namespace, mapping.node, mapping.container]
        scalar += [*mapping.timestamp, *mapping.message, *mapping.host]
    scalar = list(dict.fromkeys(scalar))
    labels = list(dict.fromkeys(f"{m.labels}.*" for m in reading.presets()))
    return scalar + [f + ".keyword" for f in scalar] + labels


def mapped_in(caps: Mapping[str, Any], field: str, indices: Sequence[str]) -> set[str]:
    """The indices that map ``field`` as a value (an object such as ECS's ``log`` or ``host`` holds none): each
    type lists its indices, a type without the list covers every index."""
    types = caps.get(field)
    if not isinstance(types, Mapping):
        return set()
    found: set[str] = set()
    for name, cap in types.items():
        if name in NO_VALUE or not isinstance(cap, Mapping):
            continue
        listed = cap.get("indices")
        found |= set(listed) if isinstance(listed, list) else set(indices)
    return found & set(indices)


def shapes(caps: Mapping[str, Any], indices: Sequence[str], reading: Reading, pattern: str) -> tuple[Shape, ...]:
    """The store's shapes. A chosen preset reads the whole pattern; so does the only shape found (the request
    then names the user's pattern, not a list of indices); an empty store is read as the first preset. Indices
    that map no preset's pod field (a node's own logs) are read with the first shape, which then also knows
    every shipper's spelling of a node's host, text and time."""
    if reading.fixed is not None:
        return (Shape(pattern, reading.fixed, tuple(indices)),)
    presets = reading.presets()
    if not indices:
        return (Shape(pattern, presets[0]),)
    maps_pods = {p.name: mapped_in(caps, p.pod, indices) & mapped_in(caps, p.namespace, indices) for p in presets}
    groups: dict[str, list[str]] = {}
    nodes: list[str] = []
    for index in indices:
        owner = next((p.name for p in presets if index in maps_pods[p.name]), None)
        (nodes if owner is None else groups.setdefault(owner, [])).append(index)
    ordered = sorted(groups.items(), key=lambda item: [p.name for p in presets].index(item[0]))
    if not ordered:
        return (Shape(pattern, narrowed(_with_nodes(presets[0]), caps, nodes, indices), tuple(nodes)),)
    by_name = {p.name: p for p in presets}
    first, *rest = ordered
    found = [(_with_nodes(by_name[first[0]]), first[1] + nodes)] + [(by_name[n], m) for n, m in rest]
    if len(found) == 1:
        return (Shape(pattern, narrowed(found[0][0], caps, found[0][1], indices), tuple(indices)),)
    return tuple(
        Shape(compacted(members, indices), narrowed(m, caps, members, indices), tuple(members)) for m, members in found
    )


_SERIAL = re.compile(r"\d[\d.\-_]*$")  # a daily or rollover suffix: -2026.11.20, -000001, -2026.11.20-000003


def compacted(members: Sequence[str], indices: Sequence[str]) -> str:
    """``members`` as few patterns as name them exactly: ``logstash-2026.11.01`` ... ``logstash-2026.11.30`` become
    ``logstash-*`` when no other shape's index matches it (thirty days of daily indices would not fit the 4 KB
    request line a search's index list travels in)."""
    mine = set(members)
    others = [i for i in indices if i not in mine]
    names: dict[str, None] = {}
    for index in members:
        stem = _SERIAL.sub("", index)
        wide = f"{stem}*" if stem and stem != index else index
        if wide not in names:  # each stem is checked against the other shapes' indices once
            clash = wide != index and any(fnmatch.fnmatchcase(o, wide) for o in others)
            names[index if clash else wide] = None
    return ",".join(names)


def _with_nodes(mapping: FieldMapping) -> FieldMapping:
    """``mapping`` that also reads a node's own documents in any shipper's spelling."""
    return replace(
        mapping,
        timestamp=tuple(dict.fromkeys((*mapping.timestamp, *NODE_MAPPING.timestamp))),
        message=tuple(dict.fromkeys((*mapping.message, *NODE_MAPPING.message))),
        host=tuple(dict.fromkeys((*mapping.host, *NODE_MAPPING.host))),
    )


def narrowed(
    mapping: FieldMapping, caps: Mapping[str, Any], members: Sequence[str], indices: Sequence[str]
) -> FieldMapping:
    """``mapping`` with its time, text and host spellings cut to those the member indices map (in order; the
    first kept when none is)."""

    def keep(paths: tuple[str, ...]) -> tuple[str, ...]:
        found = tuple(p for p in paths if mapped_in(caps, p, indices) & set(members))
        return found or paths[:1]

    return replace(mapping, timestamp=keep(mapping.timestamp), message=keep(mapping.message), host=keep(mapping.host))
