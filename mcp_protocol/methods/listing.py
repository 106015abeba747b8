"""Paginated list results, with the wire form of each list cached per snapshot and revision.

``tools/list`` is the hottest method: its items are shaped once per (snapshot version, list,
protocol revision) and reused; a new snapshot version drops the cache. Cached item dicts are
shared between responses, so nothing downstream may mutate them (results are only serialized).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .base import Call

T = TypeVar("T")


class WireCache:
    def __init__(self) -> None:
        self._snapshot_version: str | None = None
        self._lists: dict[tuple[str, str], tuple[list[dict[str, Any]], list[str], dict[str, int]]] = {}

    def get(
        self,
        snapshot_version: str,
        kind: str,
        version: str,
        items: Sequence[T],
        key: Callable[[T], str],
        to_wire: Callable[[T, str], dict[str, Any]],
    ) -> tuple[list[dict[str, Any]], list[str], dict[str, int]]:
        if snapshot_version != self._snapshot_version:
            self._lists = {}
            self._snapshot_version = snapshot_version
        entry = self._lists.get((kind, version))
        if entry is None:
            keys = [key(item) for item in items]
            entry = ([to_wire(item, version) for item in items], keys, {k: i for i, k in enumerate(keys)})
            self._lists[(kind, version)] = entry
        return entry


def list_page(
    call: Call,
    kind: str,
    result_key: str,
    items: Sequence[T],
    key: Callable[[T], str],
    to_wire: Callable[[T, str], dict[str, Any]],
) -> dict[str, Any]:
    wire, keys, positions = call.server.wire_cache.get(
        call.snapshot.version, kind, call.version, items, key, to_wire
    )
    start, end, next_cursor = call.server.paginator.bounds(
        kind, keys, call.params.get("cursor"), lambda: positions
    )
    result: dict[str, Any] = {result_key: wire[start:end]}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result
