"""The PostgreSQL store's notification connection: LISTEN on one channel, and come back
after the connection drops.

One dedicated connection (never a pooled one: a pool would hand it to a query and lose
the LISTEN) receives `NOTIFY` payloads and passes each to `on_payload`. When the
connection is lost — the server restarted, an operator ran `pg_terminate_backend`, the
network broke — a supervising task reconnects with exponential backoff, LISTENs again,
and only then calls `on_reconnect`, so the store can tell its readers to catch up from
the event log: anything committed before the new LISTEN is in the log, anything after it
is notified. Nothing is missed.

A connection that dies silently (a half-open TCP connection) shows no error until it is
used, so while idle the supervisor sends a trivial query every `ping_s` seconds. That
is a liveness check, not the wake-up path: wake-ups arrive as notifications.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg

__all__ = ["Listener"]

log = logging.getLogger("midturn.store.postgres")

_FIRST_RETRY_S = 0.05
_LAST_RETRY_S = 5.0
_PING_TIMEOUT_S = 10.0
# What a lost or refused connection raises.
_CONNECTION_ERRORS = (TimeoutError, OSError, asyncpg.PostgresError, asyncpg.InterfaceError)


class Listener:
    """LISTEN on `channel` over a dedicated connection to `dsn`, reconnecting on loss."""

    def __init__(
        self,
        dsn: str,
        channel: str,
        *,
        on_payload: Callable[[str], None],
        on_reconnect: Callable[[], Awaitable[None]],
        application_name: str,
        ping_s: float = 15.0,
    ) -> None:
        self._dsn = dsn
        self._channel = channel
        self._on_payload = on_payload
        self._on_reconnect = on_reconnect
        self._application_name = application_name[:63]
        self._ping_s = ping_s
        self._connection: Any = None
        self._lost: asyncio.Future[None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self.reconnects = 0

    @property
    def pid(self) -> int | None:
        """The server process id of the listening connection, while it is connected."""
        connection = self._connection
        if connection is None or connection.is_closed():
            return None
        return int(connection.get_server_pid())

    async def start(self) -> None:
        """Connect and LISTEN now (errors surface to the caller), then keep the
        connection alive in the background."""
        self._closing = False
        await self._connect()
        self._task = asyncio.get_running_loop().create_task(
            self._supervise(), name=f"midturn listener {self._application_name}"
        )

    async def stop(self) -> None:
        self._closing = True
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._disconnect()

    async def _connect(self) -> None:
        connection = await asyncpg.connect(
            self._dsn, server_settings={"application_name": self._application_name}
        )
        lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def on_termination(_: Any) -> None:
            if not lost.done():
                lost.set_result(None)

        try:
            connection.add_termination_listener(on_termination)
            await connection.add_listener(self._channel, self._deliver)
        except BaseException:
            connection.terminate()
            raise
        self._connection, self._lost = connection, lost

    async def _disconnect(self) -> None:
        connection, self._connection = self._connection, None
        if connection is None or connection.is_closed():
            return
        try:
            await asyncio.wait_for(connection.close(), timeout=2.0)
        except _CONNECTION_ERRORS:
            connection.terminate()

    def _deliver(self, connection: Any, pid: int, channel: str, payload: str) -> None:
        try:
            self._on_payload(payload)
        except Exception:  # a listener must never take the connection down
            log.exception("a midturn event listener raised; it should not")

    async def _supervise(self) -> None:
        retry_s = _FIRST_RETRY_S
        while not self._closing:
            if self._connection is not None:
                await self._until_lost()
                await self._disconnect()
                if self._closing:
                    return
                log.warning("the PostgreSQL notification connection was lost; reconnecting")
            await asyncio.sleep(retry_s)
            try:
                await self._connect()
                await self._on_reconnect()
            except Exception as error:  # whatever failed, keep trying: never stop listening
                retry_s = min(retry_s * 2, _LAST_RETRY_S)
                log.warning(
                    "reconnecting to PostgreSQL for notifications failed (%s); "
                    "trying again in %.2fs",
                    error,
                    retry_s,
                )
                await self._disconnect()
                continue
            self.reconnects += 1
            retry_s = _FIRST_RETRY_S

    async def _until_lost(self) -> None:
        lost = self._lost
        assert lost is not None
        while not lost.done():
            try:
                await asyncio.wait_for(asyncio.shield(lost), timeout=self._ping_s)
            except TimeoutError:
                try:
                    await self._connection.fetchval("SELECT 1", timeout=_PING_TIMEOUT_S)
                except _CONNECTION_ERRORS:
                    return
