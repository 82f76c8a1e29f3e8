"""The form mapping (one property per question) and reading a form back."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import mcp_types as types
import pytest
from mcp_types._v2025_11_25 import PrimitiveSchemaDefinition
from pydantic import TypeAdapter
from tests._asks import ASK
from tests.mcp_server.conftest import MULTI

from midturn import InvalidAnswer, parse_answer, parse_ask
from midturn.mcp._elicit import _modes
from midturn.mcp._form import ask_form, read_ask_form

_PRIMITIVE: TypeAdapter[Any] = TypeAdapter(PrimitiveSchemaDefinition)


def test_every_property_is_a_primitive_schema_the_sdk_accepts() -> None:
    for tool_input in (ASK, MULTI):
        _, schema = ask_form(parse_ask(tool_input))
        assert schema["type"] == "object"
        for prop in schema["properties"].values():
            _PRIMITIVE.validate_python(prop)


def test_single_choice_is_a_titled_enum_with_descriptions_and_default() -> None:
    ask = parse_ask({**ASK, "questions": [{**ASK["questions"][0], "recommended": 1}]})
    _, schema = ask_form(ask)
    prop = schema["properties"]["db"]
    assert prop["type"] == "string"
    assert prop["title"] == "Database"
    assert prop["description"] == "Which database should the service use?"
    assert prop["oneOf"] == [
        {"const": "PostgreSQL", "title": "PostgreSQL — Managed, scales out"},
        {"const": "SQLite", "title": "SQLite — Embedded, zero setup"},
    ]
    assert prop["default"] == "SQLite"
    assert schema["properties"]["db_other"]["type"] == "string"
    assert "required" not in schema


def test_multi_choice_is_a_titled_enum_array_with_bounds() -> None:
    tool_input = {
        "questions": [
            {**MULTI["questions"][0], "allow_other": False, "min_choices": 2, "max_choices": 3}
        ]
    }
    _, schema = ask_form(parse_ask(tool_input))
    prop = schema["properties"]["langs"]
    assert prop["type"] == "array"
    assert prop["items"]["anyOf"][0] == {"const": "Python", "title": "Python"}
    assert (prop["minItems"], prop["maxItems"]) == (2, 3)
    assert "langs_other" not in schema["properties"]


def test_text_is_a_string() -> None:
    _, schema = ask_form(parse_ask(ASK))
    assert schema["properties"]["name"]["type"] == "string"
    assert "oneOf" not in schema["properties"]["name"]


@pytest.mark.parametrize(
    ("content", "db", "name"),
    [
        ({"db": "SQLite", "name": "api"}, "SQLite", "api"),
        ({"db": "sqlite", "name": "api"}, "SQLite", "api"),  # lenient (§2.4)
        ({"db": "SQLite", "db_other": "MySQL", "name": "api"}, "MySQL", "api"),
        ({"db": "", "name": "api"}, None, "api"),
    ],
)
def test_reading_back(content: dict[str, Any], db: str | None, name: str) -> None:
    ask = parse_ask(ASK)
    result = parse_answer(ask, read_ask_form(ask, content))
    first, second = result.answers
    assert first.answer == db
    assert first.status == ("answered" if db else "skipped")
    assert second.answer == name


def test_multi_reads_selected_and_other_together() -> None:
    ask = parse_ask(MULTI)
    result = parse_answer(ask, read_ask_form(ask, {"langs": ["Go", "Rust"], "langs_other": "Zig"}))
    assert result.answers[0].selected == ("Go", "Rust")
    assert result.answers[0].text == "Zig"


@pytest.mark.parametrize(
    "content",
    [None, "SQLite", {"nope": 1}, {"db": True}, {"name": ["a", "b"]}, {"db_other": 7}],
)
def test_junk_has_no_sound_reading(content: Any) -> None:
    ask = parse_ask(ASK)
    with pytest.raises(InvalidAnswer):
        parse_answer(ask, read_ask_form(ask, content))


@pytest.mark.parametrize(
    ("declared", "modes"),
    [
        (None, (False, False)),
        (types.ElicitationCapability(), (True, False)),  # 2025-06-18: `{}` is form
        (types.ElicitationCapability(form=types.FormElicitationCapability()), (True, False)),
        (types.ElicitationCapability(url=types.UrlElicitationCapability()), (False, True)),
        (
            types.ElicitationCapability(
                form=types.FormElicitationCapability(), url=types.UrlElicitationCapability()
            ),
            (True, True),
        ),
    ],
)
def test_which_modes_a_client_declared(
    declared: types.ElicitationCapability | None, modes: tuple[bool, bool]
) -> None:
    capabilities = types.ClientCapabilities(elicitation=declared)
    ctx: Any = SimpleNamespace(session=SimpleNamespace(client_capabilities=capabilities))
    assert _modes(ctx) == modes
