"""A normal (non-editable) install lays collectors/, exporters/ and dashboards/ inside the package, with data."""

import subprocess
import sys

from tests.support import REPO


def test_normal_install_imports_and_explains_the_demo(tmp_path):
    target = tmp_path / "site"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(REPO),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    for part in (
        "collectors/snapshot.py",
        "exporters/catalog.py",
        "dashboards/__init__.py",
        "schema/whathappened-v1.schema.json",
        "render/assets/report.js",
    ):
        assert (target / "whathappened" / part).is_file(), part
    assert list((target / "whathappened" / "data" / "incidents").glob("*/scenario.yaml"))
    # -I: isolated, so the source tree and the editable install cannot stand in for the installed copy.
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import whathappened, whathappened.collectors.snapshot, whathappened.exporters.catalog;"
        "assert whathappened.__file__.startswith(sys.argv[1]), whathappened.__file__;"
        "from whathappened.cli.main import run; run(['demo', '--output', 'json'])"
    )
    demo = subprocess.run(
        [sys.executable, "-I", "-c", code, str(target)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert '"root_cause": {' in demo.stdout
