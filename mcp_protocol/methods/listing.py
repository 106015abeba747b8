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
from .wire_cache import MAX_PAGES

T = TypeVar("T")


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
