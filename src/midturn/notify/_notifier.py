"""The notifier: from the event log to delivered notifications (docs/notifications.md).

Two loops per process, both over the store, so a crash or a restart loses nothing:

- **fan-out**: reads the event log after the outbox cursor and turns each event into a
  delivery per destination that wants it (plus, for a request, its reminders and its
  escalation, due later), writing them and moving the cursor in one transaction (a
  compare-and-set: of several replicas, one writes each batch). It wakes on the runtime's
  tap (`Runtime.subscribe`), whose events it uses when they run on from the cursor
  with no id missing (else it reads the log). While no destination is enabled it sleeps:
  the runtime's events do not wake it, except the first one `poll_s` after its last look
  at the list of destinations (one made through another replica), and `wake()` (one
  made through this process) does.
- **send**: a delivery due at once is written already leased to this process and sent
  straight away (no claim between the event and the POST); the others (retries,
  reminders, what a crashed process left) are claimed when due, with a lease
  (`Store.claim_deliveries`; one claimer per delivery, across replicas). Each is sent
  with its destination's sender, and the outcome recorded: delivered, retried later
  with exponential backoff and jitter, or failed once the retry window has passed. A
  reminder or an escalation whose interaction has settled by then (here or on another
  replica) is cancelled, not sent; a settle also cancels them in the store as soon as
  the fan-out reads it. While no destination is enabled and nothing is pending it
  sleeps until woken (a new destination, a delivery written, `wake()`), or until the
  next delivery is due; with destinations it also looks every `poll_s` (work another
  replica queued).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
import time
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
        # What this process knows without a read (each refreshed from the store on a
        # miss): the cursor it last moved, the destinations (re-read when woken or every
        # few polls), session titles (a session's meta never changes), and the events
        # the runtime's tap handed over since the last fan-out.
        self._cursor: int | None = None
        self._destinations: list[WebhookDestination] | None = None
        self._destinations_at = 0.0
        self._titles: dict[str, str | None] = {}
        self._heard_events: dict[int, Event] = {}

    @property
    def public_url(self) -> str:
        url = self._public_url() if callable(self._public_url) else self._public_url
        return url.rstrip("/")

    # -- lifecycle -------------------------------------------------------------------

    async def start(self) -> None:
        if self._tasks:
            return
        try:
            await self.store.outbox_cursor()
        except UsageError as error:  # a store of another package, without an outbox
            log.warning("notifications are off: %s", error)
            return
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
        """Look at the destinations, the log and the outbox again now (a destination
        changed, a delivery was replayed)."""
        self._destinations = None
        self._log_woken.set()
        self._send_woken.set()

    def _idle(self) -> bool:
        """Whether the destinations are known and none is enabled."""
        return self._destinations is not None and not self._destinations

    def _heard(self, event: Event) -> None:
        if self._idle():
            # Nothing to fan out (the log keeps the event). Look at the destinations
            # again only if the last look is older than `poll_s`.
            if time.monotonic() - self._destinations_at > self.options.poll_s:
                self._log_woken.set()
            return
        if len(self._heard_events) < _LOG_PAGE:
            self._heard_events[event.id] = event
        self._log_woken.set()

    async def _wait(self, woken: asyncio.Event, timeout: float | None) -> None:
        """Until `woken` is set, or `timeout` seconds (None: no limit) have passed."""
        if timeout is None:
            await woken.wait()
        else:
            # asyncio.timeout, not wait_for: wait_for would wrap `woken.wait()` in a
            # task of its own on every wait, and every event the runtime publishes wakes this
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await woken.wait()
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
                idle = self._idle()  # then an event after `poll_s`, or wake(), wakes it
                await self._wait(self._log_woken, None if idle else self.options.poll_s * 5)

    async def _enabled(self) -> list[WebhookDestination]:
        """The enabled destinations, re-read when woken and at least every `poll_s` (a
        change made through another replica)."""
        now = time.monotonic()
        if self._destinations is None or now - self._destinations_at > self.options.poll_s:
            had = self._destinations
            self._destinations = [d for d in await self.store.list_webhooks() if d.enabled]
            self._destinations_at = now
            if self._destinations and not had:
                self._send_woken.set()  # the send loop slept while there were none
        return self._destinations

    async def _events_after(self, cursor: int) -> list[Event]:
        """The log after `cursor`: the events the tap handed over when they run on from
        the cursor with no id missing (then they are exactly the log's), else a read."""
        heard = self._heard_events
        self._heard_events = {}
        run: list[Event] = []
        next_id = cursor + 1
        while next_id in heard and len(run) < _LOG_PAGE:
            run.append(heard[next_id])
            next_id += 1
        if run and len(run) == sum(1 for key in heard if key > cursor):
            return run
        return await self.store.read_events(cursor, limit=_LOG_PAGE)

    async def _fan_out_once(self) -> bool:
        """One batch of the log into deliveries; whether there may be more right away."""
        enabled = await self._enabled()
        if not enabled:
            self._heard_events.clear()
            return False
        cursor = self._cursor
        if cursor is None:
            cursor = self._cursor = await self.store.outbox_cursor()
        floor = min(d.since_event_id for d in enabled)
        if cursor < floor:  # nobody wants what came before: skip it without reading it
            moved = await self.store.enqueue_deliveries([], cursor=(cursor, floor))
            self._cursor = floor if moved is not None else None
            return True
        events = await self._events_after(cursor)
        if not events:
            return False
        rows = await self._deliveries_for(events, enabled)
        now = utcnow()
        room = max(0, self.options.concurrency - len(self._inflight))
        # the deliveries due now, as many as there is room to send (the rest: claimed)
        due = {d.id for d in rows if as_utc(d.next_attempt_at) <= now}
        due = set([d.id for d in rows if d.id in due][:room])
        lease_until = now + self.options.lease
        rows = [
            d.model_copy(update={"lease_owner": self.owner, "lease_until": lease_until})
            if d.id in due
            else d
            for d in rows
        ]
        outcome = await self.store.enqueue_deliveries(rows, cursor=(cursor, events[-1].id))
        if outcome is None:  # another replica fanned these out: read its cursor
            self._cursor = None
            return True
        self._cursor = events[-1].id
        if outcome == len(rows):
            # every row is ours, and the due ones are leased to us: send them now
            by_id = {d.id: d for d in enabled}
            for delivery in rows:
                if delivery.id in due:
                    self._spawn(delivery, by_id.get(delivery.destination_id))
        else:  # (not expected: a key written before) leave them to the claims
            log.warning("the fan-out wrote %d of %d deliveries", outcome, len(rows))
        if outcome and (outcome != len(rows) or len(due) < len(rows)):
            self._send_woken.set()  # some wait for a claim: now or when they are due
        if self.options.remind_after is not None or self.options.escalate_after is not None:
            for event in events:
                if event.type in SETTLED_TYPES and event.interaction_id is not None:
                    await self.store.cancel_deliveries(event.interaction_id, TIMED_TYPES)
        return True

    async def _deliveries_for(
        self, events: Sequence[Event], destinations: Sequence[WebhookDestination]
    ) -> list[Delivery]:
        interactions: dict[str, Interaction | None] = {}
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
                    interactions[event.interaction_id] = await self._interaction_of(event)
                interaction = interactions[event.interaction_id]
            title = await self._title_of(event.session_id)
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

    async def _interaction_of(self, event: Event) -> Interaction | None:
        """The interaction as the event carries it (a requested or settled event carries
        it whole), else as stored."""
        carried = event.data.get("interaction")
        if isinstance(carried, dict) and carried.get("id") == event.interaction_id:
            with contextlib.suppress(ValueError):
                return Interaction.model_validate(carried)
        assert event.interaction_id is not None
        return await self.store.get_interaction(event.interaction_id)

    async def _title_of(self, session_id: str) -> str | None:
        if session_id not in self._titles:
            session = await self.store.get_session(session_id)
            if len(self._titles) >= 10_000:
                del self._titles[next(iter(self._titles))]  # the oldest read
            self._titles[session_id] = session.title if session else None
        return self._titles[session_id]

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
                pause = await self._send_once()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("claiming notification deliveries failed; retrying")
                pause = _ERROR_PAUSE_S
            if pause is None or pause > 0:
                await self._wait(self._send_woken, pause)

    async def _send_once(self) -> float | None:
        """Claim what is due, if there is room; how long to wait before looking again
        (None: until woken; woken sooner by a finished send, a new delivery or a new
        destination). Idle, it only reads: when the next delivery is due. With no
        destination enabled, no other replica can be queuing work: no poll."""
        if len(self._inflight) >= self.options.concurrency:
            return self.options.poll_s
        due = await self.store.next_delivery_due()
        now = utcnow()
        if due is None:
            return None if self._idle() else self.options.poll_s
        if due > now:
            wait = max(0.005, (due - now).total_seconds())
            return wait if self._idle() else min(self.options.poll_s, wait)
        if await self._claim():
            return 0
        return min(self.options.poll_s, 0.05)  # (another process claimed them first)

    async def _claim(self) -> bool:
        room = min(self.options.batch, self.options.concurrency - len(self._inflight))
        if room <= 0:
            return False
        now = utcnow()
        claimed = await self.store.claim_deliveries(
            self.owner, now=now, lease_until=now + self.options.lease, limit=room
        )
        for delivery in claimed:
            self._spawn(delivery)
        return bool(claimed)

    def _spawn(self, delivery: Delivery, known: WebhookDestination | None = None) -> None:
        """Send a delivery leased to this process, in a task of its own."""
        task = asyncio.create_task(
            self._attempt(delivery, known), name=f"midturn-notify {delivery.id}"
        )
        self._inflight.add(task)
        task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task[None]) -> None:
        self._inflight.discard(task)
        self._send_woken.set()
        if not task.cancelled() and task.exception() is not None:
            log.error("a notification attempt failed", exc_info=task.exception())

    async def _attempt(self, delivery: Delivery, known: WebhookDestination | None) -> None:
        outcome = await self._outcome(delivery, known)
        if outcome is not None:
            await self.store.finish_delivery(outcome, self.owner)

    def _backoff(self, attempts: int, retry_after: float | None) -> timedelta:
        base: timedelta = self.options.retry_initial * (2 ** min(attempts - 1, 30))
        delay: timedelta = min(base, self.options.retry_max) * self._random.uniform(0.5, 1.0)
        if retry_after is not None:
            delay = max(delay, timedelta(seconds=min(retry_after, 86400)))
        return delay

    async def _outcome(
        self, delivery: Delivery, known: WebhookDestination | None = None
    ) -> Delivery | None:
        """Send it, or say why not; the delivery as it then stands (None: it is gone).
        `known`: the destination as the fan-out read it at most `poll_s` ago, else it is
        read now (a change made through another replica takes effect within `poll_s`)."""
        destination = known or await self.store.get_webhook(delivery.destination_id)
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
