"""A streaming writer of gzip-compressed OpenMetrics text, as `promtool tsdb create-blocks-from openmetrics` reads it.

OpenMetrics wants each family's samples together and each series' samples in time order; the writer refuses a
family written twice. Compression runs on a second thread (zlib releases the GIL), so formatting the text and
compressing it use both cores when the scale benchmark writes hundreds of millions of bytes.
"""

from __future__ import annotations

import gzip
import queue
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType

_CHUNK = 1 << 22


def escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def labels_text(labels: Sequence[tuple[str, str]]) -> str:
    return ",".join(f'{k}="{escape(v)}"' for k, v in labels if v != "")


class _Sink:
    """Bytes go to a gzip stream on a background thread; `mtime=0` keeps the output byte-identical per seed."""

    def __init__(self, path: Path, level: int) -> None:
        self._file = path.open("wb")
        self._gz = gzip.GzipFile(filename="", mode="wb", fileobj=self._file, mtime=0, compresslevel=level)
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=8)
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while (data := self._queue.get()) is not None:
            self._gz.write(data)

    def put(self, data: bytes) -> None:
        self._queue.put(data)

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()
        self._gz.close()
        self._file.close()


class OpenMetricsWriter:
    def __init__(self, path: Path, level: int = 6) -> None:
        self._sink = _Sink(path, level)
        self._parts: list[str] = []
        self._size = 0
        self._families: set[str] = set()
        self.samples = 0

    def __enter__(self) -> OpenMetricsWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _emit(self, text: str) -> None:
        self._parts.append(text)
        self._size += len(text)
        if self._size >= _CHUNK:
            self._flush()

    def _flush(self) -> None:
        if self._parts:
            self._sink.put("".join(self._parts).encode())
            self._parts, self._size = [], 0

    def family(self, name: str, kind: str, help_text: str = "") -> None:
        if name in self._families:
            raise ValueError(f"family {name} written twice: OpenMetrics needs each family in one block")
        self._families.add(name)
        head = f"# HELP {name} {help_text}\n" if help_text else ""
        self._emit(f"{head}# TYPE {name} {kind}\n")

    def series(self, prefix: str, values: Iterable[str], stamps: Iterable[str]) -> None:
        """`prefix` is `name{labels} `, each stamp ` <seconds>\\n`; values and stamps pair up in time order."""
        lines = [prefix + v + s for v, s in zip(values, stamps, strict=True)]
        self.samples += len(lines)
        self._emit("".join(lines))

    def close(self) -> None:
        self._emit("# EOF\n")
        self._flush()
        self._sink.close()
