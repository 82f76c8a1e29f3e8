"""What both HTTP protocols of the gateway (`_protocol.py`'s h11 one and
`_protocol_httptools.py`'s) put in each request's `scope["state"]`, one entry per
connection: the function that aborts it (`ABORT_CONNECTION`), a future done when it is
lost (`CONNECTION_LOST`), and its transport (`CONNECTION_TRANSPORT`: an event stream
bounds its socket's send buffer through it, `_sse.py`).

A long-poll must end when its client goes away. Asking the server (`receive()` until
`http.disconnect`) takes a task per request that waits on it; the future is made once
per connection, when it opens, and a request only adds a callback to it."""

from __future__ import annotations

import asyncio
from typing import Any

from midturn.gateway._http_refusal import ABORT_CONNECTION

__all__ = [
    "CONNECTION_LOST",
    "CONNECTION_TRANSPORT",
    "OWN_HEAD",
    "connection_lost",
    "connection_state",
]

CONNECTION_LOST = "midturn.connection_lost"
"""The key, in a request's `scope["state"]`, of a future done once its connection is
lost (the client went away, or the server closed it)."""
CONNECTION_TRANSPORT = "midturn.connection_transport"
"""The key, in a request's `scope["state"]`, of its connection's transport."""


OWN_HEAD = "midturn.own_head"
"""A key an `http.response.start` message may carry (True) when the gateway built every
header in it itself, each name and value a constant or digits: the h11 protocol then hands
the head to h11 as already checked (`_protocol.py`), without its check of each header
against its grammar. Any other server ignores the key."""


def connection_state(app_state: dict[str, Any], transport: asyncio.Transport) -> dict[str, Any]:
    """The state each request of a new connection starts from: `app_state` with the
    connection's own entries."""
    lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    return {
        **app_state,
        ABORT_CONNECTION: transport.abort,
        CONNECTION_LOST: lost,
        CONNECTION_TRANSPORT: transport,
    }


def connection_lost(app_state: dict[str, Any]) -> None:
    """Mark the connection whose state `connection_state` made as lost."""
    lost = app_state.get(CONNECTION_LOST)
    if lost is not None and not lost.done():
        lost.set_result(None)
