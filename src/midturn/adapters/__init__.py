"""Framework adapters: one thin module per agent framework, each an optional extra
(`pip install "midturn[<framework>]"`), each a wrapper over the asker port
(`midturn.Asker`), so it runs in-process (`midturn.Runtime`) or against a gateway
(`midturn.AsyncClient`) unchanged. Nothing in midturn's core imports them."""
