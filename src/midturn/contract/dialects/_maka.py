"""The `maka` dialect: Maka's `AskUserQuestion` (docs/dialects.md).

Input: `{questions[1–3]{question, options[2–3]{label, description?}}}`: single choice,
no headers, no ids (headers are derived from the question text). Result: one JSON tool
result `{answers: [{question, answer: string | null}]}`, in question order, with null for
a question the user left unanswered. Maka's own UI answers with
`{requestId, answers: [string | null, ...]}`, which `parse_answer` reads as positional.

Choices made here for what the product's contract leaves open:

- answered and all-skipped results read as that JSON, which is Maka's only result;
- timed out, unavailable, redirected and cancelled read as the canonical sentence
  (docs/contract.md#results), with the JSON (nulls, or the auto-selected labels) as `data`.
"""

from __future__ import annotations

from typing import Any

from midturn.contract._models import AskResult, Limits, ToolOutput
from midturn.contract._render import canonical_text
from midturn.contract.dialects._base import Dialect
from midturn.contract.dialects._schema import (
    EXCLUSIVE_OPTIONS,
    closed_object,
    option_object,
    options_array,
    options_span,
    question_text,
    questions_array,
    span,
)
from midturn.contract.dialects._shape import as_json, question_dicts, require_object

__all__ = ["MakaDialect"]


def _description(limits: Limits) -> str:
    options = span(limits.min_options, limits.max_options)
    questions = span(1, limits.max_questions)
    return (
        f"Ask the user {questions} multiple-choice questions and wait for the answers, within "
        "this same turn. Use it only for a bounded choice you need before you can continue; "
        "it does not replace ordinary conversation: ask open-ended questions in normal text. "
        "Ask once, with every question you need in one call, and do not ask again about "
        f"anything answered. Give each question {options} mutually exclusive options; the "
        'user picks one. Never add an "Other" option: the user can always type their own '
        "answer."
    )


_SHAPE = '{"questions": [{"question": "...", "options": [{"label": "...", "description": "..."}]}]}'
_QUESTION_KEYS = frozenset({"question", "options"})
_OPTION_KEYS = frozenset({"label", "description"})


class MakaDialect(Dialect):
    """Maka's `AskUserQuestion`: 1–3 single-choice questions, answers as a JSON list."""

    name = "maka"
    tool_name = "AskUserQuestion"
    limits = Limits(max_questions=3, min_options=2, max_options=3)

    def to_canonical(self, tool_input: Any) -> dict[str, Any]:
        return require_object(tool_input, _SHAPE)

    def render(self, result: AskResult) -> ToolOutput:
        data = {
            "answers": [
                {
                    "question": a.question,
                    "answer": a.answer if a.status == "answered" else None,
                }
                for a in result.answers
            ]
        }
        if result.outcome in ("answered", "skipped"):
            return ToolOutput(text=as_json(data), data=data)
        return ToolOutput(text=canonical_text(result), data=data)

    def description(self, limits: Limits) -> str:
        return _description(limits)

    def input_schema(self, limits: Limits) -> dict[str, Any]:
        option = option_object(limits)
        question = closed_object(
            {
                "question": question_text(limits),
                "options": options_array(
                    limits, option, f"{options_span(limits)} {EXCLUSIVE_OPTIONS}"
                ),
            },
            ["question", "options"],
        )
        questions = questions_array(
            limits, question, f"1-{limits.max_questions} independent questions."
        )
        return closed_object({"questions": questions}, ["questions"])

    def matches(self, tool_input: Any) -> int:
        """3 for Maka's bare shape: only `questions`, each only `question` and `options`,
        options only `label` and `description`, within 1–3 questions of 2–3 options;
        0 otherwise. (The canonical dialect scores the same input 1.)"""
        questions = question_dicts(tool_input)
        if questions is None or set(tool_input) != {"questions"}:
            return 0
        if len(questions) > self.limits.max_questions:
            return 0
        for question in questions:
            options = question.get("options")
            if not question.keys() <= _QUESTION_KEYS or not isinstance(options, list):
                return 0
            if not self.limits.min_options <= len(options) <= self.limits.max_options:
                return 0
            if not all(isinstance(o, dict) and o.keys() <= _OPTION_KEYS for o in options):
                return 0
        return 3
