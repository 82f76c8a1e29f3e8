"""The runtime: parking, per-session queue, permissions, turns, events (SPEC §3)."""

from midturn.contract._ports import Parked, Settled
from midturn.runtime._runtime import Runtime
from midturn.runtime._turns import Turn

__all__ = ["Parked", "Runtime", "Settled", "Turn"]
