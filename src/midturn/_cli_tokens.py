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
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

__all__ = ["Found", "TokenProblem", "find_token", "from_answer_url", "read_token_file"]


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
        raise TokenProblem(f"{origin} does not hold one token (it is empty or has spaces)")
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
