"""Reproductions of the source papers' experiments (pure functions returning JSON-able dicts)."""
