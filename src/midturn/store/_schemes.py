"""Store backends by URL scheme: midturn's own, those registered in code, and those of
the `midturn.stores` entry point group (read lazily, once; see `contract/_registry.py`).

A factory takes the whole URL and returns an unopened `Store`; a `Store` subclass whose
constructor takes the URL is one. It should only parse the URL (and import its driver):
connecting is `open()`'s work.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from midturn.contract._registry import Registry
from midturn.errors import UsageError
from midturn.store._base import Store

__all__ = [
    "ENTRY_POINT_GROUP",
    "StoreFactory",
    "load_store_entry_points",
    "open_store",
    "register_store",
    "store_schemes",
    "unregister_store",
]

ENTRY_POINT_GROUP = "midturn.stores"
StoreFactory = Callable[[str], Store]
"""`factory(url)`: an unopened store for `url`."""

_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]{0,31}$")
_FORMS = "use memory://, sqlite:///path or postgresql://user@host/db"
_HOW_TO_ADD = (
    "add a backend with midturn.store.register_store(scheme, factory) or a "
    "'midturn.stores' entry point (docs/storage.md)"
)


def _memory(url: str) -> Store:
    from midturn.store._memory import MemoryStore

    return MemoryStore(url)


def _sqlite(url: str) -> Store:
    from midturn.store._sqlite import SqliteStore

    return SqliteStore(url)


def _postgres(url: str) -> Store:
    try:
        import asyncpg  # noqa: F401
    except ImportError as error:  # pragma: no cover - depends on the install
        raise UsageError(
            'the PostgreSQL store needs asyncpg: pip install "midturn[postgres]"'
        ) from error
    from midturn.store._postgres import PostgresStore

    return PostgresStore(url)


def _check_scheme(scheme: object) -> str:
    if not isinstance(scheme, str) or not _SCHEME.match(scheme):
        raise UsageError(
            f"a store scheme is 1-32 lowercase letters, digits, '+', '.' or '-', starting "
            f"with a letter, and without '://' (got {scheme!r})"
        )
    return scheme


def _adopt(scheme: str, loaded: object) -> StoreFactory:
    _check_scheme(scheme)
    if not callable(loaded):
        raise UsageError(
            f"the {ENTRY_POINT_GROUP!r} entry point {scheme!r} names {loaded!r}; it must name "
            "a factory: a callable taking the URL and returning an unopened midturn.store.Store"
        )
    factory: StoreFactory = loaded
    return factory


_REGISTRY: Registry[StoreFactory] = Registry(ENTRY_POINT_GROUP, "store scheme", _adopt)
_REGISTRY.ship("memory", _memory)
_REGISTRY.ship("sqlite", _sqlite)
_REGISTRY.ship("postgresql", _postgres)
_REGISTRY.ship("postgres", _postgres)


def register_store(scheme: str, factory: StoreFactory, *, replace: bool = False) -> None:
    """Let `open_store` open `scheme://...` URLs with `factory(url)`. A scheme already
    registered (midturn's own included) needs `replace=True`."""
    if not callable(factory):
        raise UsageError(
            f"register_store takes a factory: a callable taking the URL and returning an "
            f"unopened midturn.store.Store, not {factory!r}"
        )
    _REGISTRY.add(_check_scheme(scheme), factory, replace=replace)


def unregister_store(scheme: str) -> StoreFactory:
    """Forget `scheme` and return its factory."""
    return _REGISTRY.remove(scheme)


def load_store_entry_points(*, again: bool = False) -> list[str]:
    """Read the `midturn.stores` entry points now (normally done lazily, once, on the
    first unknown scheme); `again=True` reads them anew. Returns the schemes added."""
    return _REGISTRY.load(again=again)


def store_schemes() -> list[str]:
    """Every scheme `open_store` knows, entry points included."""
    return _REGISTRY.names()


def open_store(url: str) -> Store:
    """The store for `url`: `memory://`, `sqlite:///relative/file.db`,
    `sqlite:////absolute/file.db`, `sqlite://` (the default `./.midturn/midturn.db`),
    `postgresql://user@host/db` (docs/storage.md has every form), or a scheme registered
    with `register_store` or a `midturn.stores` entry point.

    The store is returned unopened; use it as an async context manager
    (`async with open_store(url) as store:`), or `await store.open()`.
    """
    if not isinstance(url, str):
        raise UsageError(f"a store URL is a string, not {type(url).__name__}; {_FORMS}")
    scheme, sep, _ = url.partition("://")
    if not sep:
        raise UsageError(f"store URL {url!r} has no scheme; {_FORMS}")
    factory = _REGISTRY.get(scheme)
    if factory is None:
        raise UsageError(
            f"unknown store scheme {scheme!r} ({_REGISTRY.known()}); {_FORMS}, or {_HOW_TO_ADD}"
        )
    store = factory(url)
    if not isinstance(store, Store):
        raise UsageError(
            f"the store factory for {scheme!r} returned {type(store).__name__}, not a "
            "midturn.store.Store"
        )
    return store
