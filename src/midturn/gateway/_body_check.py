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
import operator
import re
from itertools import accumulate, count

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
    if body.count(b"[") + body.count(b"{") > MAX_JSON_DEPTH and _nesting_over(body):
        return "body", (
            f"nests arrays and objects more than {MAX_JSON_DEPTH} levels deep; send a "
            "flatter body (free-form data belongs in a few levels of keys)"
        )
    if _SURROGATE_ESCAPE.search(body) is None:
        return None
    try:
        value = json.loads(body)
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate somewhere: name where if it is cheap
        where = lone_surrogate_at(value) if len(body) <= _LOCATE_BELOW else ""
        return (f"body.{where}" if where else "body"), NOT_TEXT
    except ValueError:
        return None
    return None


_LOCATE_BELOW = 8 * 1024
"""Bodies up to this size get the exact path of a lone surrogate (a walk in Python);
larger ones are refused as a whole, so a hostile body costs no more than parsing it."""

_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_OPEN_CLOSE = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")
_NOT_BRACKETS = bytes(range(256)).translate(None, b"[]{}")


def _nesting_over(body: bytes) -> bool:
    """Whether the arrays and objects of `body` nest deeper than `MAX_JSON_DEPTH`, from
    the bytes alone, before any parser recurses into them. Strings are dropped, each
    opening bracket becomes 2 and each closing one 0; after the k-th bracket the running
    sum is 2·opened, so the depth there is that sum minus k. All of it runs in C."""
    marks = _JSON_STRING.sub(b"", body).translate(_OPEN_CLOSE, _NOT_BRACKETS)
    deepest = max(map(operator.sub, accumulate(marks), count(1)), default=0)
    return deepest > MAX_JSON_DEPTH
