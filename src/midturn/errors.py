"""Every exception midturn raises.

The tree::

    MidturnError                       base of everything below
    ├── InvalidAsk (ValueError)        the model's tool input is malformed; its text is
    │                                  written for the model to fix its call
    ├── InvalidAnswer (ValueError)     a client's answer has no sound reading; the
    │                                  interaction stays pending
    ├── AlreadySettled                 a response came after the interaction settled
    │                                  (carries the settled interaction)
    ├── NotFound (LookupError)         no interaction, session or event by that id
    ├── Unauthorized                   a gateway call without a valid token
    │   └── Forbidden                  a valid token used where it does not belong
    ├── GatewayError                   the gateway answered with an error body
    └── UsageError (RuntimeError)      a developer mistake: wrong arguments, a missing
        │                              optional dependency, a closed resource
        └── ToolCallConflict           a tool_call_id of the session already belongs to
                                       the other kind (an ask, not a permission, or the
                                       reverse); the gateway answers 409

Three families are kept apart: model-fixable input (`InvalidAsk`), client-fixable
input (`InvalidAnswer`) and developer mistakes (`UsageError`). Every message says what
was wrong and what to do instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "AlreadySettled",
    "Forbidden",
    "GatewayError",
    "InvalidAnswer",
    "InvalidAsk",
    "MidturnError",
    "NotFound",
    "Problem",
    "ToolCallConflict",
    "Unauthorized",
    "UsageError",
]


class MidturnError(Exception):
    """Base class of every error midturn raises on purpose."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with an ask: where (`questions[1].options`) and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


class InvalidAsk(MidturnError, ValueError):
    """The model's tool input cannot be shown to a person.

    `problems` lists every fault found, each with its path. `str(error)` is the text
    returned to the model as an error tool result, so it can correct the call in the
    same turn.
    """

    def __init__(self, problems: list[Problem]) -> None:
        if not problems:
            raise UsageError("InvalidAsk needs at least one problem")
        self.problems = list(problems)
        super().__init__(self.model_text())

    def model_text(self) -> str:
        lines = ["The question tool call was not shown to the user. Fix these and call again:"]
        lines.extend(f"- {problem}" for problem in self.problems)
        return "\n".join(lines)

    def to_list(self) -> list[dict[str, str]]:
        return [problem.to_dict() for problem in self.problems]


class InvalidAnswer(MidturnError, ValueError):
    """A client's answer has no sound reading. Nothing changed: the ask is still pending.

    `question` names the question at fault (its id) when there is one.
    """

    def __init__(self, reason: str, *, question: str | None = None) -> None:
        self.question = question
        self.reason = reason
        text = f"question {question!r}: {reason}" if question else reason
        super().__init__(text)


class AlreadySettled(MidturnError):
    """A response arrived for an interaction that has already settled.

    `interaction` is the settled interaction (with its result), so a client can show
    what was decided.
    """

    def __init__(self, interaction: Any, message: str | None = None) -> None:
        self.interaction = interaction
        status = getattr(interaction, "status", "settled")
        super().__init__(
            message
            or f"interaction {getattr(interaction, 'id', '?')} is already {status}; "
            "the first response wins and this one changed nothing"
        )


class NotFound(MidturnError, LookupError):
    """No interaction, session or event with that id."""


class Unauthorized(MidturnError):
    """A gateway call without a valid bearer token."""


class Forbidden(Unauthorized):
    """A valid token used on a route or session it does not reach."""


class GatewayError(MidturnError):
    """The gateway answered with an error body `{error, message}`."""

    def __init__(self, status_code: int, error: str, message: str, body: Any = None) -> None:
        self.status_code = status_code
        self.error = error
        self.body = body
        super().__init__(f"{status_code} {error}: {message}")


class UsageError(MidturnError, RuntimeError):
    """A developer mistake: wrong arguments, a missing optional dependency, a closed
    resource. The message says what to change."""


class ToolCallConflict(UsageError):
    """A `tool_call_id` of the session already belongs to an interaction of the other
    kind: asking with a permission's id, or requesting a permission with an ask's. Nothing
    was created. `existing` is the interaction that holds the id."""

    def __init__(self, message: str, existing: Any = None) -> None:
        self.existing = existing
        super().__init__(message)
