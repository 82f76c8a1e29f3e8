"""A real `mcp` server whose tool elicits (tests/_eliciting_server.py: a `Resolve` that
returns `Elicit`, pushed as `elicitation/create` on a legacy session, returned as
`InputRequiredResult` on a 2026-07-28 one), the person's scripted replies and what the
tool must return for each, and the two sides (a `Runtime`, a live gateway): shared by the
tests of the three client handlers (mcp `Client`, pydantic-ai `MCPToolset`, Strands
`MCPClient`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests._eliciting_server import eliciting_server
from tests._servers import start_gateway

from midturn import AsyncClient, Runtime, open_store
from midturn.testing import answer, skip, stop_turn

SESSION = "agent"
__all__ = ["CASES", "SESSION", "doc_blocks", "eliciting_server", "run_example", "sides"]


# (the person's step, the tool's JSON result): accept with a choice and a multi-select,
# decline (the person skipped the form), cancel (the person stopped the turn instead).
CASES: dict[str, tuple[Any, dict[str, Any]]] = {
    "accept": (
        answer({"answers": {"target": "production", "regions": ["eu", "ap"]}}),
        {"action": "accept", "target": "production", "regions": ["eu", "ap"]},
    ),
    "decline": (skip(), {"action": "decline"}),
    "cancel": (stop_turn(), {"action": "cancel"}),
}


PAGE = Path(__file__).resolve().parents[1] / "docs" / "mcp.md"
_BLOCK = re.compile(r"<!-- runnable(?:: (?P<file>[\w.]+))? -->\n```python\n(?P<code>.*?)```", re.S)
_PRINTS = re.compile(r"print\(.*\)\s+# (?P<expected>.+)$", re.M)


def doc_blocks() -> tuple[dict[str, str], list[str]]:
    """docs/mcp.md's "Answering other MCP servers' elicitations": the files its blocks
    name (`<!-- runnable: deployer.py -->`) and its runnable examples, in order."""
    files: dict[str, str] = {}
    examples: list[str] = []
    section = PAGE.read_text().split("## Answering other MCP servers' elicitations", 1)[1]
    for match in _BLOCK.finditer(section.split("\n## ", 1)[0]):
        if match["file"]:
            files[match["file"]] = match["code"]
        else:
            examples.append(match["code"])
    return files, examples


def run_example(code: str, files: dict[str, str], folder: Path) -> None:
    """Run one example as written in a fresh Python, beside `files`; it must print what
    its `print(...)  # ...` comment says."""
    for name, text in files.items():
        (folder / name).write_text(text)
    expected = _PRINTS.search(code)
    assert expected is not None, "every example prints what its comment says"
    env = {**os.environ, "PYTHONPATH": str(folder)}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == expected["expected"].strip()


@asynccontextmanager
async def sides(where: str, tmp_path: Path) -> AsyncIterator[tuple[str, Any, Any]]:
    """`(session_id, asker, answerer)`: a `Runtime` on SQLite, or a live gateway on
    SQLite with a session's agent token asking and its answer token answering."""
    db = f"sqlite:///{tmp_path}/midturn.db"
    if where == "runtime":
        async with open_store(db) as store, Runtime(store) as runtime:
            yield SESSION, runtime, runtime
        return
    gateway = start_gateway(db, "admin-token-for-elicitation-tests")
    try:
        async with AsyncClient(gateway.url, gateway.admin_token) as admin:
            session = await admin.create_session({"name": "agent"})
            async with (
                AsyncClient(gateway.url, session.agent_token) as agent,
                AsyncClient(gateway.url, session.answer_token) as person,
            ):
                yield session.session_id, agent, person
    finally:
        gateway.stop()
