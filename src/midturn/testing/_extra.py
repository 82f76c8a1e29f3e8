"""The `testing` extra's packages: import one, or fail saying how to install it."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["INSTALL_HINT", "missing", "require"]

INSTALL_HINT = 'pip install "midturn[testing]"'


def require(module: str, what: str) -> ModuleType:
    """Import `module` (a package of the `testing` extra) for `what`, or raise an
    ImportError that names the extra."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise missing(module, what) from error


def missing(module: str, what: str) -> ImportError:
    """The error for `what` when `module` (of the `testing` extra) is not installed."""
    return ImportError(
        f"{what} needs the {module!r} package, which midturn does not install by "
        f"default: {INSTALL_HINT}"
    )
