"""The gateway's cache of session records keeps the most recently used ones: past its
bound it forgets the least recently used, never all at once (a gateway with more active
sessions than the bound would otherwise read every session from the store again)."""

from __future__ import annotations

from typing import Any

import pytest

from midturn.gateway import _auth
from midturn.gateway._auth import TokenAuthority
from midturn.store import SessionRecord, open_store


class CountingReads:
    """A real store, with its `get_session` calls counted."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.reads: list[str] = []

    async def get_session(self, session_id: str) -> SessionRecord | None:
        self.reads.append(session_id)
        record: SessionRecord | None = await self._store.get_session(session_id)
        return record

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


async def test_past_its_bound_the_cache_forgets_the_least_recently_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_auth, "_SESSION_CACHE_MAX", 3)
    async with open_store("memory://") as store:
        counted = CountingReads(store)
        maker = TokenAuthority(store, "admin-token")
        ids = [(await maker.create_session({}))[0].id for _ in range(5)]
        authority = TokenAuthority(counted, "admin-token")  # type: ignore[arg-type]
        for session_id in ids[:3]:
            await authority.session(session_id)
        await authority.session(ids[0])  # used again: now the most recent
        assert counted.reads == ids[:3]
        await authority.session(ids[3])  # over the bound: ids[1] goes, not everything
        await authority.session(ids[0])
        await authority.session(ids[2])
        assert counted.reads == ids[:4]
        await authority.session(ids[1])
        assert counted.reads == [*ids[:4], ids[1]]


async def test_created_sessions_count_against_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_auth, "_SESSION_CACHE_MAX", 2)
    async with open_store("memory://") as store:
        counted = CountingReads(store)
        authority = TokenAuthority(counted, "admin-token")  # type: ignore[arg-type]
        ids = [(await authority.create_session({}))[0].id for _ in range(3)]
        await authority.session(ids[2])
        await authority.session(ids[1])
        assert counted.reads == []
        await authority.session(ids[0])
        assert counted.reads == [ids[0]]
