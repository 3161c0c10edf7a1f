"""The one value type of the Prometheus side: a series with its samples, as a file or a query gave them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

_NO_LABELS: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Series:
    """``samples`` are ``(unix_seconds, value)`` in time order; labels exclude ``__name__``."""

    name: str
    labels: Mapping[str, str] = field(default_factory=lambda: _NO_LABELS, hash=False)
    samples: tuple[tuple[float, float], ...] = ()

    def label(self, *names: str) -> str | None:
        """The first of these labels that is set and not empty."""
        for name in names:
            value = self.labels.get(name)
            if value:
                return value
        return None
