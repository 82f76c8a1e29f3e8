"""Before uvicorn binds: can this host and port be listened on? If not, say why in a
person's words, with the fix, instead of uvicorn's `[Errno 98]` log line.

The check binds the address the way uvicorn will (SO_REUSEADDR on POSIX, each address
the host resolves to) and closes it again at once. Another process could take the port
in the moment between, so uvicorn's own failure stays possible; it is just rare.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
from pathlib import Path

from midturn.errors import UsageError

__all__ = ["PortUnavailable", "check_port", "port_holder"]


class PortUnavailable(UsageError):
    """The gateway cannot listen on the host and port it was given."""


def check_port(host: str, port: int) -> None:
    """Raise `PortUnavailable` with the fix when `host:port` cannot be listened on.
    Port 0 (any free port) is not checked."""
    if port == 0:
        return
    error = _bind_error(host, port)
    if error is not None:
        raise PortUnavailable(_explain(host, port, error)) from error


def _bind_error(host: str, port: int) -> OSError | None:
    """What binding every address of `host` on `port` fails with, or None."""
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise PortUnavailable(
            f"cannot listen on {host!r}: it is not an address or a name this machine can "
            f"resolve ({error.strerror}). Give --host an address of this machine, such as "
            "127.0.0.1 (this machine only) or 0.0.0.0 (every network interface)."
        ) from error
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            if os.name == "posix":
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as error:
                return error
    return None


def _free_port_near(host: str, port: int) -> int | None:
    """The first port after `port` (up to 20 on) that can be listened on now."""
    ports = range(port + 1, min(port + 21, 65536))
    return next((p for p in ports if _bind_error(host, p) is None), None)


def _explain(host: str, port: int, error: OSError) -> str:
    near = _free_port_near(host, port) if error.errno == errno.EADDRINUSE else None
    if error.errno == errno.EADDRINUSE:
        free = f"midturn serve --port {near}" if near is not None else "midturn serve --port 0"
        holder = port_holder(port)
        if holder is None:
            who = (
                "another program is listening there (on Linux, `ss -ltnp 'sport = :"
                f"{port}'` shows which)"
            )
        elif "midturn" in holder[1]:
            who = (
                f"another midturn gateway is listening there (pid {holder[0]}: {holder[1]}), "
                f"probably one you started earlier: its inbox is at http://{_browsable(host)}:"
                f"{port}/"
            )
        else:
            who = f"it is held by pid {holder[0]} ({holder[1]})"
        return (
            f"port {port} on {host} is already in use: {who}. Stop that program, or start "
            f"this gateway on another port: `{free}` is free now (`--port 0` picks any "
            "free port)."
        )
    if error.errno == errno.EACCES:
        return (
            f"port {port} on {host} needs privileges this user does not have (ports below "
            f"1024 usually do). Use a port from 1024 up: `midturn serve --port 8765`."
        )
    if error.errno == errno.EADDRNOTAVAIL:
        return (
            f"{host} is not an address of this machine, so nothing can listen on it. Give "
            "--host an address of this machine, such as 127.0.0.1 (this machine only) or "
            "0.0.0.0 (every network interface)."
        )
    return (
        f"cannot listen on {host} port {port}: {error.strerror or error}. Try another "
        "port (`--port 0` picks a free one) or another --host."
    )


def _browsable(host: str) -> str:
    """A host a browser on this machine can open: every interface is reached locally."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def port_holder(port: int) -> tuple[int, str] | None:
    """The pid and command line of a process of this user listening on TCP `port`,
    when Linux's /proc says so cheaply; else None."""
    inodes = _listening_inodes(port)
    if not inodes:
        return None
    proc = Path("/proc")
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (entry / "fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:[") and target[8:-1] in inodes:
                    raw = (entry / "cmdline").read_bytes().decode(errors="replace")
                    command = " ".join(raw.replace("\0", " ").split())
                    if len(command) > 80:
                        command = command[:79] + "…"
                    return int(entry.name), command or "?"
    return None


def _listening_inodes(port: int) -> set[str]:
    """Socket inodes listening on `port`, from /proc/net/tcp and tcp6 (state 0A)."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if len(fields) > 9 and fields[3] == "0A":
                    local_port = int(fields[1].rsplit(":", 1)[1], 16)
                    if local_port == port:
                        found.add(fields[9])
    return found
