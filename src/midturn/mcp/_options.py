"""`McpOptions`: how the MCP server behaves (docs/mcp.md). Its own module, so the server
and the elicitor both read it without importing each other."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from midturn.errors import UsageError

__all__ = ["McpOptions"]


@dataclass(frozen=True)
class McpOptions:
    """How the MCP server behaves; every field has a working default.

    - `session_id`: the midturn session its asks belong to (HTTP: an agent token's own).
    - `turn_id`: the turn ("allow for this turn" lasts as long); default one per server.
    - `wait_bound_s`: how long a call waits for an answer from elsewhere before it
      returns "still open" (below the common 60 s client timeouts).
    - `progress_every_s`: how often a waiting call reports progress.
    - `max_wait_s`: the longest one `wait_for_answer` call waits.
    - `state_ttl_s`: how long a sealed `requestState` stays valid.
    - `public_url`: the gateway whose inbox answers secrets (URL mode) and everything else.
    - `answered_by`: `settled_by` of what the client's form settled.
    """

    session_id: str = "mcp"
    turn_id: str = field(default_factory=lambda: "mcp-" + secrets.token_urlsafe(6))
    wait_bound_s: float = 45.0
    progress_every_s: float = 5.0
    max_wait_s: float = 50.0
    state_ttl_s: float = 86_400.0
    public_url: str = "http://127.0.0.1:8765"
    answered_by: str = "mcp"

    def __post_init__(self) -> None:
        for name in ("wait_bound_s", "progress_every_s", "max_wait_s", "state_ttl_s"):
            if not getattr(self, name) > 0:
                raise UsageError(f"{name} must be above 0 (got {getattr(self, name)})")
