"""Framework adapters: one thin module per agent framework, each an optional extra
over the asker port."""
