"""docs/mcp.md, "Answering other MCP servers' elicitations": the server block is saved as
the file it names, and each runnable example runs as written in a fresh Python (offline),
printing what its comment says. The Strands example runs in the venv that has strands
(tests/strands_mcp)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests._eliciting import doc_blocks, run_example

FILES, EXAMPLES = doc_blocks()
HERE = [code for code in EXAMPLES if "strands" not in code]


def test_the_section_has_the_server_and_an_example_per_client() -> None:
    assert set(FILES) == {"deployer.py"}
    assert len(EXAMPLES) == 3
    for name in ("midturn.mcp", "pydantic_ai_mcp", "strands_mcp"):
        assert any(name in code for code in EXAMPLES), name


@pytest.mark.parametrize("index", range(len(HERE)))
def test_the_example_runs_as_written(tmp_path: Path, index: int) -> None:
    run_example(HERE[index], FILES, tmp_path)
