"""Storage: one `Store` interface, backends chosen by URL (SPEC §4)."""

from __future__ import annotations

from midturn.errors import UsageError
from midturn.store._base import EventListener, Pruned, SessionRecord, Settle, Store

__all__ = ["EventListener", "Pruned", "SessionRecord", "Settle", "Store", "open_store"]


def open_store(url: str) -> Store:
    """The store for `url`: `memory://`, `sqlite:///relative/file.db`,
    `sqlite:////absolute/file.db`, `sqlite://` (the default `./.midturn/midturn.db`) or
    `postgresql://user@host/db` (docs/storage.md has every form).

    The store is returned unopened; use it as an async context manager
    (`async with open_store(url) as store:`), or `await store.open()`.
    """
    scheme, sep, _ = url.partition("://")
    if not sep:
        raise UsageError(
            f"store URL {url!r} has no scheme; use memory://, sqlite:///path "
            "or postgresql://user@host/db"
        )
    if scheme == "memory":
        from midturn.store._memory import MemoryStore

        return MemoryStore(url)
    if scheme == "sqlite":
        from midturn.store._sqlite import SqliteStore

        return SqliteStore(url)
    if scheme in ("postgresql", "postgres"):
        try:
            import asyncpg  # noqa: F401
        except ImportError as error:  # pragma: no cover - depends on the install
            raise UsageError(
                'the PostgreSQL store needs asyncpg: pip install "midturn[postgres]"'
            ) from error
        from midturn.store._postgres import PostgresStore

        return PostgresStore(url)
    raise UsageError(
        f"unknown store scheme {scheme!r}; use memory://, sqlite:///path "
        "or postgresql://user@host/db"
    )
