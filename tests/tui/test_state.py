"""Any sequence of keys leaves the picker in a sound state, and whatever it submits is an
answer `parse_answer` accepts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from midturn import parse_answer
from midturn.tui._render import render_picker, text_width
from midturn.tui._state import PickerState

from ._vt import ask_of, choice, text_question

ASK = ask_of(
    choice("db", "Database", "Which database?", ["PostgreSQL", "SQLite"], recommended=1),
    choice("feat", "Features", "Which features?", ["A", "B", "C"], multi=True, max_choices=2),
    choice("size", "Size", "Which size?", ["S", "M"], allow_other=False),
    text_question("token", "Token", "Token?", secret=True),
)

KEYS = st.sampled_from(
    [
        *("up", "down", "left", "right", "enter", "space", "escape", "backspace", "x", " "),
        *("1", "2", "3", "4", "7", "?"),
    ]
)


def press(state: PickerState, key: str, now: float) -> None:
    """A key as the picker's bindings route it (`_picker._bindings`)."""
    if key in ("up", "down", "left", "right", "space", "backspace"):
        getattr(state, key)()
    elif key in ("enter", "escape"):
        getattr(state, key)(now)
    else:
        handled = (key.isdigit() and state.number(int(key), now)) or (
            key == "?" and state.toggle_keys()
        )
        if not handled:
            state.type_text(key)


@settings(max_examples=300, deadline=None)
@given(st.lists(KEYS, max_size=60), st.integers(min_value=16, max_value=150))
def test_random_keys_never_break_the_picker(keys: list[str], width: int) -> None:
    state = PickerState(ASK, repeat_window_s=0)
    for step, key in enumerate(keys):
        press(state, key, float(step))
        for line in render_picker(state, width, 24):
            assert text_width("".join(text for _, text in line)) <= width
        if state.phase == "submitted":
            break
    if state.phase == "submitted":
        result = parse_answer(ASK, state.payload())
        assert len(result.answers) == 4
        feat = result.answers[1]
        assert len(feat.selected) + (1 if feat.text else 0) <= 2
        assert result.answers[2].text is None  # no free text where Other is not allowed


def test_number_keys_pick_toggle_focus_other_or_type() -> None:
    state = PickerState(ASK, repeat_window_s=0)
    assert state.number(1, 0.0) and state.index == 1  # picked PostgreSQL, on to Features
    assert state.drafts[0].committed_selected == (0,)
    assert state.number(3, 1.0) and state.number(1, 2.0)
    assert state.draft.chosen == {0, 2} and state.index == 1  # a multi question toggles
    assert state.number(4, 3.0) and state.row_kind() == "other"
    assert not state.number(5, 4.0)  # in Other a digit is text
    state.type_text("5")
    assert state.draft.text == "5"
    state.index = 2  # Size: no Other, two options
    assert state.number(3, 5.0) and state.notice == "There is no option 3 here: press 1–2."
    state.index = 3  # a text question
    assert not state.number(1, 6.0)


def test_number_keys_in_the_typeahead_window_do_nothing() -> None:
    state = PickerState(ASK, repeat_window_s=0.5)
    state.quiet_until = 10.0
    assert state.number(2, 9.9)  # swallowed, not typed
    assert state.index == 0 and state.drafts[0].status == "open" and state.draft.text == ""
    assert state.number(2, 10.0) and state.drafts[0].committed_selected == (1,)
