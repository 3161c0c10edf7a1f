"""Session fixtures live in tests/fixtures/ (one module per real server) and tests/doubles/ (the server doubles and\nthe fixtures that start them); all load here."""

from pathlib import Path

pytest_plugins = sorted(
    f"tests.{folder}.{module.stem}"
    for folder in ("fixtures", "doubles")
    for module in (Path(__file__).parent / folder).glob("*.py")
    if not module.name.startswith(("_", "test_"))
)
