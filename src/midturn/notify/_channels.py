"""The chat senders, `"slack"`, `"discord"` and `"teams"`: the message shape of
`_chat.py` POSTed as JSON to the destination's incoming-webhook URL, plus `"email"`
(`_email.py`); all four are registered with the notify senders by default.

A 2xx is delivered. 429 and 5xx (and a network error or timeout) are retryable, with the
receiver's `Retry-After` (seconds or an HTTP date; Discord also puts `retry_after` in its
JSON body) passed on; 410 (Slack: the channel or the webhook is gone) disables the
destination; any other 4xx is refused for good. The URL of an incoming webhook is itself
a credential, so it is never part of a failure's detail.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from midturn.notify._chat import discord_message, slack_message, teams_message
from midturn.notify._notice import Notice, cut, notice_of, one_line
from midturn.notify._payload import Notification
from midturn.notify._sender import DeliveryFailed, Destination, Sender
from midturn.notify._webhook import LoopClients, check_http_url

__all__ = ["SLACK_BUTTONS", "ChatSender", "channel_senders", "retry_after_s"]

DEFAULT_TIMEOUT_S = 15.0
_DETAIL = 200


class _Switch:
    """Whether Slack messages carry option buttons: on once this process takes Slack's
    clicks (`midturn serve` with a Slack signing secret), since a button with nobody to
    take its click only shows the person an error."""

    def __init__(self) -> None:
        self.on = False


SLACK_BUTTONS = _Switch()


def retry_after_s(response: httpx.Response) -> float | None:
    """When the receiver asked to be tried again, in seconds from now: `Retry-After` as
    seconds or as an HTTP date, else Discord's `retry_after` in a JSON body."""
    raw = response.headers.get("retry-after", "").strip()
    if raw:
        try:
            return max(float(raw), 0.0)
        except ValueError:
            pass
        try:
            when = parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            when = None
        if when is not None:
            if when.tzinfo is None:
                when = when.replace(tzinfo=UTC)
            return max((when - datetime.now(UTC)).total_seconds(), 0.0)
    if response.headers.get("content-type", "").startswith("application/json"):
        try:
            body = response.json()
        except ValueError:
            return None
        value = body.get("retry_after") if isinstance(body, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
            return float(value)
    return None


class ChatSender:
    """POST `shape(notice)` as JSON to an incoming-webhook URL (see the module
    docstring for what counts as delivered). One HTTP client per event loop, closed by
    `aclose()`."""

    def __init__(
        self,
        name: str,
        shape: Callable[[Notice], dict[str, Any]],
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.name = name
        self.shape = shape
        self.timeout_s = timeout_s
        self._http = LoopClients(timeout_s)

    def __repr__(self) -> str:
        return f"ChatSender({self.name!r})"

    def check_url(self, url: str) -> str | None:
        return check_http_url(url)

    def body(self, payload: Notification) -> bytes:
        """The exact bytes this sender posts for `payload`."""
        shaped = self.shape(notice_of(payload))
        return json.dumps(shaped, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    async def send(self, destination: Destination, delivery_id: str, payload: Notification) -> None:
        headers = {"content-type": "application/json", "user-agent": "midturn-notify"}
        try:
            response = await self._http.client().post(
                destination.url, content=self.body(payload), headers=headers
            )
        except httpx.TimeoutException:
            raise DeliveryFailed(f"{self.name}: no response within {self.timeout_s:g} s") from None
        except httpx.HTTPError as error:
            raise DeliveryFailed(
                f"{self.name}: could not reach the webhook ({type(error).__name__})"
            ) from None
        status = response.status_code
        if 200 <= status < 300:
            return
        text = cut(one_line(response.text), _DETAIL)
        detail = f"{self.name}: HTTP {status}" + (f": {text}" if text else "")
        if status == 410:
            raise DeliveryFailed(detail, retryable=False, disable=True)
        retryable = status == 429 or status >= 500
        raise DeliveryFailed(
            detail,
            retryable=retryable,
            retry_after=retry_after_s(response) if retryable else None,
        )

    async def aclose(self) -> None:
        await self._http.aclose()


def _slack(notice: Notice) -> dict[str, Any]:
    return slack_message(notice, buttons=SLACK_BUTTONS.on)


def channel_senders() -> dict[str, Sender]:
    """A fresh sender for each channel format, by format name."""
    from midturn.notify._email import EmailSender

    return {
        "slack": ChatSender("slack", _slack),
        "discord": ChatSender("discord", discord_message),
        "teams": ChatSender("teams", teams_message),
        "email": EmailSender(),
    }
