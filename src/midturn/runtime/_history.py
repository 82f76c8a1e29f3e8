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
    cursor (the store's).

    Without a query it reads `limit + 1` rows (the one more says whether a page
    follows); with one, batches of `SCAN_BATCH`, and only a match becomes an entry."""
    entries: list[HistoryEntry] = []
    scanned = 0
    cursor = after
    searching = bool(query.split())
    while scanned < scan_limit:
        need = limit - len(entries)
        wanted = min(scan_limit - scanned, SCAN_BATCH if searching and need else need + 1)
        batch = await store.list_interactions(session_id=session_id, limit=wanted, after=cursor)
        for interaction in batch:
            if len(entries) == limit:  # one more follows: the page is full
                return HistoryPage(entries=tuple(entries), next_cursor=cursor)
            scanned += 1
            cursor = interaction.id
            if not interaction.pending and history_matches(interaction, query):
                entries.append(history_entry(interaction))
        if len(batch) < wanted:
            return HistoryPage(entries=tuple(entries), next_cursor=None)
    return HistoryPage(entries=tuple(entries), next_cursor=cursor)
