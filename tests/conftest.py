"""Settings for the whole suite: hypothesis runs its examples without a deadline.

Hypothesis's default fails an example that takes over 200 ms, which is a timing assert:
on a loaded machine (CI shares its cores) a rendering example in tests/tui passed alone
and failed with DeadlineExceeded in the full run. The property tests check what comes
out, never how fast."""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("midturn", deadline=None)
settings.load_profile("midturn")
