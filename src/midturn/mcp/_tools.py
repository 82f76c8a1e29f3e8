"""The four tools the MCP server lists, with their input schemas."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from midturn.contract._tool_spec import tool_spec
from midturn.mcp._results import WAIT_TOOL

__all__ = ["PERMISSION_TOOL", "QUESTION_TOOL", "START_TOOL", "WAIT_TOOL", "tool_list"]

_SPEC = tool_spec(dialect="midturn", format="mcp")
QUESTION_TOOL: str = _SPEC["name"]
START_TOOL = "start_question"
PERMISSION_TOOL = "request_permission"

_PERMISSION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summary": {
            "type": "string",
            "minLength": 1,
            "maxLength": 500,
            "description": "What you are about to do, in one line the user can judge.",
        },
        "risk": {"type": "string", "enum": ["low", "medium", "high"], "default": "medium"},
        "details": {
            "type": "string",
            "maxLength": 200000,
            "description": "The exact command, diff or payload.",
        },
        "tool": {
            "type": "string",
            "minLength": 1,
            "maxLength": 200,
            "description": "The tool or action this permission is for (default: action). "
            "'allow for this turn' covers later requests for the same tool.",
        },
    },
    "required": ["summary"],
    "additionalProperties": False,
}


def _wait_schema(max_wait_s: float) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "interaction_id": {"type": "string", "minLength": 1},
            "seconds": {
                "type": "number",
                "minimum": 0,
                "maximum": max_wait_s,
                "description": f"How long to wait at most (default and cap {max_wait_s:g}).",
            },
        },
        "required": ["interaction_id"],
        "additionalProperties": False,
    }


def tool_list(max_wait_s: float) -> list[types.Tool]:
    return [
        types.Tool(
            name=QUESTION_TOOL, description=_SPEC["description"], input_schema=_SPEC["inputSchema"]
        ),
        types.Tool(
            name=PERMISSION_TOOL,
            description=(
                "Ask the user for permission before an action with side effects, and wait "
                "for the decision: allowed, denied (with the user's note), or allowed for the "
                "rest of this turn. Run the action only when it is allowed."
            ),
            input_schema=_PERMISSION_SCHEMA,
        ),
        types.Tool(
            name=START_TOOL,
            description=(
                f"The same questions as {QUESTION_TOOL}, for when the answer may take long: "
                "it returns at once with an interaction_id; collect the answer with "
                f"{WAIT_TOOL}."
            ),
            input_schema=_SPEC["inputSchema"],
        ),
        types.Tool(
            name=WAIT_TOOL,
            description=(
                f"Wait for the answer to a question or permission asked earlier ({START_TOOL}, "
                f"or one that {QUESTION_TOOL} reported still open). Returns the answer, or "
                "says it is still open; then call again."
            ),
            input_schema=_wait_schema(max_wait_s),
        ),
    ]
