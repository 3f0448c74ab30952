"""Collateral each zoo member is blamed for today only because a test blames every
id it cites, or checks several rules at once (issue 10 converted those tests: nothing is pending; a
member's real consequences are its ``collateral_ok``).

tests/zoo/kills.py fails on collateral not listed here; regenerate with
``python tools/kill_matrix.py --update-pending`` after tests were converted (the
diff should only remove ids).
"""

PENDING: dict[str, frozenset[str]] = {}
