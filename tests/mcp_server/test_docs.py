"""docs/mcp.md: every client snippet is valid, its command exists and `midturn`
accepts its arguments."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from midturn.cli import _parser

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"
BIN = Path(sys.executable).parent


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def _check_command(command: str, args: list[str]) -> None:
    assert shutil.which(command, path=str(BIN)) is not None, command
    parsed = _parser().parse_args(args)
    assert parsed.command == "mcp"


def _servers(config: dict[str, Any]) -> dict[str, Any]:
    servers = config.get("mcpServers", config.get("servers"))
    assert isinstance(servers, dict) and servers
    return servers


def test_every_json_snippet_is_a_server_config_that_runs_midturn_mcp() -> None:
    snippets = [block for block in _blocks("json")]
    assert len(snippets) >= 3  # Claude Desktop, Cursor, VS Code
    for snippet in snippets:
        config = json.loads(snippet)
        for entry in _servers(config).values():
            assert entry.get("type", "stdio") == "stdio"
            _check_command(entry["command"], entry["args"])


def test_the_vs_code_snippet_uses_its_servers_key() -> None:
    kinds = [next(iter(json.loads(block))) for block in _blocks("json")]
    assert kinds.count("mcpServers") == 2
    assert kinds.count("servers") == 1


@pytest.mark.parametrize("line", [b for b in _blocks("sh") if b.startswith("claude mcp add")])
def test_the_claude_code_commands(line: str) -> None:
    argv = shlex.split(line.strip())
    assert argv[:3] == ["claude", "mcp", "add"]
    if "--" in argv:
        command, *args = argv[argv.index("--") + 1 :]
        _check_command(command, args)
    else:
        assert argv[argv.index("--transport") + 1] == "http"
        assert any(arg.endswith("/mcp") and arg.startswith("http") for arg in argv)
        assert "Authorization: Bearer $MIDTURN_TOKEN" in argv
