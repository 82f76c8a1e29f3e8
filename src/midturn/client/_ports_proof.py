"""Static proof that the implementations fit the ports (docs/ports.md): mypy (strict,
run by the checks) rejects this module if `Runtime` or `AsyncClient` stops matching
`Asker`/`Answerer`, or `Client` stops matching `SyncAsker`/`SyncAnswerer`, in any
method name, signature or return type. Nothing imports it at run time."""

from __future__ import annotations

from midturn.client import AsyncClient, Client
from midturn.contract import Answerer, Asker, SyncAnswerer, SyncAsker
from midturn.runtime import Runtime

__all__: list[str] = []


def _runtime_fits(runtime: Runtime) -> tuple[Asker, Answerer]:
    return runtime, runtime


def _async_client_fits(client: AsyncClient) -> tuple[Asker, Answerer]:
    return client, client


def _client_fits(client: Client) -> tuple[SyncAsker, SyncAnswerer]:
    return client, client
