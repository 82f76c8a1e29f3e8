"""The gateway's listening sockets, bound before uvicorn starts: when the host and port
cannot be listened on, a person reads why, with the fix, instead of uvicorn's
`[Errno 98]` log line.

`check_port` tries first, before the gateway writes anything (its admin token, the
store); `bind_sockets` binds for real just before uvicorn starts, the way asyncio's
`create_server` would (SO_REUSEADDR on POSIX, IPv6 sockets IPv6-only, one socket per
address the host resolves to), and uvicorn serves on those sockets. So a port taken in
between is told in the same words, never as uvicorn's errno line.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
from pathlib import Path

from midturn.errors import UsageError

__all__ = ["PortUnavailable", "bind_sockets", "check_port", "port_holder"]


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


def bind_sockets(host: str, port: int) -> list[socket.socket]:
    """Sockets bound to every address of `host` on `port` (0: a free port), not yet
    listening; `PortUnavailable` with the fix when one cannot be bound."""
    bound: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in _addresses(host, port):
            sock = socket.socket(family, kind, proto)
            bound.append(sock)
            _prepare(sock, family)
            try:
                sock.bind(address)
            except OSError as error:
                raise PortUnavailable(_explain(host, port, error)) from error
    except BaseException:
        for sock in bound:
            sock.close()
        raise
    return bound


def _prepare(sock: socket.socket, family: int) -> None:
    if os.name == "posix":
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6 and hasattr(socket, "IPPROTO_IPV6"):
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)


def _addresses(host: str, port: int) -> list[tuple[int, int, int, str, tuple[object, ...]]]:
    """Each distinct address to listen on, as asyncio would resolve `host`."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise PortUnavailable(
            f"cannot listen on {host!r}: it is not an address or a name this machine can "
            f"resolve ({error.strerror}). Give --host an address of this machine, such as "
            "127.0.0.1 (this machine only) or 0.0.0.0 (every network interface)."
        ) from error
    unique: list[tuple[int, int, int, str, tuple[object, ...]]] = []
    for entry in found:
        if entry not in unique:
            unique.append(entry)
    return unique


def _bind_error(host: str, port: int) -> OSError | None:
    """What binding every address of `host` on `port` fails with, or None."""
    for family, kind, proto, _, address in _addresses(host, port):
        with socket.socket(family, kind, proto) as probe:
            _prepare(probe, family)
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
