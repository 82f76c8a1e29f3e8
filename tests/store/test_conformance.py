"""The shipped store conformance suite (`midturn.testing.conformance`) on midturn's own
backends, exactly as a backend outside midturn runs it: memory, SQLite and PostgreSQL
(its tests fail rather than skip without a server under CI=true)."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests._postgres import POSTGRES_URL, drop_schema, require_server

from midturn.store import open_store
from midturn.testing.conformance import Backend, StoreConformance


class TestMemory(StoreConformance):
    @pytest.fixture
    def backend(self) -> Backend:
        return Backend(lambda: open_store("memory://"), name="memory")


class TestSQLite(StoreConformance):
    @pytest.fixture
    def backend(self, tmp_path: Path) -> Backend:
        folder = tmp_path / "data"
        url = f"sqlite:///{folder / 'midturn.db'}"

        async def raw_bytes() -> bytes:
            return b"".join(path.read_bytes() for path in folder.iterdir() if path.is_file())

        return Backend(
            lambda: open_store(url),
            name="sqlite",
            survives_reopen=True,
            shares_database=True,
            raw_bytes=raw_bytes,
        )


class TestPostgres(StoreConformance):
    @pytest.fixture
    async def backend(self, request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
        require_server("the PostgreSQL backend must be tested")
        slug = re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:30]
        url = f"{POSTGRES_URL}?schema=t_{slug}_{uuid.uuid4().hex[:8]}"
        yield Backend(
            lambda: open_store(url),
            name="postgres",
            survives_reopen=True,
            shares_database=True,
            raw_bytes=lambda: _postgres_rows(url),
        )
        await drop_schema(url)


async def _postgres_rows(url: str) -> bytes:
    """Every row of every table of the store's schema, as text."""
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
