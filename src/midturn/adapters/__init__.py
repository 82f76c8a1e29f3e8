"""Framework adapters (docs/adapters/): one thin module per agent framework, each an
optional extra, each a wrapper over the asker port (`midturn.Asker`). Nothing in
midturn's core imports them."""
