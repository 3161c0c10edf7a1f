"""Facts read from the text of one log line or block: ranks, traceback frames, CUDA OOM memory figures, PCI addresses.

Each parser takes text as the libraries print it and returns data, or None/() when the text does not hold the
fact; none of them raises on hostile input. The formats are those of the libraries' own sources:
- ranks: torch's log prefix ``[rank3]:`` and ``[Rank 3]`` (ProcessGroupNCCL), torchrun's ChildFailedError block
  (``rank : 3 (local_rank: 3)``), and ``RANK=3`` / ``LOCAL_RANK=3`` as launch scripts echo their environment;
- frames: CPython's ``File "x.py", line 12, in f`` followed by the source line;
- OOM figures: PyTorch 2.x (``GPU 0 has a total capacity of 79.10 GiB of which 1.06 GiB is free. ... Of the
  allocated memory 75.21 GiB is allocated by PyTorch, and 1.37 GiB is reserved by PyTorch but unallocated.``)
  and 1.x (``(GPU 0; 10.76 GiB total capacity; 9.45 GiB already allocated; 17.12 MiB free; 9.70 GiB reserved
  in total by PyTorch)``);
- PCI: the kernel's ``0004:00:00`` (domain:bus:device), dcgm-exporter's ``00000004:00:00.0`` and nvidia-smi's
  ``00000000:9B:00.0`` are one address.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_FRAMES = 5

# --- ranks ------------------------------------------------------------------------------------------------------

_GLOBAL_RANK = (
    re.compile(r"\[[Rr]ank ?(\d{1,9})\]"),  # [rank3]: and [Rank 3]
    re.compile(
        r"^[ \t]{0,64}rank[ \t]{0,64}:[ \t]{0,64}(\d{1,9})[ \t]{0,64}\(local_rank", re.MULTILINE
    ),  # torchrun's failure summary
    re.compile(r"(?<![A-Z_])(?:RANK|global_rank)[=:][ \t]{0,16}(\d{1,9})\b"),  # RANK=3, global_rank: 3 (not LOCAL_RANK)
)
_LOCAL_RANK = (
    re.compile(
        r"\blocal[_ ]rank[=:]?[ \t]{0,16}(\d{1,9})", re.IGNORECASE
    ),  # local_rank: 3, "local rank 3", LOCAL_RANK=3
)
_WORLD_SIZE = re.compile(r"\bworld[_ ]size[=:]?[ \t]{0,16}(\d{1,9})", re.IGNORECASE)


def global_rank_in(text: str) -> int | None:
    for regex in _GLOBAL_RANK:
        found = regex.search(text)
        if found:
            return int(found.group(1))
    return None


def local_rank_in(text: str) -> int | None:
    for regex in _LOCAL_RANK:
        found = regex.search(text)
        if found:
            return int(found.group(1))
    return None


def world_size_in(text: str) -> int | None:
    found = _WORLD_SIZE.search(text)
    return int(found.group(1)) if found else None


# --- traceback frames -------------------------------------------------------------------------------------------

_FRAME = re.compile(
    r'^[ \t]{0,64}(?:\[rank\d{1,9}\]:[ \t]{0,16})?File "(?P<file>[^"\n]{1,1024})", line (?P<line>\d{1,9})'
    r"(?:, in (?P<func>[^\n]{1,512}?))?[ \t]{0,64}\n"
    # the source line is indented under its File line; the exception's final line is not
    r"(?:(?:\[rank\d{1,9}\]:)?[ \t]{2,64}(?P<code>(?!File \")[^\n]{0,1024}\S)[ \t]{0,64}(?:\n|$))?",
    re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class Frame:
    file: str
    line: int
    function: str | None
    code: str | None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.code}" if self.code else f"{self.file}:{self.line}"


def frames_in(text: str, keep: int = MAX_FRAMES) -> tuple[Frame, ...]:
    """The innermost ``keep`` frames of the last traceback in ``text``, outermost first (as Python prints)."""
    start = text.rfind("Traceback (most recent call last)")
    if start < 0:
        return ()
    found = [
        Frame(m.group("file"), int(m.group("line")), (m.group("func") or "").strip() or None, m.group("code"))
        for m in _FRAME.finditer(text[start:] + "\n")
    ]
    return tuple(found[-keep:]) if keep > 0 else ()


# --- CUDA OOM ---------------------------------------------------------------------------------------------------

_UNITS = {
    "bytes": 1,
    "B": 1,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
}
# PyTorch writes "0 bytes" for nothing. The number is fenced by a lookbehind: tried from its first digit only,
# not from every digit of a long run (which made a search over a line of digits quadratic).
_SIZE = r"(?<![\d.])([\d.]{1,24}) ?(bytes|[KMGT]i?B|B)\b"
_OOM_FIELDS = {
    "tried": (re.compile(r"Tried to allocate " + _SIZE),),
    "total": (
        re.compile(r"total capaci?ty of " + _SIZE),  # 2.x (2.1 printed "capacty")
        re.compile(_SIZE + r" total capacity"),  # 1.x
    ),
    "free": (
        re.compile(r"of which " + _SIZE + r" is free"),
        re.compile(_SIZE + r" free"),
    ),
    "allocated": (
        re.compile(_SIZE + r" is allocated by PyTorch"),
        re.compile(_SIZE + r" already allocated"),
    ),
    "reserved_unallocated": (re.compile(_SIZE + r" is reserved by PyTorch but unallocated"),),
    "reserved": (re.compile(_SIZE + r" reserved in total by PyTorch"),),
}


@dataclass(frozen=True, slots=True)
class OomFigures:
    """Bytes, each None when the message does not give it."""

    tried: int | None
    total: int | None
    free: int | None
    allocated: int | None  # by PyTorch's caching allocator, in live tensors
    reserved_unallocated: int | None  # held by the allocator but not in tensors: fragmentation shows here

    @property
    def fragmented(self) -> bool | None:
        """True when the allocator holds at least the failed request in free blocks it cannot merge (PyTorch's
        own advice then: expandable_segments); False when it does not; None when the figures do not tell."""
        if self.reserved_unallocated is None or self.tried is None:
            return None
        return self.reserved_unallocated >= self.tried

    def advice(self) -> str:
        if self.fragmented:
            return (
                "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (the allocator held "
                f"{size(self.reserved_unallocated)} it could not use for the {size(self.tried)} asked)"
            )
        if self.fragmented is False:
            return (
                "lower the per-GPU batch size or enable activation checkpointing (tensors held "
                f"{size(self.allocated)} of {size(self.total)}; too little was free to fragment)"
            )
        return "lower the per-GPU batch size, or try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"


def oom_figures(text: str) -> OomFigures | None:
    if "out of memory" not in text.lower():
        return None
    got: dict[str, int | None] = {}
    for name, regexes in _OOM_FIELDS.items():
        got[name] = next((_bytes(m) for r in regexes if (m := r.search(text))), None)
    reserved = got.pop("reserved")
    if got["reserved_unallocated"] is None and reserved is not None and got["allocated"] is not None:
        got["reserved_unallocated"] = max(0, reserved - got["allocated"])  # 1.x gives the total reserved
    if all(v is None for v in got.values()):
        return None
    return OomFigures(**got)


def _bytes(found: re.Match[str]) -> int | None:
    try:
        return int(float(found.group(1)) * _UNITS[found.group(2)])
    except (ValueError, KeyError, OverflowError):
        return None


def size(value: int | None) -> str:
    if value is None:
        return "?"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= scale:
            return f"{value / scale:.2f} {unit}"
    return f"{value} B"


# --- PCI addresses ----------------------------------------------------------------------------------------------

_PCI = re.compile(r"^(?:PCI:)?([0-9a-fA-F]{1,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(?:\.[0-7])?$")


def pci_key(text: object) -> tuple[int, int, int] | None:
    """(domain, bus, device) of a PCI address in any of the spellings above; None for anything else."""
    found = _PCI.match(str(text or "").strip())
    if not found:
        return None
    return (int(found.group(1), 16), int(found.group(2), 16), int(found.group(3), 16))


def pci_text(key: tuple[int, int, int]) -> str:
    return f"{key[0]:04x}:{key[1]:02x}:{key[2]:02x}"
