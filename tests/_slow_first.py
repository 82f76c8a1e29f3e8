"""An asker whose first `ask` is slow, for the tests that two calls of one model step
park in the model's order: the frameworks run a step's calls (and the MCP server its
requests) as tasks of their own, so without care the second could park first."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


class SlowFirstAsk:
    """An asker over `runtime` whose first `ask` holds back until another interaction has
    parked, or 0.2 s (in order, nobody else parks meanwhile and it goes on), as a slow
    store or gateway request would. Everything else is the runtime's."""

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime
        self.asks = 0
        self.parked = asyncio.Event()

    async def ask(self, *args: Any, **kwargs: Any) -> Any:
        self.asks += 1
        if self.asks == 1:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.parked.wait(), 0.2)
        parked = await self.runtime.ask(*args, **kwargs)
        self.parked.set()
        return parked

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        parked = await self.runtime.request_permission(*args, **kwargs)
        self.parked.set()
        return parked

    def __getattr__(self, name: str) -> Any:
        return getattr(self.runtime, name)
