"""`check_port`'s messages: each reason a port cannot be listened on has its own sentence
with the fix (docs/terminal.md#midturn-serve)."""

from __future__ import annotations

import errno
import os
import socket

import pytest

from midturn.gateway._port import PortUnavailable, _explain, check_port, port_holder


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
