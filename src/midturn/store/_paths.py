"""Where midturn keeps its data by default: the embedded store's URL and the data folder
of a store URL (the gateway's admin token and the MCP server's state key live there)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DEFAULT_DB_URL", "data_dir_for"]

DEFAULT_DB_URL = "sqlite:///.midturn/midturn.db"


def data_dir_for(db_url: str) -> Path:
    """The data folder: the SQLite file's folder, else `$MIDTURN_HOME`, else `./.midturn`."""
    if db_url.startswith("sqlite:"):
        from midturn.store._sqlite import sqlite_path

        path = sqlite_path(db_url)
        if path != ":memory:":
            return Path(path).resolve().parent
    return Path(os.environ.get("MIDTURN_HOME", ".midturn")).resolve()
