"""`open_store(url)` picks the backend by scheme and explains a URL it cannot use."""

from __future__ import annotations

import pytest

from midturn.errors import UsageError
from midturn.store import Store, open_store


@pytest.mark.parametrize(
    ("url", "backend"),
    [
        ("memory://", "MemoryStore"),
        ("sqlite:///data/midturn.db", "SqliteStore"),
        ("sqlite:////tmp/midturn.db", "SqliteStore"),
        ("postgresql://postgres@127.0.0.1:5432/test", "PostgresStore"),
        ("postgres://postgres@127.0.0.1:5432/test", "PostgresStore"),
    ],
)
def test_the_scheme_picks_the_backend_and_nothing_is_opened(url: str, backend: str) -> None:
    store = open_store(url)
    assert isinstance(store, Store)
    assert type(store).__name__ == backend
    assert store.url == url


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("midturn.db", "has no scheme"),
        ("mysql://root@localhost/db", "unknown store scheme 'mysql'"),
    ],
)
def test_an_unusable_url_names_the_forms_that_work(url: str, message: str) -> None:
    with pytest.raises(UsageError, match=message) as caught:
        open_store(url)
    assert "memory://" in str(caught.value) and "sqlite:///" in str(caught.value)


async def test_a_store_is_an_async_context_manager_that_opens_and_closes() -> None:
    store = open_store("memory://")
    async with store as opened:
        assert opened is store
        assert await opened.last_event_id() == 0
    with pytest.raises(UsageError, match="not open"):
        await store.last_event_id()
