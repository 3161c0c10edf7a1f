"""Deterministic identifiers: UUIDs, container ids, name suffixes and noise, all derived from a seed and a name."""

from __future__ import annotations

import hashlib
import random

_ALNUM = "bcdfghjklmnpqrstvwxz2456789"  # the alphabet Kubernetes uses for generateName suffixes


class Ids:
    """Every id comes from sha256(seed, purpose, name), so the same story always gets the same ids."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def _digest(self, *parts: object) -> bytes:
        text = "\x1f".join(str(p) for p in (self.seed, *parts))
        return hashlib.sha256(text.encode()).digest()

    def hex(self, *parts: object, length: int = 64) -> str:
        out = ""
        counter = 0
        while len(out) < length:
            out += self._digest(*parts, counter).hex()
            counter += 1
        return out[:length]

    def uuid(self, *parts: object) -> str:
        h = self.hex("uuid", *parts, length=32)
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def gpu_uuid(self, *parts: object) -> str:
        return "GPU-" + self.uuid("gpu", *parts)

    def suffix(self, *parts: object, length: int = 5) -> str:
        raw = self._digest("suffix", *parts)
        return "".join(_ALNUM[b % len(_ALNUM)] for b in raw[:length])

    def number(self, low: int, high: int, *parts: object) -> int:
        raw = int.from_bytes(self._digest("number", *parts)[:8], "big")
        return low + raw % (high - low + 1)

    def rng(self, *parts: object) -> random.Random:
        return random.Random(int.from_bytes(self._digest("rng", *parts)[:8], "big"))
