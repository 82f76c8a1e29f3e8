"""What a chat message or an email shows, read once from a notification payload: the
question(s) with their options, the session's title, the queue position and the answer
link. The formatters (`_chat.py`, `_email.py`) work on this value, never on the payload's
keys, so the payload can grow without touching them.

Everything here came from the model or the person (titles, questions, labels) and is
text: each format escapes it its own way. `cut` shortens any of it to a limit with an
ellipsis."""

from __future__ import annotations

from dataclasses import dataclass

from midturn.notify._payload import Notification

__all__ = ["ELLIPSIS", "Notice", "NoticeOption", "NoticeQuestion", "cut", "notice_of", "one_line"]

ELLIPSIS = "…"

_TITLES = {
    "user_question_requested": "An agent is waiting for your answer",
    "permission_requested": "An agent asks for permission",
    "interaction.reminder": "Reminder: an agent is still waiting for you",
    "interaction.escalation": "Escalation: an agent has been waiting a long time",
    "user_question_answered": "A question was answered",
    "user_question_skipped": "A question was skipped",
    "user_question_timeout": "A question timed out",
    "user_question_cancelled": "A question was cancelled",
    "user_question_redirected": "A question was answered in chat",
    "permission_decided": "A permission was decided",
    "turn_waiting": "An agent's turn is waiting",
    "turn_resumed": "An agent's turn resumed",
}


def cut(text: str, limit: int) -> str:
    """`text` at most `limit` characters long, ending in an ellipsis when it was cut."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)].rstrip() + ELLIPSIS


def one_line(text: str) -> str:
    """`text` with every run of whitespace (newlines too) made one space."""
    return " ".join(text.split())


@dataclass(frozen=True)
class NoticeOption:
    label: str
    description: str | None = None


@dataclass(frozen=True)
class NoticeQuestion:
    id: str
    header: str
    question: str
    kind: str = "choice"
    options: tuple[NoticeOption, ...] = ()
    multi: bool = False
    secret: bool = False


@dataclass(frozen=True)
class Notice:
    """One notification as the person sees it."""

    event: str
    session_id: str
    interaction_id: str | None = None
    answer_url: str | None = None
    pending: bool = False
    session_title: str | None = None
    ahead: int | None = None
    questions: tuple[NoticeQuestion, ...] = ()
    permission_tool: str | None = None
    permission_summary: str | None = None
    permission_risk: str | None = None

    @property
    def title(self) -> str:
        """The headline: what the person is asked to do."""
        return _TITLES.get(self.event, "An agent is waiting for you")

    @property
    def place(self) -> str | None:
        """Where it waits in its session's queue ("next in this session's queue", "3rd in
        this session's queue"), or None when not known or no longer pending."""
        if self.ahead is None or not self.pending:
            return None
        if self.ahead <= 0:
            return "next in this session's queue"
        return f"{_ordinal(self.ahead + 1)} in this session's queue"

    @property
    def single_choice(self) -> NoticeQuestion | None:
        """The question when this is one single-select, non-secret choice question (the
        shape that can be answered with one button per option), else None."""
        if len(self.questions) != 1:
            return None
        question = self.questions[0]
        if question.kind != "choice" or question.multi or question.secret:
            return None
        return question if question.options else None

    @property
    def summary(self) -> str:
        """One line for a notification preview: the first question, or the permission."""
        if self.questions:
            return one_line(self.questions[0].question)
        if self.permission_summary:
            return one_line(self.permission_summary)
        return self.title


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def notice_of(notification: Notification) -> Notice:
    """What `notification` shows a person."""
    data = notification.data
    shown = data.interaction
    permission = shown.permission if shown is not None else None
    return Notice(
        event=notification.type,
        session_id=data.session.id,
        interaction_id=shown.id if shown is not None else None,
        answer_url=data.answer_url,
        pending=shown is not None and shown.status == "pending",
        session_title=data.session.title,
        ahead=data.position,
        questions=tuple(
            NoticeQuestion(
                id=question.id,
                header=question.header,
                question=question.question,
                kind=question.kind,
                options=tuple(
                    NoticeOption(option.label, option.description) for option in question.options
                ),
                multi=question.multi,
                secret=question.secret,
            )
            for question in (shown.questions if shown is not None else ())
        ),
        permission_tool=permission.tool if permission is not None else None,
        permission_summary=permission.summary if permission is not None else None,
        permission_risk=permission.risk if permission is not None else None,
    )
