"""The `claude` dialect: Claude Code's `AskUserQuestion` (docs/dialects.md), as of Claude Code 2.x.

Input: `{questions[1–4]{question, header ≤12, options[2–4]{label, description, preview?},
multiSelect}}`. An option's `preview` (a code or layout mock-up) is kept on the option and
shown beside it as text. The `answers`, `annotations` and `metadata` Claude Code's own
permission component fills in are not the model's, and are dropped.

Result: `{questions, answers: {<full question text>: <answer>}, annotations?: {<question
text>: {notes?, unanswered?: skipped | replied_in_chat | dismissed}}, response?}` with
several choices joined by ", ", and the text

    User has answered your questions: "Q"="A", "Q2"="A2". You can now continue with the
    user's answers in mind.

Answers are keyed by the question's full text, never by an index: the model then reads
each answer beside its own question.

Choices made here for what the product's contract leaves open:

- Text typed beside a chosen option is that question's `notes` annotation (the answer is
  the option), and the text shows it: `"Q"="A" (the user noted: "...")`. Text typed
  instead of an option is the answer itself.
- A question left unanswered is out of `answers` and annotated with why: `skipped` (also
  for one that timed out or had no one to answer), `replied_in_chat` when the user wrote
  a chat message instead (that message is `response`), `dismissed` when the ask was
  cancelled. The text names skipped questions after the answered pairs ("The user skipped
  "Q2"; ...") so the model does not read a blank.
- An empty answer never reads as consent: a question answered with no option selected
  reads `"Q"=(none of the options: the user selected nothing)`, and a result with no
  answer at all never says "User has answered your questions".
- `questions` echoes each question's text and header: the result does not carry the
  options, so they are not repeated.
- Every other outcome (all skipped, timed out, unavailable, redirected, cancelled) reads
  as the canonical sentence (docs/contract.md#results), with the answers that exist in `answers`.
"""

from __future__ import annotations

from typing import Any

from midturn.contract._models import AskResult, Limits, QuestionAnswer, ToolOutput
from midturn.contract._options import MAX_PREVIEW_CHARS
from midturn.contract._render import canonical_text, quote
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

__all__ = ["ClaudeDialect"]


def _description(limits: Limits) -> str:
    options = span(limits.min_options, limits.max_options)
    questions = span(1, limits.max_questions)
    header = limits.max_header_chars
    return (
        f"Ask the user {questions} multiple-choice questions and wait for the answers, within "
        "this same turn. Use it only when you cannot continue without the user's decision: a "
        "bounded choice between a few options. Ask once, with every question you need in one "
        "call; do not ask again about anything answered or skipped. Give each question a "
        f"short header (at most {header} characters) and {options} distinct options with a "
        "description of each; set multiSelect to true when several may apply. To recommend "
        'an option, put it first and end its label with "(Recommended)". Never add an '
        '"Other" option: the user can always type their own answer. For open-ended '
        "questions, reply in ordinary text instead."
    )


_SHAPE = (
    '{"questions": [{"question", "header", "options": [{"label", "description"}], "multiSelect"}]}'
)
_FOREIGN = CANONICAL_QUESTION_KEYS | {"id", "multi", "recommended"}
_FILLED_IN = ("answers", "annotations", "metadata")
_NOTHING = "(none of the options: the user selected nothing)"
_WHY = {"cancelled": "dismissed"}


def _noted(answer: QuestionAnswer) -> bool:
    """Whether the user typed text beside a chosen option: a note, not the answer."""
    return bool(answer.selected) and answer.text is not None and not answer.is_secret


def _answer(answer: QuestionAnswer) -> str:
    if _noted(answer):
        return ", ".join(answer.selected)
    return answer.answer or ""


def _pair(answer: QuestionAnswer) -> str:
    shown = _answer(answer)
    pair = f'"{answer.question}"="{shown}"' if shown else f'"{answer.question}"={_NOTHING}'
    if _noted(answer) and answer.text is not None:
        pair += f" (the user noted: {quote(answer.text)})"
    return pair


def _annotations(result: AskResult) -> dict[str, dict[str, str]]:
    notes: dict[str, dict[str, str]] = {}
    for answer in result.answers:
        if answer.status == "answered":
            if _noted(answer) and answer.text is not None:
                notes[answer.question] = {"notes": answer.text}
        elif result.outcome == "redirected":
            notes[answer.question] = {"unanswered": "replied_in_chat"}
        else:
            notes[answer.question] = {"unanswered": _WHY.get(answer.status, "skipped")}
    return notes


class ClaudeDialect(Dialect):
    """Claude Code's `AskUserQuestion`: answers keyed by question text."""

    name = "claude"
    tool_name = "AskUserQuestion"

    def to_canonical(self, tool_input: Any) -> dict[str, Any]:
        data = require_object(tool_input, _SHAPE)
        asked = {key: value for key, value in data.items() if key not in _FILLED_IN}
        return map_questions(asked, multi_select_as_multi)

    def render(self, result: AskResult) -> ToolOutput:
        answered = [a for a in result.answers if a.status == "answered"]
        data: dict[str, Any] = {
            "questions": [{"question": a.question, "header": a.header} for a in result.answers],
            "answers": {a.question: _answer(a) for a in answered},
        }
        annotations = _annotations(result)
        if annotations:
            data["annotations"] = annotations
        if result.outcome == "redirected" and result.message is not None:
            data["response"] = result.message
        if result.outcome != "answered" or not answered:
            return ToolOutput(text=canonical_text(result), data=data)
        text = f"User has answered your questions: {', '.join(_pair(a) for a in answered)}."
        skipped = [a.question for a in result.answers if a.status != "answered"]
        if skipped:
            names = ", ".join(f'"{question}"' for question in skipped)
            text += f" The user skipped {names}; use your best judgement there."
        text += " You can now continue with the user's answers in mind."
        return ToolOutput(text=text, data=data)

    def description(self, limits: Limits) -> str:
        return _description(limits)

    def input_schema(self, limits: Limits) -> dict[str, Any]:
        option = option_object(
            limits,
            label="The option the user picks: 1-5 words.",
            description="What choosing it means, or its trade-off.",
            required=("label", "description"),
        )
        option["properties"]["preview"] = {
            "type": "string",
            "maxLength": MAX_PREVIEW_CHARS,
            "description": "Optional: a short code or layout mock-up shown beside the option.",
        }
        header = f"A short label for the question, at most {limits.max_header_chars} characters."
        question = closed_object(
            {
                "question": question_text(limits),
                "header": string(limits.max_header_chars, header),
                "options": options_array(
                    limits, option, f"{options_span(limits)} {EXCLUSIVE_OPTIONS}"
                ),
                "multiSelect": several(),
            },
            ["question", "header", "options", "multiSelect"],
        )
        questions = questions_array(
            limits, question, f"1-{limits.max_questions} questions to ask together."
        )
        return closed_object({"questions": questions}, ["questions"])

    def matches(self, tool_input: Any) -> int:
        """4 when every question has `multiSelect` and a `header` (Claude Code's required
        fields), 3 when every question has `multiSelect`, 2 when some do; 0 when a key
        Claude's shape lacks (`id`, `kind`, ...) is present."""
        questions = question_dicts(tool_input)
        if questions is None or CANONICAL_ASK_KEYS & tool_input.keys():
            return 0
        if any(_FOREIGN & q.keys() for q in questions):
            return 0
        flagged = sum("multiSelect" in q for q in questions)
        if not flagged:
            return 0
        if flagged < len(questions):
            return 2
        return 4 if all("header" in q for q in questions) else 3
