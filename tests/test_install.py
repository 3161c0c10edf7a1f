"""A normal (non-editable) install lays collectors/, exporters/ and dashboards/ inside the package, with data."""

import subprocess
import sys
import zipfile

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
        "collectors/snapshot/folder.py",
        "exporters/catalog.py",
        "dashboards/__init__.py",
        "schema/whathappened-v1.schema.json",
        "render/assets/report.js",
    ):
        assert (target / "whathappened" / part).is_file(), part
    assert list((target / "whathappened" / "data" / "incidents").glob("*/scenario.yaml"))
    # every package folder of the source tree is installed (a new folder missing from pyproject.toml is caught)
    roots = {
        "whathappened": REPO / "whathappened",
        **{part: REPO / part for part in ("collectors", "exporters", "dashboards")},
    }
    for part, folder in roots.items():
        for init in folder.rglob("__init__.py"):
            inside = init.relative_to(folder)
            installed = target / "whathappened" / ("" if part == "whathappened" else part) / inside
            assert installed.is_file(), f"{part}/{inside} is not installed"
    # -I: isolated, so the source tree and the editable install cannot stand in for the installed copy.
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import whathappened, whathappened.collectors.snapshot.folder, whathappened.exporters.catalog;"
        "assert whathappened.__file__.startswith(sys.argv[1]), whathappened.__file__;"
        "from whathappened.cli.main import run; run(['demo', '--output', 'json'])"
    )
    demo = subprocess.run(
        [sys.executable, "-I", "-c", code, str(target)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert '"root_cause": {' in demo.stdout


def _requirements(wheel):
    """The wheel's own requirements (no extras), as distribution names."""
    import re

    with zipfile.ZipFile(wheel) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        lines = archive.read(metadata).decode().splitlines()
    wanted = [line.split(":", 1)[1].strip() for line in lines if line.startswith("Requires-Dist:")]
    return sorted({re.split(r"[<>=!~;\s\[]", r, maxsplit=1)[0] for r in wanted if "extra ==" not in r})


def _imported_top_levels(root):
    """Every top-level module the installed package's code imports, read from its source (no import runs)."""
    import ast

    found = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
    return found


def test_a_plain_clone_builds_a_clean_wheel_that_demos_and_needs_every_requirement(tmp_path):
    """Issue-free packaging, from a clone with nothing beside it: the wheel builds without a warning, holds no
    dependency its code never imports, installs, and its command explains the bundled demo."""
    import importlib.metadata
    import os
    import sysconfig

    clone = tmp_path / "alone" / "repo"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True, capture_output=True, timeout=120)
    assert [p.name for p in clone.parent.iterdir()] == ["repo"]  # nothing beside the clone
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), "."],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=clone,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    chatter = [line for line in (build.stdout + build.stderr).splitlines() if "warn" in line.lower()]
    assert chatter == [], chatter[:10]
    [wheel] = (tmp_path / "dist").glob("whathappened_gpu-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        held = {name.split("/")[0] for name in archive.namelist() if not name.split("/")[0].endswith(".dist-info")}
        python = [name for name in archive.namelist() if name.endswith(".py")]
    assert held == {"whathappened"}, held  # the generator (synth/), tests and benchmarks stay in the clone
    assert not [name for name in python if "/synth/" in name], "the incident generator must not ship"

    site = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    imported = _imported_top_levels(site / "whathappened")
    by_dist = importlib.metadata.packages_distributions()
    for requirement in _requirements(wheel):
        names = {
            top
            for top, dists in by_dist.items()
            if requirement.lower().replace("_", "-") in {d.lower().replace("_", "-") for d in dists}
        }
        assert names & imported, f"{requirement} is required but never imported (provides {sorted(names)})"
    assert "pandas" in _requirements(wheel)  # whathappened fleet's roll-ups; imported by that command only

    # the installed command, its dependencies from this environment, the wheel's code first on the path
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": os.pathsep.join([str(site), sysconfig.get_paths()["purelib"]]),
    }
    demo = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            "import sys; sys.path[:0] = sys.argv[1].split(':'); "
            "import whathappened; assert whathappened.__file__.startswith(sys.argv[2]), whathappened.__file__; "
            "from whathappened.cli.main import run; run(['demo'])",
            env["PYTHONPATH"],
            str(site),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**env, "COLUMNS": "100"},
    )
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert "ROOT CAUSE" in demo.stdout and "GPU fell off the bus" in demo.stdout
    assert not [line for line in (demo.stdout + demo.stderr).splitlines() if "warning" in line.lower()]
