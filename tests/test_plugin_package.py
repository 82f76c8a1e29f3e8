"""A package outside `src/` (tests/plugin_pkg) adds a dialect and a store backend by entry
point and runs midturn's shipped conformance suite on that store, in its own pytest run.

The package goes on the import path the way an install leaves it, without building or
installing anything into this venv: its source folder, and a `.dist-info` whose
`entry_points.txt` is written from the entry points its own pyproject.toml declares, so
`importlib.metadata` (and so midturn's registries) finds exactly what that file says.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

from midturn.testing.conformance import StoreConformance

PACKAGE = Path(__file__).resolve().parent / "plugin_pkg"


def lay_out_metadata(site: Path) -> Path:
    """`site` holding `<name>-<version>.dist-info` from the package's pyproject.toml."""
    project = tomllib.loads((PACKAGE / "pyproject.toml").read_text())["project"]
    name, version = project["name"], project["version"]
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    lines = []
    for group, points in project["entry-points"].items():
        lines.append(f"[{group}]")
        lines += [f"{entry} = {target}" for entry, target in points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return site


def conformance_tests() -> set[str]:
    return {name for name in dir(StoreConformance) if name.startswith("test_")}


def test_a_package_outside_midturn_registers_a_dialect_and_a_store_that_passes_the_suite(
    tmp_path: Path,
) -> None:
    site = lay_out_metadata(tmp_path / "site")
    report = tmp_path / "report.xml"
    path = [str(site), str(PACKAGE / "src"), *sys.path]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    env.pop("PYTEST_ADDOPTS", None)
    command = [sys.executable, "-m", "pytest", "-q", "-c", str(PACKAGE / "pyproject.toml")]
    command += ["--rootdir", str(PACKAGE), f"--junitxml={report}", str(PACKAGE / "tests")]
    done = subprocess.run(
        command,
        cwd=PACKAGE,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr

    outcomes: dict[str, str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        skipped = case.find("skipped")
        outcome = "skipped" if skipped is not None else "passed"
        if skipped is not None:
            outcome += ": " + skipped.get("message", "")
        outcomes[f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"] = outcome
    suite = {
        f"TestScratchStore::{name}": outcomes.get(f"TestScratchStore::{name}")
        for name in conformance_tests()
    }
    assert None not in suite.values(), "the package's run left out tests of the suite"
    not_passed = {test: outcome for test, outcome in suite.items() if outcome != "passed"}
    # a memory-backed store declares no capability, so only those parts are skipped
    assert all("does not declare" in outcome for outcome in not_passed.values()), not_passed
    assert len(not_passed) < len(suite) // 4
    for own in (
        "test_backend::test_the_entry_points_registered_the_scheme_and_the_dialect",
        "test_backend::test_an_ask_in_the_poll_dialect_is_answered_and_read_back_as_a_poll",
    ):
        assert outcomes[own] == "passed"
