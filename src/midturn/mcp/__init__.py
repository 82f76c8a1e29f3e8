"""midturn as an MCP server (docs/mcp.md): the question tool, a permission tool and a pair
for long waits, over the same store and runtime as every other surface.

Needs the extra: `pip install "midturn[mcp]"`. Nothing in the core imports this package.
"""

from __future__ import annotations

try:
    import mcp as _mcp_sdk  # noqa: F401 - only to fail early with the install hint
except ImportError as error:  # pragma: no cover - exercised by a subprocess test
    raise ImportError(
        'midturn.mcp needs the MCP SDK: pip install "midturn[mcp]"', name=error.name
    ) from error

from midturn.mcp._backend import Backend
from midturn.mcp._client import ElicitationCallback, elicitation_callback
from midturn.mcp._server import McpOptions, create_server
from midturn.mcp._state import STATE_KEY_FILE, load_state_key

__all__ = [
    "STATE_KEY_FILE",
    "Backend",
    "ElicitationCallback",
    "McpOptions",
    "create_server",
    "elicitation_callback",
    "load_state_key",
]
