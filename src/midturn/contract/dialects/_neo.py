"""The `neo` dialect: the Go agent gateway's `ask_user` (docs/dialects.md).

Input, exactly one question at the top level: `{question_id, title, description?, kind:
single_choice | multi_choice | text, options[]{label, description?}, required,
allow_skip, max_choices, timeout_sec}`. `title` is the question; a `description` is added
to it as a second paragraph. `timeout_sec` becomes `timeout_s`, `max_choices` bounds a
multi_choice question.

Result: one JSON tool result `{status: answered | skipped | timeout, question_id,
values[], message}`: `values` are the selected option labels, `message` the typed text
(a text answer, or Other). A timeout is an error result (`is_error`).

Choices made here for what the product's contract leaves open:

- `required` and `allow_skip` are accepted and not enforced: every midturn client lets the
  user skip, and a skip reads `status: skipped` so the model proceeds;
- redirected, unavailable and cancelled read `status: skipped` in `data` (a redirect
  carries the user's chat text in `message`), and the canonical sentence (docs/contract.md#results)
  as the text, since those need words the status cannot carry;
- a secret answer's `message` is `[secret provided]` (neo itself asks no secrets);
- neo's gateway is written in Go, whose structs marshal every field, the unset ones as
  zero values. So `""` (`question_id`, `title`, `description`, `kind`), `0`
  (`max_choices`, `timeout_sec`) and `null` (`options`) read as *not given*: no id (the
  default one), no question, no description, the kind inferred from the options, no
  bound on the choices, no timeout. A zero is never a value of its own there: an empty
  question, a bound of no choices and a timeout of no time have no sound reading.
"""

from __future__ import annotations

from typing import Any

from midturn.contract._checks import kind_of
from midturn.contract._models import AskResult, Limits, QuestionAnswer, ToolOutput
from midturn.contract._render import canonical_text
from midturn.contract.dialects._base import Dialect
from midturn.contract.dialects._schema import (
    closed_object,
    identifier,
    option_object,
    options_array,
    options_span,
    question_text,
    span,
)
from midturn.contract.dialects._shape import as_json, require_object
from midturn.errors import InvalidAsk, Problem

__all__ = ["NeoDialect"]


def _description(limits: Limits) -> str:
    options = span(limits.min_options, limits.max_options)
    return (
        "Ask the user one structured question and wait for the answer, within this same run. "
        "Use it only for a bounded decision you cannot continue without; prefer a reasonable "
        "default otherwise, and ask open-ended questions in ordinary text. Ask once, and do "
        "not ask again about anything answered or skipped. kind is single_choice or "
        f"multi_choice (with {options} distinct options) or text (a short typed value). Never "
        'add an "Other" option: the user can always type their own answer.'
    )


_SHAPE = '{"question_id": "...", "title": "...", "kind": "single_choice", "options": [...]}'
_KINDS = {
    "single_choice": ("choice", False),
    "multi_choice": ("choice", True),
    "text": ("text", False),
}


def _problem(path: str, message: str) -> InvalidAsk:
    return InvalidAsk([Problem(path, message)])


def _given(data: dict[str, Any], key: str) -> Any:
    """The value of `key`, or None when it is missing or a Go zero value (`""`, `0`,
    `null`): the fields read through here have no sound zero of their own."""
    value = data.get(key)
    if value == "" or (isinstance(value, int) and not isinstance(value, bool) and value == 0):
        return None
    return value


def _question_text(data: dict[str, Any]) -> Any:
    title = _given(data, "title")
    if title is None:
        title = _given(data, "question")  # "question" read as an alias
    if title is None:
        raise _problem("title", "missing; give the question to ask as a string")
    description = data.get("description")
    if isinstance(title, str) and isinstance(description, str) and description.strip():
        return f"{title.strip()}\n\n{description.strip()}"
    return title


def _item(answer: QuestionAnswer, result: AskResult) -> dict[str, Any]:
    message: str | None = None
    if answer.is_secret:
        message = answer.answer
    elif answer.text is not None:
        message = answer.text
    elif result.outcome == "redirected":
        message = result.message
    status = "skipped"
    if result.outcome == "timed_out":
        status = "timeout"
    elif answer.status == "answered":
        status = "answered"
    return {
        "status": status,
        "question_id": answer.id,
        "values": list(answer.selected),
        "message": message,
    }


class NeoDialect(Dialect):
    """The gateway's `ask_user`: one question; status, values and message back."""

    name = "neo"
    tool_name = "ask_user"
    limits = Limits(max_questions=1)

    def to_canonical(self, tool_input: Any) -> dict[str, Any]:
        data = require_object(tool_input, _SHAPE)
        if "questions" in data:
            raise _problem(
                "questions",
                "ask_user takes one question at the top level; give "
                f"{_SHAPE} and call it again for a separate decision",
            )
        question: dict[str, Any] = {"question": _question_text(data)}
        if _given(data, "question_id") is not None:
            question["id"] = data["question_id"]
        kind = _given(data, "kind")
        if kind is None:
            kind = "single_choice" if data.get("options") else "text"
        if not isinstance(kind, str) or kind not in _KINDS:
            shown = repr(kind) if isinstance(kind, str) else kind_of(kind)
            raise _problem("kind", f'{shown} given; give "single_choice", "multi_choice" or "text"')
        question["kind"], multi = _KINDS[kind]
        if data.get("options") is not None:
            question["options"] = data["options"]
        max_choices = _given(data, "max_choices")
        if multi:
            question["multi"] = True
            if max_choices is not None:
                question["max_choices"] = max_choices
        elif max_choices not in (None, 1):
            raise _problem(
                "max_choices", 'applies to kind "multi_choice" only; remove it or change kind'
            )
        canonical: dict[str, Any] = {"questions": [question]}
        timeout = _given(data, "timeout_sec")
        if timeout is not None:
            canonical["timeout_s"] = timeout
        return canonical

    def render(self, result: AskResult) -> ToolOutput:
        items = [_item(answer, result) for answer in result.answers]
        data: Any = items[0] if len(items) == 1 else items
        is_error = result.outcome == "timed_out"
        if result.outcome in ("answered", "skipped", "timed_out") and items:
            return ToolOutput(text=as_json(data), data=data, is_error=is_error)
        return ToolOutput(text=canonical_text(result), data=data)

    def description(self, limits: Limits) -> str:
        return _description(limits)

    def input_schema(self, limits: Limits) -> dict[str, Any]:
        option = option_object(limits)
        timeout: dict[str, Any] = {
            "type": "integer",
            "minimum": 1,
            "description": "Optional: seconds to wait before the question is skipped.",
        }
        if limits.max_timeout_s is not None:
            timeout["maximum"] = int(limits.max_timeout_s)
        options = f"For the choice kinds: {options_span(limits)} distinct options; never Other."
        return closed_object(
            {
                "question_id": identifier("A short id for the question, unique in the run."),
                "title": question_text(limits),
                "description": {
                    "type": "string",
                    "description": "Optional context the user needs to answer.",
                },
                "kind": {
                    "type": "string",
                    "enum": list(_KINDS),
                    "description": "single_choice, multi_choice (with options) or text.",
                },
                "options": options_array(limits, option, options),
                "required": {"type": "boolean"},
                "allow_skip": {"type": "boolean"},
                "max_choices": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "multi_choice only: the most options the user may pick.",
                },
                "timeout_sec": timeout,
            },
            ["question_id", "title", "kind"],
        )

    def matches(self, tool_input: Any) -> int:
        """10 with `question_id` and `kind` (or `title`) at the top level, 6 with one of
        `question_id`, or `title` with `kind`; 0 otherwise."""
        if not isinstance(tool_input, dict) or "questions" in tool_input:
            return 0
        has_id = "question_id" in tool_input
        shaped = "kind" in tool_input or "title" in tool_input
        if has_id and shaped:
            return 10
        if has_id or ("title" in tool_input and "kind" in tool_input):
            return 6
        return 0
