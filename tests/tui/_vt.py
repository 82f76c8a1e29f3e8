"""Asks for the picker tests; the virtual terminal they draw on is the shipped terminal
pilot (`midturn.testing.TerminalPilot`)."""

from __future__ import annotations

from typing import Any

from midturn import Ask, Option, Question
from midturn.testing.pilot import SAFETY_S, Keys
from midturn.testing.pilot import TerminalPilot as Terminal

UP, DOWN, RIGHT, LEFT = Keys.UP, Keys.DOWN, Keys.RIGHT, Keys.LEFT
ENTER, ESC, CTRL_C, BACKSPACE = Keys.ENTER, Keys.ESC, Keys.CTRL_C, Keys.BACKSPACE

__all__ = [
    "BACKSPACE",
    "CTRL_C",
    "DOWN",
    "ENTER",
    "ESC",
    "LEFT",
    "RIGHT",
    "SAFETY_S",
    "UP",
    "Terminal",
    "ask_of",
    "choice",
    "text_question",
]


def choice(
    qid: str,
    header: str,
    question: str,
    labels: list[str],
    *,
    descriptions: list[str | None] | None = None,
    **extra: Any,
) -> Question:
    descriptions = descriptions or [None] * len(labels)
    options = tuple(
        Option(label=label, description=desc)
        for label, desc in zip(labels, descriptions, strict=True)
    )
    return Question(id=qid, header=header, question=question, options=options, **extra)


def text_question(qid: str, header: str, question: str, **extra: Any) -> Question:
    return Question(id=qid, header=header, question=question, kind="text", **extra)


def ask_of(*questions: Question) -> Ask:
    return Ask(questions=questions)
