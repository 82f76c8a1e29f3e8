"""Slack interactivity: the option buttons of a Slack message, answered through
`POST /v1/slack/interactions` on the gateway (docs/notifications.md#slack).

Slack posts `payload=<JSON>` form-encoded and signs each request: `X-Slack-Signature` is
`v0=` + hex HMAC-SHA256 of `v0:{X-Slack-Request-Timestamp}:{raw body}` under the app's
signing secret. The check is `slack_sdk.signature.SignatureVerifier` (constant-time
compare, five-minute window); a request that fails it is 401 and changes nothing. A
verified click settles the ask through the answerer like any answer, by
`slack:<user id>`, and is idempotent: the first click settles, a second one (a double
click, a replay inside the window, a click after the web inbox answered) gets a friendly
"already answered". The updated message goes to the request's `response_url` (Slack's
way to replace the message a button sat in), only when that URL is Slack's own.

A malformed request is 400 with a message, never a 500."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import parse_qs

import httpx

try:
    from slack_sdk.signature import Clock, SignatureVerifier
except ImportError as error:  # pragma: no cover - the extra is missing
    raise ImportError(
        'Slack interactivity needs slack_sdk: pip install "midturn[notify]"', name=error.name
    ) from error
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from midturn.contract import Settled
from midturn.contract._interactions import Interaction
from midturn.contract._models import Question
from midturn.errors import AlreadySettled, InvalidAnswer, NotFound, UsageError
from midturn.notify._channels import SLACK_BUTTONS
from midturn.notify._chat import ANSWER_ACTION, OPEN_ACTION, slack_escape
from midturn.notify._notice import cut, one_line

__all__ = [
    "SLACK_RESPONSE_URLS",
    "SLACK_WINDOW_S",
    "SlackAnswerer",
    "SlackInteractions",
    "settled_message",
    "sign_slack_request",
]

log = logging.getLogger("midturn.notify")

SLACK_WINDOW_S = 300
"""How far a request's timestamp may be from now (Slack's five minutes)."""

SLACK_RESPONSE_URLS = ("https://hooks.slack.com/", "https://hooks.slack-gov.com/")
"""Where a `response_url` may point for midturn to post to it: Slack's own hosts."""

_USER_ID = re.compile(r"^[A-Za-z0-9]{1,64}$")
_FAIL_STATUSES = {
    "skipped": "was skipped",
    "redirected": "was answered in chat",
    "timed_out": "timed out",
    "cancelled": "was cancelled",
    "unavailable": "could not be answered",
}


class SlackAnswerer(Protocol):
    """What the endpoint settles through: the runtime (it records who answered)."""

    async def get(self, interaction_id: str) -> Interaction: ...

    async def answer(
        self, interaction_id: str, payload: Any, *, by: str | None = None
    ) -> Settled: ...


def sign_slack_request(secret: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
    """The headers Slack sends with `body` (for tests, and for a relay of your own):
    `X-Slack-Request-Timestamp` and `X-Slack-Signature`."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=stamp, body=body)
    assert signature is not None
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature}


class _Refused(Exception):
    def __init__(self, status: int, error: str, message: str) -> None:
        super().__init__(message)
        self.status, self.error, self.message = status, error, message


class _Clock(Clock):
    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now

    def now(self) -> float:
        return self._now()


class SlackInteractions:
    """An ASGI app for `POST /v1/slack/interactions`. `answerer` settles (the gateway's
    runtime); `signing_secret` is the Slack app's; `response_urls` are the prefixes a
    `response_url` must start with to be posted to (Slack's hosts by default)."""

    def __init__(
        self,
        answerer: SlackAnswerer,
        signing_secret: str,
        *,
        response_urls: tuple[str, ...] = SLACK_RESPONSE_URLS,
        now: Callable[[], float] = time.time,
    ) -> None:
        if not signing_secret.strip():
            raise UsageError(
                "the Slack signing secret is empty; copy it from the app's Basic Information page"
            )
        self._answerer = answerer
        self._now = now
        self._verifier = SignatureVerifier(signing_secret.strip(), clock=_Clock(now))
        self._response_urls = response_urls
        SLACK_BUTTONS.on = True  # this process takes the clicks: Slack messages get buttons

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        body = await request.body()
        try:
            self._verify(
                body,
                request.headers.get("x-slack-request-timestamp"),
                request.headers.get("x-slack-signature"),
            )
            response = await self._handle(_read_payload(body))
        except _Refused as refused:
            response = JSONResponse(
                {"error": refused.error, "message": refused.message}, refused.status
            )
        await response(scope, receive, send)

    # -- the signature -------------------------------------------------------------------

    def _verify(self, body: bytes, timestamp: str | None, signature: str | None) -> None:
        if not timestamp or not signature:
            raise _Refused(
                401,
                "unauthorized",
                "not signed by Slack: X-Slack-Request-Timestamp and X-Slack-Signature are required",
            )
        try:
            stamp = int(timestamp)
        except ValueError:
            raise _Refused(
                401, "unauthorized", "X-Slack-Request-Timestamp is not a number"
            ) from None
        if abs(self._now() - stamp) > SLACK_WINDOW_S:
            raise _Refused(
                401,
                "unauthorized",
                "the request's timestamp is more than five minutes from now (a replay, or a "
                "clock out of step); nothing changed",
            )
        try:
            valid = self._verifier.is_valid(body=body, timestamp=timestamp, signature=signature)
        except UnicodeDecodeError:  # the library reads the body as text; Slack's always is
            raise _Refused(400, "invalid_request", "the body is not UTF-8 form data") from None
        if not valid:
            raise _Refused(
                401,
                "unauthorized",
                "X-Slack-Signature does not match this body under the signing secret; "
                "nothing changed",
            )

    # -- the click -----------------------------------------------------------------------

    async def _handle(self, payload: dict[str, Any]) -> JSONResponse:
        action, user_id, response_url = _read_action(payload)
        action_id = action["action_id"]
        if action_id == OPEN_ACTION:  # a link button: Slack opened the URL, just ack
            return JSONResponse({"ok": True})
        if not action_id.startswith(ANSWER_ACTION + "."):
            raise _Refused(400, "invalid_request", f"unknown action_id {action_id!r}")
        interaction_id, question_id, index = _read_value(action.get("value"))
        try:
            interaction = await self._answerer.get(interaction_id)
        except NotFound:
            reply = _ephemeral("This question is no longer in midturn; nothing to answer.")
            return self._reply(reply, [reply], response_url)
        question = _choice_question(interaction, question_id, index)
        payload_answer = {"answers": {question.id: index}}
        try:
            settled = await self._answerer.answer(
                interaction_id, payload_answer, by=f"slack:{user_id}"
            )
        except AlreadySettled as already:
            return self._already(already.interaction, response_url)
        except InvalidAnswer as error:
            raise _Refused(400, "invalid_answer", str(error)) from None
        if settled.duplicate:
            return self._already(settled.interaction, response_url)
        updated = {"replace_original": True, **settled_message(settled.interaction)}
        return self._reply(updated, [updated], response_url)

    def _already(self, interaction: Interaction, response_url: str | None) -> JSONResponse:
        if interaction.status == "answered":
            text = f"Already answered: {_outcome_text(interaction)}. Your click changed nothing."
        else:
            text = f"This question {_outcome_text(interaction)}; your click changed nothing."
        note = _ephemeral(text)
        refreshed = {"replace_original": True, **settled_message(interaction)}
        return self._reply(note, [refreshed, note], response_url)

    def _reply(
        self, body: dict[str, Any], posts: list[dict[str, Any]], response_url: str | None
    ) -> JSONResponse:
        """200 with `body` now; `posts` go to the response URL after the response."""
        task = None
        if response_url is not None:
            if response_url.startswith(self._response_urls):
                task = BackgroundTask(_post_all, response_url, posts)
            else:
                log.warning("slack: not posting to a response_url outside %s", self._response_urls)
        return JSONResponse(body, 200, background=task)


def _read_payload(body: bytes) -> dict[str, Any]:
    try:
        form = parse_qs(body.decode("utf-8"), keep_blank_values=True)
    except UnicodeDecodeError:
        raise _Refused(400, "invalid_request", "the body is not UTF-8 form data") from None
    raw = form.get("payload")
    if not raw:
        raise _Refused(400, "invalid_request", "the body has no `payload` field (payload=<JSON>)")
    try:
        payload = json.loads(raw[0])
    except ValueError:
        raise _Refused(400, "invalid_request", "`payload` is not JSON") from None
    if not isinstance(payload, dict):
        raise _Refused(400, "invalid_request", "`payload` is not a JSON object")
    return payload


def _read_action(payload: dict[str, Any]) -> tuple[dict[str, Any], str, str | None]:
    if payload.get("type") != "block_actions":
        raise _Refused(
            400,
            "invalid_request",
            f"unsupported interaction type {payload.get('type')!r}; midturn takes block_actions",
        )
    user = payload.get("user")
    user_id = user.get("id") if isinstance(user, dict) else None
    if not isinstance(user_id, str) or not _USER_ID.match(user_id):
        raise _Refused(
            400, "invalid_request", "`payload.user.id` is missing or not a Slack user id"
        )
    actions = payload.get("actions")
    if not isinstance(actions, list) or not actions or not isinstance(actions[0], dict):
        raise _Refused(400, "invalid_request", "`payload.actions` has no action")
    action = actions[0]
    if not isinstance(action.get("action_id"), str):
        raise _Refused(400, "invalid_request", "the action has no `action_id`")
    response_url = payload.get("response_url")
    return action, user_id, response_url if isinstance(response_url, str) else None


def _read_value(raw: Any) -> tuple[str, str, int]:
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        value = None
    if (
        not isinstance(value, dict)
        or not isinstance(value.get("i"), str)
        or not isinstance(value.get("q"), str)
        or not isinstance(value.get("o"), int)
        or isinstance(value.get("o"), bool)
    ):
        raise _Refused(400, "invalid_request", "the button's value is not one midturn wrote")
    return value["i"], value["q"], value["o"]


def _choice_question(interaction: Interaction, question_id: str, index: int) -> Question:
    ask = interaction.ask
    if interaction.kind != "ask" or ask is None or len(ask.questions) != 1:
        raise _Refused(400, "invalid_request", "this interaction cannot be answered with a button")
    question = ask.questions[0]
    if (
        question.id != question_id
        or question.kind != "choice"
        or question.multi
        or question.secret
        or not 0 <= index < len(question.options)
    ):
        raise _Refused(400, "invalid_request", "the button does not match this question's options")
    return question


def _ephemeral(text: str) -> dict[str, Any]:
    return {"response_type": "ephemeral", "replace_original": False, "text": text}


def _who(interaction: Interaction) -> str:
    by = interaction.settled_by or ""
    if by.startswith("slack:") and _USER_ID.match(by.removeprefix("slack:")):
        return f"<@{by.removeprefix('slack:')}>"
    return "someone in midturn" if by else "midturn"


def _outcome_text(interaction: Interaction) -> str:
    result = interaction.result
    if interaction.status == "answered" and result is not None and result.answers:
        answer = result.answers[0]
        shown = answer.answer or "an answer"
        return f"*{slack_escape(one_line(cut(shown, 200)))}*, by {_who(interaction)}"
    return _FAIL_STATUSES.get(interaction.status, interaction.status)


def settled_message(interaction: Interaction) -> dict[str, Any]:
    """The Slack message that replaces a settled ask's: its question and how it settled,
    no buttons."""
    blocks: list[dict[str, Any]] = [
        {
            "type": "header",
            "text": {
                "type": "plain_text",
                "text": "Answered in midturn"
                if interaction.status == "answered"
                else "Settled in midturn",
            },
        }
    ]
    if interaction.ask is not None:
        for question in interaction.ask.questions:
            text = slack_escape(question.question)
            if question.header:
                text = f"*{slack_escape(one_line(question.header))}*\n{text}"
            blocks.append(
                {
                    "type": "section",
                    "text": {"type": "mrkdwn", "text": cut(text, 3000), "verbatim": True},
                }
            )
    outcome = _outcome_text(interaction)
    if interaction.status != "answered":
        outcome = f"This question {outcome}"
    mark = "✅" if interaction.status == "answered" else "⏹"
    blocks.append(
        {"type": "context", "elements": [{"type": "mrkdwn", "text": f"{mark} {outcome}"}]}
    )
    return {"text": f"Settled in midturn: {outcome}", "blocks": blocks}


async def _post_all(url: str, bodies: list[dict[str, Any]]) -> None:
    """Post each body to Slack's response URL; a failure is logged, never raised (the
    ask is settled whatever Slack's message shows)."""
    try:
        async with httpx.AsyncClient(timeout=10.0) as client:
            for body in bodies:
                response = await client.post(url, json=body)
                if response.status_code >= 400:
                    log.warning("slack: the response_url answered %s", response.status_code)
    except httpx.HTTPError as error:
        log.warning("slack: posting to the response_url failed: %s", type(error).__name__)
