"""`scratch://NAME`: a store kept in this process, built on midturn's memory store and
written only against the public `midturn.store` names."""

from __future__ import annotations

from midturn.store import Store, open_store

OPENED: list[str] = []
"""Every scratch URL opened, so a test can see its scheme reached this backend."""


def open_scratch(url: str) -> Store:
    if not url.startswith("scratch://"):
        raise ValueError(f"not a scratch store URL: {url!r}")
    OPENED.append(url)
    return open_store("memory://")
