"""The orders this example knows (a real project would have models)."""

ORDERS = {
    1001: {"status": "shipped", "carrier": "PostNord"},
    1002: {"status": "packing", "carrier": None},
}
