"""The ask picker, driven with real key sequences; assertions on what the screen shows."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import pytest

from midturn import SECRET_MARK, Ask, parse_answer
from midturn.tui import PickerResult, pick

from ._vt import (
    BACKSPACE,
    CTRL_C,
    DOWN,
    ENTER,
    ESC,
    LEFT,
    RIGHT,
    UP,
    Terminal,
    ask_of,
    choice,
    text_question,
)

Make = Callable[..., Terminal]

DB = choice(
    "db",
    "Database",
    "Which database should the service use?",
    ["PostgreSQL", "SQLite"],
    descriptions=["Managed, scales out", "Embedded, zero setup"],
    recommended=0,
)
FEATURES = choice(
    "feat", "Features", "Which features ship first?", ["Auth", "Billing", "Search"], multi=True
)
NAME = text_question("name", "Name", "What should the service be called?")


def start(term: Terminal, ask: Ask, **options: Any) -> asyncio.Task[PickerResult]:
    options.setdefault("repeat_window_s", 0)
    return asyncio.create_task(pick(ask, input=term.input, output=term.output, **options))


async def test_a_choice_is_picked_with_arrows_and_enter(terminal: Make) -> None:
    term = terminal()
    task = start(term, ask_of(DB))
    screen = await term.shows("Database", "Which database should the service use?")
    assert "❯ 1. PostgreSQL (recommended)" in screen
    assert "Managed, scales out" in screen and "Embedded, zero setup" in screen
    assert "3. Other (type your own answer)" in screen
    assert "1/1" not in screen  # one question: no progress counter
    term.press(DOWN)
    screen = await term.shows("❯ 2. SQLite")
    term.press(ENTER)
    result = await task
    assert result.payload == {"answers": {"db": {"selected": [1], "text": None}}}
    assert await term.shows("✔ Database: SQLite")


async def test_a_multi_selection_toggles_with_space_and_ends_on_done(terminal: Make) -> None:
    term = terminal()
    task = start(term, ask_of(FEATURES))
    await term.shows("❯ [ ] 1. Auth", "Done (0 chosen)")
    term.press(" ", DOWN, DOWN, " ")
    screen = await term.shows("Done (2 chosen)")
    assert "[x] 1. Auth" in screen and "[ ] 2. Billing" in screen and "❯ [x] 3. Search" in screen
    term.press(" ")  # toggles Search off again
    await term.shows("❯ [ ] 3. Search", "Done (1 chosen)")
    term.press(UP, ENTER, DOWN, DOWN, DOWN, ENTER)  # Enter on an option toggles too
    result = await task
    assert result.payload == {"answers": {"feat": {"selected": [0, 1], "text": None}}}


async def test_done_refuses_fewer_than_the_minimum(terminal: Make) -> None:
    term = terminal()
    task = start(term, ask_of(FEATURES))
    await term.shows("Done (0 chosen)")
    term.press(UP, ENTER)  # Done with nothing marked
    await term.shows("Choose at least 1")
    assert not task.done()
    term.press(DOWN, " ", UP, UP, ENTER)
    assert (await task).payload == {"answers": {"feat": {"selected": [0], "text": None}}}


async def test_typing_on_an_option_jumps_to_other(terminal: Make) -> None:
    term = terminal()
    task = start(term, ask_of(DB))
    await term.shows("❯ 1. PostgreSQL")
    term.press("M", "y", "SQLx", BACKSPACE)
    screen = await term.shows("❯ 3. Other: MySQL")
    assert "❯ 1." not in screen
    term.press(ENTER)
    result = await task
    assert result.payload == {"answers": {"db": {"selected": [], "text": "MySQL"}}}
    assert await term.shows('✔ Database: "MySQL"')


async def test_other_refuses_empty_text(terminal: Make) -> None:
    term = terminal()
    task = start(term, ask_of(DB))
    await term.shows("❯ 1. PostgreSQL")
    term.press(UP, ENTER)  # wraps round to Other, which is empty
    await term.shows("Type your own answer first")
    assert not task.done()
    term.press("   ", ENTER)  # only spaces is still empty
    await term.shows("Type your own answer first")
    term.press("Redis", ENTER)
    assert (await task).payload == {"answers": {"db": {"selected": [], "text": "Redis"}}}


async def test_escape_leaves_a_question_unanswered_and_moves_on(terminal: Make) -> None:
    term = terminal()
    task = start(term, ask_of(DB, NAME))
    await term.shows("Database", "1/2")
    term.press(ESC)
    await term.shows("Name", "2/2")
    term.press("billing", ENTER)
    screen = await term.shows("Review")
    assert "Database: (skipped)" in screen and 'Name: "billing"' in screen
    assert "1 of 2 answered" in screen
    term.press(ENTER)
    result = await task
    assert result.payload == {"answers": {"db": None, "name": {"selected": [], "text": "billing"}}}


async def test_escape_on_a_single_question_skips_it(terminal: Make) -> None:
    term = terminal()
    task = start(term, ask_of(DB))
    await term.shows("Database")
    term.press(ESC)
    assert (await task).payload == {"answers": {"db": None}}
    assert await term.shows("✔ Database: (skipped)")


async def test_back_and_forth_keeps_answers(terminal: Make) -> None:
    term = terminal()
    task = start(term, ask_of(DB, FEATURES, NAME))
    await term.shows("1/3")
    term.press(DOWN, ENTER)
    await term.shows("2/3")
    term.press(DOWN, " ")
    await term.shows("[x] 2. Billing")
    term.press(LEFT)  # back to the first question, Billing not yet confirmed
    await term.shows("1/3", "❯ 2. SQLite")
    term.press(RIGHT)
    await term.shows("2/3", "❯ [x] 2. Billing")
    term.press(RIGHT)
    await term.shows("3/3")
    term.press("svc", LEFT, LEFT, RIGHT, RIGHT)
    await term.shows("3/3", "❯ svc")
    term.press(ENTER)
    screen = await term.shows("Review")
    assert "Database: SQLite" in screen
    assert "Features: (skipped)" in screen  # marked but never confirmed with Done
    assert 'Name: "svc"' in screen
    term.press(UP, UP, ENTER)  # change the second answer from the review
    await term.shows("2/3", "[x] 2. Billing")
    term.press(UP, UP, ENTER)  # from Billing up to Done (wraps) confirms, back to review
    screen = await term.shows("Review", "Features: Billing")
    term.press(ENTER)
    result = await task
    assert result.payload == {
        "answers": {
            "db": {"selected": [1], "text": None},
            "feat": {"selected": [1], "text": None},
            "name": {"selected": [], "text": "svc"},
        }
    }
    parsed = parse_answer(ask_of(DB, FEATURES, NAME), result.payload)
    assert [a.answer for a in parsed.answers] == ["SQLite", "Billing", "svc"]


async def test_ctrl_c_stops(terminal: Make) -> None:
    term = terminal()
    task = start(term, ask_of(DB, NAME))
    await term.shows("Database")
    term.press(DOWN, ENTER)
    await term.shows("Name")
    term.press(CTRL_C)
    result = await task
    assert result.stopped and result.payload is None
    assert await term.shows("✖ Stopped.")


async def test_a_secret_is_masked_on_screen_and_delivered(terminal: Make) -> None:
    term = terminal()
    token = text_question("token", "Token", "Paste the deploy token", secret=True)
    task = start(term, ask_of(token, NAME))
    await term.shows("Paste the deploy token", "it is hidden")
    term.press("hunter2")
    screen = await term.shows("•••••••")
    assert "hunter2" not in screen
    term.press(ENTER, ESC)
    screen = await term.shows("Review")
    assert "Token: ••••••" in screen
    term.press(ENTER)
    result = await task
    assert result.payload is not None
    assert result.payload["answers"]["token"] == {"selected": [], "text": "hunter2"}
    assert "hunter2" not in term.raw  # never written to the terminal at all
    assert "hunter2" not in "\n".join(result.lines)
    parsed = parse_answer(ask_of(token, NAME), result.payload)
    secret = parsed.answers[0]
    assert secret.answer == SECRET_MARK and secret.secret_value is not None
    assert secret.secret_value.get_secret_value() == "hunter2"
    assert parsed.answers[1].status == "skipped"


async def test_held_enter_does_not_pick_on_the_next_question(terminal: Make) -> None:
    now = [100.0]
    term = terminal()
    task = start(term, ask_of(DB, FEATURES), repeat_window_s=0.5, clock=lambda: now[0])
    await term.shows("1/2")
    now[0] += 1.0  # the person reads the question
    term.input.send_text(ENTER + ENTER + ENTER)  # one burst, as a held key repeats
    await term.shows("2/2")
    now[0] += 0.3  # still the same burst: repeats keep arriving
    term.press(ENTER)
    now[0] += 0.3
    term.press(ENTER)
    screen = await term.shows("2/2", "❯ [ ] 1. Auth")
    assert "[x]" not in screen
    now[0] += 1.0  # a deliberate press after letting go
    term.press(ENTER)
    await term.shows("❯ [x] 1. Auth")
    term.press(CTRL_C)
    assert (await task).stopped


async def test_typeahead_enter_cannot_pick_as_the_picker_opens(terminal: Make) -> None:
    now = [5.0]
    term = terminal()
    term.input.send_text(ENTER)  # typed before the picker appeared
    task = start(term, ask_of(DB), repeat_window_s=0.5, clock=lambda: now[0])
    await term.shows("❯ 1. PostgreSQL")
    term.press(DOWN)
    await term.shows("❯ 2. SQLite")
    assert not task.done()
    now[0] += 1.0
    term.press(ENTER)
    assert (await task).payload == {"answers": {"db": {"selected": [1], "text": None}}}


async def test_injected_control_sequences_are_inert(terminal: Make) -> None:
    term = terminal()
    term.write("earlier conversation line\r\n")
    evil = choice(
        "x",
        "Evil\x1b[31m",
        "Clear\x1b[2J the screen\x1b]0;pwned\x07 and \x1b]8;;https://x.example\x1b\\link\x1b]8;;"
        "\x1b\\ here\u202e?",
        ["One\x1b[1;1H", "Two\x07"],
        descriptions=["\x1b]52;c;Y2xpcGJvYXJk\x07copy", None],
    )
    task = start(term, ask_of(evil))
    screen = await term.shows("Clear the screen and link here?")
    assert "earlier conversation line" in screen  # nothing was cleared
    assert "❯ 1. One" in screen and "2. Two" in screen and "copy" in screen
    assert term.screen.title == ""  # no OSC reached the terminal
    raw = term.raw
    assert "pwned" not in raw and "\x1b]8;" not in raw and "\x1b]52" not in raw
    assert "\x1b[2J" not in raw and "\u202e" not in raw
    term.press(CTRL_C)
    await task


LONG_ASK = ask_of(
    choice(
        "engine",
        "Storage",
        "Which storage engine should the billing service use for its ledger, given that "
        "finance needs point-in-time recovery and nobody on the team administers databases?",
        ["PostgreSQL with logical replication", "SQLite in WAL mode", "FoundationDB"],
        descriptions=[
            "Managed by the platform team; scales out; point-in-time recovery is included",
            "Embedded and zero setup, backed up by copying one file every night",
            None,
        ],
        recommended=1,
    ),
    NAME,
)


@pytest.mark.parametrize("columns", [48, 80, 146])
async def test_legible_at_common_widths(terminal: Make, columns: int) -> None:
    term = terminal(columns=columns)
    task = start(term, LONG_ASK)
    screen = await term.shows("Storage", "FoundationDB", "Ctrl-C stop")
    words = " ".join(screen.split("\n")).split()
    for line in term.lines:
        assert len(line) <= columns
    engine = LONG_ASK.questions[0]
    texts = [engine.question, *engine.labels, "(recommended)"]
    texts += [option.description or "" for option in engine.options]
    expected = " ".join(texts).split()
    missing = [word for word in expected if word not in words]
    assert not missing, f"words broken at {columns} columns: {missing}\n{screen}"
    term.press(CTRL_C)
    await task


async def test_cancelling_closes_the_picker_and_erases_it(terminal: Make) -> None:
    term = terminal()
    term.write("earlier conversation line\r\n")
    task = start(term, ask_of(DB))
    await term.shows("Which database should the service use?")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    screen = await term.until(lambda text: "Which database" not in text)
    assert "earlier conversation line" in screen


async def test_limits_of_a_question_are_explained_not_submitted(terminal: Make) -> None:
    term = terminal()
    strict = choice("size", "Size", "Which size?", ["S", "M", "L"], allow_other=False)
    capped = choice("tags", "Tags", "Pick up to two", ["a", "b", "c"], multi=True, max_choices=2)
    task = start(term, ask_of(strict, capped))
    screen = await term.shows("1. S", "3. L")
    assert "Other" not in screen and "type for Other" not in screen
    term.press("x")
    await term.shows("no free-text answer: pick one of the options")
    term.press(ENTER)
    await term.shows("Pick up to two")
    term.press(" ", DOWN, " ", DOWN, " ", UP, UP, UP, ENTER)  # three marked, up to Done
    await term.shows("Choose at most 2; 3 are marked.")
    term.press(DOWN, " ", UP, ENTER)  # wrap round to a, unmark it, back to Done
    await term.shows("Review", "Size: S", "Tags: b, c")
    term.press(ENTER)
    assert (await task).payload == {
        "answers": {
            "size": {"selected": [0], "text": None},
            "tags": {"selected": [1, 2], "text": None},
        }
    }


TALL = ask_of(
    choice(
        "plan",
        "Plan",
        "Which rollout plan should the deployment follow this week?",
        ["Canary", "Blue-green", "Rolling", "Big bang"],
        descriptions=[
            "Send one percent of traffic to the new version first, then ten, then all of it, "
            "watching the error budget at every step before going further",
            "Bring up a full second environment, switch the load balancer over at once, and "
            "keep the old one warm for an hour so a rollback is a single switch",
            "Replace the instances a few at a time behind the load balancer; slower to "
            "finish, but it needs no spare capacity at all during the rollout",
            "Stop everything and start the new version; the fastest, with downtime",
        ],
    )
)


async def test_a_short_terminal_folds_descriptions_and_scrolls(terminal: Make) -> None:
    term = terminal(columns=48, rows=14)
    task = start(term, TALL)
    screen = await term.shows("❯ 1. Canary", "Send one percent", "Ctrl-C stop")
    assert "Bring up a full second environment" not in screen  # folded: not the current row
    assert re.search(r"↓ \d more", screen)
    assert all(len(line) <= 48 for line in term.lines)
    term.press(DOWN)
    screen = await term.shows("❯ 2. Blue-green", "Bring up a full second")
    assert "↑ 1 more" in screen and "↓ 3 more" in screen  # scrolled around the cursor
    assert "Ctrl-C stop" in screen  # the key help stays on screen
    term.press(DOWN, DOWN)
    screen = await term.shows("❯ 4. Big bang", "Stop everything")
    assert "Send one percent" not in screen
    term.press(ENTER)
    assert (await task).payload == {"answers": {"plan": {"selected": [3], "text": None}}}


async def test_a_timed_ask_counts_down(terminal: Make) -> None:
    now = [50.0]
    term = terminal()
    task = start(term, ask_of(DB), clock=lambda: now[0], time_left_s=30)
    await term.shows("Database ⏱ 30 s left")
    now[0] += 10.2
    await term.shows("⏱ 20 s left")  # redrawn by itself, no key pressed
    term.press(CTRL_C)
    assert (await task).stopped


async def test_the_typed_answer_of_a_secret_select_is_masked_too(terminal: Make) -> None:
    """pi-legacy `sensitivity: secret` on a select: its Other text is a secret as well."""
    from midturn import parse_ask

    secret_select = parse_ask(
        {
            "question": "Which vault holds the key?",
            "kind": "select",
            "options": ["vault-a", "vault-b"],
            "allowCustom": True,
            "sensitivity": "secret",
        },
        dialect="pi-legacy",
    )
    term = terminal()
    task = start(term, secret_select)
    await term.shows("Which vault holds the key?")
    term.press("hunter2")
    screen = await term.shows("•••••••")
    assert "hunter2" not in screen
    term.press(ENTER)
    result = await task
    assert result.payload is not None
    assert "hunter2" not in term.raw  # never written to the terminal at all
    assert "hunter2" not in "\n".join(result.lines)
    parsed = parse_answer(secret_select, result.payload)
    (answer,) = parsed.answers
    assert answer.answer == SECRET_MARK and answer.secret_value is not None
    assert answer.secret_value.get_secret_value() == "hunter2"
