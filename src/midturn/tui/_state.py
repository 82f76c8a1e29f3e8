"""The picker's state machine: what each key does to an ask being answered (docs/terminal.md).

Pure and synchronous: no terminal, no prompt_toolkit. The application in `_picker.py`
maps keys onto these methods and draws the state with `_render.py`.

A question screen has rows: the options, then **Other** (a free-text row, when the
question allows it), then **Done** (multi questions only). A text question has only its
text field. After the last question of a multi-question ask comes one review screen with
a row per question and **Submit**.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from midturn.contract._models import Ask, Limits, Question

__all__ = ["SECRET_DOTS", "Draft", "PickerState", "RepeatGuard"]

MAX_TYPED = Limits().max_text_chars
"""Typing stops here: the default limit on typed answers, so a typed answer is never
refused for its length by a host on default limits."""

SECRET_DOTS = "••••••"
"""How a secret answer shows once typed: never its value, never its length."""

Phase = Literal["question", "review", "submitted", "stopped"]
RowKind = Literal["option", "other", "done"]


@dataclass
class Draft:
    """Where one question stands: the rows the user has marked and typed, and what was
    committed (`status`). Drafts survive moving between questions."""

    cursor: int = 0
    chosen: set[int] = field(default_factory=set)
    text: str = ""
    status: Literal["open", "answered", "skipped"] = "open"
    committed_selected: tuple[int, ...] = ()
    committed_text: str | None = None


@dataclass
class RepeatGuard:
    """Swallows auto-repeats of a key that just changed the screen.

    Holding Enter on one question must not also pick on the next one: after a key moves
    the picker on, further presses of that same key are ignored while they keep arriving
    less than `window_s` apart (a key burst). The first press after a quiet gap, or any
    other key, acts normally. `window_s=0` turns the guard off.
    """

    window_s: float = 0.5
    _key: str | None = None
    _last: float = 0.0

    def armed(self, key: str, now: float) -> None:
        self._key, self._last = key, now

    def swallows(self, key: str, now: float) -> bool:
        if self.window_s <= 0 or key != self._key:
            self._key = None
            return False
        if now - self._last < self.window_s:
            self._last = now  # the burst goes on: keep swallowing
            return True
        self._key = None
        return False


class PickerState:
    """Answers being built for one ask; `payload()` gives the §2.4 answer payload."""

    def __init__(self, ask: Ask, *, repeat_window_s: float = 0.5) -> None:
        self.ask = ask
        self.drafts = [self._fresh_draft(q) for q in ask.questions]
        self.index = 0
        self.phase: Phase = "question"
        self.review_cursor = len(ask.questions)  # on Submit
        self.reviewed = False  # once the review was seen, confirming returns to it
        self.notice: str | None = None
        self.guard = RepeatGuard(repeat_window_s)
        self.time_left: float | None = None  # seconds until the ask times out, if it does
        self.show_keys = False  # `?` opens the list of every key under the question
        self.quiet_until = 0.0  # number keys typed before this time are typeahead

    # -- reading --------------------------------------------------------------------

    @property
    def question(self) -> Question:
        return self.ask.questions[self.index]

    @property
    def draft(self) -> Draft:
        return self.drafts[self.index]

    @property
    def multi_question(self) -> bool:
        return len(self.ask.questions) > 1

    def rows(self, question: Question | None = None) -> list[RowKind]:
        question = question or self.question
        if question.kind == "text":
            return []
        rows: list[RowKind] = ["option"] * len(question.options)
        if question.allow_other:
            rows.append("other")
        if question.multi:
            rows.append("done")
        return rows

    def row_kind(self) -> RowKind | None:
        rows = self.rows()
        return rows[self.draft.cursor] if rows else None

    def other_row(self) -> int | None:
        rows = self.rows()
        return rows.index("other") if "other" in rows else None

    def answered_count(self) -> int:
        return sum(1 for draft in self.drafts if draft.status == "answered")

    # -- keys -----------------------------------------------------------------------

    def up(self) -> None:
        self._move(-1)

    def down(self) -> None:
        self._move(+1)

    def left(self) -> None:
        self.notice = None
        if self.phase == "review":
            self._enter_question(len(self.drafts) - 1)
        elif self.phase == "question" and self.index > 0:
            self._enter_question(self.index - 1)

    def right(self) -> None:
        self.notice = None
        if self.phase == "question":
            self._advance(step=True)

    def enter(self, now: float) -> None:
        """Enter: pick, toggle, confirm typed text, Done, or Submit on the review."""
        if self.phase not in ("question", "review") or self.guard.swallows("enter", now):
            return
        self.notice = None
        before = (self.phase, self.index)
        if self.phase == "review":
            self._review_enter()
        elif self.question.kind == "text":
            self._commit_text()
        else:
            kind = self.row_kind()
            if kind == "option" and self.question.multi:
                self._toggle(self.draft.cursor)
            elif kind == "option":
                self._commit((self.draft.cursor,), None)
            elif kind == "other" and not self.question.multi:
                self._commit_other()
            else:
                self._commit_multi()
        if (self.phase, self.index) != before:
            self.guard.armed("enter", now)

    def space(self) -> None:
        """Space toggles an option of a multi question; in a text field it is text."""
        if self.phase != "question":
            return
        kind = self.row_kind()
        if kind is None or kind == "other":
            self.type_text(" ")
        elif kind == "option" and self.question.multi:
            self.notice = None
            self._toggle(self.draft.cursor)

    def number(self, digit: int, now: float) -> bool:
        """A number key on a choice question: `1`–`9` pick that option (single choice)
        or toggle it (multi), and the number of Other moves to it. False when the key
        is text instead (a text question, the Other field, the review)."""
        if self.phase != "question" or self.question.kind != "choice":
            return False
        if self.row_kind() == "other":
            return False
        if now < self.quiet_until:  # typed into the composer just before the ask appeared
            return True
        self.notice = None
        question, rows = self.question, self.rows()
        if 1 <= digit <= len(question.options):
            self.draft.cursor = digit - 1
            if question.multi:
                self._toggle(digit - 1)
            else:
                self._commit((digit - 1,), None)
                self.guard.armed("enter", now)  # a held Enter must not pick on the next one
        elif (
            digit == len(question.options) + 1 and digit <= len(rows) and rows[digit - 1] == "other"
        ):
            self.draft.cursor = digit - 1
        else:
            last = len(question.options) + (1 if question.allow_other else 0)
            self.notice = f"There is no option {digit} here: press 1–{last}."
        return True

    def toggle_keys(self) -> bool:
        """`?` shows or hides every key; False when it is text (a text field, Other)."""
        if self.phase == "question" and (
            self.question.kind == "text" or self.row_kind() == "other"
        ):
            return False
        self.show_keys = not self.show_keys
        return True

    def escape(self, now: float) -> None:
        """Esc backs out: from the Other field with text in it, back to the options
        (the text is kept); otherwise it leaves the question unanswered and moves on."""
        if self.phase != "question" or self.guard.swallows("escape", now):
            return
        self.notice = None
        draft = self.draft
        if self.show_keys:  # the key list closes first
            self.show_keys = False
            self.guard.armed("escape", now)
            return
        if self.row_kind() == "other" and draft.text.strip():
            question = self.question
            draft.cursor = question.recommended if question.recommended is not None else 0
            self.guard.armed("escape", now)  # a held Esc must not also skip
            return
        draft.status, draft.committed_selected, draft.committed_text = "skipped", (), None
        self._advance()
        self.guard.armed("escape", now)

    def type_text(self, text: str) -> None:
        """Printable input: goes to the text field, or jumps from an option to Other."""
        if self.phase != "question" or not text:
            return
        self.notice = None
        if self.question.kind == "choice":
            other = self.other_row()
            if other is None:
                self.notice = "This question has no free-text answer: pick one of the options."
                return
            if self.draft.cursor != other:
                if not text.strip():
                    return
                self.draft.cursor = other
                text = text.lstrip()
        self.draft.text = (self.draft.text + text)[:MAX_TYPED]

    def backspace(self) -> None:
        if self.phase == "question" and (
            self.question.kind == "text" or self.row_kind() == "other"
        ):
            self.draft.text = self.draft.text[:-1]

    def stop(self) -> None:
        self.phase = "stopped"

    # -- the answer -----------------------------------------------------------------

    def payload(self) -> dict[str, Any]:
        """The answer in a §2.4 shape: keyed by question id; `None` is skipped; a
        choice is `{"selected": [indices], "text": other}`; typed text is `{"text"}`."""
        answers: dict[str, Any] = {}
        for question, draft in zip(self.ask.questions, self.drafts, strict=True):
            if draft.status != "answered":
                answers[question.id] = None
            elif question.kind == "text":
                answers[question.id] = {"selected": [], "text": draft.committed_text}
            else:
                answers[question.id] = {
                    "selected": list(draft.committed_selected),
                    "text": draft.committed_text,
                }
        return {"answers": answers}

    def display_answer(self, position: int) -> str | None:
        """What the review shows for a question: labels, quoted text, a mask, or None."""
        question, draft = self.ask.questions[position], self.drafts[position]
        if draft.status != "answered":
            return None
        parts = [question.options[i].label for i in draft.committed_selected]
        if draft.committed_text is not None:
            parts.append(SECRET_DOTS if question.secret else f'"{draft.committed_text}"')
        return ", ".join(parts) if parts else "(none)"

    # -- internals ------------------------------------------------------------------

    def _fresh_draft(self, question: Question) -> Draft:
        cursor = question.recommended if question.recommended is not None else 0
        return Draft(cursor=cursor)

    def _move(self, step: int) -> None:
        self.notice = None
        if self.phase == "review":
            self.review_cursor = (self.review_cursor + step) % (len(self.drafts) + 1)
        elif self.phase == "question":
            rows = self.rows()
            if rows:
                self.draft.cursor = (self.draft.cursor + step) % len(rows)

    def _toggle(self, option: int) -> None:
        chosen = self.draft.chosen
        chosen.symmetric_difference_update({option})

    def _commit(self, selected: tuple[int, ...], text: str | None) -> None:
        draft = self.draft
        draft.status, draft.committed_selected, draft.committed_text = "answered", selected, text
        self._advance()

    def _commit_text(self) -> None:
        if not self.draft.text.strip():
            self.notice = "Type an answer first, or press Esc to skip this question."
            return
        self._commit((), self.draft.text.strip())

    def _commit_other(self) -> None:
        if not self.draft.text.strip():
            self.notice = "Type your own answer first, or pick one of the options."
            return
        self._commit((), self.draft.text.strip())

    def _commit_multi(self) -> None:
        question, draft = self.question, self.draft
        other = draft.text.strip() or None
        count = len(draft.chosen) + (1 if other else 0)
        if count < question.min_choices:
            need = question.min_choices
            self.notice = f"Choose at least {need} (Space toggles), then Done."
            return
        if question.max_choices is not None and count > question.max_choices:
            self.notice = f"Choose at most {question.max_choices}; {count} are marked."
            return
        self._commit(tuple(sorted(draft.chosen)), other)

    def _advance(self, *, step: bool = False) -> None:
        if self.reviewed and not step:
            self.phase, self.review_cursor = "review", len(self.drafts)
        elif self.index + 1 < len(self.drafts):
            self._enter_question(self.index + 1)
        elif self.multi_question:
            self.phase, self.review_cursor = "review", len(self.drafts)
            self.reviewed = True
        else:
            self.phase = "submitted"

    def _enter_question(self, position: int) -> None:
        self.phase, self.index = "question", position
        draft = self.drafts[position]
        if draft.status == "answered" and draft.committed_selected:
            draft.cursor = draft.committed_selected[0]

    def _review_enter(self) -> None:
        if self.review_cursor >= len(self.drafts):
            self.phase = "submitted"
        else:
            self._enter_question(self.review_cursor)
