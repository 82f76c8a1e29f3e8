"""The package's public names are exactly its `__all__`, and all importable (ruff's
RUF022 keeps every `__all__` sorted)."""

from __future__ import annotations

import importlib
import types

import pytest

import midturn

PUBLIC_MODULES = [
    "midturn",
    "midturn.errors",
    "midturn.contract",
    "midturn.runtime",
    "midturn.store",
    "midturn.client",
    "midturn.testing",
    "midturn.testing.conformance",
    "midturn.testing.pilot",
    "midturn.tui",
    "midturn.types",
]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_all_resolves(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert len(exported) == len(set(exported))
    for member in exported:
        assert hasattr(module, member), f"{name}.__all__ names {member!r}, which is missing"


def test_every_public_member_is_exported() -> None:
    """Also the names loaded on first use (`midturn.Runtime`, `midturn.Client`): `dir()`
    lists them before they are loaded."""
    public = {
        name
        for name in dir(midturn)
        if not name.startswith("_") and not isinstance(getattr(midturn, name), types.ModuleType)
    }
    assert public == set(midturn.__all__) - {"__version__"}


def test_spec_names_are_there() -> None:
    for name in [
        "parse_ask",
        "parse_answer",
        "render",
        "tool_spec",
        "SYSTEM_PROMPT",
        "open_store",
        "Client",
        "AsyncClient",
        "InvalidAsk",
        "InvalidAnswer",
        "Ask",
        "AskResult",
        "ToolOutput",
    ]:
        assert name in midturn.__all__
