"""Same seed, same bytes; another seed, other identities."""

from __future__ import annotations

from pathlib import Path

from synth.catalog import SCENARIOS
from synth.ids import Ids
from synth.writer import write_recording


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_same_seed_writes_identical_bytes(tmp_path: Path) -> None:
    for run in ("a", "b"):
        write_recording(SCENARIOS["node-failure"](Ids(7)), tmp_path / run, 7)
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


def test_another_seed_changes_identities_not_the_story(tmp_path: Path) -> None:
    one, other = SCENARIOS["nvlink-error"](Ids(1)), SCENARIOS["nvlink-error"](Ids(2))
    assert [p.name for p in one.pods] == [p.name for p in other.pods]  # names come from the framework
    assert [p.uid for p in one.pods] != [p.uid for p in other.pods]
    assert [n.name for n in one.nodes] != [n.name for n in other.nodes]  # GKE instance-group hashes differ
    assert [e["cause"] for e in one.meta.expected] == [e["cause"] for e in other.meta.expected]


def test_ids_are_stable_and_well_formed() -> None:
    ids = Ids(42)
    assert ids.uuid("pod", "x") == Ids(42).uuid("pod", "x") != Ids(43).uuid("pod", "x")
    assert [len(part) for part in ids.uuid("a").split("-")] == [8, 4, 4, 4, 12]
    assert ids.gpu_uuid("n", 0).startswith("GPU-")
    assert len(ids.suffix("s")) == 5 and ids.suffix("s").isalnum()
    assert 3 <= ids.number(3, 5, "k") <= 5
