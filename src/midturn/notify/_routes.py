"""The admin API of notifications: `/v1/webhooks` (docs/notifications.md#the-admin-api).

The gateway mounts this router behind its admin token (`authorize`); every route here is
admin only. A destination's secret is in the response of the call that made it (`POST
/v1/webhooks`) or replaced it (`POST /v1/webhooks/{id}/rotate`), and in no other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Path, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from midturn.contract._interactions import utcnow
from midturn.errors import NotFound
from midturn.notify._extra import NOTIFY_INSTALL
from midturn.notify._manage import create_destination, rotate_secret, webhook_or_404
from midturn.notify._options import NotifyOptions
from midturn.notify._payload import NOTIFY_EVENT_TYPES
from midturn.notify._senders import get_sender, sender_formats
from midturn.store._base import Store
from midturn.store._outbox import Delivery, DeliveryStatus, WebhookDestination

__all__ = ["webhook_router"]

WebhookId = Annotated[str, Path(max_length=200)]
_MAX_PAGE = 500


def _check_events(events: list[str] | None) -> list[str] | None:
    if events is None:
        return None
    unknown = [name for name in events if name not in NOTIFY_EVENT_TYPES]
    if unknown:
        known = ", ".join(NOTIFY_EVENT_TYPES)
        raise ValueError(f"unknown event type {unknown[0]!r}; the types are {known}")
    return events


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WebhookIn(_In):
    format: str = Field(
        default="standard",
        max_length=40,
        description="'standard' (a signed Standard Webhooks POST) or a registered channel",
    )
    url: str = Field(min_length=1, max_length=2000, description="where to deliver")
    events: list[str] | None = Field(
        default=None,
        max_length=len(NOTIFY_EVENT_TYPES),
        description="event types to deliver (default: what asks a person to act)",
    )
    session_id: str | None = Field(default=None, max_length=200, description="only this session")
    escalation: bool = Field(
        default=False, description="an escalation destination (default events: escalations)"
    )

    @field_validator("format")
    @classmethod
    def _known_format(cls, value: str) -> str:
        if value not in sender_formats():
            known = ", ".join(repr(name) for name in sender_formats())
            raise ValueError(f"unknown format {value!r}; the formats are {known}")
        if value == "standard":
            try:
                import standardwebhooks  # noqa: F401
            except ImportError:
                raise ValueError(
                    f"signed webhooks need the standardwebhooks package: {NOTIFY_INSTALL}"
                ) from None
        return value

    @field_validator("url")
    @classmethod
    def _usable_url(cls, value: str, info: ValidationInfo) -> str:
        chosen = info.data.get("format")
        if chosen is None:  # the format was refused already
            return value
        problem = get_sender(chosen).check_url(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("events")
    @classmethod
    def _known_events(cls, value: list[str] | None) -> list[str] | None:
        return _check_events(value)


class WebhookPatch(_In):
    enabled: bool | None = None
    events: list[str] | None = Field(default=None, max_length=len(NOTIFY_EVENT_TYPES))
    escalation: bool | None = None

    @field_validator("events")
    @classmethod
    def _known_events(cls, value: list[str] | None) -> list[str] | None:
        return _check_events(value)


class RotateIn(_In):
    grace_s: float | None = Field(
        default=None,
        ge=0,
        le=30 * 86400,
        description="how long the old secret still signs (default: the gateway's setting)",
    )


class WebhookOut(BaseModel):
    id: str
    url: str
    format: str
    events: list[str]
    session_id: str | None
    escalation: bool
    enabled: bool
    created_at: datetime
    previous_secret_until: datetime | None = Field(
        description="while a rotated-out secret still signs, until when"
    )


class WebhookWithSecret(WebhookOut):
    secret: str = Field(description="the signing secret (whsec_…), shown this once")


class WebhookList(BaseModel):
    webhooks: list[WebhookOut]


class DeliveryOut(BaseModel):
    id: str = Field(description="the webhook-id header, the same on every attempt")
    type: str
    status: DeliveryStatus
    attempts: int
    event_id: int | None
    interaction_id: str | None
    created_at: datetime
    next_attempt_at: datetime
    expires_at: datetime
    delivered_at: datetime | None
    last_error: str | None


class DeliveryList(BaseModel):
    deliveries: list[DeliveryOut]
    next_cursor: str | None


def _view(destination: WebhookDestination) -> dict[str, Any]:
    now = utcnow()
    until = destination.previous_until
    return {
        "id": destination.id,
        "url": destination.url,
        "format": destination.format,
        "events": list(destination.events),
        "session_id": destination.session_id,
        "escalation": destination.escalation,
        "enabled": destination.enabled,
        "created_at": destination.created_at,
        "previous_secret_until": until if until is not None and until > now else None,
    }


def _with_secret(destination: WebhookDestination) -> WebhookWithSecret:
    return WebhookWithSecret(**_view(destination), secret=destination.secret)


def _delivery(delivery: Delivery) -> DeliveryOut:
    return DeliveryOut.model_validate(delivery.model_dump(include=set(DeliveryOut.model_fields)))


def webhook_router(
    store: Store,
    authorize: Callable[[Request], Awaitable[None]],
    *,
    options: NotifyOptions | None = None,
    wake: Callable[[], None] | None = None,
) -> APIRouter:
    """The `/v1/webhooks` routes over `store`. `authorize(request)` raises unless the
    caller may manage notifications (the gateway: the admin token); `wake()` tells this
    process's notifier that something changed."""
    settings = options or NotifyOptions()
    router = APIRouter(prefix="/v1", dependencies=[Depends(authorize)], tags=["notifications"])

    def changed() -> None:
        if wake is not None:
            wake()

    @router.post("/webhooks", status_code=201, response_model=WebhookWithSecret)
    async def create_webhook(body: WebhookIn) -> WebhookWithSecret:
        """Add a destination; the response holds its secret, shown this once."""
        if body.session_id is not None and await store.get_session(body.session_id) is None:
            raise NotFound(f"no session with id {body.session_id!r}")
        destination = await create_destination(
            store,
            body.url,
            events=body.events,
            session_id=body.session_id,
            format=body.format,
            escalation=body.escalation,
        )
        changed()
        return _with_secret(destination)

    @router.get("/webhooks", response_model=WebhookList)
    async def list_webhooks() -> WebhookList:
        """Every destination, oldest first (no secrets)."""
        return WebhookList(webhooks=[WebhookOut(**_view(d)) for d in await store.list_webhooks()])

    @router.get("/webhooks/{webhook_id}", response_model=WebhookOut)
    async def get_webhook(webhook_id: WebhookId) -> WebhookOut:
        return WebhookOut(**_view(await webhook_or_404(store, webhook_id)))

    @router.patch("/webhooks/{webhook_id}", response_model=WebhookOut)
    async def update_webhook(webhook_id: WebhookId, body: WebhookPatch) -> WebhookOut:
        """Enable or disable a destination, or change what it gets."""
        current = await webhook_or_404(store, webhook_id)
        changes: dict[str, Any] = {}
        if body.enabled is not None:
            changes["enabled"] = body.enabled
            if body.enabled and not current.enabled:
                # enabled again: it hears of what happens from now on, not of what
                # happened while it was off
                changes["since_event_id"] = await store.last_event_id()
        if body.events is not None:
            changes["events"] = tuple(dict.fromkeys(body.events))
        if body.escalation is not None:
            changes["escalation"] = body.escalation
        updated = current.model_copy(update=changes)
        if not await store.update_webhook(updated):
            raise NotFound(f"no webhook with id {webhook_id!r}; it was deleted meanwhile")
        changed()
        return WebhookOut(**_view(updated))

    @router.post("/webhooks/{webhook_id}/rotate", response_model=WebhookWithSecret)
    async def rotate(
        webhook_id: WebhookId, body: Annotated[RotateIn | None, Body()] = None
    ) -> WebhookWithSecret:
        """A new secret, shown this once; the old one signs beside it during the grace."""
        grace_s = (body or RotateIn()).grace_s
        grace = settings.rotation_grace if grace_s is None else timedelta(seconds=grace_s)
        return _with_secret(await rotate_secret(store, webhook_id, grace))

    @router.delete("/webhooks/{webhook_id}", status_code=204)
    async def delete_webhook(webhook_id: WebhookId) -> Response:
        """Delete a destination and its deliveries."""
        if not await store.delete_webhook(webhook_id):
            raise NotFound(f"no webhook with id {webhook_id!r}; GET /v1/webhooks lists them")
        changed()
        return Response(status_code=204)

    @router.get("/webhooks/{webhook_id}/deliveries", response_model=DeliveryList)
    async def deliveries(
        webhook_id: WebhookId,
        limit: Annotated[int, Query(ge=1, le=_MAX_PAGE)] = 100,
        cursor: Annotated[str | None, Query(max_length=30, pattern=r"^\d+$")] = None,
    ) -> DeliveryList:
        """The destination's deliveries, newest first, a page at a time: each one's
        status, attempts and last error."""
        await webhook_or_404(store, webhook_id)
        before = int(cursor) if cursor is not None else None
        found = await store.list_deliveries(webhook_id, limit=limit + 1, before=before)
        page = found[:limit]
        more = len(found) > limit
        return DeliveryList(
            deliveries=[_delivery(d) for d in page],
            next_cursor=str(page[-1].seq) if more else None,
        )

    @router.post(
        "/webhooks/{webhook_id}/deliveries/{delivery_id}/replay", response_model=DeliveryOut
    )
    async def replay(
        webhook_id: WebhookId, delivery_id: Annotated[str, Path(max_length=200)]
    ) -> DeliveryOut:
        """Send a delivery again, now, with the same webhook-id and a new retry window."""
        found = await store.get_delivery(delivery_id)
        if found is None or found.destination_id != webhook_id:
            raise NotFound(
                f"no delivery {delivery_id!r} of webhook {webhook_id!r}; "
                f"GET /v1/webhooks/{webhook_id}/deliveries lists them"
            )
        now = utcnow()
        replayed = await store.replay_delivery(
            delivery_id, now=now, expires_at=now + settings.retry_window
        )
        if replayed is None:
            raise NotFound(f"no delivery {delivery_id!r}; it was deleted meanwhile")
        changed()
        return _delivery(replayed)

    return router
