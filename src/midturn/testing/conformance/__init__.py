"""The store conformance suite, shipped: every test midturn's own memory, SQLite and
PostgreSQL stores pass, for a store backend of your own (langgraph's checkpoint
conformance pattern). Subclass `StoreConformance` in a test module, name the class
`Test...`, and give it a `backend` fixture:

    import pytest
    from midturn.store import open_store
    from midturn.testing.conformance import Backend, StoreConformance

    class TestMyStore(StoreConformance):
        @pytest.fixture
        def backend(self, tmp_path):
            url = f"mystore://{tmp_path}/data"
            return Backend(lambda: open_store(url), name="mystore",
                           survives_reopen=True, shares_database=True)

Every test gets a fresh, empty data set from your fixture (yield and clean up after, if
it needs that). What a backend declares decides which parts run: `survives_reopen` (its
data outlives a store object), `shares_database` ("two stores on one database": two
objects open at once race parks and settles), `raw_bytes` (read back what was written, to
check no secret reaches storage); a part a backend does not declare is skipped, saying
why. Needs pytest and pytest-asyncio (`pip install "midturn[testing]"`).
"""

from midturn._public import publish as _publish
from midturn.testing.conformance._backend import Backend, BackendFixtures
from midturn.testing.conformance._input import InputConformance
from midturn.testing.conformance._lifecycle import LifecycleConformance
from midturn.testing.conformance._log import LogConformance
from midturn.testing.conformance._outbox import OutboxConformance
from midturn.testing.conformance._queue import QueueConformance
from midturn.testing.conformance._retention import RetentionConformance
from midturn.testing.conformance._shared import SharedDatabaseConformance
from midturn.testing.conformance._turns import TurnConformance

__all__ = [
    "Backend",
    "BackendFixtures",
    "InputConformance",
    "LifecycleConformance",
    "LogConformance",
    "OutboxConformance",
    "QueueConformance",
    "RetentionConformance",
    "SharedDatabaseConformance",
    "StoreConformance",
    "TurnConformance",
]


class StoreConformance(
    BackendFixtures,
    LifecycleConformance,
    InputConformance,
    LogConformance,
    QueueConformance,
    TurnConformance,
    RetentionConformance,
    SharedDatabaseConformance,
    OutboxConformance,
):
    """The whole suite. Subclass it as `Test<YourStore>` with a `backend` fixture that
    returns a `Backend`; each part is also a class of its own, to run one alone (mix it
    with `BackendFixtures`)."""


_publish("midturn.testing.conformance", globals(), __all__)
