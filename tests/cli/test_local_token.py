"""Where `midturn answer` and `ask --gateway` look for the admin token `midturn serve`
wrote, and that it only goes to a gateway on this machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from midturn._cli_tokens import (
    ADMIN_TOKEN_FILE,
    TokenProblem,
    admin_token_places,
    is_local,
    local_admin_token,
)
from midturn.gateway._serve import TOKEN_FILE


def test_the_file_name_is_the_one_serve_writes() -> None:
    assert ADMIN_TOKEN_FILE == TOKEN_FILE


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8765", True),
        ("http://127.8.9.10:1", True),
        ("http://localhost:8765", True),
        ("http://[::1]:8765", True),
        ("127.0.0.1:8765", True),
        ("https://midturn.example.com", False),
        ("http://192.0.2.1:8765", False),
        ("http://localhost.example.com", False),
    ],
)
def test_only_this_machine_counts_as_local(url: str, local: bool) -> None:
    assert is_local(url) is local


def test_midturn_home_comes_before_the_working_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIDTURN_HOME", "/srv/midturn")
    assert admin_token_places() == [Path("/srv/midturn/admin_token"), Path(".midturn/admin_token")]
    monkeypatch.delenv("MIDTURN_HOME")
    assert admin_token_places() == [Path(".midturn/admin_token")]


def test_the_token_is_read_for_a_local_gateway_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MIDTURN_HOME", raising=False)
    assert local_admin_token("http://127.0.0.1:8765") is None  # no file
    (tmp_path / ".midturn").mkdir()
    (tmp_path / ".midturn" / "admin_token").write_text("admin.abc\n")
    found = local_admin_token("http://127.0.0.1:8765")
    assert found is not None and found.token == "admin.abc"
    assert found.origin == "in .midturn/admin_token"
    assert local_admin_token("https://gateway.example.com") is None


def test_an_empty_token_file_is_a_problem_not_a_silent_skip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MIDTURN_HOME", raising=False)
    (tmp_path / ".midturn").mkdir()
    (tmp_path / ".midturn" / "admin_token").write_text("\n")
    with pytest.raises(TokenProblem, match=r"the token in \.midturn/admin_token is empty"):
        local_admin_token("http://localhost:8765")
