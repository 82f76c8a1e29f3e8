"""What the benches that make a PostgreSQL schema of their own share."""

from __future__ import annotations


async def drop_schema(url: str) -> None:
    """Drop the schema a store URL names (`...?schema=<name>[&...]`), with all it holds."""
    import asyncpg  # type: ignore[import-untyped]

    base, _, schema = url.partition("?schema=")
    schema = schema.partition("&")[0]
    connection = await asyncpg.connect(base)
    try:
        await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await connection.close()
