"""Public homes: a class or function reports the module users import it from.

The rule: a name in `midturn.__all__` reports `midturn` (`midturn.Ask`, in a repr, a
traceback, the docs); any other public name reports the public package that defines and
exports it (`midturn.store.SessionRecord`, `midturn.contract.NewEvent`,
`midturn.contract.register_dialect`), never the private module or the subpackage it is
written in. A package that re-exports another's name (`midturn.store.NewEvent`) leaves
its home alone. Each public package calls `publish` on its `__all__` when it is imported.
Only midturn's own classes and functions are touched, never constants, aliases or
anything defined elsewhere.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterable, Mapping

__all__ = ["publish"]


def publish(package: str, namespace: Mapping[str, object], names: Iterable[str]) -> None:
    """Set `__module__` of each class or function `namespace[name]` to its public home."""
    top = getattr(sys.modules.get("midturn"), "__all__", ())
    for name in names:
        value = namespace.get(name)
        if not (isinstance(value, type) or inspect.isfunction(value)):
            continue
        current = getattr(value, "__module__", "") or ""
        if current != "midturn" and not current.startswith("midturn."):
            continue
        if package == "midturn" or name in top:
            value.__module__ = "midturn"
        elif _private(current) or current.startswith(package + "."):
            value.__module__ = package


def _private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))
