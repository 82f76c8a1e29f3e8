"""Destinations: made, found again, rotated (the admin API and `midturn serve --webhook`)."""

from __future__ import annotations

import base64
import secrets
from collections.abc import Sequence
from datetime import timedelta

from midturn.contract._interactions import utcnow
from midturn.errors import NotFound
from midturn.notify._options import DEFAULT_EVENTS, ESCALATION_EVENTS
from midturn.store._base import Store
from midturn.store._outbox import WebhookDestination

__all__ = [
    "create_destination",
    "ensure_destinations",
    "new_secret",
    "new_webhook_id",
    "rotate_secret",
    "webhook_or_404",
]

SECRET_BYTES = 32


def new_secret() -> str:
    """A signing secret in the Standard Webhooks form: `whsec_` + base64 of 32 random
    bytes (the scheme asks for 24 to 64)."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def new_webhook_id() -> str:
    return "wh_" + secrets.token_urlsafe(12)


async def create_destination(
    store: Store,
    url: str,
    *,
    events: Sequence[str] | None = None,
    session_id: str | None = None,
    format: str = "standard",
    escalation: bool = False,
    origin: str | None = None,
) -> WebhookDestination:
    """Store a new destination with a fresh secret. It hears of events appended from now
    on. Without `events` it gets `DEFAULT_EVENTS` (`ESCALATION_EVENTS` when it is an
    escalation destination)."""
    chosen = tuple(events) if events is not None else None
    if chosen is None:
        chosen = ESCALATION_EVENTS if escalation else DEFAULT_EVENTS
    destination = WebhookDestination(
        id=new_webhook_id(),
        url=url,
        format=format,
        events=tuple(dict.fromkeys(chosen)),
        session_id=session_id,
        escalation=escalation,
        secret=new_secret(),
        origin=origin,
        since_event_id=await store.last_event_id(),
        created_at=utcnow(),
    )
    await store.create_webhook(destination)
    return destination


async def ensure_destinations(
    store: Store, urls: Sequence[str], *, origin: str = "cli"
) -> list[tuple[WebhookDestination, bool]]:
    """For each URL, the destination made for it by `origin` before, else a new one:
    `(destination, created)`. So `midturn serve --webhook URL` is the same destination
    (and the same secret) across restarts."""
    known = {d.url: d for d in await store.list_webhooks() if d.origin == origin}
    found: list[tuple[WebhookDestination, bool]] = []
    for url in dict.fromkeys(urls):
        existing = known.get(url)
        if existing is not None:
            found.append((existing, False))
        else:
            found.append((await create_destination(store, url, origin=origin), True))
    return found


async def webhook_or_404(store: Store, webhook_id: str) -> WebhookDestination:
    destination = await store.get_webhook(webhook_id)
    if destination is None:
        raise NotFound(f"no webhook with id {webhook_id!r}; GET /v1/webhooks lists them")
    return destination


async def rotate_secret(store: Store, webhook_id: str, grace: timedelta) -> WebhookDestination:
    """A new secret for the destination; the current one keeps signing (beside the new
    one) for `grace`, then stops."""
    current = await webhook_or_404(store, webhook_id)
    rotated = current.model_copy(
        update={
            "secret": new_secret(),
            "previous_secret": current.secret if grace > timedelta(0) else None,
            "previous_until": utcnow() + grace if grace > timedelta(0) else None,
        }
    )
    if not await store.update_webhook(rotated):
        raise NotFound(f"no webhook with id {webhook_id!r}; it was deleted meanwhile")
    return rotated
