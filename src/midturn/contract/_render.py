"""The text the model reads for a result (docs/contract.md#results): short, plain and deterministic
to the byte, so the same result always costs the same tokens and caches the same way.

```
The user answered:
- Database: PostgreSQL
- Features: Auth, Billing
- Name: "billing-api"
- Region: (skipped)
```

Labels are shown bare and typed text is quoted JSON-style, so the model can tell an
option from something the user wrote.
"""

from __future__ import annotations

import json

from midturn.contract._models import SECRET_MARK, AskResult, QuestionAnswer

__all__ = [
    "ALL_SKIPPED",
    "CANCELLED",
    "TIMED_OUT",
    "UNAVAILABLE",
    "answer_value",
    "canonical_text",
    "quote",
]

_PROCEED = "Proceed with your best judgement, state the assumptions you made, and do not ask again."
ALL_SKIPPED = f"The user skipped the questions. {_PROCEED}"
TIMED_OUT = f"The user did not answer the questions in time. {_PROCEED}"
UNAVAILABLE = f"No one is available to answer questions here. {_PROCEED}"
CANCELLED = "The user stopped the turn before answering the questions. Do not continue."
_AUTO = "(auto-selected after timeout)"
_STATUS_TEXT = {
    "skipped": "(skipped)",
    "timed_out": "(no answer in time)",
    "cancelled": "(cancelled)",
    "unavailable": "(unavailable)",
}


def quote(text: str) -> str:
    """Typed text as a JSON string literal: double quotes, escapes, Unicode kept."""
    return json.dumps(text, ensure_ascii=False)


def answer_value(answer: QuestionAnswer) -> str:
    """One answer as the model reads it: labels bare, typed text quoted, a secret masked,
    "(skipped)" and the like for a question with no answer."""
    if answer.status != "answered":
        return _STATUS_TEXT[answer.status]
    if answer.is_secret:
        return SECRET_MARK
    parts = list(answer.selected)
    if answer.text is not None:
        parts.append(quote(answer.text))
    value = ", ".join(parts) if parts else "(none selected)"
    return f"{value} {_AUTO}" if answer.auto_selected else value


def _lines(result: AskResult) -> str:
    return "\n".join(f"- {answer.header}: {answer_value(answer)}" for answer in result.answers)


def canonical_text(result: AskResult) -> str:
    """The exact text the model reads for `result` in the `midturn` dialect."""
    outcome = result.outcome
    if outcome == "answered":
        return f"The user answered:\n{_lines(result)}"
    if outcome == "skipped":
        return ALL_SKIPPED
    if outcome == "timed_out":
        if any(answer.status == "answered" for answer in result.answers):
            return (
                "The user did not answer in time, so these defaults were chosen for them:\n"
                f"{_lines(result)}"
            )
        return TIMED_OUT
    if outcome == "unavailable":
        return UNAVAILABLE
    if outcome == "redirected":
        message = quote(result.message or "")
        return (
            f"The user did not answer the questions and wrote instead: {message}. "
            "Continue with that message in mind, and do not ask these questions again."
        )
    return CANCELLED
