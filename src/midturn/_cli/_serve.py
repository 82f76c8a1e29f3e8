"""`midturn serve`: the gateway and its web inbox on a store (docs/terminal.md#midturn-serve),
its notifier's settings from the flags."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from midturn._cli._common import EXIT_CODES
from midturn._cli._common import say as _say
from midturn._cli._common import token as _token
from midturn._cli._store_wording import on_store as _on_store

__all__ = ["run_serve"]


def run_serve(args: argparse.Namespace) -> int:
    from midturn.gateway import DEFAULT_DB_URL, serve
    from midturn.runtime._retention import parse_age

    found = _token(args, ())  # MIDTURN_TOKEN and the data folder's file: serve's own
    retention = None if args.retention in (None, "off") else parse_age(args.retention)
    slack_secret = None
    if args.slack_signing_secret_file is not None:
        try:
            slack_secret = Path(args.slack_signing_secret_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            _say(f"midturn serve: cannot read the Slack signing secret file: {error}")
            return EXIT_CODES["usage"]
        if not slack_secret:
            _say(
                f"midturn serve: {args.slack_signing_secret_file} is empty; put the Slack "
                "app's signing secret in it"
            )
            return EXIT_CODES["usage"]
    if slack_secret or os.environ.get("MIDTURN_SLACK_SIGNING_SECRET", "").strip():
        try:
            import midturn.notify._slack  # noqa: F401 - slack_sdk, with the install hint
        except ImportError as error:
            _say(f"midturn serve: Slack interactivity: {error}")
            return EXIT_CODES["usage"]
    notify = _notify_options(args)
    if args.webhook:
        try:
            from midturn.notify import standardwebhooks

            standardwebhooks()
        except ImportError as error:
            _say(f"midturn serve: --webhook: {error}")
            return EXIT_CODES["usage"]
    db_url = args.db or DEFAULT_DB_URL

    def run() -> int:
        serve(
            access_log=args.access_log,
            log_level=args.log_level,
            db_url=db_url,
            host=args.host,
            port=args.port,
            token=None if found is None else found.token,
            token_origin=None if found is None else found.origin,
            retention=retention,
            retention_records=None
            if args.retention_export is None
            else Path(args.retention_export),
            stream_buffer_bytes=args.stream_buffer_bytes,
            max_streams_per_token=args.max_streams_per_token,
            webhooks=tuple(args.webhook or ()),
            notify_options=notify,
            slack_signing_secret=slack_secret,
            loop=args.loop,
            http=args.http,
        )
        return 0

    return _on_store("serve", db_url, run)


def _notify_options(args: argparse.Namespace) -> object:
    """The notifier's settings from `midturn serve`'s flags (and the environment)."""
    from midturn.notify import NotifyOptions, parse_duration

    given: dict[str, object] = {}
    if args.webhook_retry_window:
        given["retry_window"] = parse_duration(args.webhook_retry_window)
    if args.remind_after:
        given["remind_after"] = parse_duration(args.remind_after)
    if args.reminders is not None:
        given["reminders"] = args.reminders
    if args.escalate_after:
        given["escalate_after"] = parse_duration(args.escalate_after)
    return NotifyOptions.from_env(**given)
