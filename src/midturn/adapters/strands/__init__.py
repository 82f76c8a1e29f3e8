"""midturn for Strands Agents (docs/adapters/strands.md).

- `StrandsHost(asker, session_id)`: `host.tools` (the question tool) and
  `host.system_prompt` for the root agent, `host.permissions(tools)` (a
  `BeforeToolCallEvent` hook), `await host.run(agent, prompt, turn_id=...)` and, after a
  restart, `await host.resume(agent)`.
- `question_tool(dialect)`, `Permissions(tools)`, `pending_interrupts(agent)`: the parts.
- `ScriptedModel`, `Reply`, `ToolUse`: an offline `strands.models.Model` for tests.
"""

try:
    import strands  # noqa: F401
except ImportError as error:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        'midturn.adapters.strands needs Strands Agents: pip install "midturn[strands]"'
    ) from error

from midturn.adapters.strands._host import StrandsHost, pending_interrupts
from midturn.adapters.strands._permissions import PERMISSION_INTERRUPT, Permissions
from midturn.adapters.strands._testing import Reply, ScriptedModel, ToolUse
from midturn.adapters.strands._tool import ASK_INTERRUPT, question_tool

__all__ = [
    "ASK_INTERRUPT",
    "PERMISSION_INTERRUPT",
    "Permissions",
    "Reply",
    "ScriptedModel",
    "StrandsHost",
    "ToolUse",
    "pending_interrupts",
    "question_tool",
]
