"""Tool specs (docs/dialects.md): every dialect in every format, a constant to the byte, a
well-formed JSON Schema that each product's own payloads satisfy; and SYSTEM_PROMPT."""

from __future__ import annotations

import json
from typing import Any

import pytest

import midturn
from midturn.contract import DIALECTS, SYSTEM_PROMPT, get_dialect, tool_spec

from . import _payloads as p
from ._schema import errors, meta_problems

FORMATS = ["openai", "anthropic", "gemini", "mcp"]
CASES = [(dialect, fmt) for dialect in DIALECTS for fmt in FORMATS]


def parts(spec: dict[str, Any], fmt: str) -> tuple[str, str, dict[str, Any]]:
    """(name, description, schema) of a spec in `fmt`, checking its outer keys."""
    if fmt == "openai":
        assert list(spec) == ["type", "function"] and spec["type"] == "function"
        assert list(spec["function"]) == ["name", "description", "parameters"]
        inner = spec["function"]
        return inner["name"], inner["description"], inner["parameters"]
    schema_key = {"anthropic": "input_schema", "gemini": "parameters", "mcp": "inputSchema"}[fmt]
    assert list(spec) == ["name", "description", schema_key]
    return spec["name"], spec["description"], spec[schema_key]


def walk(schema: Any) -> list[dict[str, Any]]:
    """Every schema object inside `schema`, itself included."""
    if not isinstance(schema, dict):
        return []
    found = [schema]
    for sub in schema.get("properties", {}).values():
        found += walk(sub)
    found += walk(schema.get("items"))
    return found


@pytest.mark.parametrize(("dialect", "fmt"), CASES)
def test_spec_is_byte_identical_on_every_call(dialect: str, fmt: str) -> None:
    first = tool_spec(dialect, fmt)
    second = tool_spec(dialect=dialect, format=fmt)
    assert json.dumps(first) == json.dumps(second)
    _, _, schema = parts(first, fmt)
    schema["properties"].clear()
    assert json.dumps(tool_spec(dialect, fmt)) == json.dumps(second)  # copies, not shared


@pytest.mark.parametrize(("dialect", "fmt"), CASES)
def test_spec_shape_name_and_schema(dialect: str, fmt: str) -> None:
    name, description, schema = parts(tool_spec(dialect, fmt), fmt)
    assert name == get_dialect(dialect).tool_name
    assert description == get_dialect(dialect).description(get_dialect(dialect).limits)
    assert schema["type"] == "object" and schema["required"]
    assert meta_problems(schema) == []


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_formats_share_name_description_and_schema(dialect: str) -> None:
    specs = {fmt: parts(tool_spec(dialect, fmt), fmt) for fmt in FORMATS}
    dumps = {fmt: json.dumps(part, ensure_ascii=False) for fmt, part in specs.items()}
    assert dumps["openai"] == dumps["anthropic"] == dumps["mcp"]
    assert specs["gemini"][:2] == specs["openai"][:2]
    assert json.dumps(specs["gemini"][2]) == json.dumps(_without(specs["openai"][2]))


def _without(schema: Any) -> Any:
    """What Gemini keeps of a schema here: all but additionalProperties and
    exclusiveMinimum."""
    if not isinstance(schema, dict):
        return schema
    kept: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("additionalProperties", "exclusiveMinimum"):
            continue
        if key == "properties":
            value = {name: _without(sub) for name, sub in value.items()}
        elif key == "items":
            value = _without(value)
        kept[key] = value
    return kept


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_gemini_schema_has_only_keys_gemini_accepts(dialect: str) -> None:
    _, _, schema = parts(tool_spec(dialect, "gemini"), "gemini")
    for node in walk(schema):
        assert "additionalProperties" not in node
        assert "exclusiveMinimum" not in node and "$schema" not in node
        assert isinstance(node["type"], str)
    assert walk(schema)  # the walk reached something


@pytest.mark.parametrize(
    ("dialect", "payload"),
    [(name, payload) for name, payloads in p.BY_DIALECT.items() for payload in payloads],
)
def test_each_products_payload_satisfies_its_dialects_schema(
    dialect: str, payload: dict[str, Any]
) -> None:
    for fmt in ("anthropic", "gemini"):
        _, _, schema = parts(tool_spec(dialect, fmt), fmt)
        assert errors(payload, schema) == []


def test_schemas_refuse_what_the_dialect_refuses() -> None:
    _, _, maka = parts(tool_spec("maka", "anthropic"), "anthropic")
    four = {"questions": [{"question": p.DB, "options": [{"label": x} for x in "ABCD"]}]}
    assert errors(four, maka)
    _, _, agentcore = parts(tool_spec("agentcore", "anthropic"), "anthropic")
    headless = {"questions": [{"question": p.DB, "options": [{"label": "A", "description": "a"}]}]}
    assert any("'header'" in error for error in errors(headless, agentcore))
    _, _, neo = parts(tool_spec("neo", "anthropic"), "anthropic")
    assert errors({**p.NEO, "kind": "dropdown"}, neo)


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_descriptions_say_bounded_this_turn_once_and_never_other(dialect: str) -> None:
    text = get_dialect(dialect).description(get_dialect(dialect).limits)
    lowered = text.lower()
    assert "same turn" in lowered or "same run" in lowered
    assert "bounded" in lowered and "once" in lowered
    assert 'never add an "other"' in lowered
    assert "ordinary text" in lowered or "normal text" in lowered
    assert len(text) < 900


def test_unknown_format_or_auto_dialect_is_a_usage_error() -> None:
    with pytest.raises(midturn.UsageError) as caught:
        tool_spec("midturn", "bedrock")
    assert all(repr(fmt) in str(caught.value) for fmt in FORMATS)
    with pytest.raises(midturn.UsageError):
        tool_spec("auto", "openai")
    with pytest.raises(midturn.UsageError):
        tool_spec("gpt", "openai")


def test_system_prompt_says_when_to_ask() -> None:
    lowered = SYSTEM_PROMPT.lower()
    assert "bounded decision" in lowered
    assert "default" in lowered
    assert "once" in lowered and "one call" in lowered
    assert '"other"' in lowered
    assert "ordinary text" in lowered
    assert len(SYSTEM_PROMPT) < 800


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_a_spec_under_limits_is_a_constant_and_shows_them(dialect: str) -> None:
    tight = midturn.Limits(max_options=3, max_label_chars=30, max_question_chars=200)
    first = json.dumps(tool_spec(dialect, "mcp", limits=tight))
    again = json.dumps(tool_spec(dialect, "mcp", limits=midturn.Limits(**tight.model_dump())))
    assert first == again
    assert first != json.dumps(tool_spec(dialect, "mcp"))
    _, _, schema = parts(json.loads(first), "mcp")
    lengths = [node["maxLength"] for node in walk(schema) if "maxLength" in node]
    assert 200 in lengths
    # an elicitation form's choices are enum values with titles, not labels of a length
    assert 30 in lengths or dialect == "mcp-elicitation"
    assert 500 not in lengths and 80 not in lengths
    assert tool_spec(dialect, "mcp", limits=get_dialect(dialect).limits) == tool_spec(
        dialect, "mcp"
    )


def test_limits_must_be_limits() -> None:
    with pytest.raises(midturn.UsageError, match=r"limits must be a midturn\.Limits"):
        tool_spec("midturn", "openai", limits={"max_questions": 2})  # type: ignore[arg-type]
