"""The test PostgreSQL server, for every suite that needs one.

Each test works in a fresh schema of the test database (`?schema=<name>` in the store
URL), dropped afterwards. Without a server such tests skip, except under `CI=true`,
where they fail: CI must never pass without having run them.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import NoReturn

import pytest

POSTGRES_URL = os.environ.get(
    "MIDTURN_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)


def reachable() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 5432), timeout=1):
            return True
    except OSError:
        return False


def skip_or_fail(reason: str, needed: str) -> NoReturn:
    """Skip with `reason`; under `CI=true` fail instead, saying what `needed` it."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: {needed})")
    pytest.skip(reason)


def require_server(needed: str) -> None:
    """Skip (or under `CI=true` fail) when no server answers on 127.0.0.1:5432."""
    if not reachable():
        skip_or_fail("no PostgreSQL server on 127.0.0.1:5432", needed)


async def drop_schema(url: str) -> None:
    """Drop the schema a store URL names (`...?schema=<name>`), with all it holds."""
    import asyncpg  # type: ignore[import-untyped]

    base, _, schema = url.partition("?schema=")
    connection = await asyncpg.connect(base)
    try:
        await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await connection.close()


@asynccontextmanager
async def fresh_schema(prefix: str, needed: str) -> AsyncIterator[str]:
    """The store URL of a new schema named `<prefix>_<random>`, dropped afterwards."""
    require_server(needed)
    url = f"{POSTGRES_URL}?schema={prefix}_{uuid.uuid4().hex[:12]}"
    try:
        yield url
    finally:
        await drop_schema(url)
