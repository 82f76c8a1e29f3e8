"""The `midturn` dialect: the canonical contract itself (docs/contract.md#the-canonical-ask,
docs/contract.md#results)."""

from __future__ import annotations

from typing import Any

from midturn.contract._models import AskResult, Limits, ToolOutput, from_fields
from midturn.contract._render import canonical_text
from midturn.contract.dialects._base import Dialect
from midturn.contract.dialects._schema import (
    QUESTION_HINT,
    boolean,
    closed_object,
    identifier,
    options_array,
    options_span,
    questions_array,
    questions_phrase,
    several,
    span,
    string,
)
from midturn.contract.dialects._shape import (
    CANONICAL_ASK_KEYS,
    CANONICAL_QUESTION_KEYS,
    question_dicts,
)
from midturn.errors import InvalidAsk, Problem

__all__ = ["MidturnDialect"]


def _description(limits: Limits) -> str:
    options = span(limits.min_options, limits.max_options)
    questions = questions_phrase(limits, "short")
    return (
        f"Ask the user {questions} and wait for the answers, within this same turn. Use it "
        "only for a bounded decision you need before you can continue: a choice between a "
        "few options, or a short value such as a name. Put everything you need in one call, "
        "ask once, and do not ask again about anything answered or skipped. Give each choice "
        f"question {options} distinct options and recommend one when you have a preference. "
        'Never add an "Other", "None of the above", "Skip" or "Not sure" option: the user '
        "can always type their own answer or skip. For open-ended discussion, reply in "
        "ordinary text instead of calling this tool."
    )


class MidturnDialect(Dialect):
    """The canonical shape: input passes through to normalization and validation; the
    result is the §2.5 JSON beside the §2.5 text."""

    name = "midturn"
    tool_name = "ask_user_question"

    def to_canonical(self, tool_input: Any) -> dict[str, Any]:
        if not isinstance(tool_input, dict):
            kind = "a list" if isinstance(tool_input, list) else type(tool_input).__name__
            if tool_input is None:
                kind = "null"
            elif isinstance(tool_input, str):
                kind = "a string"
            raise InvalidAsk(
                [
                    Problem(
                        "",
                        f'the tool input is {kind}; give an object {{"questions": [...]}} '
                        "with 1-4 questions",
                    )
                ]
            )
        return tool_input

    def render(self, result: AskResult) -> ToolOutput:
        return from_fields(
            ToolOutput,
            {
                "text": canonical_text(result),
                # the model's own serializer, not `model_dump`'s wrapper around it (a fifth
                # of the dump's cost, for the same dict)
                "data": type(result).__pydantic_serializer__.to_python(result, mode="json"),
                "is_error": False,
            },
        )

    def description(self, limits: Limits) -> str:
        return _description(limits)

    def input_schema(self, limits: Limits) -> dict[str, Any]:
        option = closed_object(
            {
                "label": string(
                    limits.max_label_chars, "What the user picks: a few words.", min_length=1
                ),
                "description": string(
                    limits.max_description_chars, "What choosing it means, or its trade-off."
                ),
                "id": identifier("Optional stable id for the option."),
            },
            ["label"],
        )
        header = f"Optional short label (at most {limits.max_header_chars} characters)."
        options = (
            f"{options_span(limits)} distinct options; never "
            "Other, None or Skip: the user can always type or skip."
        )
        question = closed_object(
            {
                "id": identifier("Optional id, unique in the call; defaults to q1, q2, ..."),
                "header": string(limits.max_header_chars, header),
                "question": string(limits.max_question_chars, QUESTION_HINT, min_length=1),
                "kind": {
                    "type": "string",
                    "enum": ["choice", "text"],
                    "description": "choice (with options) or text (a typed answer).",
                },
                "options": options_array(limits, option, options),
                "multi": several(),
                "min_choices": {"type": "integer", "minimum": 0},
                "max_choices": {"type": "integer", "minimum": 1},
                "recommended": {
                    "type": "string",
                    "description": "The label of the option you recommend, if any.",
                },
                "allow_other": boolean("false when only the listed options make sense."),
                "secret": boolean("Text questions: mask the input; you never see the value."),
                "placeholder": {"type": "string", "description": "Text questions: a hint."},
            },
            ["question"],
        )
        timeout: dict[str, Any] = {"type": "number", "exclusiveMinimum": 0}
        if limits.max_timeout_s is not None:
            timeout["maximum"] = limits.max_timeout_s
        return closed_object(
            {
                "questions": questions_array(limits, question),
                "timeout_s": timeout,
                "on_timeout": {"type": "string", "enum": ["skip", "recommended"]},
            },
            ["questions"],
        )

    def matches(self, tool_input: Any) -> int:
        """1 for any `{questions: [{question}]}` shape; 3 when a key only the canonical
        shape has (`kind`, `allow_other`, `secret`, `timeout_s`, ...) is present, or a
        `recommended` given as a label."""
        questions = question_dicts(tool_input)
        if questions is None:
            return 0
        if CANONICAL_ASK_KEYS & tool_input.keys():
            return 3
        if any(CANONICAL_QUESTION_KEYS & q.keys() for q in questions):
            return 3
        if any(isinstance(q.get("recommended"), str) for q in questions):
            return 3  # omp recommends by index only
        return 1
