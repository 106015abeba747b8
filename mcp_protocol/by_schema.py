"""``PerSchema``: what the hot path derives from a definition's schema, computed once per schema
*object* and cached by its identity.

Definitions are immutable, so a snapshot's schema objects live as long as the snapshot; a cache
keyed by ``id`` needs no hashing of the schema. Each entry keeps a reference to its schema, so an
``id`` is never reused while its entry exists, and the cache is cleared when it grows past its
limit (a refreshed snapshot brings new objects). Used for compiled validators
(``validation.py``) and for the properties a 2026-07-28 call mirrors in headers
(``transports/headers.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

V = TypeVar("V")
Schema = Mapping[str, Any]


class PerSchema(Generic[V]):
    def __init__(self, derive: Callable[[Schema], V], limit: int = 4096) -> None:
        self._derive, self._limit = derive, limit
        self._entries: dict[int, tuple[Schema, V]] = {}
        self._lock = threading.Lock()  # the audit and database threads may validate too

    def __call__(self, schema: Schema) -> V:
        entry = self._entries.get(id(schema))
        if entry is not None and entry[0] is schema:
            return entry[1]
        value = self._derive(schema)  # may raise: nothing is cached then
        with self._lock:
            if len(self._entries) >= self._limit:
                self._entries.clear()
            self._entries[id(schema)] = (schema, value)
        return value

    def __len__(self) -> int:
        return len(self._entries)
