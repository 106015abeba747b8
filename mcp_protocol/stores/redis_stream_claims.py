"""``StreamClaims``: which worker holds a session's standalone GET stream, on Redis.

[L] basic/transports.mdx: the server may keep one standalone SSE stream per session, and a
second GET gets 409 on any worker. Key: ``P:claim:{sid}`` (the session's hash tag) holding the
owner, PX = the claim's ttl, slid by ``refresh`` on every heartbeat; ``RedisSessionStore``
delegates ``claim_stream``, ``open_streams``, ``refresh_claim`` and ``release_stream`` here.
Claims are taken and refreshed by every open GET stream (1,000 streams: 1,000 refreshes per
keep-alive period), so all of it goes over the loop's pipelined connection (``fast.py``).
"""

from __future__ import annotations

from typing import Any

from ..redis_client.connection import RedisConnector, px, unavailable_as_store_error
from .redis_session_scripts import REFRESH, REFRESH_SHA, RELEASE, RELEASE_SHA


def raise_first(replies: list[Any]) -> None:
    """A pipeline's replies carry errors as values: raise the first."""
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply


class StreamClaims:
    def __init__(self, connector: RedisConnector, prefix: str) -> None:
        self._redis = connector
        self._prefix = prefix

    def key(self, session_id: str) -> str:
        return f"{self._prefix}:claim:{{{session_id}}}"

    async def claim(self, session_id: str, owner: str, ttl: float, *, take_over: bool = False) -> bool:
        only_if_free = () if take_over else ("NX",)
        key = self.key(session_id)
        with unavailable_as_store_error():
            return bool(await self._redis.pipelined().execute(
                "SET", key, owner, *only_if_free, "PX", px(ttl), key=key))

    async def held(self, session_ids: list[str]) -> set[str]:
        if not session_ids:
            return set()
        with unavailable_as_store_error():
            # Pipelined EXISTS, each claim key in its own session's slot (no MULTI across slots).
            replies = await self._redis.pipelined().pipeline(
                [("EXISTS", self.key(sid)) for sid in session_ids])
        raise_first(replies)
        return {sid for sid, held in zip(session_ids, replies, strict=True) if held}

    async def refresh(self, session_id: str, owner: str, ttl: float) -> bool:
        with unavailable_as_store_error():
            return bool(await self._redis.pipelined().evalsha(
                REFRESH_SHA, REFRESH, [self.key(session_id)], [owner, px(ttl)]))

    async def release(self, session_id: str, owner: str) -> None:
        with unavailable_as_store_error():
            await self._redis.pipelined().evalsha(RELEASE_SHA, RELEASE, [self.key(session_id)], [owner])
