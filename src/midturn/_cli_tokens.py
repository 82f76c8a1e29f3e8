"""Where the `midturn` command finds its tokens, so none has to be on the command line.

A command line is visible to every user of the machine (`ps`, `/proc/<pid>/cmdline`), so
each command also reads its token from a file (`--token-file FILE`, mode 0600 advised)
or the environment. `--token T` still works, for scripts that use it today.

- `midturn serve`: `--token`, `--token-file`, `MIDTURN_TOKEN`, else the data folder's
  `admin_token` (generated on the first start).
- `midturn ask --gateway`: `--token`, `--token-file`, `MIDTURN_AGENT_TOKEN`,
  `MIDTURN_TOKEN`. An admin token creates a session for the ask; an agent token asks in
  its own session.
- `midturn answer`: `--token`, `--token-file`, the answer URL, `MIDTURN_ANSWER_TOKEN`,
  `MIDTURN_TOKEN`. A file or variable may hold a bare token or a whole answer URL
  (`http://host:port/#token=…`), which then names the gateway too.
- Last, for `ask --gateway` and `answer`, when the gateway is on this machine (a
  loopback address or `localhost`): the admin token `midturn serve` wrote,
  `$MIDTURN_HOME/admin_token` then `./.midturn/admin_token` (`local_admin_token`). It
  is never sent to a gateway elsewhere: that one has its own token.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "ADMIN_TOKEN_FILE",
    "Found",
    "TokenProblem",
    "admin_token_places",
    "find_token",
    "from_answer_url",
    "is_local",
    "local_admin_token",
    "read_token_file",
]

ADMIN_TOKEN_FILE = "admin_token"
"""The file in the data folder where `midturn serve` keeps its admin token."""


class TokenProblem(Exception):
    """A token source that is named but unusable: a usage error with this message."""


@dataclass(frozen=True, slots=True)
class Found:
    """A token, where it came from (for messages; never the token itself), and the
    gateway named alongside it when it came as an answer URL."""

    token: str
    origin: str
    gateway: str | None = None


def from_answer_url(url: str) -> tuple[str, str | None]:
    """`http://host:port/#token=T&session=S` → (`http://host:port`, T)."""
    parts = urlsplit(url)
    token = parse_qs(parts.fragment).get("token", [None])[0]
    return f"{parts.scheme}://{parts.netloc}", token


def _read(value: str, origin: str) -> Found:
    """A bare token, or an answer URL carrying one."""
    value = value.strip()
    if value.startswith(("http://", "https://")):
        gateway, token = from_answer_url(value)
        if not token:
            raise TokenProblem(f"the URL {origin} has no #token=…; give the whole answer URL")
        return Found(token, origin, gateway)
    if not value or any(char.isspace() for char in value):
        raise TokenProblem(
            f"the token {origin} is empty or has spaces in it; it should be the token alone "
            "(or a whole answer URL)"
        )
    return Found(value, origin)


def read_token_file(path: str) -> Found:
    """The token (or answer URL) in `path`, its surrounding whitespace dropped."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise TokenProblem(f"cannot read the token file {path}: {error.strerror}") from error
    except UnicodeDecodeError as error:
        raise TokenProblem(f"the token file {path} is not UTF-8 text") from error
    return _read(text, f"in {path}")


def find_token(
    token: str | None, token_file: str | None, variables: tuple[str, ...]
) -> Found | None:
    """The first token found: `--token`, `--token-file`, then each variable in order."""
    if token and token_file:
        raise TokenProblem("give --token or --token-file, not both")
    if token:
        return _read(token, "given with --token")
    if token_file:
        return read_token_file(token_file)
    for name in variables:
        value = os.environ.get(name, "").strip()
        if value:
            return _read(value, f"from {name}")
    return None


def is_local(gateway: str) -> bool:
    """Whether the gateway URL names this machine: a loopback address or `localhost`."""
    host = urlsplit(gateway if "//" in gateway else f"http://{gateway}").hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def admin_token_places() -> list[Path]:
    """Where `midturn serve` leaves its admin token when nothing else gave one, in the
    order looked at: `$MIDTURN_HOME/admin_token`, then `./.midturn/admin_token`."""
    places = []
    home = os.environ.get("MIDTURN_HOME", "").strip()
    if home:
        places.append(Path(home) / ADMIN_TOKEN_FILE)
    places.append(Path(".midturn") / ADMIN_TOKEN_FILE)
    return places


def local_admin_token(gateway: str) -> Found | None:
    """The admin token `midturn serve` wrote, for a gateway on this machine; None for
    a gateway elsewhere or when no such file exists. A file there that holds no token
    is a problem worth saying, not a silent fall-through."""
    if not is_local(gateway):
        return None
    for path in admin_token_places():
        if path.is_file():
            return read_token_file(str(path))
    return None
