"""An invalid ask, told to the person at the command line.

The validator's text (`InvalidAsk.model_text()`) is written for a model: it names JSON
paths, says "the user" and "call again". A person who typed `midturn ask "Q?" -o A`
needs the same facts in their words and flags: which part is wrong (`-o`, `--header`),
what to do, and the field path too, to find it in a `--file`. The model's text is not
changed; this only reads its problems.
"""

from __future__ import annotations

import re

from midturn.errors import InvalidAsk, Problem

__all__ = ["for_a_person"]

_NO_OTHER = 'Do not add an "Other" option: the user can always type their own answer.'
_QUESTION = re.compile(r"^questions\[(\d+)\](?:\.(.+))?$")
_OPTION = re.compile(r"^options\[(\d+)\](?:\.(.+))?$")

_FLAGS = {
    "options": "the choices (-o)",
    "header": "--header",
    "question": "the question",
    "multi": "--multi",
    "min_choices": "how many must be chosen",
    "max_choices": "how many may be chosen",
    "secret": "--secret",
    "kind": "--text",
}
_TOP = {"timeout_s": "--timeout", "questions": "the questions", "on_timeout": "on_timeout"}


def _where(path: str, *, inline: bool) -> str:
    """What a person calls the part at `path`, with the path itself."""
    if inline:
        if path in _TOP:
            return f"{_TOP[path]}, at {path}"
        question = _QUESTION.match(path)
        if question and question[2]:
            field = question[2]
            option = _OPTION.match(field)
            if option:
                return (
                    f"choice {int(option[1]) + 1} (the -o number {int(option[1]) + 1}), at {path}"
                )
            if field in _FLAGS:
                return f"{_FLAGS[field]}, at {path}"
        return path
    question = _QUESTION.match(path)
    if question:
        return f"{path} (question {int(question[1]) + 1})"
    return path or "the file"


def _say(message: str, *, inline: bool) -> str:
    """The validator's advice, in a person's words (and flags, for an inline ask)."""
    text = message.replace(
        _NO_OTHER, "Other (type your own answer) is always offered: leave it out."
    )
    text = text.replace("the user", "the person").replace("mutually exclusive", "distinct")
    text = text.replace("the client adds itself", "midturn adds itself")
    text = text.replace("keep the likeliest", "keep the likeliest ones")
    if inline:
        text = text.replace('or set kind to "text"', "or use --text for typed text")
        text = text.replace("set multi: true, or remove it", "add --multi, or drop it")
        text = text.replace("leave it out to derive one", "leave --header out to make one")
        text = text.replace(
            " (put detail in the description)", "; for a longer description use --file"
        )
        text = re.sub(r"\boptions\b", "choices", text)
        text = re.sub(r"\boption\b", "choice", text)
    return text


def _line(problem: Problem, *, inline: bool) -> str:
    return f"  - {_where(problem.path, inline=inline)}: {_say(problem.message, inline=inline)}"


def for_a_person(error: InvalidAsk, *, source: str | None) -> str:
    """What `midturn ask` prints for an invalid ask: `source` is the `--file` it came
    from, or None for a question given with flags."""
    inline = source is None
    shown = "stdin" if source == "-" else source
    head = (
        "nothing was asked: the question needs fixing first."
        if inline
        else f"nothing was asked: the ask in {shown} needs fixing first."
    )
    lines = [head, *(_line(problem, inline=inline) for problem in error.problems)]
    return "\n".join(lines)
