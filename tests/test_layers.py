"""The import-linter contract (pyproject.toml, docs/architecture.md) holds on the code, and
it is a real check: a copy of the package with a store module that imports the runtime,
or a surface that imports another surface, breaks it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint(src: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` with the project's contract, on the package found under `src`."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(ROOT / "pyproject.toml")],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_code_keeps_the_layers(tmp_path: Path) -> None:
    done = lint(ROOT / "src", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 kept, 0 broken" in done.stdout


@pytest.mark.parametrize(
    ("module", "source", "broken"),
    [
        ("store/_probe.py", "import midturn.runtime\n", "midturn.store is not allowed to import"),
        ("tui/_probe.py", "import midturn.gateway\n", "midturn.tui is not allowed to import"),
        ("contract/_probe.py", "import midturn.store\n", "midturn.contract is not allowed"),
    ],
)
def test_an_import_against_the_layers_breaks_the_contract(
    tmp_path: Path, module: str, source: str, broken: str
) -> None:
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "midturn", copy / "midturn")
    (copy / "midturn" / module).write_text(source)
    done = lint(copy, tmp_path)
    assert done.returncode != 0
    assert broken in done.stdout
