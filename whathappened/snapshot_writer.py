"""Writing what the live sources fetched as a snapshot folder in the scenario format.

Each live collector knows its own payload format and writes its part (``export_snapshot``); this module adds
the scenario.yaml that names the experiment, namespace and window, so ``--snapshot`` can replay it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml

from whathappened.errors import WhathappenedError
from whathappened.gather import Gathered
from whathappened.scope import Collector
from whathappened.timeutils import isoformat, now


def write_snapshot(folder: Path, collectors: Sequence[Collector], gathered: Gathered) -> list[str]:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WhathappenedError(f"cannot create {folder}: {exc.strerror}") from exc
    query = gathered.scope.query
    for collector in collectors:
        export = getattr(collector, "export_snapshot", None)
        if export is not None:
            export(folder)
    label_key = next(
        (k for k in query.label_keys for p in gathered.scope.pods if p.labels.get(k) == query.experiment),
        query.label_keys[0],
    )
    spec = {
        "name": query.experiment,
        "description": f"Recorded by whathappened collect at {isoformat(now())}.",
        "experiment": query.experiment,
        "namespace": query.namespace or (gathered.scope.namespaces[0] if gathered.scope.namespaces else ""),
        "label_key": label_key,
        "window": {"start": isoformat(query.window.start), "end": isoformat(query.window.end)},
        "captured_at": isoformat(now()),
        "expected": [],
    }
    (folder / "scenario.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
