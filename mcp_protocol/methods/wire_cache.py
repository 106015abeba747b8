"""The wire form of each list, cached per snapshot, list and protocol revision (``listing.py``
serves pages from it; the ``Server`` holds one). Cached item dicts are shared between responses,
so nothing downstream may mutate them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

MAX_VIEWS = 64  # snapshot views cached at once: one per grant in use (auth/scopes.py)
MAX_PAGES = 64  # encoded pages kept per list (a long list paged through: a few each)
Entry = tuple[list[dict[str, Any]], list[str], dict[str, int], dict[tuple[int, int, str | None], bytes]]


class WireCache:
    def __init__(self) -> None:
        self._base: str | None = None
        self._lists: dict[tuple[str, str, str], Entry] = {}

    def get(
        self,
        snapshot_version: str,
        kind: str,
        version: str,
        items: Sequence[T],
        key: Callable[[T], str],
        to_wire: Callable[[T, str], dict[str, Any]],
    ) -> Entry:
        # A scoped view's version is "<snapshot>~<grant>": a new snapshot drops every view's lists.
        base = snapshot_version.partition("~")[0]
        if base != self._base or len(self._lists) >= MAX_VIEWS * 8:
            self._lists = {}
            self._base = base
        entry = self._lists.get((snapshot_version, kind, version))
        if entry is None:
            keys = [key(item) for item in items]
            entry = ([to_wire(item, version) for item in items], keys, {k: i for i, k in enumerate(keys)}, {})
            self._lists[(snapshot_version, kind, version)] = entry
        return entry
