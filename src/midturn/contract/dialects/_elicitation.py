"""The `mcp-elicitation` dialect: an MCP server's `elicitation/create` form, asked as a
midturn ask, and the answer given back as an `ElicitResult`.

Input: the request's params, `{mode?: "form", message, requestedSchema: {type: "object",
properties: {<name>: <schema>}, required?: [...]}}` (a whole JSON-RPC request
`{method: "elicitation/create", params}` is read too). Each property becomes one question,
in order, its id the property name:

| property schema | question |
|---|---|
| `string` (`minLength`, `maxLength`, `format`) | text; the bounds and format as a note |
| `number`, `integer` (`minimum`, `maximum`) | text, with a note saying what number to type |
| `boolean` | a Yes / No choice |
| `string` with `enum` (legacy `enumNames`) or `oneOf: [{const, title}]` | a choice of titles |
| `array` of `items.enum` or `items.anyOf: [{const, title}]` | a multi choice (`minItems`…) |

The form's `message` opens the first question; a property's `title` (else its name) and
`description` make its question; `default` is the recommended option (or a text
question's placeholder). Choices never take Other: a form's values are the schema's.

Result: `{"action": "accept", "content": {...}}` when the user answered, `decline` when
they skipped (or skipped a required property), `cancel` when the ask was cancelled,
timed out, redirected or could not be shown. `render` sees only the canonical result, so
its `content` holds the answers as midturn shows them (titles, `Yes`, typed text);
`elicit_result(params, result)` is the same result typed per the schema: enum constants,
booleans, numbers, and lists for multi-select. A host answering an MCP client calls that.

No `mcp` import: this is plain data, like every dialect.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from midturn.contract._models import AskResult, Limits, QuestionAnswer, ToolOutput
from midturn.contract._normalize import derive_header
from midturn.contract._render import canonical_text
from midturn.contract.dialects._base import Dialect
from midturn.contract.dialects._schema import ID_PATTERN, string
from midturn.contract.dialects._shape import as_json, require_object
from midturn.errors import InvalidAsk, Problem

__all__ = ["ElicitationDialect", "elicit_result"]


def _description(limits: Limits) -> str:
    return (
        "Ask the user to fill in a short form and wait for the values, within this same "
        "turn: an MCP elicitation. Use it only for a bounded set of values you cannot "
        "continue without; ask open-ended questions in ordinary text instead. Ask once, "
        f"with every field in one form: a flat object of at most {limits.max_questions} "
        "string, number, integer, boolean and enum properties (an enum of at most "
        f'{limits.max_options} values). Never add an "Other" value to an enum: give the '
        "values that are valid."
    )


_SHAPE = '{"message": "...", "requestedSchema": {"type": "object", "properties": {...}}}'
_ID = re.compile(ID_PATTERN)
_YES, _NO = "Yes", "No"
_FORMATS = {"email": "an email address", "uri": "a URI", "date": "a date (YYYY-MM-DD)"}
_FORMATS["date-time"] = "a date and time (ISO 8601)"


def _problem(path: str, message: str) -> InvalidAsk:
    return InvalidAsk([Problem(path, message)])


def _params(tool_input: Any) -> dict[str, Any]:
    data = require_object(tool_input, _SHAPE)
    if data.get("method") == "elicitation/create" and isinstance(data.get("params"), dict):
        data = data["params"]
    if data.get("mode", "form") != "form":
        raise _problem(
            "mode", f"{data.get('mode')!r} given; only a form elicitation can be asked here"
        )
    schema = data.get("requestedSchema")
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        raise _problem("requestedSchema", f"missing or not an object; give {_SHAPE}")
    if not schema["properties"]:
        raise _problem("requestedSchema.properties", "empty; give at least one property")
    return data


def _choices(prop: dict[str, Any]) -> list[tuple[str, str]] | None:
    """(value, title) pairs of an enum property, single or multi; None if not an enum."""
    source = prop.get("items") if prop.get("type") == "array" else prop
    if not isinstance(source, dict):
        return None
    titled = source.get("oneOf", source.get("anyOf"))
    if isinstance(titled, list):
        return [(str(o.get("const")), str(o.get("title", o.get("const")))) for o in titled]
    values = source.get("enum")
    if not isinstance(values, list):
        return None
    names = source.get("enumNames")
    if isinstance(names, list) and len(names) == len(values):
        return [(str(v), str(n)) for v, n in zip(values, names, strict=True)]
    return [(str(v), str(v)) for v in values]


def _note(prop: dict[str, Any]) -> str | None:
    kind = prop.get("type")
    low, high = prop.get("minimum"), prop.get("maximum")
    if kind in ("number", "integer"):
        what = "A whole number" if kind == "integer" else "A number"
        if low is not None and high is not None:
            return f"{what} from {low} to {high}."
        if low is not None:
            return f"{what}, at least {low}."
        if high is not None:
            return f"{what}, at most {high}."
        return f"{what}."
    parts = []
    if prop.get("format") in _FORMATS:
        parts.append(_FORMATS[prop["format"]])
    if prop.get("minLength") is not None:
        parts.append(f"at least {prop['minLength']} characters")
    if prop.get("maxLength") is not None:
        parts.append(f"at most {prop['maxLength']} characters")
    return f"Give {', '.join(parts)}." if parts else None


def _question(name: str, prop: Any, lead: str | None, limits: Limits) -> dict[str, Any]:
    where = f"requestedSchema.properties.{name}"
    if not _ID.match(name):
        raise _problem(where, "a property name must be 1-64 letters, digits, '_', '.' or '-'")
    if not isinstance(prop, dict):
        raise _problem(where, 'not an object; give a schema such as {"type": "string"}')
    given = prop.get("title")
    title = given.strip() if isinstance(given, str) else ""
    described = prop.get("description")
    description = described.strip() if isinstance(described, str) else ""
    paragraphs = [lead] if lead else []
    paragraphs += [part for part in (title, description) if part] or [name]
    kind = prop.get("type")
    choices = _choices(prop)
    header = derive_header(title or name, limits.max_header_chars)
    question: dict[str, Any] = {"id": name, "header": header}
    default = prop.get("default")
    if kind == "boolean":
        question.update(kind="choice", options=[{"label": _YES}, {"label": _NO}], allow_other=False)
        if isinstance(default, bool):
            question["recommended"] = 0 if default else 1
    elif choices is not None:
        values = [value for value, _ in choices]
        options = [{"label": title} for _, title in choices]
        question.update(kind="choice", options=options, allow_other=False)
        first = default[0] if isinstance(default, list) and default else default
        if first in values:
            question["recommended"] = values.index(first)
        if kind == "array":
            question.update(multi=True, min_choices=prop.get("minItems", 1))
            if prop.get("maxItems") is not None:
                question["max_choices"] = prop["maxItems"]
    elif kind in ("string", "number", "integer"):
        question["kind"] = "text"
        note = _note(prop)
        if note:
            paragraphs.append(note)
        if default is not None and not isinstance(default, bool):
            question["placeholder"] = str(default)
    else:
        raise _problem(
            f"{where}.type",
            f"{kind!r} given; a form property is a string, number, integer, boolean, an enum "
            "or an array of enum values",
        )
    question["question"] = "\n\n".join(paragraphs)
    return question


class ElicitationDialect(Dialect):
    """An MCP `elicitation/create` form: one question per property, an ElicitResult back."""

    name = "mcp-elicitation"
    tool_name = "elicit"
    limits = Limits(max_questions=8, max_options=10, max_question_chars=2000)

    def to_canonical(self, tool_input: Any) -> dict[str, Any]:
        params = _params(tool_input)
        message = params.get("message")
        lead = message.strip() if isinstance(message, str) and message.strip() else None
        questions = []
        for index, (name, prop) in enumerate(params["requestedSchema"]["properties"].items()):
            questions.append(_question(name, prop, lead if index == 0 else None, self.limits))
        return {"questions": questions}

    def render(self, result: AskResult) -> ToolOutput:
        data = _result(result, {}, None)
        text = as_json(data) if data["action"] == "accept" else canonical_text(result)
        return ToolOutput(text=text, data=data)

    def description(self, limits: Limits | None = None) -> str:
        return _description(limits or self.limits)

    def input_schema(self, limits: Limits | None = None) -> dict[str, Any]:
        limits = limits or self.limits
        return {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["form"], "description": "Always form."},
                "message": string(limits.max_question_chars, "What the form is for."),
                "requestedSchema": {
                    "type": "object",
                    "description": (
                        'A flat JSON Schema {"type": "object", "properties": {...}, '
                        '"required": [...]} of string, number, integer, boolean and enum '
                        "properties."
                    ),
                },
            },
            "required": ["message", "requestedSchema"],
        }

    def matches(self, tool_input: Any) -> int:
        """10 with a `requestedSchema` object (or an `elicitation/create` request); 0
        otherwise."""
        if not isinstance(tool_input, dict):
            return 0
        if tool_input.get("method") == "elicitation/create":
            return 10
        return 10 if isinstance(tool_input.get("requestedSchema"), dict) else 0


def _typed(answer: QuestionAnswer, prop: dict[str, Any]) -> Any:
    kind = prop.get("type")
    if kind == "boolean" and answer.selected:
        return answer.selected[0] == _YES
    choices = _choices(prop)
    if choices is not None:
        by_title = {title: value for value, title in choices}
        values = [by_title.get(label, label) for label in answer.selected]
        return values if kind == "array" else (values[0] if values else None)
    text = answer.text if answer.text is not None else answer.answer
    if kind in ("number", "integer") and text is not None:
        try:
            number = json.loads(text.strip())
        except ValueError:
            return text  # the server's own validation says what is wrong with it
        if isinstance(number, bool) or not isinstance(number, int | float):
            return text
        if not math.isfinite(number):  # JSON reads NaN and Infinity; no schema means them
            return text
        if kind == "integer" and isinstance(number, float) and number.is_integer():
            return int(number)
        return number
    return text


def _display(answer: QuestionAnswer) -> Any:
    return answer.answer


def _result(
    result: AskResult, properties: dict[str, Any], required: list[str] | None
) -> dict[str, Any]:
    if result.outcome != "answered":
        return {"action": "decline" if result.outcome == "skipped" else "cancel"}
    answered = {a.id: a for a in result.answers if a.status == "answered"}
    if required and any(name not in answered for name in required):
        return {"action": "decline"}
    content: dict[str, Any] = {}
    for name, answer in answered.items():
        prop = properties.get(name)
        content[name] = _typed(answer, prop) if isinstance(prop, dict) else _display(answer)
    return {"action": "accept", "content": content}


def elicit_result(params: Any, result: AskResult) -> dict[str, Any]:
    """The `ElicitResult` for `result`, its content typed per the form's
    `requestedSchema`: enum constants in place of titles, booleans, numbers (a typed value
    that is no number is passed on as typed, for the server to refuse), and lists for
    multi-select. A required property left unanswered declines the form."""
    data = _params(params)
    schema = data["requestedSchema"]
    required = schema.get("required")
    names = [n for n in required if isinstance(n, str)] if isinstance(required, list) else []
    return _result(result, schema["properties"], names)
