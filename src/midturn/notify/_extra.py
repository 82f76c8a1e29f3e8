"""The `notify` extra: `standardwebhooks` is imported only when a delivery is signed."""

from __future__ import annotations

from types import ModuleType

__all__ = ["NOTIFY_INSTALL", "standardwebhooks"]

NOTIFY_INSTALL = "pip install 'midturn[notify]'"


def standardwebhooks() -> ModuleType:
    """The `standardwebhooks` module, or an ImportError that says how to install it."""
    try:
        import standardwebhooks as module
    except ImportError as error:
        raise ImportError(
            f"signed webhooks need the standardwebhooks package: {NOTIFY_INSTALL}"
        ) from error
    return module
