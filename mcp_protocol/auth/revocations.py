"""Revoked OAuth grants, known to every worker without a query per request.

An authorization server that revokes a grant (a code used twice, a rotated refresh token used
again, a user or staff revoking a client, RFC 7009) publishes a *watermark*: (subject, client_id,
before): every access token of that subject and client issued at or before ``before`` is refused
from then on, though its signature and ``exp`` are still good. ``Revocations`` keeps the current
watermarks in a dict, re-read from ``source`` (a callable returning JSON
``[[subject, client_id, before], ...]``; run in a thread) every ``interval`` seconds, so a
revocation reaches ``/mcp`` within about a second; the check is one dict lookup. A source that
fails keeps the last watermarks (and logs, at most once a minute).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable

logger = logging.getLogger("mcp_protocol.auth")

Source = Callable[[], bytes]


class Revocations:
    def __init__(self, source: Source, *, interval: float = 1.0) -> None:
        self.source, self.interval = source, interval
        self._before: dict[tuple[str, str], float] = {}
        self._task: asyncio.Task[None] | None = None
        self._warned_at = -1e18

    def revoked(self, subject: str | None, client_id: str | None, issued_at: float | None) -> bool:
        before = self._before.get((subject or "", client_id or ""))
        return before is not None and (issued_at or 0.0) <= before

    async def refresh(self) -> None:
        try:
            rows = json.loads(await asyncio.to_thread(self.source))
            self._before = {(str(s), str(c)): float(b) for s, c, b in rows}
        except Exception as exc:
            if time.monotonic() - self._warned_at > 60:
                self._warned_at = time.monotonic()
                logger.warning("could not read the revoked OAuth grants: %s", exc)

    async def start(self) -> None:
        await self.refresh()
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            await self.refresh()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
