"""The `agentcore` dialect: the Strands/AgentCore `ask_user_question` (docs/dialects.md).

Input: `{questions[1–4]{header, question, multiSelect, options[2–4]{label, description}}}`
where `header` is required (at most 12 characters): it is the answer's key. Result: text
only (`data` is None):

    The user answered:
    - Database: PostgreSQL
    - Name: A, "typed"
    - Region: (no answer — the user skipped this)

Labels are bare, typed text is quoted. Choices made here for what the product's
contract leaves open: an all-skipped result reads the same way, one skipped line per
question; timed out, unavailable, redirected and cancelled read as the canonical sentence
(docs/contract.md#results).
"""

from __future__ import annotations

from typing import Any

from midturn.contract._models import AskResult, Limits, ToolOutput
from midturn.contract._render import answer_value, canonical_text
from midturn.contract.dialects._base import Dialect
from midturn.contract.dialects._schema import (
    EXCLUSIVE_OPTIONS,
    closed_object,
    option_object,
    options_array,
    options_span,
    question_text,
    questions_array,
    several,
    span,
    string,
)
from midturn.contract.dialects._shape import (
    CANONICAL_ASK_KEYS,
    CANONICAL_QUESTION_KEYS,
    map_questions,
    multi_select_as_multi,
    question_dicts,
    require_object,
)
from midturn.errors import InvalidAsk, Problem

__all__ = ["AgentCoreDialect"]


def _description(limits: Limits) -> str:
    options = span(limits.min_options, limits.max_options)
    questions = span(1, limits.max_questions)
    header = limits.max_header_chars
    return (
        f"Pause and ask the user {questions} structured multiple-choice questions, then "
        "continue this same turn with the answers as this tool's result. Use it only for a "
        "bounded decision you need before you can continue, never for open-ended discussion "
        "(reply in ordinary text for that). Ask once: put every question in one call and do "
        "not open a second round. Each question needs a unique short header (at most "
        f"{header} characters; the answer is reported under it) and {options} mutually "
        "exclusive options; set multiSelect to true when several may apply. Never add an "
        '"Other" option: the user can always type their own answer or skip.'
    )


_SHAPE = (
    '{"questions": [{"header": "...", "question": "...", "multiSelect": false, '
    '"options": [{"label": "...", "description": "..."}]}]}'
)
_SKIPPED = "(no answer — the user skipped this)"
_FOREIGN = CANONICAL_QUESTION_KEYS | {"id", "multi", "recommended"}


class AgentCoreDialect(Dialect):
    """Strands/AgentCore's `ask_user_question`: answers reported by header."""

    name = "agentcore"
    tool_name = "ask_user_question"

    def to_canonical(self, tool_input: Any) -> dict[str, Any]:
        data = require_object(tool_input, _SHAPE)
        questions = data.get("questions")
        if isinstance(questions, list):
            problems = [
                Problem(
                    f"questions[{i}].header",
                    f"missing; give a short header (at most {self.limits.max_header_chars} "
                    "characters): the answer is reported under it",
                )
                for i, q in enumerate(questions)
                if isinstance(q, dict) and q.get("header") is None
            ]
            if problems:
                raise InvalidAsk(problems)
        return map_questions(data, multi_select_as_multi)

    def render(self, result: AskResult) -> ToolOutput:
        if result.outcome not in ("answered", "skipped") or not result.answers:
            return ToolOutput(text=canonical_text(result))
        lines = [
            f"- {a.header}: {answer_value(a) if a.status == 'answered' else _SKIPPED}"
            for a in result.answers
        ]
        return ToolOutput(text="\n".join(["The user answered:", *lines]))

    def description(self, limits: Limits) -> str:
        return _description(limits)

    def input_schema(self, limits: Limits) -> dict[str, Any]:
        option = option_object(
            limits,
            description="What choosing it means, or its trade-off.",
            required=("label", "description"),
        )
        header = (
            f"A unique short label, at most {limits.max_header_chars} characters; "
            "the answer is reported under it."
        )
        question = closed_object(
            {
                "header": string(limits.max_header_chars, header),
                "question": question_text(limits),
                "multiSelect": several(),
                "options": options_array(
                    limits, option, f"{options_span(limits)} {EXCLUSIVE_OPTIONS}"
                ),
            },
            ["header", "question", "options"],
        )
        questions = questions_array(
            limits, question, f"1-{limits.max_questions} questions to ask together."
        )
        return closed_object({"questions": questions}, ["questions"])

    def matches(self, tool_input: Any) -> int:
        """0 unless every question has a `header` and no key AgentCore's shape lacks;
        then 3 when every question also has `multiSelect` (Claude's shape, which scores
        4), else 4."""
        questions = question_dicts(tool_input)
        if questions is None or CANONICAL_ASK_KEYS & tool_input.keys():
            return 0
        if any(_FOREIGN & q.keys() or "header" not in q for q in questions):
            return 0
        return 3 if all("multiSelect" in q for q in questions) else 4
