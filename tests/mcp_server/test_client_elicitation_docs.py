"""docs/mcp.md, "Answering other MCP servers' elicitations": the server block is saved as
the file it names, and each runnable example runs as written in a fresh Python (offline),
printing what its comment says."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"
BLOCK = re.compile(r"<!-- runnable(?:: (?P<file>[\w.]+))? -->\n```python\n(?P<code>.*?)```", re.S)
PRINTS = re.compile(r"print\(.*\)\s+# (?P<expected>.+)$", re.M)


def blocks() -> tuple[dict[str, str], list[str]]:
    files: dict[str, str] = {}
    examples: list[str] = []
    section = PAGE.read_text().split("## Answering other MCP servers' elicitations", 1)[1]
    for match in BLOCK.finditer(section):
        if match["file"]:
            files[match["file"]] = match["code"]
        else:
            examples.append(match["code"])
    return files, examples


FILES, EXAMPLES = blocks()


def test_the_section_has_the_server_and_an_example_per_client() -> None:
    assert set(FILES) == {"deployer.py"}
    assert len(EXAMPLES) == 3
    for name in ("midturn.mcp", "pydantic_ai_mcp", "strands_mcp"):
        assert any(name in code for code in EXAMPLES), name


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_the_example_runs_as_written(tmp_path: Path, index: int) -> None:
    for name, code in FILES.items():
        (tmp_path / name).write_text(code)
    code = EXAMPLES[index]
    expected = PRINTS.search(code)
    assert expected is not None, "every example prints what its comment says"
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == expected["expected"].strip()
