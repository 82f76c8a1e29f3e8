"""A real gateway for your tests: `midturn serve`'s server (uvicorn, the real routes, a
real store) in a thread of the test process, on a free port of 127.0.0.1.

    with live_gateway() as gateway:               # memory://, a fresh admin token
        async with gateway.midturn_client() as admin:
            session = await admin.create_session()

`start_gateway(db_url, admin_token, port=0)` starts one and returns once it listens;
`gateway.stop()` stops it and re-raises anything the server failed with. The same helper
runs midturn's own gateway, web-inbox and port tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from midturn._public import publish as _publish
from midturn.client import AsyncClient
from midturn.gateway import run_server

__all__ = ["SAFETY_S", "LiveGateway", "live_gateway", "start_gateway"]

SAFETY_S = 20.0
HUNG_S = 600.0
"""How long a gateway may take to start or stop before it counts as hung: no loaded
machine takes that long, and a hung one fails its test instead of the whole run."""
"""How long starting or stopping a gateway may take before the test fails (a bound, not
a timing assertion)."""

_ADMIN: Any = object()  # the clients' default token: the gateway's admin token


@dataclass
class LiveGateway:
    """One gateway running in a thread: its base URL, its store URL, its admin token."""

    url: str
    db_url: str
    admin_token: str
    _thread: threading.Thread
    _loop: asyncio.AbstractEventLoop
    _server: Any
    _errors: list[BaseException] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def _token(self, token: Any) -> str | None:
        return self.admin_token if token is _ADMIN else token

    def client(self, token: Any = _ADMIN, **options: Any) -> httpx.AsyncClient:
        """A raw HTTP client on this gateway with `token` (the admin token when not
        given; None sends no Authorization header), for tests of the wire itself."""
        token = self._token(token)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.AsyncClient(
            base_url=self.url, headers=headers, timeout=SAFETY_S + 65, **options
        )

    def midturn_client(self, token: Any = _ADMIN) -> AsyncClient:
        """A `midturn.AsyncClient` on this gateway (the admin token when not given)."""
        return AsyncClient(self.url, self._token(token))

    def stop(self) -> None:
        """Stop the server and wait for its thread; re-raise anything it failed with."""
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._server.stop)
            self._thread.join(HUNG_S)  # uvicorn's graceful shutdown bounds it first
        if self._thread.is_alive():
            raise AssertionError(f"the gateway at {self.url} did not stop in {HUNG_S:.0f} s")
        if self._errors:
            raise self._errors[0]


def start_gateway(db_url: str, admin_token: str, port: int = 0, **options: Any) -> LiveGateway:
    """Start a gateway on `db_url` in a thread and return once it listens (or fail).
    `port=0` picks a free port; pass the old one to restart a gateway in place. `options`
    go to `midturn.gateway.run_server` (e.g. `stream_buffer_bytes`)."""
    ready = threading.Event()
    box: dict[str, Any] = {}
    errors: list[BaseException] = []

    def on_ready(url: str) -> None:
        box["url"] = url
        box["loop"] = asyncio.get_running_loop()
        ready.set()

    def run() -> None:
        try:
            asyncio.run(
                run_server(
                    db_url,
                    "127.0.0.1",
                    port,
                    admin_token,
                    on_ready=on_ready,
                    on_server=lambda server: box.__setitem__("server", server),
                    announce=None,
                    access_log=False,
                    install_signal_handlers=False,
                    **options,
                )
            )
        except BaseException as error:
            errors.append(error)
        finally:
            ready.set()

    thread = threading.Thread(target=run, name=f"midturn-gateway:{port}", daemon=True)
    thread.start()
    # set once it listens, or by the thread as it ends (a failed start): a loaded machine
    # can take longer than SAFETY_S to get there, so only a hung start is cut short
    ready.wait(HUNG_S)
    if "url" not in box:
        thread.join(HUNG_S)
        raise AssertionError(f"the gateway did not start: {errors!r}")
    return LiveGateway(box["url"], db_url, admin_token, thread, box["loop"], box["server"], errors)


@contextlib.contextmanager
def live_gateway(
    db_url: str = "memory://", admin_token: str | None = None
) -> Iterator[LiveGateway]:
    """A gateway for the length of a `with` block (a fresh admin token when not given)."""
    gateway = start_gateway(db_url, admin_token or secrets.token_urlsafe(24))
    try:
        yield gateway
    finally:
        gateway.stop()


_publish("midturn.testing", globals(), __all__)
