"""``harness sizing search``: the cheapest configurations across clouds that meet a requirement."""
