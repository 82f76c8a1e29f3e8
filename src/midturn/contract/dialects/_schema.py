"""The JSON Schema pieces the dialects' `input_schema()` are built from.

Each builder returns a fresh dict, and keeps its keys in one fixed order: the order shows in
`tool_spec()` output, which must stay the same byte for byte."""

from __future__ import annotations

from typing import Any

from midturn.contract._models import Limits

__all__ = [
    "EXCLUSIVE_OPTIONS",
    "ID_PATTERN",
    "QUESTION_HINT",
    "boolean",
    "closed_object",
    "identifier",
    "option_object",
    "options_array",
    "options_span",
    "question_text",
    "questions_array",
    "questions_phrase",
    "several",
    "span",
    "string",
]

ID_PATTERN = "^[A-Za-z0-9_.-]{1,64}$"
QUESTION_HINT = "The complete question, ending with a question mark."
EXCLUSIVE_OPTIONS = (
    "mutually exclusive options; never Other: the user can always type their own answer."
)


def string(max_length: int, description: str, *, min_length: int | None = None) -> dict[str, Any]:
    """A string of at most `max_length` characters (and at least `min_length`, if given)."""
    schema: dict[str, Any] = {"type": "string"}
    if min_length is not None:
        schema["minLength"] = min_length
    schema["maxLength"] = max_length
    schema["description"] = description
    return schema


def boolean(description: str) -> dict[str, Any]:
    return {"type": "boolean", "description": description}


def identifier(description: str) -> dict[str, Any]:
    """A short id string: letters, digits, `_`, `.` and `-`, at most 64."""
    return {"type": "string", "pattern": ID_PATTERN, "description": description}


def closed_object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """An object of exactly `properties` (no others), of which `required` must be given."""
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def question_text(limits: Limits) -> dict[str, Any]:
    """The question's text, as every dialect but the canonical one bounds it."""
    return string(limits.max_question_chars, QUESTION_HINT)


def several() -> dict[str, Any]:
    """The flag (`multi`, `multiSelect`) that lets the user pick several options."""
    return boolean("true when the user may pick several options.")


def option_object(
    limits: Limits,
    *,
    label: str = "The option the user picks: a few words.",
    description: str = "What choosing it means.",
    required: tuple[str, ...] = ("label",),
) -> dict[str, Any]:
    """An option `{label, description}`; `label` and `description` are the hints the model
    reads for each field."""
    return closed_object(
        {
            "label": string(limits.max_label_chars, label),
            "description": string(limits.max_description_chars, description),
        },
        list(required),
    )


def span(low: int, high: int) -> str:
    """A count range as the model reads it: `2-4`, or `3` when both ends are equal."""
    return str(low) if low == high else f"{low}-{high}"


_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight")


def questions_phrase(limits: Limits, adjective: str) -> str:
    """`one to four short questions`, or `one short question` when only one is allowed."""
    high = limits.max_questions
    if high == 1:
        return f"one {adjective} question"
    return f"one to {_WORDS[high]} {adjective} questions"


def options_span(limits: Limits) -> str:
    """How many options a question takes, as the model reads it: `2-4`."""
    return span(limits.min_options, limits.max_options)


def options_array(limits: Limits, items: dict[str, Any], description: str) -> dict[str, Any]:
    """A question's options: `limits.min_options` to `limits.max_options` of `items`."""
    return {
        "type": "array",
        "minItems": limits.min_options,
        "maxItems": limits.max_options,
        "items": items,
        "description": description,
    }


def questions_array(
    limits: Limits, items: dict[str, Any], description: str | None = None
) -> dict[str, Any]:
    """The `questions` list: 1 to `limits.max_questions` of `items`."""
    schema: dict[str, Any] = {
        "type": "array",
        "minItems": 1,
        "maxItems": limits.max_questions,
        "items": items,
    }
    if description is not None:
        schema["description"] = description
    return schema
