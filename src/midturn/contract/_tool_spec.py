"""Tool registrations for the question tool in each dialect, for each model API
(docs/dialects.md): OpenAI, Anthropic, Gemini and MCP.

A spec is a constant: it is built once per (dialect, format, limits) and every call
returns a fresh copy of the same bytes, so it can sit in a cacheable prompt prefix and a
caller that edits its copy changes nothing for the next one. The cache is keyed by the
dialect object itself, so a dialect registered anew under the same name gets its own spec.

The schema and the description are drawn from the same `Limits` that `parse_ask` enforces
(the dialect's own unless a host gives its own), so the model is never told it may send
what validation then refuses.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Literal

from midturn.contract._models import Limits
from midturn.contract.dialects import Dialect, get_dialect
from midturn.errors import UsageError

__all__ = ["FORMATS", "tool_spec"]

Format = Literal["openai", "anthropic", "gemini", "mcp"]
FORMATS: tuple[Format, ...] = ("openai", "anthropic", "gemini", "mcp")

# Gemini takes a subset of OpenAPI 3.0 schema objects; any other key is rejected.
_GEMINI_KEYS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "items",
        "properties",
        "required",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "anyOf",
        "default",
    }
)


def tool_spec(
    dialect: str = "midturn", format: str = "openai", *, limits: Limits | None = None
) -> dict[str, Any]:
    """The registration of the question tool in `dialect`'s shape for `format`:

    - `openai`: `{"type": "function", "function": {name, description, parameters}}`
    - `anthropic`: `{name, description, input_schema}`
    - `gemini`: a function declaration `{name, description, parameters}` whose schema keeps
      only what Gemini accepts (no `additionalProperties`, no `exclusiveMinimum`)
    - `mcp`: `{name, description, inputSchema}`

    `limits` are the host's (pass the ones given to `parse_ask` or `Runtime`); None uses
    the dialect's own. Every call returns a new dict with the same content, byte for byte
    once dumped. Raises `UsageError` for an unknown dialect or format."""
    if format not in FORMATS:
        known = ", ".join(repr(name) for name in FORMATS)
        raise UsageError(f"unknown tool spec format {format!r}; use one of {known}")
    if dialect == "auto":
        raise UsageError(
            "a tool spec needs a concrete dialect: register the tool under one, e.g. "
            "tool_spec('claude', ...); 'auto' only applies to reading tool input"
        )
    if limits is not None and not isinstance(limits, Limits):
        raise UsageError(f"limits must be a midturn.Limits, not {type(limits).__name__}")
    chosen = get_dialect(dialect)
    spec: dict[str, Any] = json.loads(_frozen_spec(chosen, format, limits or chosen.limits))
    return spec


@functools.lru_cache(maxsize=256)
def _frozen_spec(chosen: Dialect, format: str, limits: Limits) -> str:
    name = chosen.tool_name
    description, schema = chosen.description(limits), chosen.input_schema(limits)
    spec: dict[str, Any]
    if format == "openai":
        spec = {
            "type": "function",
            "function": {"name": name, "description": description, "parameters": schema},
        }
    elif format == "anthropic":
        spec = {"name": name, "description": description, "input_schema": schema}
    elif format == "gemini":
        spec = {"name": name, "description": description, "parameters": _gemini(schema)}
    else:
        spec = {"name": name, "description": description, "inputSchema": schema}
    return json.dumps(spec, ensure_ascii=False)


def _gemini(schema: Any) -> Any:
    """A JSON Schema cut down to Gemini's subset, recursively."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key not in _GEMINI_KEYS:
            continue
        if key == "properties":
            out[key] = {name: _gemini(sub) for name, sub in value.items()}
        elif key == "items":
            out[key] = _gemini(value)
        elif key == "anyOf":
            out[key] = [_gemini(sub) for sub in value]
        elif key == "type" and isinstance(value, list):
            kinds = [kind for kind in value if kind != "null"]
            out[key] = kinds[0] if kinds else "string"
            if len(kinds) != len(value):
                out["nullable"] = True
        else:
            out[key] = value
    return out
