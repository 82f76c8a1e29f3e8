"""The dialect registry is open: a dialect from outside midturn, registered in code or by
a `midturn.dialects` entry point, is parsed, rendered, specced and detected like
midturn's own (docs/dialects.md)."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests._entry_points import DIALECT_SOURCE, POLL, run_python, write_distribution

import midturn
from midturn.contract import (
    DIALECTS,
    get_dialect,
    load_dialect_entry_points,
    register_dialect,
    unregister_dialect,
)

from . import _payloads as p


def poll_dialect_class() -> type[midturn.Dialect]:
    namespace: dict[str, Any] = {}
    exec(compile(DIALECT_SOURCE, "poll_dialect.py", "exec"), namespace)
    cls: type[midturn.Dialect] = namespace["PollDialect"]
    return cls


@pytest.fixture
def poll() -> Iterator[midturn.Dialect]:
    dialect = register_dialect(poll_dialect_class())
    yield dialect
    if "poll" in DIALECTS:
        unregister_dialect("poll")


def test_a_registered_dialect_parses_renders_and_specs(poll: midturn.Dialect) -> None:
    assert DIALECTS["poll"] is poll and get_dialect("poll") is poll
    assert list(DIALECTS)[-1] == "poll"
    ask = midturn.parse_ask(POLL, dialect="poll")
    assert ask.dialect == "poll" and ask.questions[0].labels == ["PostgreSQL", "SQLite"]
    result = midturn.parse_answer(ask, "SQLite")
    assert midturn.render(result, dialect="poll").text == "POLL RESULT: SQLite"
    spec = midturn.tool_spec("poll", "anthropic")
    assert spec["name"] == "run_poll"
    assert spec["input_schema"]["properties"]["poll"]["maxLength"] == 500


def test_an_unregistered_dialect_is_gone_and_the_error_says_how_to_add_one() -> None:
    register_dialect(poll_dialect_class())
    unregister_dialect("poll")
    assert "poll" not in DIALECTS
    with pytest.raises(midturn.UsageError) as caught:
        midturn.parse_ask(POLL, dialect="poll")
    message = str(caught.value)
    assert "unknown dialect 'poll'" in message
    assert "'claude'" in message and "register_dialect" in message
    assert "midturn.dialects" in message


def test_auto_detection_consults_a_registered_dialect(poll: midturn.Dialect) -> None:
    assert midturn.parse_ask(POLL, dialect="auto").dialect == "poll"
    # its matches() scores 0 on every other shape, so those read as before
    assert midturn.parse_ask(p.CLAUDE, dialect="auto").dialect == "claude"


def test_a_dialect_without_matches_never_takes_part_in_detection() -> None:
    quiet = type("QuietPoll", (poll_dialect_class(),), {"name": "quiet-poll"})
    quiet.matches = midturn.Dialect.matches  # type: ignore[method-assign]
    register_dialect(quiet)
    try:
        with pytest.raises(midturn.InvalidAsk, match="shape of no question tool"):
            midturn.parse_ask(POLL, dialect="auto")
    finally:
        unregister_dialect("quiet-poll")


def test_a_taken_name_needs_replace_and_the_tool_spec_follows_the_new_one(
    poll: midturn.Dialect,
) -> None:
    before = midturn.tool_spec("poll", "openai")
    renamed = type("RenamedPoll", (poll_dialect_class(),), {"tool_name": "start_poll"})
    with pytest.raises(midturn.UsageError, match="already registered; pass replace=True"):
        register_dialect(renamed)
    register_dialect(renamed, replace=True)
    after = midturn.tool_spec("poll", "openai")
    assert before["function"]["name"] == "run_poll"
    assert after["function"]["name"] == "start_poll"


def test_replacing_a_shipped_dialect_changes_its_spec_and_restoring_it_restores_it() -> None:
    original = get_dialect("omp")
    shipped = json.dumps(midturn.tool_spec("omp", "mcp"))
    other = type("OtherOmp", (type(original),), {"tool_name": "ask_v2"})
    register_dialect(other, replace=True)
    try:
        assert midturn.tool_spec("omp", "mcp")["name"] == "ask_v2"
    finally:
        register_dialect(original, replace=True)
    assert json.dumps(midturn.tool_spec("omp", "mcp")) == shipped


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (object(), "takes a midturn.Dialect subclass or instance"),
        (type("Auto", (), {}), "takes a midturn.Dialect subclass or instance"),
    ],
)
def test_registering_something_else_is_a_usage_error(given: Any, message: str) -> None:
    with pytest.raises(midturn.UsageError, match=message):
        register_dialect(given)


def test_a_dialect_class_missing_a_method_is_named() -> None:
    half = type("HalfDialect", (midturn.Dialect,), {"name": "half", "tool_name": "half"})
    with pytest.raises(midturn.UsageError, match="HalfDialect cannot be instantiated"):
        register_dialect(half)
    assert "half" not in DIALECTS


@pytest.mark.parametrize("name", ["auto", "Has Space", "", "x" * 41])
def test_a_dialect_name_must_be_usable(name: str) -> None:
    bad = type("Bad", (poll_dialect_class(),), {"name": name})
    with pytest.raises(midturn.UsageError, match="a dialect's name must be"):
        register_dialect(bad)


def test_the_canonical_dialect_cannot_be_removed() -> None:
    with pytest.raises(midturn.UsageError, match="cannot be removed"):
        unregister_dialect("midturn")
    with pytest.raises(midturn.UsageError, match="no dialect 'nope' is registered"):
        unregister_dialect("nope")


# -- entry points ------------------------------------------------------------------------


def poll_distribution(root: Path, target: str = "poll_dialect:PollDialect") -> Path:
    return write_distribution(
        root,
        "midturn-poll",
        {"midturn.dialects": {"poll": target}},
        {"poll_dialect": DIALECT_SOURCE + "\nINSTANCE = PollDialect()\nNOT_A_DIALECT = 3\n"},
    )


def test_an_entry_point_dialect_is_found_lazily_on_first_use(tmp_path: Path) -> None:
    path = poll_distribution(tmp_path)
    code = textwrap.dedent(
        f"""
        import sys
        import midturn
        assert "poll_dialect" not in sys.modules  # nothing read at import
        ask = midturn.parse_ask({POLL!r}, dialect="poll")
        print(ask.dialect, midturn.tool_spec("poll", "mcp")["name"])
        print(midturn.parse_ask({POLL!r}, dialect="auto").dialect)
        """
    )
    done = run_python(code, path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["poll", "run_poll", "poll"]


@pytest.mark.parametrize("target", ["poll_dialect:PollDialect", "poll_dialect:INSTANCE"])
def test_loading_the_group_registers_a_class_or_an_instance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.syspath_prepend(str(poll_distribution(tmp_path, target)))
    try:
        assert load_dialect_entry_points(again=True) == ["poll"]
        assert midturn.parse_ask(POLL, dialect="poll").dialect == "poll"
        assert type(get_dialect("poll")).__name__ == "PollDialect"
    finally:
        unregister_dialect("poll")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("poll_dialect:NOT_A_DIALECT", "names 3; it must name a midturn.Dialect"),
        ("poll_dialect:MISSING", "failed to load: AttributeError"),
        ("no_such_module:X", "failed to load: ModuleNotFoundError"),
    ],
)
def test_a_broken_entry_point_is_named_with_its_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, message: str
) -> None:
    monkeypatch.syspath_prepend(str(poll_distribution(tmp_path, target)))
    with pytest.raises(midturn.UsageError, match=message) as caught:
        load_dialect_entry_points(again=True)
    assert "'poll'" in str(caught.value)
    assert "poll" not in DIALECTS  # nothing half-registered; the next read says it again
    monkeypatch.undo()
    assert load_dialect_entry_points(again=True) == []


def test_an_entry_point_cannot_take_a_shipped_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_distribution(
        tmp_path,
        "midturn-fake-claude",
        {"midturn.dialects": {"claude": "poll_dialect:PollDialect"}},
        {"poll_dialect": DIALECT_SOURCE},
    )
    monkeypatch.syspath_prepend(str(root))
    with pytest.raises(midturn.UsageError, match="a package cannot replace it"):
        load_dialect_entry_points(again=True)
    assert get_dialect("claude").tool_name == "AskUserQuestion"
    monkeypatch.undo()
    assert load_dialect_entry_points(again=True) == []
