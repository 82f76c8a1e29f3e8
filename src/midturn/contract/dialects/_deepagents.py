"""The `deepagents` dialect: the `ask_user` tool of LangChain's deep agents CLI.

Input: `{questions[]{question, type: text | multiple_choice, choices?[{value}],
required?}}`. A multiple-choice question needs `choices` (each `{value}`, its label); a
text question must not have any. The user can always answer a choice in their own words
(the product appends Other itself). No headers: midturn derives them.

Result: text only (`data` is None), one block per question, in order:

    Q: Which database should the service use?
    A: PostgreSQL

    Q: What should it be called?
    A: billing-api

A skipped question reads `A: (no answer)`; a cancelled ask reads `A: (cancelled)` for
every question, the product's own words.

Choices made here for what the product's contract leaves open:

- `required` is accepted and not enforced: every midturn client lets the user skip, and
  a skip reads `(no answer)` so the model proceeds knowingly;
- choices may also be given as plain strings;
- all skipped reads one `(no answer)` block per question; timed out, unavailable and
  redirected read as the canonical sentence (docs/contract.md#results).
"""

from __future__ import annotations

from typing import Any

from midturn.contract._checks import kind_of
from midturn.contract._models import AskResult, Limits, QuestionAnswer, ToolOutput
from midturn.contract._render import canonical_text
from midturn.contract.dialects._base import Dialect
from midturn.contract.dialects._schema import closed_object, question_text, questions_array
from midturn.contract.dialects._shape import question_dicts, require_object
from midturn.errors import InvalidAsk, Problem

__all__ = ["DeepAgentsDialect"]


def _description(limits: Limits) -> str:
    return (
        f"Ask the user 1-{limits.max_questions} questions and wait for the answers, within "
        "this same turn. Use it sparingly, only for a bounded decision or a fact only the "
        "user has; never for something you can determine from context, and never for "
        "open-ended discussion (reply in ordinary text for that). Ask once: group every "
        'question into one call. Each question has a type: "text" for a typed answer or '
        f'"multiple_choice" with {limits.min_options}-{limits.max_options} choices. Never '
        'add an "Other" choice: the user can always type their own answer.'
    )


_SHAPE = '{"questions": [{"question": "...", "type": "multiple_choice", "choices": [...]}]}'
_TYPES = ("text", "multiple_choice")


def _problem(path: str, message: str) -> InvalidAsk:
    return InvalidAsk([Problem(path, message)])


def _choice(raw: Any) -> Any:
    if isinstance(raw, dict) and "value" in raw:
        return {"label": raw["value"]}
    return raw


def _question(raw: dict[str, Any], index: int) -> dict[str, Any]:
    path = f"questions[{index}]"
    kind = raw.get("type")
    if kind not in _TYPES:
        shown = repr(kind) if isinstance(kind, str) else kind_of(kind)
        raise _problem(f"{path}.type", f'{shown} given; give "text" or "multiple_choice"')
    question: dict[str, Any] = {"question": raw.get("question")}
    choices = raw.get("choices")
    if kind == "text":
        if choices:
            raise _problem(
                f"{path}.choices", 'a "text" question takes no choices; remove them or change type'
            )
        question["kind"] = "text"
        return question
    if not choices:
        raise _problem(
            f"{path}.choices",
            'a "multiple_choice" question needs a non-empty list of choices [{"value": ...}]',
        )
    question["kind"] = "choice"
    question["options"] = [_choice(c) for c in choices] if isinstance(choices, list) else choices
    return question


def _answer(answer: QuestionAnswer, outcome: str) -> str:
    if outcome == "cancelled":
        return "(cancelled)"
    if answer.status != "answered" or answer.answer is None:
        return "(no answer)"
    return answer.answer


class DeepAgentsDialect(Dialect):
    """Deep agents' `ask_user`: text or multiple-choice questions, Q/A blocks back."""

    name = "deepagents"
    tool_name = "ask_user"

    def to_canonical(self, tool_input: Any) -> dict[str, Any]:
        data = require_object(tool_input, _SHAPE)
        questions = data.get("questions")
        if not isinstance(questions, list):
            return dict(data)
        mapped = [_question(q, i) if isinstance(q, dict) else q for i, q in enumerate(questions)]
        return {"questions": mapped}

    def render(self, result: AskResult) -> ToolOutput:
        if result.outcome not in ("answered", "skipped", "cancelled") or not result.answers:
            return ToolOutput(text=canonical_text(result))
        blocks = [f"Q: {a.question}\nA: {_answer(a, result.outcome)}" for a in result.answers]
        return ToolOutput(text="\n\n".join(blocks))

    def description(self, limits: Limits | None = None) -> str:
        return _description(limits or self.limits)

    def input_schema(self, limits: Limits | None = None) -> dict[str, Any]:
        limits = limits or self.limits
        choice = closed_object(
            {
                "value": {
                    "type": "string",
                    "maxLength": limits.max_label_chars,
                    "description": "The display label for this choice.",
                }
            },
            ["value"],
        )
        question = closed_object(
            {
                "question": question_text(limits),
                "type": {
                    "type": "string",
                    "enum": list(_TYPES),
                    "description": "text for a typed answer, multiple_choice for choices.",
                },
                "choices": {
                    "type": "array",
                    "maxItems": limits.max_options,
                    "items": choice,
                    "description": "For multiple_choice only; never Other.",
                },
                "required": {
                    "type": "boolean",
                    "description": "Whether the user must answer; defaults to true.",
                },
            },
            ["question", "type"],
        )
        return closed_object({"questions": questions_array(limits, question)}, ["questions"])

    def matches(self, tool_input: Any) -> int:
        """7 when every question has a deep agents `type` and none has a `header` or
        `options` (Gemini's shape has both; `type: text` is common to the two); 0
        otherwise."""
        questions = question_dicts(tool_input)
        if questions is None or set(tool_input) - {"questions"}:
            return 0
        for question in questions:
            if question.get("type") not in _TYPES or {"header", "options"} & question.keys():
                return 0
        return 7
