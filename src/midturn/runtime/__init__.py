"""The runtime: parking, per-session queue, permissions, turns, events (docs/runtime.md)."""

from midturn._public import publish as _publish
from midturn.contract._ports import Parked, Settled
from midturn.runtime._runtime import Runtime
from midturn.runtime._subscribe import Subscription, SubscriptionLagged
from midturn.runtime._turns import Turn

__all__ = ["Parked", "Runtime", "Settled", "Subscription", "SubscriptionLagged", "Turn"]

_publish("midturn.runtime", globals(), __all__)
