"""A small checker for the JSON Schema subset the tool specs use.

jsonschema is not a dependency; these few keywords are all the specs need, and checking
them here keeps the schema honest in both directions: every keyword is one we know, and
the products' own payloads validate against their dialect's schema."""

from __future__ import annotations

import re
from typing import Any

TYPES = {"object", "array", "string", "integer", "number", "boolean", "null"}
KEYWORDS = {
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "nullable",
}


def meta_problems(schema: Any, path: str = "$") -> list[str]:
    """What is malformed in `schema` as a JSON Schema of our subset."""
    if not isinstance(schema, dict):
        return [f"{path}: a schema must be an object"]
    problems = [f"{path}: unknown keyword {key!r}" for key in schema if key not in KEYWORDS]
    kind = schema.get("type")
    if kind not in TYPES:
        problems.append(f"{path}: type {kind!r} is not a JSON Schema type")
    if "description" in schema and not (
        isinstance(schema["description"], str) and schema["description"]
    ):
        problems.append(f"{path}: description must be a non-empty string")
    if kind == "object":
        properties = schema.get("properties", {})
        if not isinstance(properties, dict):
            problems.append(f"{path}: properties must be an object")
            properties = {}
        for name, sub in properties.items():
            problems += meta_problems(sub, f"{path}.{name}")
        required = schema.get("required", [])
        if not isinstance(required, list) or len(set(required)) != len(required):
            problems.append(f"{path}: required must be a list of distinct names")
        else:
            problems += [
                f"{path}: {n!r} is required but not a property"
                for n in required
                if n not in properties
            ]
    if kind == "array":
        if "items" not in schema:
            problems.append(f"{path}: an array schema needs items")
        else:
            problems += meta_problems(schema["items"], f"{path}[]")
    for low, high in (("minItems", "maxItems"), ("minLength", "maxLength"), ("minimum", "maximum")):
        if low in schema and high in schema and schema[low] > schema[high]:
            problems.append(f"{path}: {low} {schema[low]} is above {high} {schema[high]}")
    if "enum" in schema and not (isinstance(schema["enum"], list) and schema["enum"]):
        problems.append(f"{path}: enum must be a non-empty list")
    if "pattern" in schema:
        re.compile(schema["pattern"])
    return problems


def _is_type(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    python = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
    return isinstance(value, python[kind])


def errors(instance: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Where `instance` breaks `schema` (empty when it validates)."""
    if not _is_type(instance, schema["type"]):
        return [f"{path}: {instance!r} is not of type {schema['type']}"]
    found: list[str] = []
    if "enum" in schema and instance not in schema["enum"]:
        found.append(f"{path}: {instance!r} not in {schema['enum']}")
    if isinstance(instance, str):
        if len(instance) > schema.get("maxLength", len(instance)):
            found.append(f"{path}: longer than {schema['maxLength']}")
        if len(instance) < schema.get("minLength", 0):
            found.append(f"{path}: shorter than {schema['minLength']}")
        if "pattern" in schema and not re.search(schema["pattern"], instance):
            found.append(f"{path}: does not match {schema['pattern']}")
    if isinstance(instance, int | float) and not isinstance(instance, bool):
        if instance < schema.get("minimum", instance):
            found.append(f"{path}: below {schema['minimum']}")
        if instance > schema.get("maximum", instance):
            found.append(f"{path}: above {schema['maximum']}")
        if "exclusiveMinimum" in schema and instance <= schema["exclusiveMinimum"]:
            found.append(f"{path}: not above {schema['exclusiveMinimum']}")
    if isinstance(instance, list):
        if not schema.get("minItems", 0) <= len(instance) <= schema.get("maxItems", len(instance)):
            found.append(f"{path}: {len(instance)} items out of bounds")
        for index, item in enumerate(instance):
            found += errors(item, schema["items"], f"{path}[{index}]")
    if isinstance(instance, dict):
        properties = schema.get("properties", {})
        found += [
            f"{path}: missing {name!r}"
            for name in schema.get("required", [])
            if name not in instance
        ]
        for key, value in instance.items():
            if key in properties:
                found += errors(value, properties[key], f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                found.append(f"{path}: unexpected {key!r}")
    return found
