"""Results the runtime makes without a client (timeout, turn stopped, nobody there),
built through the public models."""

from __future__ import annotations

import midturn
from midturn.contract._models import AnswerStatus, Outcome


def uniform(ask: midturn.Ask, outcome: Outcome, status: AnswerStatus) -> midturn.AskResult:
    return midturn.AskResult(
        outcome=outcome,
        answers=tuple(
            midturn.QuestionAnswer(id=q.id, header=q.header, question=q.question, status=status)
            for q in ask.questions
        ),
    )
