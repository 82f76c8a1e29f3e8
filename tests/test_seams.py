"""The seams hold (docs/ports.md): the question tool and `Turn` are wrappers over the
runtime's public methods (no import of the runtime module, no private attribute), and
the client and the terminal answerer know the ports, not the runtime."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "midturn"


def imported(path: Path) -> set[str]:
    """Every module `path` imports, including under `if TYPE_CHECKING:`."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


@pytest.mark.parametrize(
    ("module", "forbidden"),
    [
        ("runtime/_tool.py", "midturn.runtime"),
        ("runtime/_turns.py", "midturn.runtime"),
        ("testing/_responder.py", "midturn.runtime"),
        ("client/_async.py", "midturn.runtime"),
        ("client/__init__.py", "midturn.runtime"),
        ("tui/_answerer.py", "midturn.runtime"),
        ("tui/_answerer.py", "midturn.client"),
        ("contract/_elicit_asker.py", "midturn.runtime"),
        ("mcp/_client.py", "midturn.runtime"),
        ("adapters/pydantic_ai_mcp.py", "midturn.runtime"),
        ("adapters/pydantic_ai_mcp.py", "midturn.mcp"),
        ("adapters/strands_mcp.py", "midturn.runtime"),
        ("adapters/strands_mcp.py", "midturn.mcp"),
    ],
)
def test_a_wrapper_does_not_import_what_it_wraps(module: str, forbidden: str) -> None:
    found = {name for name in imported(SRC / module) if name.startswith(forbidden)}
    assert not found, f"{module} imports {sorted(found)}; code against the ports instead"


@pytest.mark.parametrize(
    "module",
    [
        "runtime/_tool.py",
        "runtime/_turns.py",
        "tui/_answerer.py",
        "contract/_elicit_asker.py",
        "mcp/_client.py",
        "adapters/pydantic_ai_mcp.py",
        "adapters/strands_mcp.py",
    ],
)
def test_a_wrapper_touches_no_private_attribute_of_what_it_wraps(module: str) -> None:
    private = [
        f"line {node.lineno}: .{node.attr}"
        for node in ast.walk(ast.parse((SRC / module).read_text()))
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id == "self")
    ]
    assert not private, f"{module} reaches into private attributes: {private}"
