"""`ModelResponse` is exactly the response Starlette builds for a model's JSON."""

from __future__ import annotations

from pydantic import BaseModel
from starlette.responses import Response

from midturn.gateway._views import ModelResponse, WhoAmI


class _Text(BaseModel):
    text: str
    n: float | None = None


def test_a_model_response_is_starlettes_response_of_the_model_s_json() -> None:
    for model, status in (
        (WhoAmI(role="agent", session_id="s_1"), 200),
        (_Text(text='é ✓ \U0001f600 "quoted" </script>', n=1e300), 201),
    ):
        ours = ModelResponse(model, status)
        theirs = Response(
            model.model_dump_json().encode(), status_code=status, media_type="application/json"
        )
        assert (ours.status_code, ours.body, ours.raw_headers) == (
            theirs.status_code,
            theirs.body,
            theirs.raw_headers,
        )
        assert ours.background is None and ours.headers == theirs.headers
