"""The `gemini` dialect: Gemini CLI's `ask_user` tool.

Input: `{questions[1–4]{question, header, type: choice | text | yesno, options[2–4]{label,
description}, multiSelect, placeholder}}`. `type` says how the question is answered:
`choice` picks from the options (Gemini adds Other itself), `text` is typed, `yesno` is a
Yes/No choice for which the model gives no options. Gemini's header may be up to 16
characters (its schema's bound), so this dialect's limit is 16, not 12.

Result: the JSON `{"answers": {"<question index>": "<answer>"}}`, only the answered
questions, keyed by their 0-based position as a string, each answer the display string
(several choices joined by ", "; a yes/no answer reads "Yes" or "No").

Choices made here for what the product's contract leaves open:

- a missing `type` reads as `choice` when options are given (Gemini's default) and as
  `text` when none are; a `text` or `yesno` question's options are ignored, as Gemini
  ignores them; the Other hint a choice question's `placeholder` gives has no canonical
  place and is dropped;
- the literal two characters `\\n` a model sometimes writes for a line break are read as a
  line break, as Gemini's own tool does;
- all skipped reads as Gemini's dismissal sentence with the nudge to proceed; timed out,
  unavailable, redirected and cancelled read as the canonical sentence (docs/contract.md#results).
"""

from __future__ import annotations

from typing import Any

from midturn.contract._checks import kind_of
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
    several,
    string,
)
from midturn.contract.dialects._shape import (
    PROCEED,
    as_json,
    question_dicts,
    require_object,
    unescape_newlines,
)
from midturn.errors import InvalidAsk, Problem

__all__ = ["GeminiDialect"]


def _description(limits: Limits) -> str:
    return (
        f"Ask the user 1-{limits.max_questions} questions and wait for the answers, within "
        "this same turn. Use it only for a bounded decision you cannot continue without; "
        "otherwise take a reasonable default, and ask open-ended questions in ordinary text. "
        "Ask once, with every question in one call, and do not ask again about anything "
        "answered or skipped. Give each question a short header (at most "
        f"{limits.max_header_chars} characters) and a type: choice ({options_span(limits)} "
        'distinct options, each with a description), text, or yesno. Never add an "Other" '
        "option: the user can always type their own answer."
    )


_SHAPE = '{"questions": [{"question": "...", "header": "...", "type": "choice", "options": [...]}]}'
_TYPES = ("choice", "text", "yesno")
_YES_NO = [{"label": "Yes"}, {"label": "No"}]
DISMISSED = "User dismissed ask_user dialog without answering."


def _option(raw: Any) -> Any:
    if not isinstance(raw, dict):
        return raw
    return {key: unescape_newlines(raw[key]) for key in ("label", "description") if key in raw}


def _question(raw: dict[str, Any], index: int) -> dict[str, Any]:
    kind = raw.get("type")
    if kind is None:
        kind = "choice" if raw.get("options") else "text"
    if kind not in _TYPES:
        shown = repr(kind) if isinstance(kind, str) else kind_of(kind)
        message = f'{shown} given; give "choice", "text" or "yesno"'
        raise InvalidAsk([Problem(f"questions[{index}].type", message)])
    question: dict[str, Any] = {"question": unescape_newlines(raw.get("question"))}
    if raw.get("header") is not None:
        question["header"] = unescape_newlines(raw["header"])
    if kind == "text":
        question["kind"] = "text"
        if raw.get("placeholder") is not None:
            question["placeholder"] = unescape_newlines(raw["placeholder"])
        return question
    question["kind"] = "choice"
    if kind == "yesno":
        question["options"] = list(_YES_NO)
        return question
    options = raw.get("options")
    question["options"] = [_option(o) for o in options] if isinstance(options, list) else options
    if "multiSelect" in raw:
        question["multiSelect"] = raw["multiSelect"]
    return question


class GeminiDialect(Dialect):
    """Gemini CLI's `ask_user`: typed questions, answers keyed by question index."""

    name = "gemini"
    tool_name = "ask_user"
    limits = Limits(max_header_chars=16)

    def to_canonical(self, tool_input: Any) -> dict[str, Any]:
        data = require_object(tool_input, _SHAPE)
        questions = data.get("questions")
        if not isinstance(questions, list):
            return dict(data)
        mapped = [_question(q, i) if isinstance(q, dict) else q for i, q in enumerate(questions)]
        return {"questions": mapped}

    def render(self, result: AskResult) -> ToolOutput:
        answers = {
            str(index): answer.answer
            for index, answer in enumerate(result.answers)
            if answer.status == "answered"
        }
        data = {"answers": answers}
        if result.outcome == "answered" and answers:
            return ToolOutput(text=as_json(data), data=data)
        if result.outcome == "skipped":
            return ToolOutput(text=f"{DISMISSED} {PROCEED}", data=data)
        return ToolOutput(text=canonical_text(result), data=data)

    def description(self, limits: Limits | None = None) -> str:
        return _description(limits or self.limits)

    def input_schema(self, limits: Limits | None = None) -> dict[str, Any]:
        limits = limits or self.limits
        option = option_object(
            limits,
            label="The option's text: 1-5 words.",
            description="A brief explanation of the option.",
            required=("label", "description"),
        )
        header = f"A very short chip label, at most {limits.max_header_chars} characters."
        question = {
            "type": "object",
            "properties": {
                "question": question_text(limits),
                "header": string(limits.max_header_chars, header),
                "type": {
                    "type": "string",
                    "enum": list(_TYPES),
                    "description": "choice (with options), text (typed) or yesno (Yes/No).",
                },
                "options": options_array(
                    limits, option, f"For type choice: {options_span(limits)} {EXCLUSIVE_OPTIONS}"
                ),
                "multiSelect": several(),
                "placeholder": {"type": "string", "description": "Hint text for a text answer."},
            },
            "required": ["question", "header", "type"],
        }
        questions = questions_array(
            limits, question, f"1-{limits.max_questions} questions to ask together."
        )
        return closed_object({"questions": questions}, ["questions"])

    def matches(self, tool_input: Any) -> int:
        """6 when every question has a Gemini `type` and either one is `choice` or `yesno`
        or every question has a `header` (deep agents' shape has `type: text` and no
        header); 0 otherwise."""
        questions = question_dicts(tool_input)
        if questions is None or set(tool_input) - {"questions"}:
            return 0
        if not all(q.get("type") in _TYPES for q in questions):
            return 0
        if any(q["type"] != "text" for q in questions) or all("header" in q for q in questions):
            return 6
        return 0
