"""What the dialects share: reading the tool input's outer shape, the keys that mark one
product's shape for auto-detection, and the plain sentences for outcomes a product's own
result has no word for."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from midturn.contract._checks import kind_of
from midturn.errors import InvalidAsk, Problem

__all__ = [
    "CANONICAL_ASK_KEYS",
    "CANONICAL_QUESTION_KEYS",
    "PROCEED",
    "as_json",
    "map_questions",
    "multi_select_as_multi",
    "question_dicts",
    "require_object",
    "unescape_newlines",
]

PROCEED = "Proceed with your best judgement, state the assumptions you made, and do not ask again."

CANONICAL_QUESTION_KEYS = frozenset(
    {"kind", "min_choices", "max_choices", "allow_other", "secret", "placeholder"}
)
"""Question keys only the canonical (`midturn`) shape has."""

CANONICAL_ASK_KEYS = frozenset({"timeout_s", "on_timeout"})
"""Top-level keys only the canonical (`midturn`) shape has."""


def require_object(tool_input: Any, shape: str) -> dict[str, Any]:
    """The tool input as a dict, or `InvalidAsk` saying which object to give."""
    if isinstance(tool_input, dict):
        return tool_input
    raise InvalidAsk(
        [Problem("", f"the tool input is {kind_of(tool_input)}; give an object {shape}")]
    )


def map_questions(
    tool_input: dict[str, Any], mapper: Callable[[dict[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    """A shallow copy of `{questions: [...]}` with `mapper` applied to every question
    object; anything else is left as given for validation to word the problem."""
    questions = tool_input.get("questions")
    if not isinstance(questions, list):
        return dict(tool_input)
    mapped = [mapper(q) if isinstance(q, dict) else q for q in questions]
    return {**tool_input, "questions": mapped}


def multi_select_as_multi(question: dict[str, Any]) -> dict[str, Any]:
    """A question with a boolean `multiSelect` (Claude's spelling) given as canonical
    `multi`; any other value is left for validation to word."""
    if isinstance(question.get("multiSelect"), bool) and "multi" not in question:
        renamed = dict(question)
        renamed["multi"] = renamed.pop("multiSelect")
        return renamed
    return question


def question_dicts(tool_input: Any) -> list[dict[str, Any]] | None:
    """The question objects of a `{questions: [{question, ...}, ...]}` input, or None when
    the input is not of that shape (for `matches`)."""
    if not isinstance(tool_input, dict):
        return None
    questions = tool_input.get("questions")
    if not isinstance(questions, list) or not questions:
        return None
    if not all(isinstance(q, dict) and "question" in q for q in questions):
        return None
    return questions


def as_json(data: Any) -> str:
    """A dialect's JSON result as the text the model reads: deterministic, Unicode kept."""
    return json.dumps(data, ensure_ascii=False)


def unescape_newlines(value: Any) -> Any:
    """A string with the literal two characters `\\n` (and `\\r\\n`) a model writes for a
    line break read as one; anything else as given."""
    if not isinstance(value, str):
        return value
    return value.replace("\\r\\n", "\n").replace("\\n", "\n")
