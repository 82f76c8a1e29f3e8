"""Fixtures of the store conformance suite: every test in `test_conformance.py` runs once
per backend.

How a backend plugs in: add a `Backend` to `_BACKENDS` below. It names the backend, says
whether its data outlives the store object (`durable`) and gives `url_for(tmp_path,
test_name)`, the URL of a fresh, empty store for one test. `backend.new_store()` returns an
unopened store on that same data (call it twice to "restart"); the `store` fixture is an
opened, empty one.

PostgreSQL: each test gets its own schema through `?schema=<name>` in the URL, dropped
afterwards. Those tests skip when the server is unreachable or the backend is not written
yet — except under `CI=true`, where they fail instead.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import pytest
from tests._postgres import POSTGRES_URL, drop_schema, require_server, skip_or_fail

from midturn.store import Store, open_store


@dataclass(frozen=True)
class Backend:
    name: str
    durable: bool
    url_for: Callable[[Path, str], str]
    url: str = ""
    file: Path | None = None

    def new_store(self) -> Store:
        """An unopened store on this test's data."""
        return open_store(self.url)

    async def raw_bytes(self) -> bytes | None:
        """Everything the backend has written for this test, as raw bytes (the files of
        SQLite, every row of every table of the PostgreSQL schema), or None for memory."""
        if self.file is not None:
            return b"".join(
                path.read_bytes() for path in self.file.parent.iterdir() if path.is_file()
            )
        if self.name == "postgres":
            return await _postgres_rows(self.url)
        return None


def _sqlite_url(tmp_path: Path, test_name: str) -> str:
    return f"sqlite:///{tmp_path / 'data' / 'midturn.db'}"


def _postgres_url(tmp_path: Path, test_name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", test_name.lower())[:30]
    return f"{POSTGRES_URL}?schema=t_{slug}_{uuid.uuid4().hex[:8]}"


_BACKENDS = {
    "memory": Backend("memory", durable=False, url_for=lambda tmp_path, name: "memory://"),
    "sqlite": Backend("sqlite", durable=True, url_for=_sqlite_url),
    "postgres": Backend("postgres", durable=True, url_for=_postgres_url),
}


def check_available(name: str) -> None:
    module = {"sqlite": "_sqlite", "postgres": "_postgres"}.get(name)
    if module is not None and find_spec(f"midturn.store.{module}") is None:
        reason = f"the {name} store (midturn.store.{module}) is not written yet"
        skip_or_fail(reason, "the PostgreSQL backend must be tested")
    if name == "postgres":
        require_server("the PostgreSQL backend must be tested")


async def _postgres_rows(url: str) -> bytes:
    import asyncpg  # type: ignore[import-untyped]

    base, _, schema = url.partition("?schema=")
    connection = await asyncpg.connect(base)
    try:
        tables = await connection.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = $1", schema
        )
        rows = [
            row[0]
            for table in tables
            for row in await connection.fetch(f'SELECT t::text FROM "{schema}"."{table[0]}" AS t')
        ]
    finally:
        await connection.close()
    assert tables, f"no tables in schema {schema!r}"
    return "\n".join(rows).encode()


@pytest.fixture(params=list(_BACKENDS))
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    template = _BACKENDS[request.param]
    check_available(template.name)
    url = template.url_for(tmp_path, request.node.name)
    file = tmp_path / "data" / "midturn.db" if template.name == "sqlite" else None
    yield Backend(template.name, template.durable, template.url_for, url, file)
    if template.name == "postgres":
        await drop_schema(url)


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[Store]:
    """An opened, empty store of the backend under test."""
    async with backend.new_store() as opened:
        yield opened
