"""midturn.tui and midturn.testing export exactly their documented names."""

from __future__ import annotations

import midturn.testing
import midturn.tui


def test_every_public_name_is_exported_and_sorted() -> None:
    for module in (midturn.tui, midturn.testing):
        public = {name for name in vars(module) if not name.startswith("_")}
        public -= {"annotations"}
        public |= set(getattr(module, "_LAZY", {}))  # loaded on first use
        assert set(module.__all__) == public - {
            n for n in public if isinstance(getattr(module, n), type(midturn))
        }
        assert module.__all__ == sorted(module.__all__)
