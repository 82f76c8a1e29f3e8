"""docs/adapters/plain-loops.md: each runnable example, executed with the real `anthropic`
and `openai` clients over `httpx2.MockTransport` (no network)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "adapters" / "plain-loops.md"
BLOCKS = re.findall(r"<!-- runnable -->\n```python\n(.*?)```", PAGE.read_text(), re.S)


@pytest.mark.parametrize(
    ("index", "client", "said"),
    [(0, "anthropic", "Set up on SQLite."), (1, "openai", "Kept the database; using SQLite.")],
)
def test_the_example_loop_runs(index: int, client: str, said: str) -> None:
    block = BLOCKS[index]
    assert f"import {client}" in block
    shown = subprocess.run(
        [sys.executable, "-W", "error", "-c", block],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == said


def test_the_page_has_both_examples() -> None:
    assert len(BLOCKS) == 2
