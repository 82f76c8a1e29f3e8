"""The `codex` dialect: OpenAI Codex's `request_user_input` tool.

Input: `{questions[1–3]{id, header ≤12, question, options[2–3]{label, description}}}`.
Every question is a single choice; Codex's client always adds a free-form Other itself
(it sets `isOther` on every question), and `isOther` / `isSecret` are the client's fields,
not the model's. A label ending in "(Recommended)" marks the recommended option, as
Codex's tool description asks.

Result: the JSON `{"answers": {"<id>": {"answers": ["<label>", "user_note: <text>"]}}}`,
every question keyed by its id: the chosen label, then what the user typed as a
`user_note: ` entry, the way Codex's own client reports a note. A skipped question has an
empty list.

Choices made here for what the product's contract leaves open:

- a question without options is refused with Codex's own reason, as its handler refuses
  it, rather than read as a text question;
- several choices (a question this dialect did not ask, rendered in it) are listed one
  label per entry;
- every outcome but answered reads as the canonical sentence
  (docs/contract.md#results), with the data built the same way.
"""

from __future__ import annotations

from typing import Any

from midturn.contract._models import AskResult, Limits, QuestionAnswer, ToolOutput
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
    string,
)
from midturn.contract.dialects._shape import as_json, question_dicts, require_object
from midturn.errors import InvalidAsk, Problem

__all__ = ["CodexDialect"]


def _description(limits: Limits) -> str:
    return (
        f"Request user input for 1-{limits.max_questions} short questions and wait for the "
        "response, within this same turn. Use it only for a bounded decision you cannot make "
        "yourself; otherwise take a reasonable default, and ask open-ended questions in "
        "ordinary text. Ask once, with every question in one call, and do not ask again "
        "about anything answered. Give each question a snake_case id, a header of at most "
        f"{limits.max_header_chars} characters and {options_span(limits)} mutually exclusive "
        'options; put the recommended one first with "(Recommended)" at the end of its '
        'label. Never add an "Other" option: the client adds a free-form one itself.'
    )


_SHAPE = (
    '{"questions": [{"id": "...", "header": "...", "question": "...", '
    '"options": [{"label": "...", "description": "..."}]}]}'
)
_CLIENT_KEYS = frozenset({"isOther", "isSecret"})
_NOTE = "user_note: "
_FOREIGN = frozenset(
    {"kind", "multi", "multiSelect", "recommended", "type", "allow_other", "allowFreeformInput"}
)


def _question(raw: dict[str, Any], index: int) -> dict[str, Any]:
    options = raw.get("options")
    if not isinstance(options, list) or not options:
        raise InvalidAsk(
            [
                Problem(
                    f"questions[{index}].options",
                    "request_user_input requires non-empty options for every question; give "
                    "2-3 mutually exclusive options",
                )
            ]
        )
    question = {key: value for key, value in raw.items() if key not in _CLIENT_KEYS}
    question["kind"] = "choice"
    return question


def _entries(answer: QuestionAnswer) -> list[str]:
    if answer.status != "answered":
        return []
    entries = list(answer.selected)
    if answer.is_secret:
        entries.append(f"{_NOTE}{answer.answer}")
    elif answer.text is not None:
        entries.append(f"{_NOTE}{answer.text}")
    return entries


class CodexDialect(Dialect):
    """Codex's `request_user_input`: answers keyed by id, notes as `user_note:` entries."""

    name = "codex"
    tool_name = "request_user_input"
    limits = Limits(max_questions=3, max_options=3)

    def to_canonical(self, tool_input: Any) -> dict[str, Any]:
        data = require_object(tool_input, _SHAPE)
        questions = data.get("questions")
        if not isinstance(questions, list):
            return dict(data)
        mapped = [_question(q, i) if isinstance(q, dict) else q for i, q in enumerate(questions)]
        return {"questions": mapped}

    def render(self, result: AskResult) -> ToolOutput:
        data = {"answers": {a.id: {"answers": _entries(a)} for a in result.answers}}
        if result.outcome == "answered":
            return ToolOutput(text=as_json(data), data=data)
        return ToolOutput(text=canonical_text(result), data=data)

    def description(self, limits: Limits | None = None) -> str:
        return _description(limits or self.limits)

    def input_schema(self, limits: Limits | None = None) -> dict[str, Any]:
        limits = limits or self.limits
        option = option_object(
            limits,
            label="User-facing label: 1-5 words.",
            description="One short sentence on the impact or trade-off if selected.",
            required=("label", "description"),
        )
        header = f"A short header shown in the UI, at most {limits.max_header_chars} characters."
        question = closed_object(
            {
                "id": {"type": "string", "description": "A stable snake_case id for the answer."},
                "header": string(limits.max_header_chars, header),
                "question": question_text(limits),
                "options": options_array(
                    limits, option, f"{options_span(limits)} {EXCLUSIVE_OPTIONS}"
                ),
            },
            ["id", "header", "question", "options"],
        )
        questions = questions_array(
            limits, question, f"The questions: prefer 1, at most {limits.max_questions}."
        )
        return closed_object({"questions": questions}, ["questions"])

    def matches(self, tool_input: Any) -> int:
        """3 when every question has Codex's four required keys (`id`, `header`,
        `question`, non-empty `options`) and none Codex's shape lacks (`multi`,
        `recommended`, `kind`, ...); OMP's shape, which has ids too, scores 2. 0
        otherwise."""
        questions = question_dicts(tool_input)
        if questions is None or set(tool_input) - {"questions"}:
            return 0
        for question in questions:
            if _FOREIGN & question.keys() or not {"id", "header"} <= question.keys():
                return 0
            options = question.get("options")
            if not isinstance(options, list) or not options:
                return 0
        return 3
