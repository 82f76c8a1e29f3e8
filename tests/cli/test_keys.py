"""Every key of the terminal picker, pressed in a real pseudo-terminal on `midturn ask`
(docs/terminal.md#keys): the numbers, the arrows, Enter, Esc, Space and `?`."""

from __future__ import annotations

import json
from pathlib import Path

from ._pty import DOWN, ENTER, ESC, LEFT, RIGHT, UP, Pty, child_env

DB = ["ask", "Which database should the service use?", "--header", "Database"]
DB += ["-o", "PostgreSQL", "-o", "SQLite", "-o", "DuckDB", "--json"]
FEATURES = ["ask", "Which features ship first?", "--header", "Features", "--multi"]
FEATURES += ["-o", "Auth", "-o", "Billing", "-o", "Search", "--json"]


def result_of(term: Pty) -> dict[str, object]:
    body = term.raw[term.raw.index("{") : term.raw.rindex("}") + 1]
    parsed: dict[str, object] = json.loads(body)
    return parsed


def only_answer(term: Pty) -> dict[str, object]:
    (answer,) = result_of(term)["answers"]  # type: ignore[misc]
    return answer  # type: ignore[no-any-return]


def test_a_number_key_picks_that_option_at_once() -> None:
    term = Pty(DB)
    screen = term.shows("❯ 1. PostgreSQL", "3. DuckDB")
    assert "1–3 or Enter pick" in screen  # the help line names the number keys
    term.press("2")
    assert term.finish() == 0
    assert only_answer(term)["selected"] == ["SQLite"]
    assert "✔ Database: SQLite" in term.text


def test_the_number_of_other_focuses_it_and_then_numbers_are_text() -> None:
    term = Pty(DB)
    term.shows("4. Other (type your own answer)")
    term.press("4")
    term.shows("❯ 4. Other:")
    term.press("12", "3", ENTER)  # in Other, digits are what the person types
    assert term.finish() == 0
    answer = only_answer(term)
    assert answer["selected"] == []
    assert answer["text"] == "123"


def test_a_number_past_the_options_says_which_exist() -> None:
    term = Pty(DB)
    term.shows("❯ 1. PostgreSQL")
    term.press("7")
    term.shows("There is no option 7 here: press 1–4.")
    term.press("3")
    assert term.finish() == 0
    assert only_answer(term)["selected"] == ["DuckDB"]


def test_number_keys_toggle_in_a_multi_question_and_space_toggles_too() -> None:
    term = Pty(FEATURES)
    screen = term.shows("❯ [ ] 1. Auth", "Done (0 chosen)")
    assert "1–3 or Space toggle" in screen
    term.press("1", "3")
    term.shows("[x] 1. Auth", "[x] 3. Search", "Done (2 chosen)")
    term.press("1")  # a second press unmarks it
    term.shows("[ ] 1. Auth", "Done (1 chosen)")
    term.press(DOWN, " ")  # the cursor followed the number to Auth; Space on Billing
    term.shows("❯ [x] 2. Billing", "Done (2 chosen)")
    term.press(DOWN, DOWN, DOWN, ENTER)  # past Search and Other, Enter on Done
    assert term.finish() == 0
    assert only_answer(term)["selected"] == ["Billing", "Search"]


def test_arrows_move_and_wrap_and_enter_confirms() -> None:
    term = Pty(DB)
    term.shows("❯ 1. PostgreSQL")
    term.press(UP)  # wraps round to Other
    term.shows("❯ 4. Other:")
    term.press(DOWN, DOWN, DOWN)
    term.shows("❯ 3. DuckDB")
    term.press(ENTER)
    assert term.finish() == 0
    assert only_answer(term)["selected"] == ["DuckDB"]


def test_left_and_right_move_between_questions(tmp_path: Path) -> None:
    ask = {
        "questions": [
            {"question": "Which database?", "header": "Database", "options": ["PG", "SQLite"]},
            {"question": "Which region?", "header": "Region", "options": ["EU", "US"]},
        ]
    }
    path = tmp_path / "ask.json"
    path.write_text(json.dumps(ask))
    term = Pty(["ask", "--file", str(path), "--json"])
    term.shows("Database", "1/2")
    term.press(RIGHT)
    term.shows("Region", "2/2")
    term.press(LEFT)
    term.shows("Database", "1/2")
    term.press("2", "1")  # a number picks and goes on, to the next question
    term.shows("Review")
    term.press(ENTER)
    assert term.finish() == 0
    assert [a["selected"] for a in result_of(term)["answers"]] == [  # type: ignore[attr-defined]
        ["SQLite"],
        ["EU"],
    ]


def test_esc_in_other_backs_out_to_the_options_keeping_the_text() -> None:
    term = Pty(DB)
    term.shows("❯ 1. PostgreSQL")
    term.press("Oracle")  # typing on an option goes to Other
    term.shows("❯ 4. Other: Oracle")
    term.press(ESC)
    screen = term.shows("❯ 1. PostgreSQL")
    assert "4. Other: Oracle" in screen  # backed out, nothing lost
    term.press(DOWN, DOWN, DOWN, ENTER)  # back in Other, the text is still there
    assert term.finish() == 0
    assert only_answer(term)["text"] == "Oracle"


def test_esc_on_an_option_skips_the_question() -> None:
    term = Pty(DB)
    term.shows("❯ 1. PostgreSQL")
    term.press(ESC)
    assert term.finish() == 1
    assert only_answer(term)["status"] == "skipped"


def test_question_mark_opens_and_closes_the_key_list() -> None:
    term = Pty(DB)
    term.shows("? keys")
    term.press("?")
    screen = term.shows("Keys:", "pick that option", "stop the turn")
    assert "Other" in screen and "Esc" in screen and "Space" not in screen  # single choice
    term.press("?")
    term.shows("? keys")
    assert "Keys:" not in term.text
    term.press("?", ESC)  # Esc closes the list first; it does not skip
    term.shows("? keys")
    term.press("1")
    assert term.finish() == 0
    assert only_answer(term)["selected"] == ["PostgreSQL"]


def test_a_number_typed_ahead_of_the_picker_does_not_pick() -> None:
    term = Pty(DB, env=child_env(MIDTURN_REPEAT_GUARD_MS="60000"))
    term.shows("❯ 1. PostgreSQL")
    term.press("2")  # inside the guard window: typeahead, ignored
    term.press(ESC)  # Esc is not guarded at open: skip, so the run ends
    assert term.finish() == 1
    assert only_answer(term)["status"] == "skipped"


def test_digits_in_a_text_question_are_text() -> None:
    term = Pty(["ask", "How many replicas?", "--text", "--json"])
    term.shows("How many replicas?")
    term.press("3", ENTER)
    assert term.finish() == 0
    assert only_answer(term)["text"] == "3"
