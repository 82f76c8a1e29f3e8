"""What every check of an ask shares: the collector of problems and warnings, and the
small readers for strings, flags, counts and ids."""

from __future__ import annotations

import re
from typing import Any

from pydantic_core import to_json

from midturn.contract._models import Limits
from midturn.contract._normalize import fold
from midturn.errors import Problem

__all__ = [
    "ID",
    "NOT_TEXT",
    "Checker",
    "checked_id",
    "count_range",
    "kind_of",
    "lone_surrogate_at",
    "short",
]

ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
NOT_TEXT = (
    "holds a lone UTF-16 surrogate (such as \\ud800 without its pair), which is not text; "
    "send valid Unicode text"
)
"""Why a string with a lone surrogate is refused, wherever it is given."""
_NAMED_UNKNOWN = 5
"""Unknown fields named one by one in the warnings; the rest are counted."""


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _is_text(value: str) -> bool:
    """Whether `value` is Unicode text: no lone UTF-16 surrogate (JSON `"\\ud800"` parses
    to one; it cannot be stored, sent or shown as UTF-8)."""
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def lone_surrogate_at(value: Any) -> str | None:
    """The path (`a.b.0`) of the first string or key in `value` holding a lone UTF-16
    surrogate, `""` for `value` itself, or None when there is none. Walks without
    recursion (any nesting depth is safe), checking strings where it meets them and
    building a path only for containers, so a large body costs about one pass."""
    if isinstance(value, str):
        return None if _is_text(value) else ""
    # A tuple of types, not `dict | list | tuple`: a union is a new object at each call,
    # and this runs on every ask and answer.
    if not isinstance(value, (dict, list, tuple)):
        return None
    try:
        # Encoding to UTF-8 JSON fails on any lone surrogate in any string or key it
        # meets (a superset of those walked below), so success means there is none.
        to_json(value)
    except Exception:  # a surrogate, or something JSON cannot hold: walk to find out
        pass
    else:
        return None
    pending: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while pending:
        path, node = pending.pop()
        mapping = isinstance(node, dict)
        for key, item in node.items() if mapping else enumerate(node):
            if mapping and isinstance(key, str) and not _is_text(key):
                return _joined(path) or "(key)"
            if isinstance(item, str):
                if not _is_text(item):
                    return _joined((*path, key))
            elif isinstance(item, (dict, list, tuple)):
                pending.append(((*path, key), item))
    return None


def _joined(path: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in path)


def short(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def count_range(low: int, high: int) -> str:
    return f"{low}" if low == high else f"{low}–{high}"


class Checker:
    """Collects problems and warnings while one ask is checked."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.secret_choices = False
        """Whether a choice question may be secret (see `build_ask`)."""
        self.problems: list[Problem] = []
        self.warnings: list[str] = []

    def problem(self, path: str, message: str) -> None:
        self.problems.append(Problem(path, message))

    def warn(self, path: str, message: str) -> None:
        self.warnings.append(f"{path}: {message}")

    def unknown_keys(self, data: dict[str, Any], known: frozenset[str], path: str) -> None:
        if known.issuperset(data):
            return
        unknown = [key for key in data if key not in known]
        for key in unknown[:_NAMED_UNKNOWN]:
            self.warn(f"{path}.{key}" if path else str(key), "unknown field, ignored")
        if len(unknown) > _NAMED_UNKNOWN:
            more = len(unknown) - _NAMED_UNKNOWN
            self.warn(path or "(input)", f"{more} more unknown fields, ignored")

    def text(self, value: Any, where: str, field: str, *, required: bool, flat: bool) -> str | None:
        """A trimmed string (whitespace folded when `flat`), None when absent or empty
        and not required. The path `where.field` is only built for a problem."""
        if isinstance(value, str):
            cleaned = fold(value) if flat else value.strip()
            if cleaned and (not flat or cleaned == value.strip()):
                return cleaned
            if cleaned:
                self.warn(f"{where}.{field}", "folded line breaks into spaces")
                return cleaned
            if required:
                self.problem(f"{where}.{field}", "empty; give a non-empty string")
            return None
        if value is None:
            if required:
                self.problem(f"{where}.{field}", "missing; give a non-empty string")
            return None
        self.problem(f"{where}.{field}", f"{kind_of(value)} given; give a string")
        return None

    def flag(self, value: Any, where: str, field: str, default: bool) -> bool:
        if value is None:
            return default
        if not isinstance(value, bool):
            self.problem(f"{where}.{field}", f"{kind_of(value)} given; give true or false")
            return default
        return value

    def count(self, value: Any, path: str) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem(path, f"{kind_of(value)} given; give a whole number")
            return None
        return value


def checked_id(check: Checker, value: Any, where: str) -> str | None:
    """A valid id from `value`, or None; problems are reported at `where` + ".id"."""
    if isinstance(value, str) and ID.fullmatch(value):
        return value
    if value is None:
        return None
    path = f"{where}.id"
    if isinstance(value, int) and not isinstance(value, bool):
        check.warn(path, f"number {value} read as the id {str(value)!r}")
        value = str(value)
    if not isinstance(value, str):
        check.problem(path, f"{kind_of(value)} given; give a short string id, or leave it out")
        return None
    cleaned: str = value.strip()
    if not ID.fullmatch(cleaned):
        check.problem(
            path,
            f"{short(cleaned)} is not a valid id; use 1–64 letters, digits, '_', '.' or '-', "
            "or leave it out",
        )
        return None
    return cleaned
