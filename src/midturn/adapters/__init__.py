"""Framework adapters: one thin module per framework, each an optional extra, each a
wrapper over the asker port (docs/ports.md). Nothing in the core imports them."""
