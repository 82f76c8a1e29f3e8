"""`check_port`'s messages: each reason a port cannot be listened on has its own sentence
with the fix (docs/terminal.md#midturn-serve)."""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path

import pytest

from midturn.gateway import run_server
from midturn.gateway._port import PortUnavailable, _explain, bind_sockets, check_port, port_holder


def test_port_zero_and_a_free_port_pass() -> None:
    check_port("127.0.0.1", 0)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    check_port("127.0.0.1", free)


def test_a_listening_port_names_this_process_as_its_holder() -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        assert port_holder(port) is not None
        assert port_holder(port)[0] == os.getpid()  # type: ignore[index]
        with pytest.raises(PortUnavailable) as raised:
            check_port("127.0.0.1", port)
    assert f"port {port} on 127.0.0.1 is already in use: it is held by pid {os.getpid()}" in str(
        raised.value
    )


def test_a_privileged_port_says_to_use_one_from_1024() -> None:
    text = _explain("127.0.0.1", 80, OSError(errno.EACCES, "Permission denied"))
    assert "needs privileges" in text and "--port 8765" in text


def test_any_other_failure_keeps_its_reason_and_the_way_out() -> None:
    text = _explain("127.0.0.1", 9000, OSError(errno.EINVAL, "Invalid argument"))
    assert text.startswith("cannot listen on 127.0.0.1 port 9000: Invalid argument.")
    assert "--port 0" in text


def test_bound_sockets_hold_the_port() -> None:
    sockets = bind_sockets("127.0.0.1", 0)
    try:
        assert len(sockets) == 1
        sockets[0].listen()
        with pytest.raises(PortUnavailable, match="already in use"):
            check_port("127.0.0.1", sockets[0].getsockname()[1])
    finally:
        for sock in sockets:
            sock.close()


async def test_a_port_taken_after_the_check_is_still_told_in_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race: free at `check_port`, taken by the time the gateway binds."""
    monkeypatch.setattr("midturn.gateway._serve.check_port", lambda host, port: None)
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        with pytest.raises(PortUnavailable, match=f"port {port} on 127.0.0.1 is already in use"):
            await run_server(
                f"sqlite:///{tmp_path / 'm.db'}",
                "127.0.0.1",
                port,
                "admin-token-0123456789",
                announce=None,
            )
