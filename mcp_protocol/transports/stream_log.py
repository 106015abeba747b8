"""What a stream's log holds besides JSON-RPC messages, and the ids of legacy POST streams.

[L] basic/transports.mdx "Resumability and Redelivery": every event of a legacy stream is stored
under ``<stream>.<seq>`` (``stores.events.make_event_id``). Internal markers share the log with the
messages and are never sent: ``prime`` (the [11] priming event's id needs a log position; it
also names the ids the stream answers), ``open`` (the same first entry for clients older than
2025-11-25, which get no priming event) and ``end`` (the stream is complete: a resume that
reaches it closes instead of waiting forever). ``leases.py`` reads the first entry's ids.
"""

from __future__ import annotations

import itertools
import os
import secrets
from collections.abc import Sequence
from typing import Any

from ..jsonrpc import RequestId, dumps

MARKER = "_mcpsite"
PRIME: dict[str, Any] = {MARKER: "prime"}
END: dict[str, Any] = {MARKER: "end"}
END_WIRE = dumps(END)


def opening_marker(request_ids: Sequence[RequestId]) -> dict[str, Any]:
    """The first entry of a request's stream log when there is no priming event: which ids the
    stream answers (never sent; ``leases.py`` reads it)."""
    return {MARKER: "open", "ids": list(request_ids)}


def first_entry(request_ids: Sequence[RequestId], *, priming: bool) -> bytes:
    """A POST stream log's first entry, encoded as the store keeps it."""
    return dumps({**PRIME, "ids": list(request_ids)} if priming else opening_marker(request_ids))


class _StreamIds:
    """Stream ids unique across workers and restarts: a random prefix per process (drawn again
    in a forked child) and a counter, so a stream costs no ``urandom`` call. They need not be
    secret: a log is only reachable through its session."""

    def __init__(self) -> None:
        self.reseed()

    def reseed(self) -> None:
        self.prefix = secrets.token_urlsafe(9)  # no "." (event ids are "<stream>.<seq>")
        self.serial = itertools.count(1)

    def new(self) -> str:
        return f"{self.prefix}{next(self.serial):x}"


_ids = _StreamIds()
os.register_at_fork(after_in_child=_ids.reseed)


def new_stream_id() -> str:
    return _ids.new()
