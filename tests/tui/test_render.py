"""The pure renderer: every line fits its width, words are split only when they must be."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import midturn
from midturn.tui._render import plain, render_picker, text_width, wrap_runs
from midturn.tui._state import PickerState

from ._vt import ask_of, choice, text_question

LONG = (
    "Which storage engine should the billing service use for its ledger, given that "
    "finance needs point-in-time recovery and the team has no database administrator?"
)


def wide_ask():  # type: ignore[no-untyped-def]
    return ask_of(
        choice(
            "db",
            "Database",
            LONG,
            ["PostgreSQL with logical replication", "SQLite", "漢字データベース"],
            descriptions=[
                "Managed by the platform team, scales out, point-in-time recovery included",
                "Embedded, zero setup; https://www.sqlite.org/whentouse.html#dbcklst explains",
                None,
            ],
            recommended=0,
        ),
        text_question("name", "Name", "What should the service be called?"),
    )


@pytest.mark.parametrize("width", [48, 80, 146])
def test_no_line_is_wider_than_the_terminal(width: int) -> None:
    state = PickerState(wide_ask())
    for _ in range(2):
        lines = render_picker(state, width)
        for line in lines:
            assert text_width("".join(text for _, text in line)) <= width
        state.drafts[0].cursor = 3
        state.type_text("a custom answer " * 12)
    screen = plain(render_picker(state, width))
    for word in LONG.split():
        assert word in screen.split(), f"{word!r} was split at width {width}"


def test_a_word_wider_than_the_line_is_split() -> None:
    lines = wrap_runs([("", "short " + "x" * 50 + " end")], 20)
    assert ["".join(t for _, t in line) for line in lines] == [
        "short",
        "x" * 20,
        "x" * 20,
        "x" * 10 + " end",
    ]


def test_wide_characters_count_two_columns() -> None:
    lines = wrap_runs([("", "漢字 漢字 漢字")], 9)
    assert ["".join(t for _, t in line) for line in lines] == ["漢字 漢字", "漢字"]


def test_the_recommended_mark_and_descriptions_are_shown() -> None:
    screen = plain(render_picker(PickerState(wide_ask()), 80))
    assert "PostgreSQL with logical replication (recommended)" in screen
    assert "Managed by the platform team" in screen
    assert "1/2" in screen


@given(
    st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=300),
    st.integers(min_value=1, max_value=160),
)
def test_wrapping_never_overflows(text: str, width: int) -> None:
    for line in wrap_runs([("", text)], width):
        assert text_width("".join(t for _, t in line)) <= max(width, 2)


@pytest.mark.parametrize("width", [48, 80, 146])
def test_a_height_is_kept_by_folding_and_scrolling(width: int) -> None:
    state = PickerState(wide_ask())
    full = len(render_picker(state, width))
    for height in range(12, full + 1):
        for cursor in range(4):
            state.drafts[0].cursor = cursor
            lines = render_picker(state, width, height)
            assert len(lines) <= height, (height, cursor, plain(lines))
            assert "Ctrl-C stop" in plain(lines)
            assert "❯" in plain(lines)  # the current row is always on screen


def test_an_options_preview_shows_as_text_under_the_option_at_the_cursor() -> None:
    mock = "+-----+---------+\n| Nav | Content |\n+-----+---------+"
    ask = midturn.parse_ask(
        {
            "questions": [
                {
                    "question": "Which layout should the settings page use?",
                    "header": "Layout",
                    "multiSelect": False,
                    "options": [
                        {"label": "Sidebar", "description": "Nav on the left", "preview": mock},
                        {
                            "label": "Tabs",
                            "description": "Tabs \x1b[31mon top",
                            "preview": "\x1b]0;x\x07[tabs]",
                        },
                    ],
                }
            ]
        },
        dialect="claude",
    )
    state = PickerState(ask)
    screen = plain(render_picker(state, 80))
    assert "| Nav | Content |" in screen and "[tabs]" not in screen
    state.drafts[0].cursor = 1
    screen = plain(render_picker(state, 80))
    assert "| Nav | Content |" not in screen
    assert "[tabs]" in screen and "\x1b" not in screen and "\x07" not in screen


def test_the_key_list_opens_only_where_the_question_still_fits() -> None:
    state = PickerState(ask_of(choice("db", "Database", "Which database?", ["PG", "SQLite"])))
    assert state.toggle_keys()
    roomy = plain(render_picker(state, 80, 40))
    assert "Keys:" in roomy and "pick that option" in roomy and "Which database?" in roomy
    short = render_picker(state, 80, 12)
    screen = plain(short)
    assert "Keys:" not in screen
    assert "The terminal is too short to list every key." in screen
    assert "Which database?" in screen and "1. PG" in screen and "? keys" in screen
    assert len(short) <= 12
