"""The dialects of docs/dialects.md and their registry.

A dialect maps one product's question tool to the canonical contract and back. A host
registers the tool under one dialect by name; `dialect="auto"` picks the dialect whose
`matches()` scores the tool input highest (see each dialect's `matches` for the signals).

The list is open: `register_dialect(MyDialect())` in code, or an entry point in the
`midturn.dialects` group (its name the dialect's name, its object a `Dialect` subclass
or instance), adds one; docs/dialects.md says how a new dialect takes part in detection.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from midturn.contract._registry import Registry
from midturn.contract.dialects._agentcore import AgentCoreDialect
from midturn.contract.dialects._base import Dialect
from midturn.contract.dialects._claude import ClaudeDialect
from midturn.contract.dialects._codex import CodexDialect
from midturn.contract.dialects._copilot import CopilotDialect
from midturn.contract.dialects._deepagents import DeepAgentsDialect
from midturn.contract.dialects._elicitation import ElicitationDialect, elicit_result
from midturn.contract.dialects._gemini import GeminiDialect
from midturn.contract.dialects._maka import MakaDialect
from midturn.contract.dialects._midturn import MidturnDialect
from midturn.contract.dialects._neo import NeoDialect
from midturn.contract.dialects._omp import OmpDialect
from midturn.contract.dialects._pi_legacy import PiLegacyDialect
from midturn.errors import InvalidAsk, Problem, UsageError

__all__ = [
    "DIALECTS",
    "ENTRY_POINT_GROUP",
    "Dialect",
    "detect_dialect",
    "elicit_result",
    "get_dialect",
    "load_dialect_entry_points",
    "register_dialect",
    "unregister_dialect",
]

ENTRY_POINT_GROUP = "midturn.dialects"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,39}$")  # the gateway takes at most 40
_HOW_TO_ADD = (
    "add one with midturn.register_dialect(...) or a 'midturn.dialects' entry point "
    "(docs/dialects.md)"
)


def _instance(given: object) -> object:
    """`given`, or an instance of it when it is a `Dialect` subclass."""
    if not (isinstance(given, type) and issubclass(given, Dialect)):
        return given
    try:
        return given()
    except TypeError as error:  # abstract methods left out, or arguments required
        raise UsageError(
            f"the dialect class {given.__name__} cannot be instantiated without arguments "
            f"({error}); implement every Dialect method, or register an instance"
        ) from None


def _adopt(name: str, loaded: object) -> Dialect:
    dialect = _instance(loaded)
    if not isinstance(dialect, Dialect):
        raise UsageError(
            f"the {ENTRY_POINT_GROUP!r} entry point {name!r} names {_what(loaded)}; it "
            "must name a midturn.Dialect subclass or instance"
        )
    _check(dialect)
    if dialect.name != name:
        raise UsageError(
            f"the {ENTRY_POINT_GROUP!r} entry point {name!r} names the dialect "
            f"{dialect.name!r}; name the entry point after the dialect"
        )
    return dialect


def _what(value: object) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:59] + "…"


def _check(dialect: Dialect) -> None:
    name = getattr(dialect, "name", None)
    if not isinstance(name, str) or name == "auto" or not _NAME.match(name):
        raise UsageError(
            f"a dialect's name must be 1-40 lowercase letters, digits, '_', '.' or '-', "
            f"and not 'auto' (got {name!r})"
        )
    tool_name = getattr(dialect, "tool_name", None)
    if not isinstance(tool_name, str) or not tool_name:
        raise UsageError(f"dialect {name!r} needs a tool_name: the name the model calls")


_REGISTRY: Registry[Dialect] = Registry(ENTRY_POINT_GROUP, "dialect", _adopt)
for _shipped in (
    MidturnDialect(),
    ClaudeDialect(),
    MakaDialect(),
    OmpDialect(),
    NeoDialect(),
    AgentCoreDialect(),
    PiLegacyDialect(),
    GeminiDialect(),
    CodexDialect(),
    CopilotDialect(),
    DeepAgentsDialect(),
    ElicitationDialect(),
):
    _REGISTRY.ship(_shipped.name, _shipped)

DIALECTS: Mapping[str, Dialect] = _REGISTRY.view()
"""Every dialect by name, read-only and always current: midturn's own in the order of
docs/dialects.md (the first seven, then the later ones), then those registered in code
or by entry point, in registration order."""

_CANONICAL_SHAPE = (
    '{"questions": [{"question": "...", "header": "...", "options": [{"label": "...", '
    '"description": "..."}]}]} with 1-4 questions'
)


def register_dialect(dialect: Dialect | type[Dialect], *, replace: bool = False) -> Dialect:
    """Add `dialect` (an instance, or a subclass to instantiate) under its `name`, for
    `parse_ask`, `render`, `tool_spec` and `dialect="auto"`. A name already registered
    (midturn's own included) needs `replace=True`; tool specs built for the old one are
    not served again. Returns the registered instance."""
    instance = _instance(dialect)
    if not isinstance(instance, Dialect):
        raise UsageError(
            f"register_dialect takes a midturn.Dialect subclass or instance, not {_what(dialect)}"
        )
    _check(instance)
    _REGISTRY.add(instance.name, instance, replace=replace)
    return instance


def unregister_dialect(name: str) -> Dialect:
    """Remove the dialect registered under `name` and return it. The canonical `midturn`
    dialect stays (replace it instead)."""
    if name == "midturn":
        raise UsageError(
            "the canonical 'midturn' dialect cannot be removed; replace it with "
            "register_dialect(..., replace=True)"
        )
    return _REGISTRY.remove(name)


def load_dialect_entry_points(*, again: bool = False) -> list[str]:
    """Read the `midturn.dialects` entry points now (normally done lazily, once, on first
    need); `again=True` reads them anew, e.g. after installing a package. Returns the
    names added."""
    return _REGISTRY.load(again=again)


def get_dialect(name: str) -> Dialect:
    """The dialect registered under `name`; `UsageError` naming the known ones otherwise."""
    found = _REGISTRY.get(name) if isinstance(name, str) else None
    if found is None:
        raise UsageError(
            f"unknown dialect {name!r} ({_REGISTRY.known()}); use one of these, or 'auto' "
            f"to detect it from the tool input; {_HOW_TO_ADD}"
        )
    return found


def detect_dialect(tool_input: Any) -> Dialect:
    """The dialect whose shape `tool_input` has, for `dialect="auto"`.

    Every registered dialect scores the input with `matches()`; the highest score wins.
    No match, or a tie for the highest score, is an `InvalidAsk` worded for the model: it
    names the canonical shape to use instead."""
    scores = [(dialect.matches(tool_input), dialect) for dialect in DIALECTS.values()]
    best = max(score for score, _ in scores)
    winners = [dialect for score, dialect in scores if score == best]
    if best > 0 and len(winners) == 1:
        return winners[0]
    if best <= 0 and isinstance(tool_input, dict) and "questions" in tool_input:
        return get_dialect("midturn")  # its validation words what is wrong, question by question
    if best <= 0:
        reason = "the tool input has the shape of no question tool"
        if not isinstance(tool_input, dict):
            reason = "the tool input is not an object"
    else:
        names = " and ".join(dialect.name for dialect in winners)
        reason = f"the tool input fits the {names} shapes equally"
    raise InvalidAsk([Problem("", f"{reason}; give an object {_CANONICAL_SHAPE}")])
