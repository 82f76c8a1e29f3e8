"""A session's history, a page at a time, read from the store's own listing of the
session's interactions (no table of its own): settled ones only, oldest first, filtered
by a text query (docs/protocol.md#history--admin-agent-answer)."""

from __future__ import annotations

from midturn.contract._history import HistoryEntry, HistoryPage, history_entry, history_matches
from midturn.store._base import Store

__all__ = ["SCAN_BATCH", "SCAN_LIMIT", "read_history"]

SCAN_BATCH = 200
SCAN_LIMIT = 2000
"""At most this many interactions are read for one page; a query that matches rarely
returns a short (even empty) page with a cursor to go on from, never a long scan."""


async def read_history(
    store: Store,
    session_id: str,
    *,
    query: str = "",
    limit: int = 100,
    after: str | None = None,
    scan_limit: int = SCAN_LIMIT,
) -> HistoryPage:
    """Up to `limit` settled interactions of the session after the interaction `after`,
    oldest first, whose text matches `query`. Raises `UsageError` for an unknown
    cursor (the store's)."""
    entries: list[HistoryEntry] = []
    scanned = 0
    cursor = after
    while scanned < scan_limit:
        wanted = min(SCAN_BATCH, scan_limit - scanned)
        batch = await store.list_interactions(session_id=session_id, limit=wanted, after=cursor)
        for interaction in batch:
            scanned += 1
            cursor = interaction.id
            if interaction.pending:
                continue
            entry = history_entry(interaction)
            if history_matches(entry, query):
                entries.append(entry)
                if len(entries) == limit:
                    return HistoryPage(
                        entries=tuple(entries), next_cursor=await _more(store, session_id, cursor)
                    )
        if len(batch) < wanted:
            return HistoryPage(entries=tuple(entries), next_cursor=None)
    return HistoryPage(entries=tuple(entries), next_cursor=cursor)


async def _more(store: Store, session_id: str, cursor: str) -> str | None:
    """`cursor` when any interaction of the session follows it, else None."""
    following = await store.list_interactions(session_id=session_id, limit=1, after=cursor)
    return cursor if following else None
