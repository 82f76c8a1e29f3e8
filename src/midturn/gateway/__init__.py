"""The HTTP/SSE gateway (docs/protocol.md): a thin ASGI surface over the runtime.

`serve(...)` runs it (blocking); `create_app(runtime, store=..., admin_token=...)` builds
the app over a runtime you own; `run_server(...)` is the async form of `serve`.
"""

from midturn.gateway._app import create_app
from midturn.gateway._serve import DEFAULT_DB_URL, run_server, serve

__all__ = ["DEFAULT_DB_URL", "create_app", "run_server", "serve"]
