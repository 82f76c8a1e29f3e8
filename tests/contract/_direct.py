"""Until the dialect registry lands, `parse_ask` and `render` for the midturn dialect
straight from its parts (the same calls `midturn.parse_ask` makes through the registry)."""

from __future__ import annotations

from typing import Any

from midturn import Ask, AskResult, Limits, ToolOutput
from midturn.contract._validate import build_ask
from midturn.contract.dialects._midturn import MidturnDialect

_DIALECT = MidturnDialect()


def parse_ask(tool_input: Any, dialect: str = "midturn", *, limits: Limits | None = None) -> Ask:
    assert dialect == "midturn"
    canonical = _DIALECT.to_canonical(tool_input)
    return build_ask(canonical, limits=limits or _DIALECT.limits, dialect="midturn")


def render(result: AskResult, dialect: str = "midturn") -> ToolOutput:
    assert dialect == "midturn"
    return _DIALECT.render(result)
