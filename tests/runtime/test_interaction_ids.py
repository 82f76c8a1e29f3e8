"""Interaction ids: unguessable (128 random bits), URL-safe, and in creation order (a
time stamp before the random bits), whatever the clock does."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from tests.runtime.conftest import ASK

from midturn import Runtime
from midturn.runtime import _runtime

DIGITS = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
"""The 64 URL-safe characters in ASCII order, each worth its position."""
HOUR_US = 3600 * 10**6


def number_of(made_id: str) -> int:
    """The 186 bits the 31 characters after `ia_` write."""
    value = 0
    for character in made_id[3:]:
        value = value * 64 + DIGITS.index(character)
    return value


def stamp_of(made_id: str) -> int:
    """The id's stamp: its first 56 bits, microseconds since the epoch."""
    return number_of(made_id) >> (186 - 56)


def random_of(made_id: str) -> int:
    """The 128 bits after the stamp (the last character's 2 low bits are padding)."""
    return (number_of(made_id) >> 2) & (2**128 - 1)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    """Set the wall clock the ids read (`time_ns`) to a number of microseconds; the
    process's last stamp is put back after the test, so no stamp set here outlives it."""
    now = [0]
    monkeypatch.setattr(_runtime, "_last_stamp", 0)
    monkeypatch.setattr(_runtime, "time_ns", lambda: now[0] * 1000 + 999)

    def set_to(microseconds: int) -> None:
        now[0] = microseconds

    return set_to


async def made(runtime: Runtime, count: int, start: int = 0) -> list[str]:
    return [
        (await runtime.ask("s1", ASK, tool_call_id=f"c{start + n}"))[0].id for n in range(count)
    ]


async def test_an_interaction_id_is_a_stamp_and_128_random_bits_in_url_safe_text(
    runtime: Runtime,
) -> None:
    """`ia_` and 31 URL-safe characters (no padding, nothing a URL path or a header must
    escape): 56 bits of the wall clock in microseconds, then 128 random bits, never the
    same twice."""
    before = time.time_ns() // 1000
    ids = await made(runtime, 200)
    after = time.time_ns() // 1000
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"ia_[A-Za-z0-9_-]{30}[-37BFJNRVZcgkosw]", i) for i in ids)
    # the stamp is the clock's (an id a microsecond apart from the last at most each)
    assert all(before <= stamp_of(i) <= after + len(ids) for i in ids)
    # the random part: distinct, and each of its whole 6-bit digits takes all 64 values
    assert len({random_of(i) for i in ids}) == len(ids)
    assert len({i[3:][position] for i in ids for position in range(10, 30)}) == 64


async def test_ids_sort_in_the_order_they_were_made(runtime: Runtime) -> None:
    ids: list[str] = []
    for n in range(150):
        ids += await made(runtime, 1, start=n)
        permission = await runtime.request_permission(
            "s2", tool="Bash", summary=f"run step {n}", turn_id=f"t{n}"
        )
        ids.append(permission.interaction.id)
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


async def test_ids_keep_their_order_when_the_clock_stands_still_or_steps_back(
    runtime: Runtime, clock: Callable[[int], None]
) -> None:
    now = time.time_ns() // 1000
    clock(now)
    standing = await made(runtime, 50)  # one microsecond for all fifty
    clock(now - HOUR_US)  # the clock is set back an hour
    stepped_back = await made(runtime, 50, start=50)
    clock(now + HOUR_US)  # and later runs past the last stamp
    caught_up = await made(runtime, 3, start=100)
    ids = standing + stepped_back + caught_up
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
    # a stamp the clock has already given moves on by one microsecond, never back
    assert [stamp_of(i) for i in standing + stepped_back] == list(range(now, now + 100))
    assert [stamp_of(i) for i in caught_up] == [now + HOUR_US + n for n in range(3)]
