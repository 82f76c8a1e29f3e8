"""The `omp` dialect: the OMP-compatible `ask` tool (docs/dialects.md).

Input: `{questions[]{id, question, header?, options[]{label, description?}, multi?,
recommended? (0-based index)}}`. OMP's client adds `Other (type your own)` itself; a model
that passes that label anyway gets it dropped by normalization (docs/contract.md#normalization),
with a warning, rather than a retry.

Result, one question (details `{selectedOptions, customInput?}`):

    User selected: a, b
    User provided custom input: …
    User answered with no selection.

Several questions (details `{results: [{id, question, selectedOptions, customInput?,
cancelled?}]}`):

    User answers:
    db: PostgreSQL
    features: [Auth, Billing]
    name: "billing-api"
    region: (cancelled)

Choices made here for what the product's contract leaves open:

- one skipped question reads `User cancelled the question.` and a nudge to proceed;
  its details carry `cancelled: true`;
- a value shows as a list when several values were given (or an option beside typed
  text); the result does not say whether the question was multi, so one choice of a
  multi question shows bare;
- timed out, unavailable, redirected and cancelled read as the canonical sentence
  (docs/contract.md#results), with the details built the same way.
"""

from __future__ import annotations

from typing import Any

from midturn.contract._models import AskResult, Limits, QuestionAnswer, ToolOutput
from midturn.contract._render import canonical_text, quote
from midturn.contract.dialects._base import Dialect
from midturn.contract.dialects._schema import (
    closed_object,
    identifier,
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
    PROCEED,
    question_dicts,
    require_object,
)

__all__ = ["OmpDialect"]


def _description(limits: Limits) -> str:
    options = span(limits.min_options, limits.max_options)
    return (
        "Ask the user one or more questions with options and wait for the answers, within "
        "this same turn. Use it only when you cannot safely continue without the user's "
        "choice: a bounded decision between a few options. Ask once, with every question in "
        "one call, and do not ask again about anything answered or cancelled. Give each "
        f"question an id and {options} distinct options; set multi to true when several may "
        "apply, and recommended to the 0-based index of the option you suggest. Never add an "
        '"Other" option: the "Other (type your own)" choice is added for the user '
        "automatically. For open-ended questions, reply in ordinary text instead."
    )


_SHAPE = '{"questions": [{"id": "...", "question": "...", "options": [{"label": "..."}]}]}'
_FOREIGN = CANONICAL_QUESTION_KEYS | {"multiSelect"}
_STATUS = {"timed_out": "(timed out)", "cancelled": "(cancelled)", "unavailable": "(unavailable)"}


def _custom(answer: QuestionAnswer) -> str | None:
    return answer.answer if answer.is_secret else answer.text


def _details(answer: QuestionAnswer, *, several: bool) -> dict[str, Any]:
    item: dict[str, Any] = {"id": answer.id, "question": answer.question} if several else {}
    item["selectedOptions"] = list(answer.selected)
    custom = _custom(answer)
    if custom is not None:
        item["customInput"] = custom
    if answer.status != "answered":
        item["cancelled"] = True
    return item


def _value(answer: QuestionAnswer) -> str:
    if answer.status != "answered":
        return _STATUS.get(answer.status, "(cancelled)")
    custom = _custom(answer)
    values = list(answer.selected)
    if custom is not None:
        values.append(custom if answer.is_secret else quote(custom))
    if len(values) == 1:
        return values[0]
    return f"[{', '.join(values)}]"


def _one(answer: QuestionAnswer) -> str:
    if answer.status != "answered":
        return f"User cancelled the question. {PROCEED}"
    lines = []
    if answer.selected:
        lines.append(f"User selected: {', '.join(answer.selected)}")
    custom = _custom(answer)
    if custom is not None:
        lines.append(f"User provided custom input: {custom}")
    return "\n".join(lines) or "User answered with no selection."


class OmpDialect(Dialect):
    """OMP's `ask`: questions with ids; one- and several-question result texts."""

    name = "omp"
    tool_name = "ask"

    def to_canonical(self, tool_input: Any) -> dict[str, Any]:
        return require_object(tool_input, _SHAPE)

    def render(self, result: AskResult) -> ToolOutput:
        answers = result.answers
        several = len(answers) != 1
        if several:
            data: dict[str, Any] = {"results": [_details(a, several=True) for a in answers]}
            text = "\n".join(["User answers:", *(f"{a.id}: {_value(a)}" for a in answers)])
        else:
            data = _details(answers[0], several=False)
            text = _one(answers[0])
        if result.outcome not in ("answered", "skipped") or not answers:
            text = canonical_text(result)
        return ToolOutput(text=text, data=data)

    def description(self, limits: Limits) -> str:
        return _description(limits)

    def input_schema(self, limits: Limits) -> dict[str, Any]:
        option = option_object(limits)
        header = f"Optional short label, at most {limits.max_header_chars} characters."
        options = (
            f"{options_span(limits)} distinct options; never "
            '"Other (type your own)": it is added automatically.'
        )
        question = closed_object(
            {
                "id": identifier("A short id, unique in the call; answers are reported by it."),
                "question": question_text(limits),
                "header": string(limits.max_header_chars, header),
                "options": options_array(limits, option, options),
                "multi": several(),
                "recommended": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "The 0-based index of the option you recommend.",
                },
            },
            ["id", "question", "options"],
        )
        return closed_object({"questions": questions_array(limits, question)}, ["questions"])

    def matches(self, tool_input: Any) -> int:
        """2 when every question has an `id` (required by OMP), `recommended` is an index
        if given, and no key OMP's shape lacks is present (`kind`, `multiSelect`,
        `timeout_s`, option ids, ...); 0 otherwise. The canonical dialect scores the same
        input 1."""
        questions = question_dicts(tool_input)
        if questions is None or CANONICAL_ASK_KEYS & tool_input.keys():
            return 0
        for question in questions:
            if _FOREIGN & question.keys() or "id" not in question:
                return 0
            recommended = question.get("recommended")
            if recommended is not None and not isinstance(recommended, int):
                return 0  # a label: the canonical shape
            options = question.get("options")
            if isinstance(options, list) and any(
                isinstance(o, dict) and "id" in o for o in options
            ):
                return 0
        return 2
