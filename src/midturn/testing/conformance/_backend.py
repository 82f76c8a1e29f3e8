"""What a backend's own tests hand the conformance suite: a `Backend`, a factory of store
objects on one test's fresh data and the capabilities the backend declares."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from midturn.errors import UsageError
from midturn.store import Store
from midturn.testing._extra import missing

try:
    import pytest
    import pytest_asyncio
except ImportError as error:
    raise missing(error.name or "pytest", "the store conformance suite") from error

__all__ = ["Backend", "BackendFixtures"]


@dataclass(frozen=True)
class Backend:
    """One backend under test, on a fresh, empty data set for one test.

    - `new_store()`: a new, unopened store object on this test's data (each call another
      object on the same data; the suite opens and closes them itself).
    - `survives_reopen`: a store object opened after another one closed sees everything
      the first wrote (a file, a database; not `memory://`).
    - `shares_database`: two store objects open at once on the same data see each
      other's writes and race safely, as two processes or replicas would (SQLite on one
      file, PostgreSQL on one schema). Turns on "two stores on one database".
    - `raw_bytes()`: everything the backend wrote for this test, as bytes, to check no
      secret value reaches storage; None when it writes nothing outside the process.
    """

    new_store: Callable[[], Store]
    name: str = "store"
    survives_reopen: bool = False
    shares_database: bool = False
    raw_bytes: Callable[[], Awaitable[bytes]] | None = None

    def require(self, capability: str, why: str) -> None:
        """Skip the calling test unless the backend declares `capability`."""
        if not getattr(self, capability):
            pytest.skip(f"the {self.name} backend does not declare {capability}: {why}")


class BackendFixtures:
    """The suite's fixtures: `backend` (yours to define) and `store`, an opened, empty
    store of it."""

    pytestmark: ClassVar[list[Any]] = [pytest.mark.asyncio]

    @pytest.fixture
    def backend(self) -> Backend:
        raise UsageError(
            "a StoreConformance subclass must define a `backend` fixture returning a "
            "midturn.testing.conformance.Backend (docs/testing.md#the-store-conformance-suite)"
        )

    @pytest_asyncio.fixture
    async def store(self, backend: Backend) -> AsyncIterator[Store]:
        async with backend.new_store() as opened:
            yield opened
