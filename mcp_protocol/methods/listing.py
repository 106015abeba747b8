"""Paginated list results, with the wire form of each list cached per snapshot and revision.

``tools/list`` is the hottest method: its items are shaped once per (snapshot version, list,
protocol revision) and reused; a new snapshot version drops the cache. Cached item dicts are
shared between responses, so nothing downstream may mutate them (results are only serialized).
Each page's JSON text is cached too (``jsonrpc.EncodedResult``): a repeated listing encodes only
its response's ``id``. A scoped view's snapshot version names its grant, so a page's text is
per snapshot and per grant.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..jsonrpc import EncodedResult
from .base import Call

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


def list_page(
    call: Call,
    kind: str,
    result_key: str,
    items: Sequence[T],
    key: Callable[[T], str],
    to_wire: Callable[[T, str], dict[str, Any]],
) -> dict[str, Any]:
    wire, keys, positions, pages = call.server.wire_cache.get(
        call.snapshot.version, kind, call.version, items, key, to_wire
    )
    start, end, next_cursor = call.server.paginator.bounds(
        kind, keys, call.params.get("cursor"), lambda: positions
    )
    page: dict[str, Any] = {result_key: wire[start:end]}
    if next_cursor is not None:
        page["nextCursor"] = next_cursor
    encoded = pages.get((start, end, next_cursor))
    result = EncodedResult(page, encoded)
    if encoded is None and result.encoded is not None:
        if len(pages) >= MAX_PAGES:
            pages.clear()
        pages[(start, end, next_cursor)] = result.encoded
    return result
