"""The shipped test doubles run on the runtime fixtures of tests/runtime (memory and a
SQLite file)."""

from tests.runtime.conftest import runtime, store, store_url  # noqa: F401 - fixtures
