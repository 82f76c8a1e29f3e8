"""Bearer tokens (docs/protocol.md): one admin token, and per session an agent and an answer token.

Session tokens read `agent.<session_id>.<secret>` / `answer.<session_id>.<secret>`: the
session id tells the gateway which stored hashes to compare against, so a token is
checked with one lookup and one constant-time comparison, never a scan. Only SHA-256
hashes of tokens are stored; the secrets are 256 random bits, so a plain hash is enough.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import Literal

from fastapi import Request

from midturn.errors import Forbidden, NotFound, Unauthorized
from midturn.store import SessionRecord, Store

__all__ = [
    "Principal",
    "Role",
    "TokenAuthority",
    "bearer_of",
    "hash_token",
    "new_admin_token",
    "new_session_tokens",
]

Role = Literal["admin", "agent", "answer"]

_SESSION_CACHE_MAX = 10_000


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_admin_token() -> str:
    return "admin." + secrets.token_urlsafe(32)


def new_session_id() -> str:
    """A session id with 144 random bits; never contains a dot."""
    return "s_" + secrets.token_urlsafe(18)


def new_session_tokens(session_id: str) -> tuple[str, str]:
    """`(agent_token, answer_token)` for a new session, 256 random bits each."""
    return (
        f"agent.{session_id}.{secrets.token_urlsafe(32)}",
        f"answer.{session_id}.{secrets.token_urlsafe(32)}",
    )


_TOKEN_NAMES = {
    "admin": "the admin token",
    "agent": "the session's agent token",
    "answer": "the session's answer token",
}


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: a role and, for session tokens, the one session it reaches."""

    role: Role
    session_id: str | None = None

    def require(self, roles: set[Role], action: str, session_id: str | None = None) -> None:
        """Raise `Forbidden` unless this principal may do `action` (in `session_id`)."""
        if self.role == "admin":
            return
        if self.role not in roles:
            allowed = " or ".join(
                _TOKEN_NAMES[r] for r in ("admin", "agent", "answer") if r in roles or r == "admin"
            )
            raise Forbidden(f"an {self.role} token cannot {action}; use {allowed}")
        if session_id is not None and session_id != self.session_id:
            raise Forbidden(
                f"this {self.role} token belongs to another session and cannot {action} "
                "here; use the token issued for that session"
            )


_ADMIN = Principal("admin")


class TokenAuthority:
    """Resolves bearer tokens to principals; keeps the admin token's hash and a cache of
    session records (they never change once created), the most recently used
    `_SESSION_CACHE_MAX` of them, so a gateway with more active sessions than that still
    finds most of them there."""

    def __init__(self, store: Store, admin_token: str) -> None:
        if not admin_token:
            raise ValueError("the admin token must not be empty")
        self._store = store
        self._admin_hash = hash_token(admin_token)
        self._sessions: OrderedDict[str, SessionRecord] = OrderedDict()

    async def session(self, session_id: str) -> SessionRecord:
        """The session record; raises `NotFound`."""
        record = self._sessions.get(session_id)
        if record is not None:
            self._sessions.move_to_end(session_id)
            return record
        record = await self._store.get_session(session_id)
        if record is None:
            raise NotFound(f"no session with id {session_id!r}; create one with POST /v1/sessions")
        self._remember(record)
        return record

    def _remember(self, record: SessionRecord) -> None:
        self._sessions[record.id] = record
        self._sessions.move_to_end(record.id)
        while len(self._sessions) > _SESSION_CACHE_MAX:
            self._sessions.popitem(last=False)  # the least recently used

    async def create_session(self, meta: dict[str, object]) -> tuple[SessionRecord, str, str]:
        session_id = new_session_id()
        agent_token, answer_token = new_session_tokens(session_id)
        record = SessionRecord(
            id=session_id,
            agent_token_hash=hash_token(agent_token),
            answer_token_hash=hash_token(answer_token),
            meta=dict(meta),
        )
        await self._store.create_session(record)
        self._remember(record)
        return record, agent_token, answer_token

    async def resolve(self, token: str | None) -> Principal:
        if not token:
            raise Unauthorized(
                "this route needs a bearer token: send the header 'Authorization: Bearer <token>'"
            )
        digest = hash_token(token)
        if hmac.compare_digest(digest, self._admin_hash):
            return _ADMIN
        kind, _, rest = token.partition(".")
        session_id, _, secret = rest.partition(".")
        if kind in ("agent", "answer") and session_id and secret:
            record = self._sessions.get(session_id)
            if record is not None:  # what `session` does, without a call to await
                self._sessions.move_to_end(session_id)
            else:
                try:
                    record = await self.session(session_id)
                except NotFound:
                    record = None
            if record is not None:
                expected = record.agent_token_hash if kind == "agent" else record.answer_token_hash
                if hmac.compare_digest(digest, expected):
                    return Principal("agent" if kind == "agent" else "answer", record.id)
        raise Unauthorized(
            "the bearer token is not valid for this gateway; use the admin token printed by "
            "'midturn serve' or a token returned by POST /v1/sessions"
        )


def bearer_token(request: Request, *, allow_query: bool = False) -> str | None:
    header = request.headers.get("authorization")
    if header:
        return bearer_of(header)
    if allow_query:
        return request.query_params.get("access_token") or None
    return None


def bearer_of(header: str) -> str | None:
    """The token of an `Authorization: Bearer <token>` header's value, else None."""
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None
