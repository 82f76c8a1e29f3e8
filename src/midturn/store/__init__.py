"""Storage: one `Store` interface, backends chosen by URL (docs/storage.md).

What a backend outside midturn needs is here: the `Store` base and the values its
methods take and return. Register it with `register_store(scheme, factory)` or a
`midturn.stores` entry point; docs/storage.md walks through it.
"""

from __future__ import annotations

from midturn._public import publish as _publish
from midturn.contract._interactions import (
    Event,
    Interaction,
    InteractionKind,
    InteractionStatus,
    NewEvent,
    PermissionDecision,
)
from midturn.contract._models import AskResult
from midturn.store._base import (
    EventListener,
    Pruned,
    QueuedEvents,
    SessionRecord,
    Settle,
    Store,
)
from midturn.store._schemes import (
    ENTRY_POINT_GROUP,
    StoreFactory,
    load_store_entry_points,
    open_store,
    register_store,
    store_schemes,
    unregister_store,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "AskResult",
    "Event",
    "EventListener",
    "Interaction",
    "InteractionKind",
    "InteractionStatus",
    "NewEvent",
    "PermissionDecision",
    "Pruned",
    "QueuedEvents",
    "SessionRecord",
    "Settle",
    "Store",
    "StoreFactory",
    "load_store_entry_points",
    "open_store",
    "register_store",
    "store_schemes",
    "unregister_store",
]

_publish("midturn.store", globals(), __all__)
