"""What every source's snapshot reader shares: the problems found while reading a recorded file (the file and its
line), shown as that source's detail so a bad line is named and everything else is still used."""

from __future__ import annotations

from pathlib import Path


class RecordedPart:
    """Shared bookkeeping: problems found while reading (file and line), shown as the source's detail."""

    name = "snapshot"

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.requests = 0
        self.problems: list[str] = []
        self.detail = ""

    def _problem(self, path: Path, what: str) -> None:
        self.problems.append(f"{path.relative_to(self.folder)}: {what}")
