"""A poll tool's dialect: {"poll": "Question?", "choices": ["A", "B"]}."""

from __future__ import annotations

from typing import Any

import midturn


class PollDialect(midturn.Dialect):
    """The model asks with a poll; it reads `POLL RESULT: <choice>` back."""

    name = "poll"
    tool_name = "run_poll"

    def to_canonical(self, tool_input: Any) -> dict[str, Any]:
        choices = tool_input.get("choices", [])
        return {
            "questions": [
                {
                    "header": "Poll",
                    "question": tool_input.get("poll"),
                    "options": [{"label": choice} for choice in choices],
                }
            ]
        }

    def render(self, result: midturn.AskResult) -> midturn.ToolOutput:
        answer = result.answers[0].answer if result.answers else None
        return midturn.ToolOutput(text=f"POLL RESULT: {answer}", data={"vote": answer})

    def description(self, limits: midturn.Limits) -> str:
        return "Run a poll with the user within this same turn."

    def input_schema(self, limits: midturn.Limits) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "poll": {"type": "string", "maxLength": limits.max_question_chars},
                "choices": {"type": "array", "maxItems": limits.max_options},
            },
            "required": ["poll", "choices"],
        }

    def matches(self, tool_input: Any) -> int:
        return 6 if isinstance(tool_input, dict) and "poll" in tool_input else 0
