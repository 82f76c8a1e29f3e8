"""The runtime: parking, per-session queue, permissions, turns, events (SPEC §3)."""

from midturn.runtime._runtime import Runtime, Settled
from midturn.runtime._subscribe import Subscription, SubscriptionLagged
from midturn.runtime._turns import Turn

__all__ = ["Runtime", "Settled", "Subscription", "SubscriptionLagged", "Turn"]
