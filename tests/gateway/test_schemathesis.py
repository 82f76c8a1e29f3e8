"""Property-based requests from the live `/openapi.json` (schemathesis): valid and
invalid requests for every operation, with random and with real ids. Not one may get a
5xx, and every error must be a JSON `{error, message}` body."""

from __future__ import annotations

from typing import Any

import httpx
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from .conftest import ADMIN_TOKEN, LiveGateway

MAX_EXAMPLES = 12
STREAMS = ("/v1/events", "/v1/sessions/{session_id}/events")


def _real_ids(gateway: LiveGateway) -> dict[str, str]:
    with httpx.Client(
        base_url=gateway.url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}
    ) as h:
        session = h.post("/v1/sessions", json={}).json()
        agent = {"Authorization": f"Bearer {session['agent_token']}"}
        sid = session["session_id"]
        ask = h.post(
            f"/v1/sessions/{sid}/asks",
            json={"tool_input": {"questions": [{"question": "Name?", "kind": "text"}]}},
            headers=agent,
        ).json()
        permission = h.post(
            f"/v1/sessions/{sid}/permissions", json={"tool": "t", "summary": "s"}, headers=agent
        ).json()
    return {
        "session_id": sid,
        "ask_id": ask["interaction"]["id"],
        "permission_id": permission["interaction"]["id"],
    }


def test_no_generated_request_gets_a_server_error(gateway: LiveGateway) -> None:
    schema = schemathesis.openapi.from_url(f"{gateway.url}/openapi.json")
    ids = _real_ids(gateway)
    failures: list[str] = []
    calls = 0

    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path in STREAMS:
            continue
        strategies = []
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            strategies.append(operation.as_strategy(generation_mode=mode))
            real: dict[str, Any] = {}
            if "{session_id}" in operation.path:
                real["session_id"] = ids["session_id"]
            if "{interaction_id}" in operation.path:
                real["interaction_id"] = (
                    ids["permission_id"] if "permission" in operation.path else ids["ask_id"]
                )
            if real:
                strategies.append(operation.as_strategy(generation_mode=mode, path_parameters=real))

        @settings(
            max_examples=MAX_EXAMPLES,
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=st.one_of(strategies))
        def probe(case: Any) -> None:
            nonlocal calls
            if isinstance(case.query, dict) and "wait" in case.query:
                case.query["wait"] = 0  # a long-poll would only hold the run
            response = case.call(
                base_url=gateway.url,
                headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
                timeout=30,
            )
            calls += 1
            label = f"{case.method} {case.formatted_path}"
            if response.status_code >= 500:
                failures.append(f"{label}: {response.status_code} {response.text[:300]}")
            elif response.status_code >= 400:
                body = response.json()
                if not {"error", "message"} <= set(body):
                    failures.append(f"{label}: error body without error/message: {body}")

        probe()

    assert failures == []
    assert calls > 100
