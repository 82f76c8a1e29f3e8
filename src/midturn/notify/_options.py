"""`NotifyOptions`: the retry window, the reminder and escalation intervals, the lease."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import timedelta

from midturn.errors import UsageError

__all__ = ["DEFAULT_EVENTS", "ESCALATION_EVENTS", "NotifyOptions", "parse_duration"]

DEFAULT_EVENTS: tuple[str, ...] = (
    "user_question_requested",
    "permission_requested",
    "interaction.reminder",
)
"""What a destination gets when it names no `events`: what asks a person to act."""
ESCALATION_EVENTS: tuple[str, ...] = ("interaction.escalation",)
"""What a destination marked `escalation` gets when it names no `events`."""

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")


def parse_duration(text: str) -> timedelta:
    """`90s`, `30m`, `24h`, `2d` or plain seconds (`45`) as a duration."""
    found = _DURATION.match(text)
    if found is None:
        raise UsageError(
            f"{text!r} is not a duration; write a number with s, m, h or d (e.g. 30m, 24h)"
        )
    amount, unit = found.groups()
    return timedelta(seconds=float(amount) * _UNITS[unit or "s"])


@dataclass(frozen=True)
class NotifyOptions:
    """How the notifier delivers (docs/notifications.md#settings).

    - `retry_window`: how long a delivery is retried before it is `failed`.
    - `retry_initial`: the first retry's delay; each next one doubles, up to
      `retry_max`, with jitter (a random 50–100 % of it).
    - `remind_after`: re-notify (`interaction.reminder`) this long after an interaction
      was requested while it is still pending, `reminders` times at that interval;
      None sends no reminder.
    - `escalate_after`: notify the escalation destinations (`interaction.escalation`)
      this long after the request while it is still pending; None never escalates.
    - `lease`: how long a claimed delivery is this process's; longer than a send's
      timeout, so two replicas never send one delivery at once.
    - `rotation_grace`: how long a rotated-out secret still signs.
    - `batch`, `concurrency`: deliveries claimed at once, and sent at once.
    - `poll_s`: how often an idle notifier looks for work another replica queued.
    """

    retry_window: timedelta = timedelta(hours=24)
    retry_initial: timedelta = timedelta(seconds=5)
    retry_max: timedelta = timedelta(hours=1)
    remind_after: timedelta | None = None
    reminders: int = 1
    escalate_after: timedelta | None = None
    lease: timedelta = timedelta(seconds=60)
    rotation_grace: timedelta = timedelta(hours=24)
    batch: int = 100
    concurrency: int = 16
    poll_s: float = 1.0

    def __post_init__(self) -> None:
        positive = {
            "retry_window": self.retry_window,
            "retry_initial": self.retry_initial,
            "retry_max": self.retry_max,
            "lease": self.lease,
        }
        for name, value in positive.items():
            if value <= timedelta(0):
                raise UsageError(f"{name} must be longer than zero (got {value})")
        for name, maybe in (
            ("remind_after", self.remind_after),
            ("escalate_after", self.escalate_after),
        ):
            if maybe is not None and maybe <= timedelta(0):
                raise UsageError(f"{name} must be longer than zero (got {maybe})")
        if self.reminders < 1:
            raise UsageError(f"reminders must be at least 1 (got {self.reminders})")
        if self.batch < 1 or self.concurrency < 1:
            raise UsageError("batch and concurrency must be at least 1")
        if self.poll_s <= 0:
            raise UsageError(f"poll_s must be above zero (got {self.poll_s})")

    @classmethod
    def from_env(cls, **given: object) -> NotifyOptions:
        """The options `given`, the rest from the environment where set: the tuning
        knobs `MIDTURN_NOTIFY_LEASE_S`, `MIDTURN_NOTIFY_RETRY_INITIAL_S` and
        `MIDTURN_NOTIFY_POLL_S` (seconds), else the defaults."""
        knobs = {
            "lease": "MIDTURN_NOTIFY_LEASE_S",
            "retry_initial": "MIDTURN_NOTIFY_RETRY_INITIAL_S",
            "poll_s": "MIDTURN_NOTIFY_POLL_S",
        }
        fields = dict(given)
        for name, variable in knobs.items():
            raw = os.environ.get(variable, "").strip()
            if name in fields or not raw:
                continue
            try:
                seconds = float(raw)
            except ValueError:
                raise UsageError(
                    f"{variable} must be a number of seconds (got {raw[:40]!r})"
                ) from None
            fields[name] = seconds if name == "poll_s" else timedelta(seconds=seconds)
        return cls(**fields)  # type: ignore[arg-type]
