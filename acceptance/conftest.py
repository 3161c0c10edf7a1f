"""The acceptance suite: the shared scenarios (``../shared/scenarios``, beside the repository) and the project's
own, explained by the installed CLI live and from snapshots. Run by ``make acceptance``; the servers and doubles
are the test suite's session fixtures."""

from pathlib import Path

from acceptance.shared import SHARED_SCENARIOS_DIR

if not SHARED_SCENARIOS_DIR.is_dir():  # fail loudly at collection, naming the folder: an empty suite must never pass
    raise FileNotFoundError(
        f"the acceptance suite needs the shared scenarios at {SHARED_SCENARIOS_DIR} (a folder beside the repository)"
    )

pytest_plugins = sorted(
    f"tests.fixtures.{module.stem}"
    for module in (Path(__file__).parents[1] / "tests" / "fixtures").glob("*.py")
    if not module.name.startswith("_")
)
