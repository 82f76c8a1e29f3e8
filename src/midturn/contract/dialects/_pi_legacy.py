"""The `pi-legacy` dialect: the Pi extension's legacy `askUserQuestion` (docs/dialects.md).

Input, one question at the top level: `{question, kind: select | multi-select | text |
editor, options[] (strings), allowCustom, default, timeoutMs, sensitivity: public |
internal | secret, reason}`. `allowCustom` becomes `allow_other`; `default` the
recommended option (or a text question's placeholder); `timeoutMs` becomes `timeout_s`;
a `secret` question is a secret (docs/runtime.md#secrets) whatever its kind: for a select, the
selection and any typed custom answer alike live in memory only (the store, the events
and the streams hold `[secret provided]`); a `reason` is shown under the question.

Result: `Answer: …` with details `{questionId, value, visibleValue, cancelled, timedOut,
sensitivity}`. For `sensitivity: secret` the visible answer is `[REDACTED:secret-answer]`
and `value` is absent, whatever the kind.

The canonical result does not carry the question's kind or sensitivity, so they ride in
the question id this dialect assigns: `<kind>.<sensitivity>` (e.g. `select.public`),
which is also the `questionId` in the details. A result from another dialect's ask has
no such id; it reads as `public` (or `secret` for a secret answer).

Choices made here for what the product's contract leaves open: a skipped question reads
`Answer: (cancelled by the user)` with `cancelled: true`; a timed-out one `Answer: (timed
out)` with `timedOut: true`; both add the nudge to proceed. Unavailable, redirected and
cancelled read as the canonical sentence (docs/contract.md#results).
"""

from __future__ import annotations

from typing import Any

from midturn.contract._checks import kind_of
from midturn.contract._models import (
    MAX_TIMEOUT_S,
    AskResult,
    Limits,
    QuestionAnswer,
    ToolOutput,
)
from midturn.contract._render import canonical_text
from midturn.contract.dialects._base import Dialect
from midturn.contract.dialects._schema import (
    boolean,
    closed_object,
    options_array,
    options_span,
    question_text,
    span,
)
from midturn.contract.dialects._shape import PROCEED, require_object
from midturn.errors import InvalidAsk, Problem

__all__ = ["PiLegacyDialect"]

REDACTED = "[REDACTED:secret-answer]"


def _description(limits: Limits) -> str:
    options = span(limits.min_options, limits.max_options)
    return (
        "Ask the user one question and wait for the answer, within this same turn. Use it "
        "only for a bounded decision or a short value you cannot continue without; prefer a "
        "reasonable default otherwise, and ask open-ended questions in ordinary text. Ask "
        "once and do not ask again about anything answered or cancelled. kind is select or "
        f"multi-select (with {options} distinct option strings), text or editor (typed). "
        'Never add an "Other" option: set allowCustom to let the user type their own answer. '
        'Set sensitivity to "secret" for a value you must not see, such as a password.'
    )


_SHAPE = '{"question": "...", "kind": "select", "options": ["...", "..."]}'
_KINDS = {
    "select": ("choice", False),
    "multi-select": ("choice", True),
    "text": ("text", False),
    "editor": ("text", False),
}
_SENSITIVITIES = ("public", "internal", "secret")
_OWN_KEYS = ("allowCustom", "sensitivity", "timeoutMs", "default", "reason")


def _pick(value: Any, allowed: tuple[str, ...], field: str, problems: list[Problem]) -> str:
    if isinstance(value, str) and value in allowed:
        return value
    shown = repr(value) if isinstance(value, str) else kind_of(value)
    choices = ", ".join(f'"{name}"' for name in allowed)
    problems.append(Problem(field, f"{shown} given; give one of {choices}"))
    return allowed[0]


def _timeout_s(value: Any, problems: list[Problem]) -> float | None:
    if value is None:
        return None
    highest = MAX_TIMEOUT_S * 1000
    wanted = f"give milliseconds above 0 and at most {highest}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        problems.append(Problem("timeoutMs", f"{kind_of(value)} given; {wanted}"))
        return None
    if not 0 < value <= highest:  # compared as given: a huge int never becomes a float
        shown = f"{value:g}" if isinstance(value, float) or abs(value) < 10**20 else "a number"
        problems.append(Problem("timeoutMs", f"{shown} given; {wanted}"))
        return None
    return value / 1000


def _tags(answer: QuestionAnswer) -> tuple[str | None, str]:
    kind, _, sensitivity = answer.id.partition(".")
    if kind in _KINDS and sensitivity in _SENSITIVITIES:
        return kind, sensitivity
    return None, "secret" if answer.is_secret else "public"


def _value(answer: QuestionAnswer, kind: str | None) -> Any:
    if answer.status != "answered":
        return None
    values: list[str] = [*answer.selected, *([answer.text] if answer.text is not None else [])]
    if kind == "multi-select" or (kind is None and len(values) > 1):
        return values
    return values[0] if values else None


def _details(answer: QuestionAnswer, timed_out: bool) -> dict[str, Any]:
    kind, sensitivity = _tags(answer)
    redacted = sensitivity == "secret" or answer.is_secret
    details: dict[str, Any] = {"questionId": answer.id}
    if not redacted:
        details["value"] = _value(answer, kind)
    visible = answer.answer if answer.status == "answered" else None
    details["visibleValue"] = REDACTED if redacted and visible is not None else visible
    details["cancelled"] = answer.status in ("skipped", "cancelled")
    details["timedOut"] = timed_out
    details["sensitivity"] = sensitivity
    return details


def _line(details: dict[str, Any], answer: QuestionAnswer) -> str:
    visible = details["visibleValue"]
    if visible is None:
        return "(timed out)" if details["timedOut"] else "(cancelled by the user)"
    return f"{visible} (auto-selected after timeout)" if answer.auto_selected else visible


class PiLegacyDialect(Dialect):
    """The Pi extension's legacy `askUserQuestion`: one question, redacted secrets."""

    name = "pi-legacy"
    tool_name = "askUserQuestion"
    limits = Limits(max_questions=1)
    secret_choices = True

    def to_canonical(self, tool_input: Any) -> dict[str, Any]:
        data = require_object(tool_input, _SHAPE)
        problems: list[Problem] = []
        if "question" not in data and "questions" in data:
            raise InvalidAsk(
                [Problem("questions", f"askUserQuestion asks one question; give {_SHAPE}")]
            )
        options = data.get("options")
        kind = data.get("kind")
        if kind is None or kind == "":
            kind = "select" if options else "text"
        kind = _pick(kind, tuple(_KINDS), "kind", problems)
        sensitivity = _pick(
            data.get("sensitivity", "public"), _SENSITIVITIES, "sensitivity", problems
        )
        timeout_s = _timeout_s(data.get("timeoutMs"), problems)
        if problems:
            raise InvalidAsk(problems)
        canonical_kind, multi = _KINDS[kind]
        question: dict[str, Any] = {
            "id": f"{kind}.{sensitivity}",
            "question": self._question_text(data),
            "kind": canonical_kind,
        }
        default = data.get("default")
        if canonical_kind == "choice":
            if isinstance(options, list):
                options = [{"label": o} if isinstance(o, str) else o for o in options]
            question["options"] = options
            if multi:
                question["multi"] = True
            if default is not None:
                question["recommended"] = default
            if data.get("allowCustom") is not None:
                question["allow_other"] = data["allowCustom"]
            if sensitivity == "secret":  # the selection and any typed answer: both secret
                question["secret"] = True
        else:
            if options:
                question["options"] = options  # refused by validation, with its reason
            if sensitivity == "secret":
                question["secret"] = True
            if isinstance(default, str) and default.strip():
                question["placeholder"] = default
        canonical: dict[str, Any] = {"questions": [question]}
        if timeout_s is not None:
            canonical["timeout_s"] = timeout_s
        return canonical

    def _question_text(self, data: dict[str, Any]) -> Any:
        question, reason = data.get("question"), data.get("reason")
        if not (isinstance(question, str) and isinstance(reason, str) and reason.strip()):
            return question
        joined = f"{question.strip()}\n\n{reason.strip()}"
        return joined if len(joined) <= self.limits.max_question_chars else question

    def render(self, result: AskResult) -> ToolOutput:
        timed_out = result.outcome == "timed_out"
        items = [(_details(answer, timed_out), answer) for answer in result.answers]
        data: Any = [details for details, _ in items]
        if len(items) == 1:
            details, answer = items[0]
            data = details
            text = f"Answer: {_line(details, answer)}"
        else:
            text = "\n".join(f"Answer to {a.header}: {_line(d, a)}" for d, a in items)
        if not items:
            text = canonical_text(result)
        elif result.outcome in ("skipped", "timed_out") and not any(
            a.status == "answered" for a in result.answers
        ):
            text = f"{text}. {PROCEED}"
        elif result.outcome not in ("answered", "skipped", "timed_out"):
            text = canonical_text(result)
        return ToolOutput(text=text, data=data)

    def description(self, limits: Limits) -> str:
        return _description(limits)

    def input_schema(self, limits: Limits) -> dict[str, Any]:
        option = {"type": "string", "maxLength": limits.max_label_chars}
        options = f"For select kinds: {options_span(limits)} distinct options; never Other."
        return closed_object(
            {
                "question": question_text(limits),
                "kind": {
                    "type": "string",
                    "enum": list(_KINDS),
                    "description": "select or multi-select (with options), text or editor.",
                },
                "options": options_array(limits, option, options),
                "allowCustom": boolean("Whether the user may type an answer of their own."),
                "default": {
                    "type": "string",
                    "description": "The option you recommend, or a text question's hint.",
                },
                "timeoutMs": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Optional: milliseconds to wait before giving up.",
                },
                "sensitivity": {
                    "type": "string",
                    "enum": list(_SENSITIVITIES),
                    "description": "secret hides the answer from you (a password, a token).",
                },
                "reason": {
                    "type": "string",
                    "description": "Why you need the answer, shown to the user.",
                },
            },
            ["question"],
        )

    def matches(self, tool_input: Any) -> int:
        """10 with a top-level `question` and a Pi `kind`; 8 with a top-level `question`
        and a Pi-only key (`allowCustom`, `sensitivity`, `timeoutMs`, ...) or string
        options; 5 with a bare top-level `question`; 0 when `questions`, `question_id` or
        `title` is present."""
        if not isinstance(tool_input, dict) or "question" not in tool_input:
            return 0
        if {"questions", "question_id", "title"} & tool_input.keys():
            return 0
        kind = tool_input.get("kind")
        if isinstance(kind, str) and kind in _KINDS:
            return 10
        options = tool_input.get("options")
        strings = isinstance(options, list) and all(isinstance(o, str) for o in options)
        if any(key in tool_input for key in _OWN_KEYS) or (options and strings):
            return 8
        return 5
