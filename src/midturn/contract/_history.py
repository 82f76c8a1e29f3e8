"""A session's history as a person reads it: one flat entry per settled interaction, with
what was asked, what was answered or decided, by whom and when
(docs/protocol.md#history--admin-agent-answer).

Pure: built from a stored `Interaction`, which never holds a secret value (a secret
answer reads `[secret provided]`). A permission's long `details` stay out (the summary
says what it was); so does the ask's machinery (limits, dialect, warnings).
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from midturn.contract._context import InteractionContext
from midturn.contract._interactions import (
    Decision,
    Interaction,
    InteractionKind,
    InteractionStatus,
    Risk,
)

__all__ = [
    "MAX_QUERY",
    "HistoryAnswer",
    "HistoryDecision",
    "HistoryEntry",
    "HistoryPage",
    "HistoryPermission",
    "history_entry",
    "history_matches",
]

MAX_QUERY = 200


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class HistoryAnswer(_Model):
    """One question of an ask and how it was answered (`answer`: the display string, null
    when not answered)."""

    id: str
    header: str
    question: str
    status: str
    answer: str | None


class HistoryPermission(_Model):
    tool: str
    summary: str
    risk: Risk


class HistoryDecision(_Model):
    decision: Decision | None
    message: str | None
    auto: bool


class HistoryEntry(_Model):
    """One settled ask or permission. `settled_by` is the kind of token that settled it
    (`answer`, `admin`, `agent`), `system`, or null for a timeout; `message` is the chat
    text of a redirected ask."""

    id: str
    kind: InteractionKind
    status: InteractionStatus
    turn_id: str
    tool_call_id: str | None
    asked_at: datetime
    settled_at: datetime | None
    settled_by: str | None
    context: InteractionContext | None
    questions: tuple[HistoryAnswer, ...] = ()
    message: str | None = None
    permission: HistoryPermission | None = None
    decision: HistoryDecision | None = None


class HistoryPage(_Model):
    """One page of history: its entries, and the cursor of the next (None at the end).
    A page can hold fewer entries than asked while `next_cursor` is set: follow it."""

    entries: tuple[HistoryEntry, ...]
    next_cursor: str | None


def history_entry(interaction: Interaction) -> HistoryEntry:
    """The history entry of an interaction (settled or not). Built without a second
    validation (`model_construct`): every value comes from the validated interaction,
    and only display strings are taken from its result (`answer`, never
    `secret_value`)."""
    questions: list[HistoryAnswer] = []
    message = None
    result = interaction.result
    if interaction.ask is not None:
        answered = {answer.id: answer for answer in result.answers} if result else {}
        for question in interaction.ask.questions:
            answer = answered.get(question.id)
            questions.append(
                HistoryAnswer.model_construct(
                    id=question.id,
                    header=question.header,
                    question=question.question,
                    status=answer.status if answer is not None else interaction.status,
                    answer=answer.answer if answer is not None else None,
                )
            )
        message = result.message if result is not None else None
    permission = None
    if interaction.permission is not None:
        request = interaction.permission
        permission = HistoryPermission.model_construct(
            tool=request.tool, summary=request.summary, risk=request.risk
        )
    decision = None
    if interaction.decision is not None:
        settled = interaction.decision
        decision = HistoryDecision.model_construct(
            decision=settled.decision, message=settled.message, auto=settled.auto
        )
    return HistoryEntry.model_construct(
        id=interaction.id,
        kind=interaction.kind,
        status=interaction.status,
        turn_id=interaction.turn_id,
        tool_call_id=interaction.tool_call_id,
        asked_at=interaction.created_at,
        settled_at=interaction.settled_at,
        settled_by=interaction.settled_by,
        context=interaction.context,
        questions=tuple(questions),
        message=message,
        permission=permission,
        decision=decision,
    )


def _texts(interaction: Interaction) -> list[str]:
    """Every text of the interaction a person could search for (what its entry shows)."""
    texts: list[str | None] = [interaction.status]
    result = interaction.result
    if interaction.ask is not None:
        for question in interaction.ask.questions:
            texts += [question.header, question.question]
    if result is not None:
        texts.append(result.message)
        texts += [answer.answer for answer in result.answers]
    if interaction.permission is not None:
        texts += [interaction.permission.tool, interaction.permission.summary]
    if interaction.decision is not None:
        texts += [interaction.decision.decision, interaction.decision.message]
    context = interaction.context
    if context is not None:
        texts += [context.agent, context.doing]
        if context.tool is not None:
            texts += [context.tool.name, context.tool.input]
    return [text for text in texts if text]


def history_matches(interaction: Interaction, query: str) -> bool:
    """Whether every word of `query` appears (case-insensitively) in the interaction's
    text as its history entry shows it: its questions, answers, tool, summary, decision,
    chat reply and context."""
    words = query.casefold().split()
    if not words:
        return True
    text = "\n".join(_texts(interaction)).casefold()
    return all(word in text for word in words)
