"""Opaque, tamper-proof, stable cursors for the paginated list methods (server/utilities/pagination.mdx).

A cursor is ``base64url(JSON payload) "." base64url(HMAC-SHA256 tag)``. The payload names the
list (``tools``, ``resources``, ``resource_templates``, ``prompts``), the key of the last item
served (tool/prompt name, resource URI, URI template), that item's index as a fallback if the
item has since been removed, and the issue time. The next page starts right after that key in
the current listing order, so items inserted or removed elsewhere never cause a skipped or
repeated item ("stable cursors" SHOULD). A forged, truncated, expired or other-list cursor is
``InvalidParams`` (-32602: "invalid cursor SHOULD → -32602").
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .errors import InvalidParams

T = TypeVar("T")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


OTHER_LIST = "Invalid cursor: it belongs to another list"


class Paginator:
    def __init__(self, secret: bytes, page_size: int = 100, max_age: float = 24 * 3600.0) -> None:
        if not secret:
            raise ValueError("a cursor secret is required")
        if page_size < 1:
            raise ValueError("page_size must be positive")
        self._secret = secret
        self.page_size = page_size
        self.max_age = max_age

    def _tag(self, payload: bytes) -> bytes:
        return hmac.new(self._secret, payload, hashlib.sha256).digest()[:16]

    def encode(self, kind: str, after_key: str, index: int, now: float | None = None) -> str:
        payload = json.dumps(
            {"k": kind, "a": after_key, "i": index, "t": int(now if now is not None else time.time())},
            separators=(",", ":"),
        ).encode()
        return f"{_b64(payload)}.{_b64(self._tag(payload))}"

    def decode(self, kind: str, cursor: Any) -> tuple[str, int]:
        """``(after_key, index)`` from a cursor for list ``kind``; raises ``InvalidParams``."""
        if not isinstance(cursor, str) or "." not in cursor:
            raise InvalidParams("Invalid cursor")
        body, _, tag = cursor.partition(".")
        try:
            payload = _unb64(body)
            given = _unb64(tag)
        except (binascii.Error, ValueError):
            raise InvalidParams("Invalid cursor") from None
        if not hmac.compare_digest(given, self._tag(payload)):
            raise InvalidParams("Invalid cursor")
        data = json.loads(payload)
        if data.get("k") != kind:
            raise InvalidParams(OTHER_LIST)
        if time.time() - float(data.get("t", 0)) > self.max_age:
            raise InvalidParams("Invalid cursor: expired")
        return str(data["a"]), int(data["i"])

    def bounds(
        self,
        kind: str,
        keys: Sequence[str],
        cursor: Any,
        positions: Callable[[], dict[str, int]] | None = None,
    ) -> tuple[int, int, str | None]:
        """``(start, end, next_cursor)`` of the page after ``cursor`` (``None`` = first page) in
        a listing whose item keys are ``keys``. ``positions`` may supply a cached key → index map."""
        start = 0
        if cursor is not None:
            after, index = self.decode(kind, cursor)
            where = positions() if positions is not None else {k: i for i, k in enumerate(keys)}
            found = where.get(after)
            # The last served item was removed: the items after it moved up by one, so its old
            # index is where the rest now starts (best effort: a repeat beats a skipped item).
            start = found + 1 if found is not None else min(index, len(keys))
        end = min(start + self.page_size, len(keys))
        next_cursor = self.encode(kind, keys[end - 1], end - 1) if start < end < len(keys) else None
        return start, end, next_cursor

    def page(
        self, kind: str, items: Sequence[T], key: Callable[[T], str], cursor: Any
    ) -> tuple[Sequence[T], str | None]:
        """One page of ``items`` after ``cursor`` and the next cursor (``None`` at the end)."""
        start, end, next_cursor = self.bounds(kind, [key(item) for item in items], cursor)
        return items[start:end], next_cursor
