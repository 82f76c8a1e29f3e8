"""`midturn demo`: a scripted agent turn stops mid-turn, the picker asks in this terminal,
and the same turn continues with the answer."""

from __future__ import annotations

from ._pty import CTRL_C, DOWN, ENTER, Pty


def test_the_turn_continues_with_the_answer() -> None:
    term = Pty(["demo"], rows=60)
    term.shows("you › Set up a new backend service", "tool call ask_user_question (call_1)")
    term.shows("Database", "1/3", "❯ 1. PostgreSQL (recommended)")
    term.press(ENTER)
    term.shows("Features", "2/3", "[ ] 1. Invoices")
    term.press(" ", DOWN, DOWN, " ", DOWN, DOWN, ENTER)
    term.shows("Name", "3/3")
    term.press("ledger", ENTER)
    term.shows("Review", "Features: Invoices, Usage metering")
    term.press(ENTER)
    screen = term.shows("assistant › Thanks. Scaffolding `ledger` on PostgreSQL")
    assert term.finish() == 0
    screen = term.text
    assert "tool result (call_1) ›" in screen
    assert "The user answered:" in screen
    assert "- Database: PostgreSQL" in screen
    assert "- Features: Invoices, Usage metering" in screen
    assert '- Name: "ledger"' in screen
    assert "with invoices, usage metering" in " ".join(screen.split())  # wrapped by words
    # the order of a conversation: ask, picker summary, tool result, reply
    order = [
        screen.index("tool call ask_user_question"),
        screen.index("✔ Database: PostgreSQL"),
        screen.index("tool result (call_1)"),
        screen.index("assistant › Thanks."),
    ]
    assert order == sorted(order)


def test_ctrl_c_stops_the_turn() -> None:
    term = Pty(["demo"])
    term.shows("Database", "1/3")
    term.press(CTRL_C)
    assert term.finish() == 130
    assert "Turn stopped" in term.text
    assert "assistant › Thanks" not in term.text
