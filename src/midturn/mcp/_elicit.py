"""How a pending interaction gets its answer through the MCP client, per protocol era,
and the bounded wait when the client cannot ask the person itself."""

from __future__ import annotations

import logging
import time
from typing import Any
from urllib.parse import quote

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from midturn.contract._interactions import Interaction
from midturn.errors import AlreadySettled, InvalidAnswer
from midturn.mcp._backend import Backend
from midturn.mcp._form import (
    ask_form,
    has_secret,
    permission_form,
    read_ask_form,
    read_permission_form,
)
from midturn.mcp._options import McpOptions
from midturn.mcp._results import pending_result, settled_result
from midturn.mcp._state import CallState

__all__ = ["FORM_KEY", "URL_KEY", "Elicitor"]

Ctx = ServerRequestContext[Any, Any]
FORM_KEY = "midturn_form"
URL_KEY = "midturn_url"
_PUSH_ROUNDS = 5
_WAITING = "waiting for the user's answer"
log = logging.getLogger("midturn.mcp")


def _modes(ctx: Ctx, can_settle: bool = True) -> tuple[bool, bool]:
    """`(form, url)`: which elicitation modes to use. The client's declaration (an empty
    elicitation capability means form only, 2025-11-25); a form only when the backend
    can settle its answer (a remote one with no answer credential cannot)."""
    capabilities = ctx.session.client_capabilities
    declared = capabilities.elicitation if capabilities is not None else None
    if declared is None:
        return False, False
    url = declared.url is not None
    return can_settle and (declared.form is not None or not url), url


class Elicitor:
    def __init__(self, backend: Backend, options: McpOptions) -> None:
        self.backend = backend
        self.options = options

    # -- settling from an elicitation result --------------------------------------------

    async def apply(self, interaction: Interaction, response: Any) -> Interaction | str:
        """Settle `interaction` from a form's `ElicitResult`: the interaction as it now
        stands, or the problem to ask again with (junk, a wrong shape)."""
        if not isinstance(response, types.ElicitResult):
            return "the client sent no form answer"
        if not self.backend.can_settle:
            return "this server cannot settle answers; answer in the midturn inbox"
        by = self.options.answered_by
        try:
            if interaction.kind == "permission":
                if response.action == "accept":
                    decision, note = read_permission_form(response.content)
                    settled = await self.backend.decide(
                        interaction.id, decision, message=note, by=by
                    )
                elif response.action == "decline":
                    settled = await self.backend.decide(interaction.id, "deny", message=None, by=by)
                else:
                    settled = await self.backend.cancel(interaction.id, by=f"{by}:dismissed")
                return settled.interaction
            assert interaction.ask is not None
            if response.action == "accept":
                payload: Any = read_ask_form(interaction.ask, response.content)
                settled = await self.backend.answer(interaction.id, payload, by=by)
            elif response.action == "decline":
                settled = await self.backend.answer(interaction.id, {"skip": True}, by=by)
            else:
                settled = await self.backend.answer(
                    interaction.id, {"dismiss": True}, by=f"{by}:dismissed"
                )
            return settled.interaction
        except InvalidAnswer as error:
            return str(error)
        except AlreadySettled:  # answered elsewhere (or differently) first
            return await self.backend.get(interaction.id)

    # -- 2026-07-28: InputRequiredResult -------------------------------------------------

    def _input_required(
        self, interaction: Interaction, request: types.ElicitRequestParams, key: str
    ) -> types.InputRequiredResult:
        return types.InputRequiredResult(
            input_requests={key: types.ElicitRequest(params=request)},
            request_state=CallState(interaction.id).dump(),
        )

    def _form(self, interaction: Interaction, problem: str | None) -> types.ElicitRequestFormParams:
        if interaction.ask is not None:
            message, schema = ask_form(interaction.ask, problem)
        else:
            assert interaction.permission is not None
            message, schema = permission_form(interaction.permission)
            if problem:
                message = f"That answer could not be used: {problem}\n\n{message}"
        return types.ElicitRequestFormParams(message=message, requested_schema=schema)

    def _url(self, interaction: Interaction) -> types.ElicitRequestURLParams:
        return types.ElicitRequestURLParams(
            message="The agent needs a secret. Give it in the midturn inbox (sign in there "
            "if asked); it never passes through this chat.",
            url=self.answer_page(interaction),
        )

    def answer_page(self, interaction: Interaction) -> str:
        """The gateway's inbox page for this interaction, with no credential in it: the
        page uses the person's signed-in inbox (an admin sees every session, an answer
        token its own), or asks them to open their sign-in link. (No `session=`: the
        default MCP session has no session record for the session view to open.)"""
        base = self.options.public_url.rstrip("/")
        return f"{base}/#interaction={quote(interaction.id, safe='')}"

    async def modern(
        self, ctx: Ctx, interaction: Interaction, responses: types.InputResponses | None
    ) -> types.CallToolResult | types.InputRequiredResult:
        form, url = _modes(ctx, self.backend.can_settle)
        secret = interaction.ask is not None and has_secret(interaction.ask)
        responses = responses or {}
        if secret:
            answered = responses.get(URL_KEY)
            if url and answered is None:
                return self._input_required(interaction, self._url(interaction), URL_KEY)
            if isinstance(answered, types.ElicitResult) and answered.action != "accept":
                outcome = await self.apply(interaction, answered)
                if isinstance(outcome, Interaction):
                    return settled_result(outcome)
            return await self._bounded(ctx, interaction, secret=True)
        if not form:
            return await self._bounded(ctx, interaction)
        problem: str | None = None
        if FORM_KEY in responses:
            outcome = await self.apply(interaction, responses[FORM_KEY])
            if isinstance(outcome, Interaction):
                if not outcome.pending:
                    return settled_result(outcome)
            else:
                problem = outcome
        return self._input_required(interaction, self._form(interaction, problem), FORM_KEY)

    # -- 2025-06-18 / 2025-11-25: elicitation/create pushed ------------------------------

    async def legacy(self, ctx: Ctx, interaction: Interaction) -> types.CallToolResult:
        form, url = _modes(ctx, self.backend.can_settle)
        secret = interaction.ask is not None and has_secret(interaction.ask)
        if not ctx.session.can_send_request or not (url if secret else form):
            return await self._bounded(ctx, interaction, secret=secret)
        done: list[Interaction] = []

        async def push() -> None:
            pushing = self._push_url if secret else self._push_form
            try:
                got = await pushing(ctx, interaction)
            except MCPError as error:  # the client refused or failed the form: use the inbox
                log.info("elicitation for %s failed (%s); waiting", interaction.id, error)
                got = None
            if got is None or got.pending:
                got = await self.wait(ctx, interaction, self.options.wait_bound_s)
            done.append(got)
            scope.cancel()

        async def elsewhere() -> None:
            done.append(await self.backend.wait(interaction.id, None))
            scope.cancel()

        async with anyio.create_task_group() as group:
            scope = group.cancel_scope
            group.start_soon(push)
            group.start_soon(elsewhere)
        final = done[0]
        if secret and not final.pending:  # tell a 2025-11-25 client the URL is done
            request_id = ctx.request_id
            await ctx.session.send_elicit_complete(interaction.id, related_request_id=request_id)
        if final.pending:
            return pending_result(final, secret=secret)
        return settled_result(final)

    async def _push_form(self, ctx: Ctx, interaction: Interaction) -> Interaction | None:
        problem: str | None = None
        for _ in range(_PUSH_ROUNDS):
            request = self._form(interaction, problem)
            response = await ctx.session.elicit_form(
                request.message, request.requested_schema, related_request_id=ctx.request_id
            )
            outcome = await self.apply(interaction, response)
            if isinstance(outcome, Interaction):
                return outcome
            problem = outcome
        return None  # no sound answer after several tries: the inbox may still answer

    async def _push_url(self, ctx: Ctx, interaction: Interaction) -> Interaction | None:
        request = self._url(interaction)
        response = await ctx.session.elicit_url(
            request.message, request.url, interaction.id, related_request_id=ctx.request_id
        )
        if response.action != "accept":
            outcome = await self.apply(interaction, response)
            return outcome if isinstance(outcome, Interaction) else None
        return None

    # -- waiting for another surface -----------------------------------------------------

    async def wait(self, ctx: Ctx, interaction: Interaction, bound_s: float) -> Interaction:
        """Wait up to `bound_s` for the interaction to settle, reporting progress (when
        the client gave a progress token) every `progress_every_s`."""
        start = time.monotonic()
        current = interaction
        while current.pending:
            elapsed = time.monotonic() - start
            remaining = bound_s - elapsed
            if remaining <= 0:
                break
            await ctx.session.report_progress(elapsed, None, _WAITING)
            step = min(self.options.progress_every_s, remaining)
            current = await self.backend.wait(interaction.id, step)
        return current

    async def _bounded(
        self, ctx: Ctx, interaction: Interaction, *, secret: bool = False
    ) -> types.CallToolResult:
        current = await self.wait(ctx, interaction, self.options.wait_bound_s)
        if current.pending:
            return pending_result(current, secret=secret)
        return settled_result(current)
