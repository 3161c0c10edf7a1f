"""Session fixtures live in tests/fixtures/, one module per real server or test double; all load here."""

from pathlib import Path

pytest_plugins = sorted(
    f"tests.fixtures.{module.stem}"
    for module in (Path(__file__).parent / "fixtures").glob("*.py")
    if not module.name.startswith("_")
)
