"""Writing what the live sources fetched as a snapshot folder in the scenario format.

Each live collector knows its own payload format and writes its part (``export_snapshot``); this module adds
the scenario.yaml that names the experiment, namespace and window, so ``--snapshot`` can replay it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml

from whathappened.errors import WhathappenedError
from whathappened.model import Window
from whathappened.scope import Collector, Scope
from whathappened.timeutils import isoformat, now, parse_time


def write_snapshot(folder: Path, collectors: Sequence[Collector], scope: Scope) -> list[str]:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WhathappenedError(f"cannot create {folder}: {exc.strerror}") from exc
    query = scope.query
    for collector in collectors:
        export = getattr(collector, "export_snapshot", None)
        if export is not None:
            export(folder)
    label_key = next(
        (k for k in query.label_keys for p in scope.pods if p.labels.get(k) == query.experiment),
        query.label_keys[0],
    )
    spec = {
        "name": query.experiment,
        "description": f"Recorded by whathappened collect at {isoformat(now())}.",
        "experiment": query.experiment,
        "namespace": query.namespace or (scope.namespaces[0] if scope.namespaces else ""),
        "label_key": label_key,
        "window": {"start": isoformat(query.window.start), "end": isoformat(query.window.end)},
        "captured_at": isoformat(now()),
        "expected": [],
    }
    (folder / "scenario.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def recorded_window(folder: Path) -> Window | None:
    """The window a snapshot folder was recorded for (its scenario.yaml), so replaying it needs no flags;
    None when the folder does not say or says it badly (the caller falls back to the usual default)."""
    try:
        spec = yaml.safe_load((folder / "scenario.yaml").read_text(encoding="utf-8"))
        window = spec["window"]
        start, end = parse_time(str(window["start"])), parse_time(str(window["end"]))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, TypeError, KeyError, ValueError, WhathappenedError):
        return None
    return Window(start, end) if start < end else None
