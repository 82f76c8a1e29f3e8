"""Model text loses every terminal control before it reaches the screen."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from midturn.tui import sanitize


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("Pick one\x1b[2J now", "Pick one now"),
        ("a\x1b[31mred\x1b[0m b", "ared b"),
        ("x\x1b]0;pwned title\x07y", "xy"),
        ("x\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\y", "xlinky"),
        ("x\x1bPq#0;2;0;0;0\x1b\\y", "xy"),
        ("cursor\x1b7\x1b[10;10Hmoved\x1b8", "cursormoved"),
        ("eight-bit\x9b2Jcsi", "eight-bitcsi"),
        ("bell\x07 back\x08space del\x7f", "bell backspace del"),
        ("C1\x85line", "C1\nline"),
        ("rtl \u202eevil\u202c text \u2066iso\u2069", "rtl evil text iso"),
        ("tab\there", "tab here"),
        ("crlf\r\nline\rover", "crlf\nline\nover"),
        ("emoji 🎉 and 漢字 stay", "emoji 🎉 and 漢字 stay"),
    ],
)
def test_controls_are_removed_and_text_is_kept(raw: str, shown: str) -> None:
    assert sanitize(raw) == shown


def test_single_line_folds_newlines() -> None:
    assert sanitize("one\ntwo\r\nthree", multiline=False) == "one two three"


@given(st.text())
def test_nothing_that_a_terminal_acts_on_survives(raw: str) -> None:
    clean = sanitize(raw)
    for char in clean:
        code = ord(char)
        assert char == "\n" or not (code < 0x20 or 0x7F <= code <= 0x9F), repr(clean)
        assert not (0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069), repr(clean)
