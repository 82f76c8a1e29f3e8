"""The `copilot` dialect: VS Code Copilot's ask-questions tool (`ask_questions`, formerly
`copilot_askQuestions`).

Input: `{questions[1–4]{header ≤12, question, multiSelect?, options?[0 or 2–6]{label,
description?, recommended?}, allowFreeformInput?}}`. The header is the question's unique
key. No options (or an empty list) makes a free-text question; a single option is
refused. `recommended` is a flag on the option; `allowFreeformInput` (default false) lets
the user type an answer beside the options.

Result: the JSON `{"answers": {"<header>": {"selected": [...], "freeText": str | null,
"skipped": bool}}}` with every question present, as VS Code reports it.

Choices made here for what the product's contract leaves open:

- of several options flagged `recommended`, the first is the recommended one (midturn
  recommends one option per question);
- a free-text question ignores `allowFreeformInput` and `multiSelect`;
- all skipped reads the product's way (every question `skipped: true`), which the model
  cannot mistake for an answer; timed out, unavailable, redirected and cancelled read as
  the canonical sentence (docs/contract.md#results) with the same data.
"""

from __future__ import annotations

from typing import Any

from midturn.contract._models import AskResult, Limits, QuestionAnswer, ToolOutput
from midturn.contract._render import canonical_text
from midturn.contract.dialects._base import Dialect
from midturn.contract.dialects._schema import (
    closed_object,
    question_text,
    questions_array,
    several,
    string,
)
from midturn.contract.dialects._shape import (
    CANONICAL_QUESTION_KEYS,
    as_json,
    question_dicts,
    require_object,
)

__all__ = ["CopilotDialect"]


def _description(limits: Limits) -> str:
    return (
        f"Ask the user 1-{limits.max_questions} questions and wait for the answers, within "
        "this same turn. Use it only for a bounded decision you cannot determine or "
        "reasonably assume yourself; otherwise take the sensible default, and ask open-ended "
        "questions in ordinary text. Ask once, batching every question into one call, and do "
        "not re-ask anything answered. Give each question a unique header (at most "
        f"{limits.max_header_chars} characters); give {limits.min_options}-"
        f"{limits.max_options} mutually exclusive options, or none for a free-text answer; "
        'mark at most one option recommended. Never add an "Other" option: set '
        "allowFreeformInput to let the user type their own answer."
    )


_SHAPE = '{"questions": [{"header": "...", "question": "...", "options": [{"label": "..."}]}]}'
_FOREIGN = CANONICAL_QUESTION_KEYS | {"id", "multi", "type", "choices"}


def _question(raw: dict[str, Any]) -> dict[str, Any]:
    question = {
        key: value
        for key, value in raw.items()
        if key not in ("options", "multiSelect", "allowFreeformInput")
    }
    options = raw.get("options")
    if options is None or options == []:
        question["kind"] = "text"
        return question
    question["kind"] = "choice"
    if "multiSelect" in raw:
        question["multiSelect"] = raw["multiSelect"]
    question["allow_other"] = raw.get("allowFreeformInput", False)
    if not isinstance(options, list):
        question["options"] = options
        return question
    plain: list[Any] = []
    for index, option in enumerate(options):
        if isinstance(option, dict):
            if option.get("recommended") is True and "recommended" not in question:
                question["recommended"] = index
            option = {key: value for key, value in option.items() if key != "recommended"}
        plain.append(option)
    question["options"] = plain
    return question


def _item(answer: QuestionAnswer) -> dict[str, Any]:
    if answer.status != "answered":
        return {"selected": [], "freeText": None, "skipped": True}
    free = answer.answer if answer.is_secret else answer.text
    return {"selected": list(answer.selected), "freeText": free, "skipped": False}


class CopilotDialect(Dialect):
    """VS Code Copilot's ask-questions tool: answers keyed by header."""

    name = "copilot"
    tool_name = "ask_questions"
    limits = Limits(max_options=6)

    def to_canonical(self, tool_input: Any) -> dict[str, Any]:
        data = require_object(tool_input, _SHAPE)
        questions = data.get("questions")
        if not isinstance(questions, list):
            return dict(data)
        return {"questions": [_question(q) if isinstance(q, dict) else q for q in questions]}

    def render(self, result: AskResult) -> ToolOutput:
        data = {"answers": {a.header: _item(a) for a in result.answers}}
        if result.outcome in ("answered", "skipped") and result.answers:
            return ToolOutput(text=as_json(data), data=data)
        return ToolOutput(text=canonical_text(result), data=data)

    def description(self, limits: Limits | None = None) -> str:
        return _description(limits or self.limits)

    def input_schema(self, limits: Limits | None = None) -> dict[str, Any]:
        limits = limits or self.limits
        option = closed_object(
            {
                "label": string(limits.max_label_chars, "The option's label and value."),
                "description": string(
                    limits.max_description_chars, "Optional text shown with the option."
                ),
                "recommended": {
                    "type": "boolean",
                    "description": "true for the one option you recommend.",
                },
            },
            ["label"],
        )
        header = (
            f"A short unique label, at most {limits.max_header_chars} characters; the answer "
            "is reported under it."
        )
        question = closed_object(
            {
                "header": string(limits.max_header_chars, header),
                "question": question_text(limits),
                "multiSelect": several(),
                "options": {
                    "type": "array",
                    "maxItems": limits.max_options,
                    "items": option,
                    "description": (
                        f"{limits.min_options}-{limits.max_options} mutually exclusive options, "
                        "or none for a free-text question; never Other."
                    ),
                },
                "allowFreeformInput": {
                    "type": "boolean",
                    "description": "true to let the user type an answer beside the options.",
                },
            },
            ["header", "question"],
        )
        questions = questions_array(
            limits, question, f"1-{limits.max_questions} questions to ask together."
        )
        return closed_object({"questions": questions}, ["questions"])

    def matches(self, tool_input: Any) -> int:
        """0 unless every question has a `header` and no key Copilot's shape lacks; then
        6 with `allowFreeformInput` or an option's boolean `recommended` (Copilot's own
        keys), 5 with a question Claude's and AgentCore's shapes cannot have (no options,
        or 5-6 of them), else 0: the shape is then Claude's or AgentCore's."""
        questions = question_dicts(tool_input)
        if questions is None or set(tool_input) - {"questions"}:
            return 0
        if any(_FOREIGN & q.keys() or "header" not in q for q in questions):
            return 0
        for question in questions:
            options = question.get("options")
            if "allowFreeformInput" in question:
                return 6
            if isinstance(options, list) and any(
                isinstance(o, dict) and isinstance(o.get("recommended"), bool) for o in options
            ):
                return 6
        for question in questions:
            options = question.get("options")
            if options is None or (isinstance(options, list) and len(options) in (0, 5, 6)):
                return 5
        return 0
