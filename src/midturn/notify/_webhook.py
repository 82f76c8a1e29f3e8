"""The `"standard"` sender: a POST signed per Standard Webhooks (docs/notifications.md).

Headers `webhook-id` (the delivery's id, the same on every attempt), `webhook-timestamp`
(this attempt's time, unix seconds) and `webhook-signature` (`v1,<base64>` per signing
secret, space-separated: two during a rotation's grace). The signatures come from the
`standardwebhooks` package, over the exact bytes sent.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from urllib.parse import urlsplit

import httpx

from midturn.notify._extra import standardwebhooks
from midturn.notify._payload import Notification, payload_bytes
from midturn.notify._sender import DeliveryFailed
from midturn.store._outbox import WebhookDestination

__all__ = ["LoopClients", "StandardWebhookSender", "check_http_url", "sign_headers"]

DEFAULT_TIMEOUT_S = 15.0
_ERROR_SHOWN = 200


class LoopClients:
    """One HTTP client per event loop (a notifier may run on its own loop, a test on
    another), made on first use, dropped once its loop is closed; `aclose()` closes the
    running loop's."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._clients: dict[asyncio.AbstractEventLoop, httpx.AsyncClient] = {}

    def client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None or client.is_closed:
            for other in [known for known in self._clients if known.is_closed()]:
                del self._clients[other]
            client = httpx.AsyncClient(timeout=self.timeout_s, follow_redirects=False)
            self._clients[loop] = client
        return client

    async def aclose(self) -> None:
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()


def check_http_url(url: str) -> str | None:
    """A problem with an http(s) URL to POST to, or None."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "the url is not a valid URL"
    if parts.scheme not in ("http", "https"):
        return "the url must start with https:// or http://"
    if not parts.hostname:
        return "the url must name a host (https://host/path)"
    if parts.username or parts.password:
        return "the url must not carry a user name or password"
    return None


def sign_headers(
    secrets: tuple[str, ...], delivery_id: str, at: datetime, body: bytes
) -> dict[str, str]:
    """The three Standard Webhooks headers for `body`, signed with every secret."""
    module = standardwebhooks()
    text = body.decode("utf-8")
    signatures = " ".join(module.Webhook(secret).sign(delivery_id, at, text) for secret in secrets)
    return {
        "webhook-id": delivery_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": signatures,
    }


def _retry_after(response: httpx.Response) -> float | None:
    raw = response.headers.get("retry-after", "").strip()
    if raw.isdigit():
        return float(raw)
    return None


class StandardWebhookSender:
    """POSTs the payload as JSON, signed; 2xx is delivered, 410 disables the
    destination, and anything else (another status, a timeout, a network error) is
    retried: a 401 may come from a receiver that switched to a rotated secret a moment
    before this replica saw the rotation, a 404 from a route being deployed. One HTTP
    client per event loop, closed by `aclose()`."""

    def __init__(self, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        self._http = LoopClients(timeout_s)

    def check_url(self, url: str) -> str | None:
        return check_http_url(url)

    async def send(
        self, destination: WebhookDestination, delivery_id: str, payload: Notification
    ) -> None:

        body = payload_bytes(payload)
        at = datetime.now(UTC)
        headers = sign_headers(destination.signing_secrets(at), delivery_id, at, body)
        headers["content-type"] = "application/json"
        headers["user-agent"] = "midturn-notify"
        try:
            client = self._http.client()
            response = await client.post(destination.url, content=body, headers=headers)
        except httpx.TimeoutException:
            raise DeliveryFailed(f"no response within {self.timeout_s:g} s") from None
        except httpx.HTTPError as error:
            raise DeliveryFailed(f"could not reach the receiver ({type(error).__name__})") from None
        status = response.status_code
        if 200 <= status < 300:
            return
        text = response.text[:_ERROR_SHOWN]
        detail = f"HTTP {status}" + (f": {text}" if text else "")
        if status == 410:
            raise DeliveryFailed(detail, retryable=False, disable=True)
        raise DeliveryFailed(detail, retry_after=_retry_after(response))

    async def aclose(self) -> None:
        await self._http.aclose()
