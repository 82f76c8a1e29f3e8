"""Every Python block of the README and `docs/` marked runnable runs, as written, in a
fresh interpreter in an empty folder (docs/architecture.md#runnable-examples): the line
`<!-- runnable -->` right before a ```python fence marks it. A block marked
`<!-- runnable: NAME -->` is a file the page's examples import: it is written as NAME
beside them. A block that imports a library this environment lacks (strands lives in a
venv of its own, scripts/test) is left to the tests of that environment."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARK = "<!-- runnable -->"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)
FILE_MARK = re.compile(r"^<!-- runnable: (?P<name>[\w.]+) -->$")
IMPORTS = re.compile(r"^(?:from|import) (\w+)", re.M)


def page_files(page: Path) -> dict[str, str]:
    """The files a page's examples import: its blocks marked `<!-- runnable: NAME -->`."""
    text = page.read_text(encoding="utf-8")
    files = {}
    for block in BLOCK.finditer(text):
        before = text[: block.start()].rstrip("\n").rsplit("\n", 1)[-1]
        named = FILE_MARK.match(before.strip())
        if named:
            files[named["name"]] = block.group(1)
    return files


def _importable(code: str, files: dict[str, str]) -> bool:
    local = {name.removesuffix(".py") for name in files}
    return all(
        name in local or importlib.util.find_spec(name) is not None
        for name in IMPORTS.findall(code)
    )


def runnable_blocks() -> list[tuple[str, str]]:
    """(page:line, code) of every marked block."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block in BLOCK.finditer(text):
            before = text[: block.start()].rstrip("\n").rsplit("\n", 1)[-1]
            if before.strip() == MARK and _importable(block.group(1), page_files(page)):
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
    for name, text in page_files(ROOT / where.split(":")[0]).items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{where} failed:\n{done.stdout}\n{done.stderr}"
