"""A store that cannot be opened, told to the person at the command line.

The stores raise what their drivers saw (`[Errno -2] Name or service not known`, `file is
not a database`), wrapped or not. A person who typed `midturn serve --db URL` needs one
paragraph instead: which store, what went wrong in their words (no such host, nothing
listening, the user refused, no such database, a file where a folder should be), and
what to check. This only reads the error; the stores' own messages are not changed.
"""

from __future__ import annotations

import errno
import socket
import sqlite3
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlsplit

from midturn._cli._common import EXIT_CODES, say
from midturn.errors import UsageError
from midturn.store._postgres_url import redact

__all__ = ["on_store", "store_failure"]

_POSTGRES_REFUSED = "cannot connect to PostgreSQL"
_SQLITE_REFUSED = "cannot open the SQLite file"


def store_failure(error: BaseException, url: str) -> str | None:
    """The paragraph for `error` when it is the store at `url` failing to open, else
    None (the error is something else: let it through unchanged)."""
    scheme = urlsplit(url).scheme
    if scheme in ("postgres", "postgresql"):
        if isinstance(error, UsageError) and str(error).startswith(_POSTGRES_REFUSED):
            return _postgres(_cause(error), url)
        return None
    if scheme == "sqlite":
        return _sqlite(error, url)
    return None


def on_store(command: str, url: str, work: Callable[[], int]) -> int:
    """`work()`, where a store at `url` that cannot be opened is one paragraph in words
    (exit 2), not the driver's error."""
    try:
        return work()
    except (UsageError, OSError, sqlite3.Error) as error:
        told = store_failure(error, url)
        if told is None:
            raise
        say(f"midturn {command}: {told}")
        return EXIT_CODES["usage"]


def _cause(error: BaseException) -> BaseException:
    """The driver's error under a wrapping `UsageError`."""
    found = error
    while isinstance(found, UsageError) and found.__cause__ is not None:
        found = found.__cause__
    return found


# -- PostgreSQL ----------------------------------------------------------------------------


def _postgres(cause: BaseException, url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    where = f"{host}:{parts.port or 5432}"
    user = unquote(parts.username or "") or "(your login name)"
    database = unquote(parts.path.lstrip("/")) or user
    sqlstate = getattr(cause, "sqlstate", None)
    said = str(cause).strip().rstrip(".")
    if isinstance(cause, socket.gaierror):
        what = f'there is no host called "{host}" (the name does not resolve)'
        check = (
            "Check the host name in the URL, and that this machine can look it up (DNS, /etc/hosts)"
        )
    elif isinstance(cause, ConnectionRefusedError) or (
        isinstance(cause, OSError) and cause.errno == errno.ECONNREFUSED
    ):
        what = f"nothing accepts connections at {where}"
        check = (
            "Check that PostgreSQL is running there and listens on that address and port "
            "(listen_addresses and port in postgresql.conf), and the port in the URL"
        )
    elif isinstance(cause, TimeoutError):
        what = f"{where} did not answer in time"
        check = (
            "Check that the host is reachable from here (a firewall, a VPN) and that "
            "PostgreSQL listens there"
        )
    elif sqlstate in ("28000", "28P01"):
        what = f'the server at {where} refused the user "{user}" (it said: {said})'
        check = (
            "Check the user name and password in the URL, and that pg_hba.conf lets this "
            "user connect to this database from here"
        )
    elif sqlstate == "3D000":
        what = f'the server at {where} has no database called "{database}"'
        as_user = f" -U {unquote(parts.username)}" if parts.username else ""
        check = (
            f"Create it (createdb -h {host} -p {parts.port or 5432}{as_user} {database}) or "
            "put the name of an existing database in the URL"
        )
    else:
        what = f"connecting to {where} failed ({said or type(cause).__name__})"
        check = (
            "Check that the server is running and that the URL's user, password, host, "
            "port and database are right"
        )
    return f"cannot open the store {redact(url)}: {what}. {check}."


# -- SQLite ---------------------------------------------------------------------------------


def _sqlite(error: BaseException, url: str) -> str | None:
    from midturn.store._sqlite import sqlite_path

    try:
        path = Path(sqlite_path(url))
    except UsageError:
        return None
    wrapped = isinstance(error, UsageError) and str(error).startswith(_SQLITE_REFUSED)
    cause = _cause(error) if wrapped else error
    if isinstance(cause, sqlite3.DatabaseError) and "not a database" in str(cause):
        return (
            f"cannot open the store {url}: {path} is not a SQLite database (another kind "
            "of file, or one damaged or encrypted). Check that the URL names midturn's "
            "database file, or move that file away to start a new one."
        )
    if isinstance(cause, sqlite3.Error):
        return (
            f"cannot open the store {url}: SQLite could not open {path} ({cause}). Check "
            "the path and that this process may read and write it."
        )
    if not isinstance(cause, OSError) or not (wrapped or _on_the_way(cause, path)):
        return None
    blocker = _file_on_the_way(path)
    if blocker is not None:
        what = f"{blocker} is a file, not a folder, so {path} cannot be made"
        check = "Give a path whose folders are folders (or move that file away)"
    elif path.is_dir():
        what = f"{path} is a folder"
        check = f"Give the path of a database file, for example sqlite:///{path / 'midturn.db'}"
    elif isinstance(cause, PermissionError) or cause.errno == errno.EROFS:
        what = f"this process may not write {cause.filename or path}"
        check = "Give a path in a folder this user may write, or change that folder's owner"
    else:
        what = f"{path} cannot be made or opened ({cause.strerror or cause})"
        check = "Check the path, and that this process may write there"
    return f"cannot open the store {url}: {what}. {check}."


def _on_the_way(cause: OSError, path: Path) -> bool:
    """Whether `cause` is about `path` or one of its folders (the data folder, made
    before the store opens)."""
    if cause.filename is None:
        return False
    failed = Path(str(cause.filename)).resolve()
    target = path.resolve()
    return failed == target or failed in target.parents


def _file_on_the_way(path: Path) -> Path | None:
    """The nearest folder of `path` that exists and is a file, if one is."""
    for parent in path.resolve().parents:
        if parent.exists():
            return parent if not parent.is_dir() else None
    return None
