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
    ["up", "down", "left", "right", "enter", "space", "escape", "backspace", "x", "7", " "]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(KEYS, max_size=60), st.integers(min_value=16, max_value=150))
def test_random_keys_never_break_the_picker(keys: list[str], width: int) -> None:
    state = PickerState(ASK, repeat_window_s=0)
    for step, key in enumerate(keys):
        now = float(step)
        if key in ("up", "down", "left", "right", "space", "backspace"):
            getattr(state, key)()
        elif key in ("enter", "escape"):
            getattr(state, key)(now)
        else:
            state.type_text(key)
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
