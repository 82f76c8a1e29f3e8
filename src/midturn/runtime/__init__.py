"""The runtime: parking, per-session queue, permissions, turns, events (SPEC §3)."""

from midturn.runtime._runtime import Runtime, Settled

__all__ = ["Runtime", "Settled"]
