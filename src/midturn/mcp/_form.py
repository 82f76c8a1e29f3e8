"""An ask as one MCP elicitation form, and the form's answer read back (docs/mcp.md).

One property per question, keyed by the question's id:

- single choice: a string with a titled enum (`oneOf` of `{const, title}`); the const is
  the option's label, the title adds its description ("label — description");
- multi choice: an array whose `items.anyOf` is the titled enum, with `maxItems` (and
  `minItems` when no typed answer can count towards it);
- text: a string (`maxLength` the text limit);
- the recommended option is the property's `default`;
- Other (a typed answer) is a sibling string property `<id>_other`.

No property is required: leaving one empty skips that question. Reading back goes through
`midturn.parse_answer` (lenient, docs/contract.md#answers); content with no sound reading raises
`InvalidAnswer`, and the caller asks again. A secret question never goes into a form.
"""

from __future__ import annotations

from typing import Any

from midturn.contract._interactions import Decision, PermissionRequest
from midturn.contract._models import Ask, Limits, Question
from midturn.errors import InvalidAnswer

__all__ = [
    "OTHER_SUFFIX",
    "ask_form",
    "has_secret",
    "permission_form",
    "read_ask_form",
    "read_permission_form",
]

OTHER_SUFFIX = "_other"
_TEXT_LIMIT = Limits().max_text_chars
_DECISIONS: tuple[tuple[Decision, str], ...] = (
    ("allow", "Allow"),
    ("deny", "Deny"),
    ("allow_for_turn", "Allow for the rest of this turn"),
)
_DETAILS_SHOWN = 4000


def has_secret(ask: Ask) -> bool:
    return any(question.secret for question in ask.questions)


def _title(question: Question, index: int) -> str:
    option = question.options[index]
    return f"{option.label} — {option.description}" if option.description else option.label


def _choices(question: Question) -> list[dict[str, str]]:
    return [
        {"const": option.label, "title": _title(question, index)}
        for index, option in enumerate(question.options)
    ]


def _property(question: Question) -> dict[str, Any]:
    base: dict[str, Any] = {"title": question.header, "description": question.question}
    if question.kind == "text":
        return {"type": "string", **base, "maxLength": _TEXT_LIMIT}
    recommended = (
        question.options[question.recommended].label if question.recommended is not None else None
    )
    if not question.multi:
        prop = {"type": "string", **base, "oneOf": _choices(question)}
        if recommended is not None:
            prop["default"] = recommended
        return prop
    prop = {"type": "array", **base, "items": {"anyOf": _choices(question)}}
    if not question.allow_other and question.min_choices > 1:
        prop["minItems"] = question.min_choices
    if question.max_choices is not None:
        prop["maxItems"] = question.max_choices
    if recommended is not None:
        prop["default"] = [recommended]
    return prop


def _other_key(question: Question) -> str:
    return question.id + OTHER_SUFFIX


def ask_form(ask: Ask, problem: str | None = None) -> tuple[str, dict[str, Any]]:
    """`(message, requestedSchema)` for the ask; `problem` (why the last answer could not
    be read) leads the message when asking again."""
    properties: dict[str, Any] = {}
    for question in ask.questions:
        properties[question.id] = _property(question)
        if question.kind == "choice" and question.allow_other:
            properties[_other_key(question)] = {
                "type": "string",
                "title": f"{question.header}: other",
                "description": "Or type your own answer"
                + (" (it replaces the choice above)" if not question.multi else ""),
                "maxLength": _TEXT_LIMIT,
            }
    if len(ask.questions) == 1:
        message = ask.questions[0].question
    else:
        lines = [f"- {q.header}: {q.question}" for q in ask.questions]
        message = f"The agent asks {len(ask.questions)} questions:\n" + "\n".join(lines)
    message += "\n(Leave a question empty to skip it.)"
    if problem:
        message = f"That answer could not be used: {problem}\n\n{message}"
    return message, {"type": "object", "properties": properties}


def _text(value: Any) -> str | None:
    """A typed Other value: None when empty."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidAnswer(f"the typed answer is {type(value).__name__}; type text")
    return value if value.strip() else None


def _present(value: Any) -> bool:
    return value is not None and value != "" and value != []


def read_ask_form(ask: Ask, content: Any) -> dict[str, Any]:
    """The accepted form's content as a payload for `parse_answer` (keyed by question
    id). Raises `InvalidAnswer` for content no form of this ask could have sent."""
    if not isinstance(content, dict):
        raise InvalidAnswer("the form came back without its fields; fill it in again")
    known = {q.id for q in ask.questions}
    known |= {_other_key(q) for q in ask.questions if q.kind == "choice" and q.allow_other}
    unknown = sorted(str(key) for key in content if key not in known)
    if unknown:
        raise InvalidAnswer(f"the form has no field {', '.join(unknown)}; fill it in again")
    answers: dict[str, Any] = {}
    for question in ask.questions:
        value = content.get(question.id)
        other = _text(content.get(_other_key(question)))
        if question.kind == "text" or question.secret:
            answers[question.id] = value if _present(value) else None
        elif not question.multi:
            if other is not None:  # the typed answer wins over a (perhaps prefilled) choice
                answers[question.id] = {"text": other}
            else:
                answers[question.id] = value if _present(value) else None
        else:
            chosen = value if isinstance(value, list) else ([value] if _present(value) else [])
            picked = [*chosen, *([other] if other is not None else [])]
            answers[question.id] = picked or None
    return {"answers": answers}


def permission_form(request: PermissionRequest) -> tuple[str, dict[str, Any]]:
    message = f"Allow {request.tool}? {request.summary}\nRisk: {request.risk}"
    if request.details:
        details = request.details
        if len(details) > _DETAILS_SHOWN:
            details = details[:_DETAILS_SHOWN] + "…"
        message += f"\n\n{details}"
    schema = {
        "type": "object",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Decision",
                "oneOf": [{"const": value, "title": title} for value, title in _DECISIONS],
            },
            "message": {
                "type": "string",
                "title": "Note for the agent",
                "description": "Optional; told to the agent when you deny",
                "maxLength": 2000,
            },
        },
        "required": ["decision"],
    }
    return message, schema


def read_permission_form(content: Any) -> tuple[Decision, str | None]:
    """`(decision, message)` from an accepted permission form; raises `InvalidAnswer`."""
    if not isinstance(content, dict) or set(content) - {"decision", "message"}:
        raise InvalidAnswer("the form needs a decision: allow, deny or allow_for_turn")
    decision = content.get("decision")
    for value, title in _DECISIONS:
        if isinstance(decision, str) and decision.strip().casefold() in (value, title.casefold()):
            note = content.get("message")
            if note is not None and not isinstance(note, str):
                raise InvalidAnswer("the note is not text; type it again")
            return value, (note.strip() or None) if note else None
    raise InvalidAnswer("the form needs a decision: allow, deny or allow_for_turn")
