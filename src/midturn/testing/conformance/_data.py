"""Interactions, events, results and sessions the conformance suite stores."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pydantic import SecretStr

from midturn.contract._interactions import Interaction, NewEvent, PermissionRequest
from midturn.contract._models import Ask, AskResult, Option, Question, QuestionAnswer
from midturn.store import SessionRecord

T0 = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)

ASK = Ask(
    questions=(
        Question(
            id="db",
            header="Database",
            question="Which database should the service use?",
            options=(
                Option(label="SQLite", description="One file, no server"),
                Option(label="PostgreSQL", description="A server, several replicas"),
            ),
            recommended=0,
        ),
        Question(id="key", header="API key", question="Paste the key", kind="text", secret=True),
    ),
    timeout_s=60.0,
)


def make_ask(
    interaction_id: str,
    *,
    session_id: str = "s1",
    turn_id: str = "t1",
    tool_call_id: str | None = None,
    created_at: datetime = T0,
) -> Interaction:
    return Interaction(
        id=interaction_id,
        kind="ask",
        session_id=session_id,
        turn_id=turn_id,
        tool_call_id=tool_call_id,
        created_at=created_at,
        deadline=created_at + timedelta(seconds=60),
        ask=ASK,
    )


def make_permission(
    interaction_id: str, *, session_id: str = "s1", turn_id: str = "t1"
) -> Interaction:
    return Interaction(
        id=interaction_id,
        kind="permission",
        session_id=session_id,
        turn_id=turn_id,
        created_at=T0,
        permission=PermissionRequest(tool="shell", summary="rm -rf build/", risk="high"),
    )


def requested(interaction: Interaction) -> NewEvent:
    return NewEvent(
        type="user_question_requested",
        session_id=interaction.session_id,
        turn_id=interaction.turn_id,
        interaction_id=interaction.id,
        at=T0,
        data={"questions": 2, "tags": ["a", "b"], "nested": {"x": None}},
    )


def answered(interaction: Interaction) -> NewEvent:
    return NewEvent(
        type="user_question_answered",
        session_id=interaction.session_id,
        turn_id=interaction.turn_id,
        interaction_id=interaction.id,
    )


def note(session_id: str, turn_id: str = "t1") -> NewEvent:
    return NewEvent(type="turn_waiting", session_id=session_id, turn_id=turn_id)


SECRET = "sk-live-9f8e7d6c5b4a-never-store-me"

RESULT = AskResult(
    outcome="answered",
    answers=(
        QuestionAnswer(
            id="db",
            header="Database",
            question="Which database should the service use?",
            status="answered",
            selected=("SQLite",),
            answer="SQLite",
        ),
        QuestionAnswer(
            id="key",
            header="API key",
            question="Paste the key",
            status="answered",
            answer="[secret provided]",
            secret_value=SecretStr(SECRET),
        ),
    ),
)


def session(session_id: str, *, created_at: datetime = T0) -> SessionRecord:
    return SessionRecord(
        id=session_id,
        agent_token_hash=f"agent-hash-{session_id}",
        answer_token_hash=f"answer-hash-{session_id}",
        created_at=created_at,
        meta={"label": f"session {session_id}", "n": 1},
    )
