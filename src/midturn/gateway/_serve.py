"""`serve(...)`: open the store and the runtime, run the gateway on uvicorn, stop cleanly.

SIGINT/SIGTERM first tell open streams and long-polls to end (so shutdown does not wait
on them), then uvicorn finishes in-flight requests, then the runtime and the store close.
Pending interactions are in the store already; nothing is cancelled on the way out, and
they are answerable again after the next start."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import uvicorn

from midturn.errors import UsageError
from midturn.gateway._app import create_app
from midturn.gateway._auth import new_admin_token
from midturn.gateway._port import bind_sockets, check_port
from midturn.gateway._protocol import http_protocol
from midturn.gateway._state import GatewayState, StreamLimits
from midturn.runtime import Runtime
from midturn.runtime._retention import Retention
from midturn.store import open_store
from midturn.store._paths import DEFAULT_DB_URL, data_dir_for

__all__ = ["DEFAULT_DB_URL", "admin_token_for", "data_dir_for", "run_server", "serve"]

TOKEN_FILE = "admin_token"
GC_YOUNG_THRESHOLD = 20_000
"""Allocations between collections of the youngest generation (Python's default: 700)."""
RECORDS_FILE = "pruned-decisions.jsonl"


def admin_token_for(data_dir: Path, token: str | None = None) -> tuple[str, bool]:
    """The admin token and whether it was just generated: the `token` argument, else
    `MIDTURN_TOKEN`, else `<data_dir>/admin_token`, else a new one written there with
    mode 0600."""
    chosen = token or os.environ.get("MIDTURN_TOKEN")
    if chosen:
        return chosen.strip(), False
    path = data_dir / TOKEN_FILE
    if path.is_file():
        stored = path.read_text(encoding="utf-8").strip()
        if stored:
            return stored, False
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    fresh = new_admin_token()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(fresh + "\n")
    os.chmod(path, 0o600)
    return fresh, True


def _token_origin(data_dir: Path, token: str | None, origin: str | None) -> str:
    """Where the admin token comes from, for the announcement (never the token)."""
    if token:
        return origin or "given with --token"
    if os.environ.get("MIDTURN_TOKEN"):
        return "from MIDTURN_TOKEN"
    return f"in {data_dir / TOKEN_FILE}"


_LINE_ENCODER = json.JSONEncoder(ensure_ascii=False)  # one, not one per json.dumps call


class _JsonLogFormatter(logging.Formatter):
    """One JSON object per line; times in UTC, ISO 8601, to the millisecond."""

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        structured = getattr(record, "midturn", None)
        if isinstance(structured, dict):
            fields.update(structured)
        else:
            fields["message"] = record.getMessage()
        if record.exc_info and record.levelno >= logging.ERROR:
            fields["error"] = repr(record.exc_info[1])
        return _LINE_ENCODER.encode(fields)


def _configure_logging(access_log: bool, level: str = "warning") -> None:
    """JSON lines on stderr for the gateway's loggers (set up once, only if the host has
    not configured them): one per request when `access_log`, and what `level` lets
    through (warnings and errors by default). Requests are logged only with
    `access_log`, whatever the level."""
    logger = logging.getLogger("midturn.gateway")
    if logger.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_JsonLogFormatter())
    logger.addHandler(handler)
    threshold = logging.getLevelNamesMapping().get(level.upper(), logging.WARNING)
    logger.setLevel(threshold)
    logger.propagate = False
    access = logging.getLogger("midturn.gateway.access")
    access.setLevel(logging.INFO if access_log else logging.WARNING)


def _settle_collector() -> None:
    """Tune the garbage collector for a long-running server, once per process.

    A full collection walks every tracked object, and pauses the event loop while it
    does. The start's objects (modules, the app and its models: some 100,000) never
    become garbage, so they are frozen out of every later collection (`gc.freeze`). And
    the youngest generation is collected every 20,000 allocations instead of 700: at 700
    a request's objects survive two collections while it waits on the store or on its
    client and are promoted to the oldest generation, whose growth then triggers full
    collections. Under a crowd of 1,000 streams and 32 agents (bench/crowd.py) that made
    six full collections of up to 370,000 objects in 45 s, each a pause of 50–900 ms on a
    loaded machine; with both, one, at the start."""
    if gc.get_freeze_count() == 0:
        gc.collect()
        gc.freeze()
    young, *older = gc.get_threshold()
    if 0 < young < GC_YOUNG_THRESHOLD:
        gc.set_threshold(GC_YOUNG_THRESHOLD, *older)


class _Server(uvicorn.Server):
    """uvicorn, plus: streams and long-polls end as soon as a stop signal arrives, and a
    callback learns the bound address once the socket listens (port 0 works)."""

    def __init__(
        self,
        config: uvicorn.Config,
        state: GatewayState,
        on_ready: Callable[[str], None] | None,
        *,
        signals: bool = True,
    ) -> None:
        super().__init__(config)
        self._state = state
        self._signals = signals
        self._on_ready = on_ready

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """SIGINT/SIGTERM stop the server; serve() then returns normally (uvicorn's own
        handling would re-raise the signal afterwards, killing the process before the
        runtime and the store close)."""
        if not self._signals or threading.current_thread() is not threading.main_thread():
            yield
            return
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.stop)
        try:
            yield
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets=sockets)
        if self._on_ready is not None and self.started:
            host, port = self.servers[0].sockets[0].getsockname()[:2]
            self._on_ready(f"http://{host}:{port}")

    def stop(self) -> None:
        """Ask the server to stop, from its own loop; a second call forces it."""
        self._state.closing.set()
        if self.should_exit:
            self.force_exit = True
        self.should_exit = True


def _mcp_state_key(data_dir: Path) -> bytes | None:
    """The MCP `requestState` key when the `mcp` extra is installed (then `/mcp` is
    served), else None."""
    try:
        from midturn.mcp import load_state_key
    except ImportError:
        return None
    return load_state_key(data_dir)


def _close_all(sockets: list[Any]) -> None:
    for sock in sockets:
        sock.close()


async def _start_notifier(
    stack: contextlib.AsyncExitStack,
    runtime: Runtime,
    options: Any,
    webhooks: Sequence[str],
    public_url: Callable[[], str],
    announce: Callable[[str], None] | None,
) -> Any:
    """The notifier, running until the stack closes, and the `--webhook` destinations."""
    from midturn.notify import Notifier, ensure_destinations, standardwebhooks

    if webhooks:
        standardwebhooks()  # ImportError saying how to install it, before anything starts
        for destination, created in await ensure_destinations(runtime.store, webhooks):
            if announce is None:
                continue
            if created:  # shown once, at creation, like a generated admin token
                announce(
                    f"webhook {destination.id} -> {destination.url} "
                    f"(new signing secret: {destination.secret})"
                )
            else:
                announce(
                    f"webhook {destination.id} -> {destination.url} "
                    "(its secret was shown when it was made; rotate it with "
                    f"POST /v1/webhooks/{destination.id}/rotate)"
                )
    return await stack.enter_async_context(Notifier(runtime, options, public_url=public_url))


def slack_secret(given: str | None) -> str | None:
    """The Slack signing secret: `given`, else `MIDTURN_SLACK_SIGNING_SECRET`, else None
    (no Slack interactivity)."""
    chosen = given if given is not None else os.environ.get("MIDTURN_SLACK_SIGNING_SECRET")
    if chosen is None or not chosen.strip():
        if given is not None:
            raise UsageError(
                "the Slack signing secret is empty; copy it from the Slack app's "
                "Basic Information page"
            )
        return None
    return chosen.strip()


def _print(line: str) -> None:
    print(line, flush=True)


async def run_server(
    db_url: str = DEFAULT_DB_URL,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    *,
    on_ready: Callable[[str], None] | None = None,
    on_server: Callable[[_Server], None] | None = None,
    announce: Callable[[str], None] | None = _print,
    log_level: str = "warning",
    access_log: bool = True,
    install_signal_handlers: bool = True,
    stream_buffer_bytes: int | None = None,
    max_streams_per_token: int | None = None,
    stream_write_timeout_s: float | None = None,
    token_origin: str | None = None,
    retention: timedelta | None = None,
    retention_records: Path | None = None,
    webhooks: Sequence[str] = (),
    notify_options: Any = None,
    slack_signing_secret: str | None = None,
    slack_response_urls: tuple[str, ...] | None = None,
    http: str = "auto",
) -> None:
    """Run the gateway until stopped. `on_ready(base_url)` is called once it listens;
    `on_server(server)` hands out the server so a caller can `stop()` it; `log_level` is
    the threshold of uvicorn's and the gateway's logs; `access_log` writes one JSON line
    per request to stderr, whatever the level. The stream bounds default to
    `MIDTURN_STREAM_BUFFER_BYTES` / `MIDTURN_MAX_STREAMS_PER_TOKEN` /
    `MIDTURN_STREAM_WRITE_TIMEOUT_S`, else 1 MiB, 32 and 60 s (docs/protocol.md).

    The announcement prints the admin token only when this start generated it; a token
    the operator supplied (`token`, described by `token_origin`, or `MIDTURN_TOKEN`) or
    one read back from the data folder is never printed, only where it comes from.

    `retention`: prune settled interactions older than this in the background, their
    decision records appended first to `retention_records` (default
    `<data>/pruned-decisions.jsonl`); None keeps everything.

    Notifications (docs/notifications.md) run beside the runtime, idle while no webhook
    is enabled: `webhooks` are URLs made destinations at start (the same ones across
    restarts; a new one's secret is announced once), `notify_options` a
    `midturn.notify.NotifyOptions`.

    `slack_signing_secret` (default: `MIDTURN_SLACK_SIGNING_SECRET`) turns on Slack's
    button clicks at `/v1/slack/interactions` (docs/notifications.md#slack).

    `http`: uvicorn's HTTP parser, "h11", "httptools" (midturn[fast]) or "auto" (httptools
    when installed, else h11); both answer invalid HTTP in the JSON error shape."""
    protocol = http_protocol(http)
    if not 0 <= port <= 65535:
        raise UsageError(f"port {port} is out of range; use 0–65535 (0 picks a free port)")
    check_port(host, port)  # a taken port is a clear message, not uvicorn's errno line
    _configure_logging(access_log, log_level)
    limits = StreamLimits.from_env(
        stream_buffer_bytes, max_streams_per_token, stream_write_timeout_s
    )
    origin = _token_origin(data_dir_for(db_url), token, token_origin)
    records = retention_records or data_dir_for(db_url) / RECORDS_FILE
    async with contextlib.AsyncExitStack() as stack:
        store = await stack.enter_async_context(open_store(db_url))
        # the secrets only once the store opened: a start that fails on it leaves none
        admin_token, generated = admin_token_for(data_dir_for(db_url), token)
        mcp_key = _mcp_state_key(data_dir_for(db_url))
        # Deadlines are armed while the gateway already listens (docs/runtime.md).
        runtime = await stack.enter_async_context(Runtime(store, recover_in_background=True))
        if retention is not None:
            records.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            await stack.enter_async_context(Retention(store, retention, records=records))
        public = f"http://{host}:{port}"
        base = [public]
        notifier = await _start_notifier(
            stack, runtime, notify_options, webhooks, lambda: base[0], announce
        )
        app = create_app(
            runtime,
            store=store,
            admin_token=admin_token,
            public_url=public,
            mcp_state_key=mcp_key,
            stream_limits=limits,
            notifier=notifier,
            slack_signing_secret=slack_secret(slack_signing_secret),
            slack_response_urls=slack_response_urls,
        )
        state: GatewayState = app.state.gateway
        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level=log_level,
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=10,
            timeout_keep_alive=75,
            http=protocol,  # invalid HTTP is refused in the JSON error shape
            # nothing reads a request's client address or scheme (no access log of
            # addresses, links from the public URL): X-Forwarded-* need no rewriting
            proxy_headers=False,
            # no `server: uvicorn` on every response (the protocol names no server; one
            # header fewer to write, 4-7k instructions a response). `date` stays: HTTP
            # requires it of a server with a clock (RFC 9110, 6.6.1)
            server_header=False,
        )

        def ready(base_url: str) -> None:
            state.public_url = base_url
            base[0] = base_url
            _settle_collector()
            if announce is not None:
                say = announce
                note = (
                    f" (new admin token saved to {data_dir_for(db_url) / TOKEN_FILE})"
                    if generated
                    else ""
                )
                say(f"midturn gateway on {base_url}{note}")
                if generated:  # shown once, at generation; it is in the file from now on
                    say(f"web inbox: {base_url}/#token={admin_token}")
                else:
                    say(f"web inbox: {base_url}/ (sign in with the admin token {origin})")
            if on_ready is not None:
                on_ready(base_url)

        server = _Server(config, state, ready, signals=install_signal_handlers)
        if on_server is not None:
            on_server(server)
        # bound here, not by uvicorn: a port taken since check_port is still told in words
        sockets = bind_sockets(host, port)
        stack.callback(_close_all, sockets)
        try:
            await server.serve(sockets=sockets)
        finally:
            await state.aclose()


def serve(
    db_url: str = DEFAULT_DB_URL,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    *,
    access_log: bool = False,
    log_level: str = "warning",
    stream_buffer_bytes: int | None = None,
    max_streams_per_token: int | None = None,
    stream_write_timeout_s: float | None = None,
    token_origin: str | None = None,
    retention: timedelta | None = None,
    retention_records: Path | None = None,
    webhooks: Sequence[str] = (),
    notify_options: Any = None,
    slack_signing_secret: str | None = None,
    loop: str = "asyncio",
    http: str = "auto",
) -> None:
    """Run the gateway and the web inbox until SIGINT/SIGTERM (blocking). Prints the
    inbox URL once it listens, with the admin token only when it was just generated;
    prunes what settled longer than `retention` ago (see `run_server`). Requests are
    logged (JSON lines on stderr) only with `access_log`; `log_level` is the threshold
    for the rest (uvicorn's and the gateway's). `loop`: "asyncio" or "uvloop" (installed
    by hand: it measured no gain worth a default, docs/benchmarks.md); `http` as in
    `run_server`."""
    with asyncio.Runner(loop_factory=_loop_factory(loop)) as runner:
        runner.run(
            run_server(
                db_url,
                host,
                port,
                token,
                access_log=access_log,
                log_level=log_level,
                stream_buffer_bytes=stream_buffer_bytes,
                max_streams_per_token=max_streams_per_token,
                stream_write_timeout_s=stream_write_timeout_s,
                token_origin=token_origin,
                retention=retention,
                retention_records=retention_records,
                webhooks=webhooks,
                notify_options=notify_options,
                slack_signing_secret=slack_signing_secret,
                http=http,
            )
        )


def _loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """`serve`'s event loop: asyncio's (None) or uvloop's."""
    if name not in ("asyncio", "uvloop"):
        raise UsageError(f"loop must be 'asyncio' or 'uvloop', not {name!r}")
    if name == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        raise UsageError("loop 'uvloop' needs uvloop: pip install uvloop") from None
    return uvloop.new_event_loop
