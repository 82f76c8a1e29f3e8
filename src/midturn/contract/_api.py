"""The contract's public functions: parse an ask, parse an answer, render a result."""

from __future__ import annotations

from typing import Any

from midturn.contract._answers import parse_answer as _parse_answer
from midturn.contract._checks import NOT_TEXT, lone_surrogate_at
from midturn.contract._models import Ask, AskResult, Limits, ToolOutput
from midturn.contract._validate import build_ask
from midturn.contract.dialects import detect_dialect, get_dialect
from midturn.errors import InvalidAsk, Problem

__all__ = ["parse_answer", "parse_ask", "render"]


def parse_ask(tool_input: Any, dialect: str = "midturn", *, limits: Limits | None = None) -> Ask:
    """Normalize and strictly validate a model's tool input into an `Ask`.

    `dialect="auto"` detects the dialect from the input's shape. Raises `InvalidAsk` with
    every problem found, worded for the model to fix its call.
    """
    where = lone_surrogate_at(tool_input)
    if where is not None:
        raise InvalidAsk([Problem(where, NOT_TEXT)])
    chosen = detect_dialect(tool_input) if dialect == "auto" else get_dialect(dialect)
    canonical = chosen.to_canonical(tool_input)
    return build_ask(
        canonical,
        limits=limits or chosen.limits,
        dialect=chosen.name,
        secret_choices=chosen.secret_choices,
    )


def parse_answer(ask: Ask, payload: Any, *, limits: Limits | None = None) -> AskResult:
    """Read a client's answer leniently (docs/contract.md#answers). Raises `InvalidAnswer` only
    where there is no sound reading; the ask is then still pending. `limits` bounds what the
    person typed (`max_text_chars`: text, Other text, a redirect); pass the limits the ask
    was parsed under. The defaults apply when it is not given."""
    return _parse_answer(ask, payload, limits=limits)


def render(result: AskResult, dialect: str = "midturn") -> ToolOutput:
    """The tool output for the model, in the dialect's shape."""
    return get_dialect(dialect).render(result)
