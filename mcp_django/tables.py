"""Rows printed by the management commands that list things (``mcp_keys list``,
``management_tokens list``): a header line, then columns aligned under it, so a person reads
them and ``awk``/``cut`` can split them. The last column is left ragged (a name may hold spaces).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime


def when(moment: datetime | None, otherwise: str) -> str:
    """A time cell: ISO 8601 to the second, or ``otherwise`` (``"never"``) for none."""
    return moment.isoformat(timespec="seconds") if moment else otherwise


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """The lines of ``rows`` under ``header``, each column as wide as its widest cell."""
    lines = [list(header), *(list(row) for row in rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    return [
        "  ".join([*(cell.ljust(w) for cell, w in zip(line, widths, strict=False)), line[-1]]).rstrip()
        for line in lines
    ]
