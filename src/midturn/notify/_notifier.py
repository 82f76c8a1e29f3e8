"""The notifier: from the event log to delivered notifications (docs/notifications.md).

Two loops per process, both over the store, so a crash or a restart loses nothing:

- **fan-out**: reads the event log after the outbox cursor and turns each event into a
  delivery per destination that wants it (plus, for a request, its reminders and its
  escalation, due later), writing them and moving the cursor in one transaction (a
  compare-and-set: of several replicas, one writes each batch). It wakes on the runtime's
  tap (`Runtime.subscribe`) and, while no destination is enabled, stays idle (it reads
  nothing and writes nothing).
- **send**: claims due deliveries with a lease (`Store.claim_deliveries`; one claimer
  per delivery, across replicas), sends each with its destination's sender, and records
  the outcome: delivered, retried later with exponential backoff and jitter, or failed
  once the retry window has passed. A reminder or an escalation whose interaction has
  settled by then (here or on another replica) is cancelled, not sent; a settle also
  cancels them in the store as soon as the fan-out reads it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from types import TracebackType
from typing import Self

from midturn.contract._interactions import Event, Interaction, utcnow
from midturn.errors import UsageError
from midturn.notify._options import NotifyOptions
from midturn.notify._payload import (
    build_payload,
    notification_from_json,
    payload_bytes,
)
from midturn.notify._senders import DeliveryFailed, get_sender, registered_senders
from midturn.runtime import Runtime
from midturn.runtime._subscribe import Subscription
from midturn.store._codec import as_utc
from midturn.store._outbox import Delivery, WebhookDestination

__all__ = ["REQUESTED_TYPES", "SETTLED_TYPES", "TIMED_TYPES", "Notifier", "new_delivery_id"]

log = logging.getLogger("midturn.notify")

REQUESTED_TYPES = frozenset({"user_question_requested", "permission_requested"})
SETTLED_TYPES = frozenset(
    {
        "user_question_answered",
        "user_question_skipped",
        "user_question_timeout",
        "user_question_cancelled",
        "user_question_redirected",
        "permission_decided",
    }
)
TIMED_TYPES: tuple[str, ...] = ("interaction.reminder", "interaction.escalation")
_LOG_PAGE = 500
_ERROR_PAUSE_S = 1.0


def new_delivery_id() -> str:
    """A delivery's id, its `webhook-id`: 128 random bits, no `.` in it."""
    return "msg_" + secrets.token_urlsafe(16)


def _title(meta: dict[str, object]) -> str | None:
    for key in ("title", "label", "name"):
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()[:200]
    return None


class Notifier:
    """Runs the fan-out and send loops for one process over `runtime`'s store. An async
    context manager (or `start()` / `aclose()`). `public_url` (a string, or a function
    giving it once the gateway knows its address) is the base of every `answer_url`."""

    def __init__(
        self,
        runtime: Runtime,
        options: NotifyOptions | None = None,
        *,
        public_url: str | Callable[[], str] = "http://127.0.0.1:8765",
    ) -> None:
        self.runtime = runtime
        self.store = runtime.store
        self.options = options or NotifyOptions.from_env()
        self._public_url = public_url
        self.owner = "n_" + secrets.token_urlsafe(9)
        self._log_woken = asyncio.Event()
        self._send_woken = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._inflight: set[asyncio.Task[None]] = set()
        self._subscription: Subscription | None = None
        self._random = random.Random()

    @property
    def public_url(self) -> str:
        url = self._public_url() if callable(self._public_url) else self._public_url
        return url.rstrip("/")

    # -- lifecycle -------------------------------------------------------------------

    async def start(self) -> None:
        if self._tasks:
            return
        await self.store.outbox_cursor()  # a store without an outbox refuses here
        self._subscription = self.runtime.subscribe(self._heard)
        self._tasks = [
            asyncio.create_task(self._fan_out_loop(), name="midturn-notify-fan-out"),
            asyncio.create_task(self._send_loop(), name="midturn-notify-send"),
        ]

    async def aclose(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        tasks, self._tasks = self._tasks, []
        for task in [*tasks, *self._inflight]:
            task.cancel()
        for task in [*tasks, *self._inflight]:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._inflight.clear()
        for sender in registered_senders():
            close = getattr(sender, "aclose", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    await close()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def wake(self) -> None:
        """Look at the log and the outbox again now (a destination changed, a delivery
        was replayed)."""
        self._log_woken.set()
        self._send_woken.set()

    def _heard(self, event: Event) -> None:
        self._log_woken.set()

    async def _wait(self, woken: asyncio.Event, timeout: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(woken.wait(), timeout)
        woken.clear()

    # -- fan-out ---------------------------------------------------------------------

    async def _fan_out_loop(self) -> None:
        while True:
            try:
                progressed = await self._fan_out_once()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the notification fan-out failed; retrying")
                await asyncio.sleep(_ERROR_PAUSE_S)
                continue
            if not progressed:
                await self._wait(self._log_woken, self.options.poll_s * 5)

    async def _fan_out_once(self) -> bool:
        """One batch of the log into deliveries; whether there may be more right away."""
        enabled = [d for d in await self.store.list_webhooks() if d.enabled]
        if not enabled:
            return False
        cursor = await self.store.outbox_cursor()
        floor = min(d.since_event_id for d in enabled)
        if cursor < floor:  # nobody wants what came before: skip it without reading it
            await self.store.enqueue_deliveries([], cursor=(cursor, floor))
            return True
        events = await self.store.read_events(cursor, limit=_LOG_PAGE)
        if not events:
            return False
        rows = await self._deliveries_for(events, enabled)
        outcome = await self.store.enqueue_deliveries(rows, cursor=(cursor, events[-1].id))
        if outcome:
            self._send_woken.set()
        if outcome is not None:
            for event in events:
                if event.type in SETTLED_TYPES and event.interaction_id is not None:
                    await self.store.cancel_deliveries(event.interaction_id, TIMED_TYPES)
        return True

    async def _deliveries_for(
        self, events: Sequence[Event], destinations: Sequence[WebhookDestination]
    ) -> list[Delivery]:
        interactions: dict[str, Interaction | None] = {}
        titles: dict[str, str | None] = {}
        rows: list[Delivery] = []
        now = utcnow()
        window = self.options.retry_window
        for event in events:
            matching = [
                d
                for d in destinations
                if event.id > d.since_event_id
                and (d.session_id is None or d.session_id == event.session_id)
            ]
            if not matching:
                continue
            interaction = None
            if event.interaction_id is not None:
                if event.interaction_id not in interactions:
                    interactions[event.interaction_id] = await self.store.get_interaction(
                        event.interaction_id
                    )
                interaction = interactions[event.interaction_id]
            if event.session_id not in titles:
                session = await self.store.get_session(event.session_id)
                titles[event.session_id] = _title(session.meta) if session else None
            title = titles[event.session_id]
            position = event.data.get("position")

            def payload_for(
                kind: str,
                at: datetime,
                reminder: int | None = None,
                *,
                event_id: int | None = None,
                shown_position: int | None = None,
                about: Event = event,
                shown: Interaction | None = interaction,
                heading: str | None = title,
            ) -> str:
                return self._payload_text(
                    kind, at, about, shown, heading, event_id, shown_position, reminder
                )

            wanting = [d for d in matching if event.type in d.events]
            if wanting:
                text = payload_for(
                    event.type,
                    event.at,
                    event_id=event.id,
                    shown_position=position if isinstance(position, int) else None,
                )
                for destination in wanting:
                    rows.append(
                        Delivery(
                            id=new_delivery_id(),
                            destination_id=destination.id,
                            key=f"event:{event.id}",
                            type=event.type,
                            payload=text,
                            interaction_id=event.interaction_id,
                            event_id=event.id,
                            created_at=now,
                            next_attempt_at=now,
                            expires_at=now + window,
                        )
                    )
            if event.type in REQUESTED_TYPES and interaction is not None and interaction.pending:
                rows.extend(self._timed(event, interaction, matching, payload_for, now))
        return rows

    def _payload_text(
        self,
        kind: str,
        at: datetime,
        event: Event,
        interaction: Interaction | None,
        title: str | None,
        event_id: int | None,
        position: int | None,
        reminder: int | None,
    ) -> str:
        notification = build_payload(
            kind,
            at=at,
            session_id=event.session_id,
            session_title=title,
            interaction=interaction,
            public_url=self.public_url,
            event_id=event_id,
            position=position,
            reminder=reminder,
        )
        return payload_bytes(notification).decode("utf-8")

    def _timed(
        self,
        event: Event,
        interaction: Interaction,
        matching: Sequence[WebhookDestination],
        payload_for: Callable[..., str],
        now: datetime,
    ) -> list[Delivery]:
        """The reminders and the escalation of a request, due later."""
        plan: list[tuple[str, str, datetime, int | None]] = []
        start = as_utc(event.at)
        if self.options.remind_after is not None:
            for n in range(1, self.options.reminders + 1):
                due = start + self.options.remind_after * n
                plan.append(("interaction.reminder", f"reminder:{interaction.id}:{n}", due, n))
        if self.options.escalate_after is not None:
            due = start + self.options.escalate_after
            plan.append(("interaction.escalation", f"escalation:{interaction.id}", due, None))
        rows = []
        for kind, key, due, number in plan:
            wanting = [d for d in matching if kind in d.events]
            if not wanting:
                continue
            text = payload_for(kind, due, number)
            for destination in wanting:
                rows.append(
                    Delivery(
                        id=new_delivery_id(),
                        destination_id=destination.id,
                        key=key,
                        type=kind,
                        payload=text,
                        interaction_id=interaction.id,
                        event_id=event.id,
                        created_at=now,
                        next_attempt_at=due,
                        expires_at=max(due, now) + self.options.retry_window,
                    )
                )
        return rows

    # -- send ------------------------------------------------------------------------

    async def _send_loop(self) -> None:
        while True:
            try:
                claimed = await self._claim()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("claiming notification deliveries failed; retrying")
                await asyncio.sleep(_ERROR_PAUSE_S)
                continue
            if claimed:
                continue
            timeout = self.options.poll_s
            if len(self._inflight) < self.options.concurrency:
                due = await self._next_due()
                if due is not None:
                    timeout = min(timeout, max(0.005, (due - utcnow()).total_seconds()))
            await self._wait(self._send_woken, timeout)

    async def _next_due(self) -> datetime | None:
        try:
            return await self.store.next_delivery_due()
        except asyncio.CancelledError:
            raise
        except Exception:
            return None

    async def _claim(self) -> bool:
        room = min(self.options.batch, self.options.concurrency - len(self._inflight))
        if room <= 0:
            return False
        now = utcnow()
        claimed = await self.store.claim_deliveries(
            self.owner, now=now, lease_until=now + self.options.lease, limit=room
        )
        for delivery in claimed:
            task = asyncio.create_task(
                self._attempt(delivery), name=f"midturn-notify {delivery.id}"
            )
            self._inflight.add(task)
            task.add_done_callback(self._sent)
        return bool(claimed)

    def _sent(self, task: asyncio.Task[None]) -> None:
        self._inflight.discard(task)
        self._send_woken.set()
        if not task.cancelled() and task.exception() is not None:
            log.error("a notification attempt failed", exc_info=task.exception())

    async def _attempt(self, delivery: Delivery) -> None:
        outcome = await self._outcome(delivery)
        if outcome is not None:
            await self.store.finish_delivery(outcome, self.owner)

    def _backoff(self, attempts: int, retry_after: float | None) -> timedelta:
        base: timedelta = self.options.retry_initial * (2 ** min(attempts - 1, 30))
        delay: timedelta = min(base, self.options.retry_max) * self._random.uniform(0.5, 1.0)
        if retry_after is not None:
            delay = max(delay, timedelta(seconds=min(retry_after, 86400)))
        return delay

    async def _outcome(self, delivery: Delivery) -> Delivery | None:
        destination = await self.store.get_webhook(delivery.destination_id)
        if destination is None:
            return None  # deleted, and its deliveries with it
        now = utcnow()
        if not destination.enabled:
            return delivery.model_copy(
                update={"status": "cancelled", "last_error": "the destination was disabled"}
            )
        if delivery.type in TIMED_TYPES and delivery.interaction_id is not None:
            current = await self.store.get_interaction(delivery.interaction_id)
            if current is None or not current.pending:
                return delivery.model_copy(
                    update={"status": "cancelled", "last_error": "the interaction settled first"}
                )
        if now >= as_utc(delivery.expires_at):
            return delivery.model_copy(
                update={"status": "failed", "last_error": "the retry window ended before a try"}
            )
        attempts = delivery.attempts + 1
        try:
            sender = get_sender(destination.format)
            await sender.send(destination, delivery.id, notification_from_json(delivery.payload))
        except asyncio.CancelledError:
            raise
        except DeliveryFailed as failure:
            return await self._failed(delivery, destination, attempts, failure)
        except UsageError as error:  # no sender for the format (any more)
            return self._give_up(delivery, attempts, str(error))
        except ImportError as error:  # the extra is missing; it may be installed later
            missing = DeliveryFailed(str(error))
            return await self._failed(delivery, destination, attempts, missing)
        except Exception as error:
            broken = DeliveryFailed(
                f"the {destination.format} sender failed ({type(error).__name__})"
            )
            return await self._failed(delivery, destination, attempts, broken)
        return delivery.model_copy(
            update={
                "status": "delivered",
                "attempts": attempts,
                "delivered_at": utcnow(),
                "last_error": None,
            }
        )

    def _give_up(self, delivery: Delivery, attempts: int, detail: str) -> Delivery:
        return delivery.model_copy(
            update={"status": "failed", "attempts": attempts, "last_error": detail[:500]}
        )

    async def _failed(
        self,
        delivery: Delivery,
        destination: WebhookDestination,
        attempts: int,
        failure: DeliveryFailed,
    ) -> Delivery:
        if failure.disable:
            await self.store.update_webhook(destination.model_copy(update={"enabled": False}))
            log.warning("webhook %s asked to be disabled (%s)", destination.id, failure.detail)
        if not failure.retryable:
            return self._give_up(delivery, attempts, failure.detail)
        retry_at = utcnow() + self._backoff(attempts, failure.retry_after)
        if retry_at >= as_utc(delivery.expires_at):
            return self._give_up(delivery, attempts, f"{failure.detail}; the retry window ended")
        return delivery.model_copy(
            update={
                "attempts": attempts,
                "next_attempt_at": retry_at,
                "last_error": failure.detail[:500],
            }
        )
