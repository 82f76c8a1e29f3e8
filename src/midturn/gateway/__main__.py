"""`python -m midturn.gateway [--db URL] [--host H] [--port N] [--access-log]
[--loop asyncio|uvloop] [--http auto|h11|httptools]`."""

from __future__ import annotations

import argparse

from midturn.gateway._serve import DEFAULT_DB_URL, serve


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m midturn.gateway", description=__doc__)
    parser.add_argument("--db", default=DEFAULT_DB_URL, help="store URL (default: %(default)s)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument(
        "--access-log", action="store_true", help="log one JSON line per request to stderr"
    )
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio")
    parser.add_argument("--http", choices=("auto", "h11", "httptools"), default="auto")
    args = parser.parse_args(argv)
    serve(args.db, args.host, args.port, access_log=args.access_log, loop=args.loop, http=args.http)


if __name__ == "__main__":
    main()
