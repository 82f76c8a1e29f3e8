"""The dialects of SPEC §2.6 and their registry.

A dialect maps one product's question tool to the canonical contract and back. A host
registers the tool under one dialect by name; `dialect="auto"` picks the dialect whose
`matches()` scores the tool input highest (see each dialect's `matches` for the signals).
"""

from __future__ import annotations

from typing import Any

from midturn.contract.dialects._agentcore import AgentCoreDialect
from midturn.contract.dialects._base import Dialect
from midturn.contract.dialects._claude import ClaudeDialect
from midturn.contract.dialects._codex import CodexDialect
from midturn.contract.dialects._copilot import CopilotDialect
from midturn.contract.dialects._deepagents import DeepAgentsDialect
from midturn.contract.dialects._elicitation import ElicitationDialect, elicit_result
from midturn.contract.dialects._gemini import GeminiDialect
from midturn.contract.dialects._maka import MakaDialect
from midturn.contract.dialects._midturn import MidturnDialect
from midturn.contract.dialects._neo import NeoDialect
from midturn.contract.dialects._omp import OmpDialect
from midturn.contract.dialects._pi_legacy import PiLegacyDialect
from midturn.errors import InvalidAsk, Problem, UsageError

__all__ = ["DIALECTS", "Dialect", "detect_dialect", "elicit_result", "get_dialect"]

DIALECTS: dict[str, Dialect] = {
    dialect.name: dialect
    for dialect in (
        MidturnDialect(),
        ClaudeDialect(),
        MakaDialect(),
        OmpDialect(),
        NeoDialect(),
        AgentCoreDialect(),
        PiLegacyDialect(),
        GeminiDialect(),
        CodexDialect(),
        CopilotDialect(),
        DeepAgentsDialect(),
        ElicitationDialect(),
    )
}
"""Every dialect by name, in a fixed order: the seven of SPEC §2.6, then the later ones."""

_CANONICAL_SHAPE = (
    '{"questions": [{"question": "...", "header": "...", "options": [{"label": "...", '
    '"description": "..."}]}]} with 1-4 questions'
)


def get_dialect(name: str) -> Dialect:
    """The dialect registered under `name`; `UsageError` naming the known ones otherwise."""
    try:
        return DIALECTS[name]
    except (KeyError, TypeError):
        known = ", ".join(repr(known) for known in DIALECTS)
        raise UsageError(
            f"unknown dialect {name!r}; use one of {known}, or 'auto' to detect it from the "
            "tool input"
        ) from None


def detect_dialect(tool_input: Any) -> Dialect:
    """The dialect whose shape `tool_input` has, for `dialect="auto"`.

    The highest `matches()` score wins. No match, or a tie for the highest score, is an
    `InvalidAsk` worded for the model: it names the canonical shape to use instead."""
    scores = [(dialect.matches(tool_input), dialect) for dialect in DIALECTS.values()]
    best = max(score for score, _ in scores)
    winners = [dialect for score, dialect in scores if score == best]
    if best > 0 and len(winners) == 1:
        return winners[0]
    if best <= 0 and isinstance(tool_input, dict) and "questions" in tool_input:
        return DIALECTS["midturn"]  # its validation words what is wrong, question by question
    if best <= 0:
        reason = "the tool input has the shape of no question tool"
        if not isinstance(tool_input, dict):
            reason = "the tool input is not an object"
    else:
        names = " and ".join(dialect.name for dialect in winners)
        reason = f"the tool input fits the {names} shapes equally"
    raise InvalidAsk([Problem("", f"{reason}; give an object {_CANONICAL_SHAPE}")])
