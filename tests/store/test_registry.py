"""Store backends are open: a scheme registered in code or by a `midturn.stores` entry
point opens through `open_store` like midturn's own (docs/storage.md)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests._entry_points import BACKEND_SOURCE, run_python, write_distribution

import midturn
from midturn.errors import UsageError
from midturn.store import (
    Store,
    load_store_entry_points,
    open_store,
    register_store,
    store_schemes,
    unregister_store,
)


def backend_module() -> dict[str, object]:
    namespace: dict[str, object] = {}
    exec(compile(BACKEND_SOURCE, "scratch_store.py", "exec"), namespace)
    return namespace


@pytest.fixture
def scratch() -> Iterator[dict[str, object]]:
    module = backend_module()
    register_store("scratch", module["factory"])  # type: ignore[arg-type]
    yield module
    if "scratch" in store_schemes():
        unregister_store("scratch")


async def test_a_registered_scheme_opens_a_working_store(scratch: dict[str, object]) -> None:
    assert "scratch" in store_schemes()
    store = open_store("scratch://team-a")
    assert isinstance(store, Store) and store.url == "scratch://team-a"
    assert scratch["OPENED"] == ["scratch://team-a"]
    async with store, midturn.Runtime(store) as runtime:
        interaction, created = await runtime.ask("s", {"questions": [{"question": "Name?"}]})
        settled = await runtime.answer(interaction.id, "billing")
        assert created and settled.interaction.status == "answered"


def test_an_unknown_scheme_names_the_registered_ones_and_how_to_add_one() -> None:
    with pytest.raises(UsageError) as caught:
        open_store("scratch://x")
    message = str(caught.value)
    assert "unknown store scheme 'scratch'" in message
    assert "'memory'" in message and "'sqlite'" in message and "'postgresql'" in message
    assert "register_store(scheme, factory)" in message and "midturn.stores" in message


def test_a_taken_scheme_needs_replace(scratch: dict[str, object]) -> None:
    with pytest.raises(UsageError, match="already registered; pass replace=True"):
        register_store("scratch", scratch["factory"])  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="already registered"):
        register_store("sqlite", scratch["factory"])  # type: ignore[arg-type]
    register_store("scratch", lambda url: open_store("memory://"), replace=True)
    assert scratch["OPENED"] == []
    assert open_store("scratch://y").url == "memory://"


def test_a_factory_that_returns_no_store_is_named() -> None:
    module = backend_module()
    register_store("broken", module["not_a_store"])  # type: ignore[arg-type]
    try:
        with pytest.raises(UsageError, match=r"returned dict, not a midturn\.store\.Store"):
            open_store("broken://x")
    finally:
        unregister_store("broken")


@pytest.mark.parametrize("scheme", ["Memory2", "scratch://", "", "1abc", "a b"])
def test_a_scheme_must_be_a_url_scheme(scheme: str) -> None:
    with pytest.raises(UsageError, match="a store scheme is"):
        register_store(scheme, lambda url: open_store("memory://"))


def test_a_factory_must_be_callable() -> None:
    with pytest.raises(UsageError, match="register_store takes a factory"):
        register_store("scratch", "memory://")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="no store scheme 'scratch' is registered"):
        unregister_store("scratch")


# -- entry points ------------------------------------------------------------------------


def scratch_distribution(root: Path, target: str = "scratch_store:factory") -> Path:
    return write_distribution(
        root,
        "midturn-scratch",
        {"midturn.stores": {"scratch": target}},
        {"scratch_store": BACKEND_SOURCE},
    )


def test_an_entry_point_backend_is_found_lazily_on_first_use(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import asyncio, sys
        import midturn
        midturn.open_store("memory://")
        assert "scratch_store" not in sys.modules  # midturn's own schemes read nothing
        async def main():
            async with midturn.open_store("scratch://x") as store:
                print(type(store).__name__, store.url, await store.last_event_id())
        asyncio.run(main())
        """
    )
    done = run_python(code, scratch_distribution(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["MemoryStore", "scratch://x", "0"]


def test_loading_the_group_registers_the_scheme(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(scratch_distribution(tmp_path)))
    try:
        assert load_store_entry_points(again=True) == ["scratch"]
        assert open_store("scratch://z").url == "scratch://z"
    finally:
        unregister_store("scratch")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("scratch_store:NOT_CALLABLE", "names 3; it must name a factory"),
        ("scratch_store:missing", "failed to load: AttributeError"),
    ],
)
def test_a_broken_entry_point_is_named_with_its_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, message: str
) -> None:
    monkeypatch.syspath_prepend(str(scratch_distribution(tmp_path, target)))
    with pytest.raises(UsageError, match=message) as caught:
        load_store_entry_points(again=True)
    assert "'scratch'" in str(caught.value) and "midturn-scratch" in str(caught.value)
    monkeypatch.undo()
    assert load_store_entry_points(again=True) == []
