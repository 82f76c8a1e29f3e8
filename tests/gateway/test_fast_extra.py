"""midturn[fast] (httptools): used when installed, h11 otherwise; uvloop only when asked
for; a clear message when one is asked for by name but missing. (`dev` installs both, so
the "installed" half never skips; the "missing" half hides the module.)"""

from __future__ import annotations

import sys

import pytest
import uvloop

from midturn.errors import UsageError
from midturn.gateway._protocol import JsonErrorsH11Protocol, http_protocol
from midturn.gateway._protocol_httptools import JsonErrorsHttpToolsProtocol
from midturn.gateway._serve import _loop_factory


def test_installed_httptools_is_the_default_and_uvloop_only_by_name() -> None:
    assert http_protocol() is JsonErrorsHttpToolsProtocol
    assert http_protocol("h11") is JsonErrorsH11Protocol
    assert _loop_factory("asyncio") is None
    assert _loop_factory("uvloop") is uvloop.new_event_loop


def test_missing_auto_falls_back_and_a_named_one_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import now fails
    monkeypatch.setitem(sys.modules, "httptools", None)
    monkeypatch.delitem(sys.modules, "midturn.gateway._protocol_httptools")
    monkeypatch.delitem(sys.modules, "uvicorn.protocols.http.httptools_impl", raising=False)
    assert http_protocol("auto") is JsonErrorsH11Protocol
    with pytest.raises(UsageError, match=r"midturn\[fast\]"):
        http_protocol("httptools")
    with pytest.raises(UsageError, match="pip install uvloop"):
        _loop_factory("uvloop")


def test_an_unknown_name_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="h11"):
        http_protocol("hyper")
    with pytest.raises(UsageError, match="asyncio"):
        _loop_factory("trio")
