"""An MCP server's elicitation, asked through midturn: the part every MCP client's
handler shares (docs/mcp.md, "Answering other MCP servers' elicitations").

`ElicitationAsker(asker, session_id)` takes an `elicitation/create` request's params (a
dict, or the SDK's pydantic model), asks it over the asker port in the `mcp-elicitation`
dialect, waits for the person, and returns the `ElicitResult` as a dict typed per the
form's schema (`elicit_result`). Each client's handler only converts that dict to its own
type. Plain data in and out: no `mcp` import here.

Identity: each form is asked under the tool-call id
`elicit:<key>:<digest of message and schema>:<n>` (`n` counts repeats of the same form
through this handler), so a handler built again with the same `key` (a resumed run, a
retried tool call) gets the existing interaction back, settled or still pending, and the
person is never asked twice. Without a `key` every handler draws a random one.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
from collections import Counter
from typing import Any

from midturn.contract._ports import Asker
from midturn.contract.dialects import elicit_result
from midturn.errors import AlreadySettled

__all__ = ["DIALECT", "ElicitationAsker", "elicitation_params"]

DIALECT = "mcp-elicitation"
_DECLINE: dict[str, Any] = {"action": "decline"}


def elicitation_params(params: Any) -> dict[str, Any]:
    """The request's params as JSON data: a dict as it is, a pydantic model dumped by
    its wire names (`requestedSchema`), unset fields left out."""
    if isinstance(params, dict):
        return params
    dump = getattr(params, "model_dump", None)
    if callable(dump):
        data = dump(by_alias=True, exclude_none=True, mode="json")
        if isinstance(data, dict):
            return data
    raise TypeError(f"elicitation params must be a dict or a pydantic model, not {params!r}")


class ElicitationAsker:
    """Ask MCP elicitations in `session_id` (and `turn_id`, when given) and wait for the
    answers. `timeout` (seconds) bounds each wait: an ask still pending then is cancelled
    and the server gets `cancel`; `None` waits for the person (or the ask's own end: a
    stopped turn, an expired deadline)."""

    def __init__(
        self,
        asker: Asker,
        session_id: str,
        *,
        turn_id: str | None = None,
        key: str | None = None,
        timeout: float | None = None,
    ) -> None:
        self.asker = asker
        self.session_id = session_id
        self.turn_id = turn_id
        self.key = key if key is not None else secrets.token_hex(8)
        self.timeout = timeout
        self._seen: Counter[str] = Counter()
        self._park = asyncio.Lock()
        """Held while a form parks: an MCP client handles each `elicitation/create` as a
        task of its own, and a slow ask (a gateway request) would let the next form park
        first; a lock is first come, first served, so forms park in the order they came."""

    def tool_call_id(self, data: dict[str, Any]) -> str:
        """The id the next ask of this form takes (and counts it)."""
        form = {"message": data.get("message"), "requestedSchema": data.get("requestedSchema")}
        canonical = json.dumps(form, sort_keys=True, separators=(",", ":"), default=str)
        digest = hashlib.sha256(canonical.encode()).hexdigest()[:16]
        self._seen[digest] += 1
        return f"elicit:{self.key}:{digest}:{self._seen[digest]}"

    async def __call__(self, params: Any) -> dict[str, Any]:
        """The `ElicitResult` (a dict) for one request. A URL-mode request is declined at
        once, never shown (midturn relays no links to open; see docs/mcp.md). A form
        midturn cannot ask (a nested object, too many fields) raises `InvalidAsk`, for
        the client's handler to return as an error to the server."""
        data = elicitation_params(params)
        if data.get("mode", "form") != "form":
            return dict(_DECLINE)
        tool_call_id = self.tool_call_id(data)
        async with self._park:
            parked = await self.asker.ask(
                self.session_id,
                data,
                dialect=DIALECT,
                tool_call_id=tool_call_id,
                turn_id=self.turn_id,
            )
        settled = await self.asker.wait(parked.interaction.id, self.timeout)
        interaction = settled.interaction
        if settled.pending:
            try:
                interaction = (await self.asker.cancel(interaction.id)).interaction
            except AlreadySettled as raced:  # answered just as the wait ran out
                interaction = raced.interaction
        result = interaction.result
        if result is None:  # settled without a result: nothing the person said
            return {"action": "cancel"}
        return elicit_result(data, result)
