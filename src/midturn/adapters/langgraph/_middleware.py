"""`create_agent` middleware that registers the question tool once, where it belongs.

On the interactive root agent it adds the tool (its spec a constant, a cacheable prefix).
On a sub-agent or a headless run (`interactive=False`) the tool is registered but hidden
from the model, and a call forced there returns `unavailable` at once: no interrupt, no
interaction, no human decision recorded."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
except ImportError as error:  # pragma: no cover - exercised in a subprocess
    raise ImportError(
        'MidturnMiddleware needs LangChain v1: pip install "midturn[langgraph]"'
    ) from error

from midturn.contract import Limits

from ._tool import question_tool

__all__ = ["MidturnMiddleware"]


class MidturnMiddleware(AgentMiddleware):
    """Offer midturn's question tool to a `create_agent` agent (`interactive=True`, the
    root agent), or only answer `unavailable` to a forced call (`interactive=False`)."""

    def __init__(
        self, *, interactive: bool = True, dialect: str = "midturn", limits: Limits | None = None
    ) -> None:
        super().__init__()
        self.interactive = interactive
        self.question_tool = question_tool(dialect=dialect, limits=limits, interactive=interactive)
        self.tools = [self.question_tool]

    def _visible(self, request: ModelRequest) -> ModelRequest:
        if self.interactive:
            return request
        name = self.question_tool.name
        shown = [tool for tool in request.tools if getattr(tool, "name", None) != name]
        return request.override(tools=shown)

    def wrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], ModelResponse],
    ) -> Any:
        return handler(self._visible(request))

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> Any:
        return await handler(self._visible(request))
