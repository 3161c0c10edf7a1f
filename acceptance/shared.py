"""The shared acceptance scenarios: a folder beside the repository (``../shared/scenarios``) that the project's CI
has and a user's clone does not. Only the acceptance suite reads it; the tests read the project's own."""

from __future__ import annotations

from tests.support import REPO, SCENARIOS_DIR, Scenario, all_scenarios

SHARED_SCENARIOS_DIR = REPO.parent / "shared" / "scenarios"


def shared_scenarios() -> list[Scenario]:
    """The shared scenarios (the conftest has already failed, naming the folder, if they are missing)."""
    return all_scenarios(SHARED_SCENARIOS_DIR)


def own_scenarios() -> list[Scenario]:
    """The project's own incidents, explained alongside through the same CLI."""
    return all_scenarios(SCENARIOS_DIR)


def scenario_id(scenario: Scenario) -> str:
    """Test ids that tell a shared scenario from the project's own of the same name."""
    return f"{'own' if scenario.path.parent == SCENARIOS_DIR else 'shared'}/{scenario.name}"
