"""Registries by name, open to other packages through entry points.

A `Registry` holds what midturn ships, what code registered in this process, and what the
installed packages offer under one entry point group (`midturn.dialects`,
`midturn.stores`). The group is read lazily, once: the first time a name is not known
yet, or the whole list is needed (listing, `dialect="auto"`, a registration). A name
midturn ships never needs the group read, so `import midturn` and the common paths do no
metadata scan.

An entry point never replaces a name that exists: a clash is a `UsageError` naming both,
and so is an entry point that fails to load; the group is then read again next time, so
the error repeats until the installation is fixed rather than a dialect or a backend
silently going missing. Code replaces a name on purpose, with `replace=True`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from importlib import metadata
from typing import Generic, TypeVar

from midturn.errors import UsageError

__all__ = ["Registry", "load_entry_points"]

T = TypeVar("T")


def load_entry_points(group: str) -> dict[str, object]:
    """Every entry point of `group` that the installed distributions declare, loaded:
    name → the object it names, in name order. `UsageError` naming the entry point and
    its distribution when one fails to import, or two share a name."""
    return {name: loaded for name, (loaded, _) in _load(group).items()}


def _load(group: str) -> dict[str, tuple[object, str]]:
    loaded: dict[str, tuple[object, str]] = {}
    origin: dict[str, str] = {}
    for point in sorted(metadata.entry_points(group=group), key=lambda p: (p.name, p.value)):
        where = _origin(point)
        if point.name in loaded:
            if origin[point.name] == where:
                continue  # one distribution seen twice on sys.path
            raise UsageError(
                f"two {group!r} entry points are named {point.name!r} ({origin[point.name]} "
                f"and {where}); uninstall one of them"
            )
        try:
            loaded[point.name] = (point.load(), where)
        except Exception as error:
            raise UsageError(
                f"the {group!r} entry point {point.name!r} ({where}) failed to load: "
                f"{type(error).__name__}: {error}; fix or uninstall that package"
            ) from error
        origin[point.name] = where
    return loaded


def _origin(point: metadata.EntryPoint) -> str:
    dist = getattr(point, "dist", None)
    name = getattr(dist, "name", None) or "an unknown distribution"
    return f"{point.value} from {name}"


class Registry(Generic[T]):
    """Names to values of one kind (`noun`: "dialect", "store scheme").

    `adopt(name, loaded)` turns what an entry point names into a value, or raises
    `UsageError` saying what it should have been."""

    def __init__(self, group: str, noun: str, adopt: Callable[[str, object], T]) -> None:
        self.group = group
        self.noun = noun
        self._adopt = adopt
        self._values: dict[str, T] = {}
        self._from_entry_points: set[str] = set()
        self._loaded = False
        self._lock = threading.RLock()

    # -- reading ------------------------------------------------------------------------

    def get(self, name: str) -> T | None:
        """The value under `name`, reading the entry points first if it is unknown."""
        found = self._values.get(name)
        if found is None and not self._loaded:
            self.load()
            found = self._values.get(name)
        return found

    def names(self) -> list[str]:
        """Every name, entry points included, in registration order."""
        self.load()
        return list(self._values)

    def view(self) -> Mapping[str, T]:
        """A read-only mapping that stays current (and reads the entry points when used)."""
        return _View(self)

    # -- changing -----------------------------------------------------------------------

    def ship(self, name: str, value: T) -> None:
        """Add one of midturn's own values (at import; no entry point is read)."""
        self._values[name] = value

    def add(self, name: str, value: T, *, replace: bool = False) -> None:
        """Register `value` under `name`; an existing name needs `replace=True`."""
        with self._lock:
            self.load()
            if name in self._values and not replace:
                raise UsageError(
                    f"a {self.noun} {name!r} is already registered; pass replace=True to "
                    "replace it, or choose another name"
                )
            self._values[name] = value
            self._from_entry_points.discard(name)

    def remove(self, name: str) -> T:
        """Unregister `name` and return what it was; `UsageError` when it is unknown."""
        with self._lock:
            self.load()
            if name not in self._values:
                raise UsageError(f"no {self.noun} {name!r} is registered; {self.known()}")
            value = self._values.pop(name)
            self._from_entry_points.discard(name)
        return value

    def load(self, *, again: bool = False) -> list[str]:
        """Read the entry point group (once, or `again`: after installing a package in a
        running process, or in a test) and register what it names. Returns the names it
        added or refreshed."""
        with self._lock:
            if self._loaded and not again:
                return []
            added: dict[str, T] = {}
            for name, (loaded, where) in _load(self.group).items():
                if name in self._values and name not in self._from_entry_points:
                    raise UsageError(
                        f"the {self.group!r} entry point {name!r} ({where}) names a "
                        f"{self.noun} that is already registered; a package cannot replace "
                        "it: rename the entry point, or register it in code with replace=True"
                    )
                try:
                    added[name] = self._adopt(name, loaded)
                except UsageError as error:
                    raise UsageError(f"{error} ({where})") from None
            self._values.update(added)
            self._from_entry_points.update(added)
            self._loaded = True
        return list(added)

    def known(self) -> str:
        """'registered: a, b; ...' for an error message."""
        names = ", ".join(repr(name) for name in self._values)
        return f"registered: {names}"


class _View(Mapping[str, T]):
    def __init__(self, registry: Registry[T]) -> None:
        self._registry = registry

    def __getitem__(self, name: str) -> T:
        found = self._registry.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry.names())

    def __len__(self) -> int:
        return len(self._registry.names())

    def __repr__(self) -> str:
        return f"{{{', '.join(repr(name) for name in self._registry.names())}}}"
