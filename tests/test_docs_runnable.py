"""Every Python block of the README and `docs/` marked runnable runs, as written, in a
fresh interpreter in an empty folder (docs/architecture.md#runnable-examples): the line
`<!-- runnable -->` right before a ```python fence marks it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARK = "<!-- runnable -->"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


def runnable_blocks() -> list[tuple[str, str]]:
    """(page:line, code) of every marked block."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block in BLOCK.finditer(text):
            before = text[: block.start()].rstrip("\n").rsplit("\n", 1)[-1]
            if before.strip() == MARK:
                line = text.count("\n", 0, block.start()) + 2
                found.append((f"{page.relative_to(ROOT)}:{line}", block.group(1)))
    return found


def test_the_marker_marks_only_python_blocks() -> None:
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines[:-1], 1):
            if line.strip() == MARK:
                where = f"{page.relative_to(ROOT)}:{number}"
                assert lines[number] == "```python", f"{where}: {MARK} must precede ```python"


def test_there_are_runnable_blocks() -> None:
    pages = {where.split(":")[0] for where, _ in runnable_blocks()}
    assert {"docs/testing.md", "docs/runtime.md"} <= pages


@pytest.mark.parametrize(
    ("where", "code"), [pytest.param(where, code, id=where) for where, code in runnable_blocks()]
)
def test_a_runnable_block_runs(where: str, code: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{where} failed:\n{done.stdout}\n{done.stderr}"
