"""The committed demo incidents and tests/scenarios are exactly what the generator makes now: they cannot drift.

Regenerate with `python -m synth demo` and `python -m synth scenarios`.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from synth.catalog import DEFAULT_SEED, DEMOS, DEMOS_DIR, SCENARIOS, SCENARIOS_DIR, Story
from synth.ids import Ids
from synth.writer import write_recording

CASES = [(name, story, SCENARIOS_DIR) for name, story in SCENARIOS.items()] + [
    (name, story, DEMOS_DIR) for name, story in DEMOS.items()
]


def _content(path: Path) -> bytes:
    # Compare what gzip holds, not its bytes: another zlib build may compress the same text differently.
    return gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()


@pytest.mark.parametrize(("name", "story", "root"), CASES, ids=[c[0] for c in CASES])
def test_committed_incident_matches_the_generator(name: str, story: Story, root: Path, tmp_path: Path) -> None:
    write_recording(story(Ids(DEFAULT_SEED)), tmp_path / name, DEFAULT_SEED)
    fresh = sorted(p.relative_to(tmp_path / name) for p in (tmp_path / name).rglob("*") if p.is_file())
    committed = sorted(p.relative_to(root / name) for p in (root / name).rglob("*") if p.is_file())
    assert fresh == committed, f"run `python -m synth {'demo' if root == DEMOS_DIR else 'scenarios'}`"
    for rel in fresh:
        assert _content(tmp_path / name / rel) == _content(root / name / rel), (
            f"{name}/{rel} drifted from the generator"
        )


def test_no_stray_folders() -> None:
    assert {p.name for p in SCENARIOS_DIR.iterdir() if p.is_dir()} == set(SCENARIOS)
    assert {p.name for p in DEMOS_DIR.iterdir() if p.is_dir()} == set(DEMOS)
