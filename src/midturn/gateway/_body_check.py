"""What a request body must be before any route reads it: UTF-8, and JSON no deeper than
`MAX_JSON_DEPTH` with no lone UTF-16 surrogate in it.

Each of these broke a request deep inside (a serializer's depth limit, the parser's
recursion, an encoder that cannot write `"\\ud800"` as UTF-8), as a 500 or a dropped
connection. Refused here, they are one clear 422 `invalid_request` and nothing is
stored. The check costs next to nothing for an ordinary body: the exact walk runs only
when a cheap scan of the bytes says the body might hold a surrogate escape or more
brackets than the depth allows."""

from __future__ import annotations

import json
import re
from typing import Any

from midturn.contract._checks import NOT_TEXT, lone_surrogate_at

__all__ = ["MAX_JSON_DEPTH", "body_problem"]

MAX_JSON_DEPTH = 64
"""The deepest nesting of arrays and objects a request body may have. Every shape of the
protocol is a handful of levels deep; free-form session `meta` gets the rest."""

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def body_problem(body: bytes) -> tuple[str, str] | None:
    """`(path, message)` for the first reason `body` cannot be read, or None. A body that
    is not JSON at all is left to the route (it says so in its own words)."""
    if not body.isascii():
        try:
            body.decode("utf-8")
        except UnicodeDecodeError as error:
            return "body", (
                f"is not UTF-8 (byte {error.start} cannot be decoded); send JSON encoded as UTF-8"
            )
    deep = body.count(b"[") + body.count(b"{") > MAX_JSON_DEPTH
    if not deep and _SURROGATE_ESCAPE.search(body) is None:
        return None
    try:
        value = json.loads(body)
    except RecursionError:
        return "body", _too_deep()
    except ValueError:
        return None
    if _depth_over(value, MAX_JSON_DEPTH):
        return "body", _too_deep()
    where = lone_surrogate_at(value)
    if where is not None:
        return (f"body.{where}" if where else "body"), NOT_TEXT
    return None


def _too_deep() -> str:
    return (
        f"nests arrays and objects more than {MAX_JSON_DEPTH} levels deep; send a flatter "
        "body (free-form data belongs in a few levels of keys)"
    )


def _depth_over(value: Any, limit: int) -> bool:
    """Whether `value` nests lists and dicts deeper than `limit` (walked without
    recursion)."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            inner: list[Any] = list(item.values())
        elif isinstance(item, list):
            inner = item
        else:
            continue
        if depth > limit:
            return True
        pending.extend((child, depth + 1) for child in inner if isinstance(child, dict | list))
    return False
