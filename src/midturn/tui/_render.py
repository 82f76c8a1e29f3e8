"""Draw the picker as lines of styled text for a given width. Pure: no terminal.

Every line is a list of `(style, text)` fragments no wider than the width it was drawn
for; words wrap at spaces and are split only when a single word is wider than a line.
All model text is sanitized here, on its way to the screen.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from prompt_toolkit.utils import get_cwidth

from midturn.tui._sanitize import sanitize
from midturn.tui._state import PickerState

__all__ = [
    "Fragment",
    "Line",
    "block",
    "help_lines",
    "plain",
    "render_picker",
    "text_width",
    "wrap_runs",
]

Fragment = tuple[str, str]
Line = list[Fragment]

_TOKENS = re.compile(r"\n|[^\S\n]+|[^\s]+")
MIN_WIDTH = 16
_ROOM_FOR_THE_QUESTION = 6
"""Lines the `?` key list leaves for the question and its rows, or it does not open."""


def text_width(text: str) -> int:
    """Columns `text` takes on a terminal (wide characters count two)."""
    return sum(get_cwidth(char) for char in text)


def plain(lines: Iterable[Line]) -> str:
    """The lines as the text a person sees, one per row."""
    return "\n".join("".join(text for _, text in line) for line in lines)


def _split_word(word: str, width: int) -> list[str]:
    chunks, current, used = [], "", 0
    for char in word:
        w = get_cwidth(char)
        if used + w > width and current:
            chunks.append(current)
            current, used = "", 0
        current += char
        used += w
    chunks.append(current)
    return chunks


def wrap_runs(runs: Sequence[Fragment], width: int) -> list[Line]:
    """Wrap styled runs of text to `width` columns. Runs of spaces collapse to one;
    `\\n` starts a new line."""
    width = max(width, 1)
    lines: list[Line] = []
    line: Line = []
    used = 0
    gap = False
    for style, text in runs:
        for token in _TOKENS.findall(text):
            if token == "\n":
                lines.append(line)
                line, used, gap = [], 0, False
                continue
            if token.isspace():
                gap = used > 0
                continue
            need = text_width(token) + (1 if gap else 0)
            if used + need <= width:
                if gap:
                    line.append((style, " "))
                line.append((style, token))
                used += need
            else:
                if line:
                    lines.append(line)
                line, used = [], 0
                for chunk in _split_word(token, width):
                    if used:
                        lines.append(line)
                        line, used = [], 0
                    line.append((style, chunk))
                    used = text_width(chunk)
            gap = False
    lines.append(line)
    return lines


def block(prefix: Line, runs: Sequence[Fragment], width: int) -> list[Line]:
    """`runs` wrapped beside `prefix`, continuation lines indented under the text."""
    indent = sum(text_width(text) for _, text in prefix)
    if width - indent < MIN_WIDTH // 2:
        indent = 0
        prefix = [(style, text) for style, text in prefix if text.strip()]
        body = wrap_runs([*prefix, ("", " "), *runs], width)
        return body
    wrapped = wrap_runs(runs, width - indent)
    out = [[*prefix, *wrapped[0]]]
    out.extend([("", " " * indent), *rest] for rest in wrapped[1:])
    return out


def _chip(state: PickerState) -> list[Fragment]:
    question = state.question
    runs: list[Fragment] = [("class:chip", f" {sanitize(question.header, multiline=False)} ")]
    if state.multi_question:
        runs.append(("class:progress", f"  {state.index + 1}/{len(state.ask.questions)}"))
    if question.multi:
        runs.append(("class:hint", "  choose any"))
    if state.time_left is not None:
        runs.append(("class:timer", f"  ⏱ {math.ceil(state.time_left)} s left"))
    return runs


def help_lines(items: Sequence[str], width: int) -> list[Line]:
    """Key hints joined with ` · `, wrapped between hints rather than inside one."""
    lines: list[Line] = []
    current = ""
    for item in items:
        joined = f"{current} · {item}" if current else item
        if text_width(joined) <= width or not current:
            current = joined
            continue
        lines.extend(wrap_runs([("class:help", current)], width))
        current = item
    if current:
        lines.extend(wrap_runs([("class:help", current)], width))
    return lines


def _numbers(state: PickerState) -> str:
    """`1–3` for the options' number keys (`1` alone for one)."""
    count = min(len(state.question.options), 9)
    return "1" if count == 1 else f"1–{count}"


def _help(state: PickerState) -> list[str]:
    question = state.question
    keys = ["↑↓ move"]
    if question.kind == "text":
        keys = ["Enter confirm"]
    elif question.multi:
        keys += [f"{_numbers(state)} or Space toggle", "Enter on Done"]
    else:
        keys += [f"{_numbers(state)} or Enter pick"]
    if question.kind == "choice" and question.allow_other:
        keys.append("type for Other")
    if state.multi_question:
        keys.append("←→ questions")
    keys += ["Esc skip", "Ctrl-C stop"]
    if question.kind == "choice":
        keys.append("? keys")
    return keys


def _all_keys(state: PickerState) -> list[tuple[str, str]]:
    """Every key of a choice question, for the `?` list."""
    question = state.question
    other = len(question.options) + 1
    keys = [("↑ ↓", "move between the options")]
    if question.multi:
        keys += [
            (_numbers(state), "toggle that option"),
            ("Space", "toggle the option under the cursor"),
            ("Enter", "toggle the option under the cursor, or confirm on Done"),
        ]
    else:
        keys += [
            (_numbers(state), "pick that option"),
            ("Enter", "pick the option under the cursor"),
        ]
    if question.allow_other:
        keys += [
            (
                str(other) if other <= 9 else "typing",
                "go to Other and type your own answer (typing on an option does too)",
            ),
            ("Esc", "in Other: back to the options (the text is kept)"),
        ]
    if state.multi_question:
        keys.append(("← →", "previous / next question"))
    keys += [
        ("Esc", "skip this question"),
        ("Ctrl-C", "stop the turn"),
        ("?", "hide this list"),
    ]
    return keys


def _key_list(state: PickerState, width: int) -> list[Line]:
    column = max(text_width(key) for key, _ in _all_keys(state)) + 2
    lines: list[Line] = [[("class:help", "Keys:")]]
    for key, meaning in _all_keys(state):
        lines.extend(block([("class:help", f"  {key}".ljust(column + 2))], [("", meaning)], width))
    return lines


def _option_rows(state: PickerState, width: int, *, compact: bool = False) -> list[list[Line]]:
    """One group of lines per row. `compact` shows only the current row's description."""
    question, draft = state.question, state.draft
    groups: list[list[Line]] = []
    for row, kind in enumerate(state.rows()):
        lines: list[Line] = []
        groups.append(lines)
        here = row == draft.cursor
        pointer: Fragment = ("class:pointer", "❯ ") if here else ("", "  ")
        style = "class:current" if here else "class:option"
        if kind == "option":
            option = question.options[row]
            prefix: Line = [pointer]
            if question.multi:
                prefix.append(("class:box", "[x] " if row in draft.chosen else "[ ] "))
            prefix.append(("class:number", f"{row + 1}. "))
            runs: list[Fragment] = [(style, sanitize(option.label, multiline=False))]
            if question.recommended == row:
                runs.append(("class:recommended", " (recommended)"))
            lines.extend(block(prefix, runs, width))
            indent = sum(text_width(text) for _, text in prefix)
            if option.description and (here or not compact):
                lines.extend(
                    block(
                        [("", " " * indent)],
                        [("class:description", sanitize(option.description))],
                        width,
                    )
                )
            if option.preview and here:  # a mock-up: shown for the option under the cursor
                preview: list[Fragment] = [("class:preview", sanitize(option.preview))]
                lines.extend(block([("", " " * indent)], preview, width))
        elif kind == "other":
            # a secret choice (pi-legacy's secret select): its typed answer is a secret too
            secret = question.secret
            typed = "•" * len(draft.text) if secret else sanitize(draft.text, multiline=False)
            prefix = [pointer]
            if question.multi:
                prefix.append(("class:box", "[x] " if typed.strip() else "[ ] "))
            prefix.append(("class:number", f"{row + 1}. "))
            if typed or here:
                runs = [(style, "Other:"), ("class:typed", f" {typed}")]
                if here:
                    runs.append(("class:caret", "▏"))
            else:
                runs = [(style, "Other"), ("class:description", " (type your own answer)")]
            lines.extend(block(prefix, runs, width))
        else:
            count = len(draft.chosen) + (1 if draft.text.strip() else 0)
            lines.extend(block([pointer], [(style, f"Done ({count} chosen)")], width))
    return groups


def _window(groups: list[list[Line]], current: int, budget: int) -> list[Line]:
    """The row groups around `current` that fit in `budget` lines, with a marker line
    for the rows left out above and below."""
    total = sum(len(group) for group in groups)
    if total <= budget:
        return [line for group in groups for line in group]
    if len(groups[current]) + 2 > budget:  # even the current row alone is too tall
        keep = max(1, budget - 2)
        groups = [*groups[:current], groups[current][:keep], *groups[current + 1 :]]
    first = last = current
    used = len(groups[current]) + 2  # the two marker lines
    while True:
        grown = False
        if last + 1 < len(groups) and used + len(groups[last + 1]) <= budget:
            last += 1
            used += len(groups[last])
            grown = True
        if first > 0 and used + len(groups[first - 1]) <= budget:
            first -= 1
            used += len(groups[first])
            grown = True
        if not grown:
            break
    lines: list[Line] = []
    if first > 0:
        lines.append([("class:hint", f"  ↑ {first} more")])
    lines.extend(line for group in groups[first : last + 1] for line in group)
    if last + 1 < len(groups):
        lines.append([("class:hint", f"  ↓ {len(groups) - last - 1} more")])
    return lines


def _text_field(state: PickerState, width: int) -> list[Line]:
    question, draft = state.question, state.draft
    if draft.text:
        shown = "•" * len(draft.text) if question.secret else sanitize(draft.text, multiline=False)
        runs: list[Fragment] = [("class:typed", shown), ("class:caret", "▏")]
    else:
        hint = sanitize(question.placeholder or "", multiline=False) or (
            "type the secret (it is hidden)" if question.secret else "type your answer"
        )
        runs = [("class:caret", "▏"), ("class:description", hint)]
    return block([("class:pointer", "❯ ")], runs, width)


def _question_screen(state: PickerState, width: int, budget: int | None) -> list[Line]:
    """The question; when `budget` lines are not enough for every row, descriptions
    other than the current one fold away, then rows scroll around the cursor."""
    question = state.question
    lines = wrap_runs(_chip(state), width)
    lines.extend(wrap_runs([("class:question", sanitize(question.question))], width))
    lines.append([])
    if question.kind == "text":
        return lines + _text_field(state, width)
    groups = _option_rows(state, width)
    rows_budget = None if budget is None else max(3, budget - len(lines))
    if rows_budget is not None and sum(map(len, groups)) > rows_budget:
        groups = _option_rows(state, width, compact=True)
        return lines + _window(groups, state.draft.cursor, rows_budget)
    return lines + [line for group in groups for line in group]


def _review_screen(state: PickerState, width: int) -> list[Line]:
    total = len(state.ask.questions)
    runs: list[Fragment] = [
        ("class:chip", " Review "),
        ("class:progress", f"  {state.answered_count()} of {total} answered"),
    ]
    lines = wrap_runs(runs, width)
    lines.append([])
    for row, question in enumerate(state.ask.questions):
        here = row == state.review_cursor
        pointer: Fragment = ("class:pointer", "❯ ") if here else ("", "  ")
        answer = state.display_answer(row)
        value: Fragment = (
            ("class:typed", sanitize(answer, multiline=False))
            if answer is not None
            else ("class:skipped", "(skipped)")
        )
        header = sanitize(question.header, multiline=False)
        lines.extend(
            block(
                [pointer],
                [("class:current" if here else "", f"{header}:"), ("", " "), value],
                width,
            )
        )
    here = state.review_cursor == total
    pointer = ("class:pointer", "❯ ") if here else ("", "  ")
    lines.append([])
    lines.extend(block([pointer], [("class:current" if here else "", "Submit answers")], width))
    return lines


def render_picker(state: PickerState, width: int, height: int | None = None) -> list[Line]:
    """The whole picker for `width` columns: the screen, any notice, the key help. With
    `height`, long option lists fold and scroll to fit that many lines."""
    width = max(width, MIN_WIDTH)
    tail: list[Line] = []
    if state.notice:
        tail.extend(wrap_runs([("class:notice", state.notice)], width))
    tail.append([])
    if state.phase == "review":
        tail.extend(
            help_lines(["Enter submit or change", "↑↓ move", "← back", "Ctrl-C stop"], width)
        )
        return _review_screen(state, width) + tail
    keys = _key_list(state, width) if state.show_keys and state.question.kind == "choice" else []
    if keys and (height is None or len(keys) + len(tail) + _ROOM_FOR_THE_QUESTION <= height):
        tail.extend(keys)
    elif keys:  # the list would push the question off a short terminal
        tail[-1:-1] = wrap_runs(
            [("class:notice", "The terminal is too short to list every key.")], width
        )
        tail.extend(help_lines(_help(state), width))
    else:
        tail.extend(help_lines(_help(state), width))
    budget = None if height is None else height - len(tail)
    return _question_screen(state, width, budget) + tail
