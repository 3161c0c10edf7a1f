"""NVIDIA's Xid codes as the report reads them: the one catalog the Prometheus signals (the text of an Xid gauge
without dcgm-exporter's err_msg), the correlator (which family explains a death) and the docs use.

Each code's meaning is the text dcgm-exporter writes into its ``err_msg`` label where it has one
(internal/pkg/collector/xid_errors.go), else the meaning in NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors
and its spreadsheet). Its family says how a death that follows it is explained, after the catalog's immediate
action:
- ``fallen-off-bus`` (79): the GPU is gone from the bus;
- ``memory``: uncorrectable ECC, HBM or SRAM errors;
- ``nvlink``: 74 and NVLink5's 144 to 150;
- ``hardware``: codes whose action is a GPU reset or a node reboot (69, a graphics engine class error, is one:
  NVIDIA's device plugin takes the GPU out for it);
- ``application``: 13, 31, 43, the catalog's RESTART_APP / IGNORE, "typically an application-level bug": the GPU
  stays healthy;
- ``corrected``: 63 (a row remap event) and 92 (single-bit errors): corrected, they end no work;
- ``sympathetic``: 45, a cleanup after another Xid (the driver names the other in "caused by previous Xid N");
- ``other``: known, and explaining nothing by itself (8, 121, 136, 137, 155, 156).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType


class Family(StrEnum):
    FALLEN_OFF_BUS = "fallen-off-bus"
    MEMORY = "memory"
    NVLINK = "nvlink"
    HARDWARE = "hardware"
    APPLICATION = "application"
    CORRECTED = "corrected"
    SYMPATHETIC = "sympathetic"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Xid:
    code: int
    meaning: str
    family: Family


_F = Family
_ROWS: tuple[Xid, ...] = (
    Xid(8, "GPU stopped processing", _F.OTHER),
    Xid(13, "Graphics Engine Exception", _F.APPLICATION),
    Xid(31, "GPU memory page fault", _F.APPLICATION),
    Xid(32, "Invalid or corrupted push buffer stream", _F.HARDWARE),
    Xid(43, "GPU stopped processing", _F.APPLICATION),
    Xid(45, "Preemptive cleanup, due to previous errors", _F.SYMPATHETIC),
    Xid(46, "GPU stopped processing", _F.HARDWARE),
    Xid(48, "Double Bit ECC Error", _F.MEMORY),
    Xid(54, "Auxiliary power is not connected to the GPU board", _F.HARDWARE),
    Xid(56, "Display Engine error", _F.HARDWARE),
    Xid(57, "Error programming video memory interface", _F.HARDWARE),
    Xid(58, "Unstable video memory interface detected", _F.HARDWARE),
    Xid(59, "Internal micro-controller error (older drivers)", _F.HARDWARE),
    Xid(61, "Internal micro-controller breakpoint/warning", _F.HARDWARE),
    Xid(62, "Internal micro-controller halt", _F.HARDWARE),
    Xid(63, "ECC page retirement or row remapping recording event", _F.CORRECTED),
    Xid(64, "ECC page retirement or row remapper recording failure", _F.MEMORY),
    Xid(69, "Graphics Engine class error", _F.HARDWARE),
    Xid(74, "NVLINK Error", _F.NVLINK),
    Xid(79, "GPU has fallen off the bus", _F.FALLEN_OFF_BUS),
    Xid(92, "High single-bit ECC error rate", _F.CORRECTED),
    Xid(94, "Contained ECC error", _F.MEMORY),
    Xid(95, "Uncontained ECC error", _F.MEMORY),
    Xid(109, "Context Switch Timeout Error", _F.HARDWARE),
    Xid(110, "Security Fault Error", _F.HARDWARE),
    Xid(119, "GSP RPC Timeout", _F.HARDWARE),
    Xid(120, "GSP Error", _F.HARDWARE),
    Xid(121, "C2C Link Error", _F.OTHER),
    Xid(122, "SPI PMU RPC Read Failure", _F.HARDWARE),
    Xid(123, "SPI PMU RPC Write Failure", _F.HARDWARE),
    Xid(136, "Link Training Failed", _F.OTHER),
    Xid(137, "NVLink Privilege Error", _F.OTHER),
    Xid(140, "Unrecovered ECC Error", _F.MEMORY),
    Xid(143, "GPU Initialization Failure", _F.HARDWARE),
    Xid(144, "NVLINK: Saw Error", _F.NVLINK),
    Xid(145, "NVLINK: RLW Error", _F.NVLINK),
    Xid(146, "NVLINK: TLW Error", _F.NVLINK),
    Xid(147, "NVLINK: TREX Error", _F.NVLINK),
    Xid(148, "NVLINK: NVLPW_CTRL Error", _F.NVLINK),
    Xid(149, "NVLINK: NETIR Error", _F.NVLINK),
    Xid(150, "NVLINK: MSE Error", _F.NVLINK),
    Xid(154, "GPU Recovery Action Changed", _F.HARDWARE),
    Xid(155, "NVLINK: SW Defined Error", _F.OTHER),
    Xid(156, "Resource Retirement Event", _F.OTHER),
    Xid(157, "Resource Retirement Failure", _F.HARDWARE),
    Xid(158, "GPU Fatal Timeout", _F.HARDWARE),
    Xid(171, "Uncorrectable DRAM error", _F.MEMORY),
    Xid(172, "Uncorrectable SRAM error", _F.MEMORY),
)
CATALOG: Mapping[int, Xid] = MappingProxyType({row.code: row for row in _ROWS})


def meaning(code: int | None) -> str | None:
    row = CATALOG.get(code) if code is not None else None
    return row.meaning if row is not None else None


def codes(family: Family) -> frozenset[int]:
    """Every code of one family."""
    return frozenset(row.code for row in _ROWS if row.family is family)
