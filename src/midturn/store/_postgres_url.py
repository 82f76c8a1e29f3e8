"""The PostgreSQL store's URL: midturn's own query parameters split off what asyncpg
gets, and the URL without its password for messages."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from midturn.errors import UsageError

__all__ = ["parse_url", "redact"]

_OWN_PARAMETERS = ("schema", "pool_min", "pool_max")


def parse_url(url: str) -> tuple[str, str | None, int, int]:
    """Split midturn's own query parameters off `url`: `(dsn for asyncpg, schema,
    pool_min, pool_max)`."""
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise UsageError(f"PostgresStore needs a postgresql:// URL, got {redact(url)!r}")
    own: dict[str, str] = {}
    passed: list[tuple[str, str]] = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key in _OWN_PARAMETERS:
            own[key] = value
        else:
            passed.append((key, value))
    schema = own.get("schema")
    if schema is not None and not 0 < len(schema.encode()) <= 63:
        raise UsageError(
            f"schema name {schema!r} must be 1 to 63 bytes long; pick a shorter ?schema= value"
        )
    pool_min = _pool_size(own, "pool_min", 1)
    pool_max = _pool_size(own, "pool_max", 10)
    if pool_min > pool_max:
        raise UsageError(
            f"pool_min={pool_min} is above pool_max={pool_max}; make pool_min at most pool_max"
        )
    dsn = urlunsplit(("postgresql", parts.netloc, parts.path, urlencode(passed), parts.fragment))
    return dsn, schema, pool_min, pool_max


def _pool_size(own: dict[str, str], key: str, default: int) -> int:
    text = own.get(key)
    if text is None:
        return default
    if not text.isdigit() or (key == "pool_max" and int(text) < 1):
        raise UsageError(
            f"{key}={text!r} in the store URL is not a valid pool size; use a whole number"
            + (" of at least 1" if key == "pool_max" else "")
        )
    return int(text)


def redact(url: str) -> str:
    """`url` without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))
