"""What a session with an upstream was made with (``Handshake``), and the client we say we are.

Apart from ``connect.py`` so that the pool and the calls' lean path name them without importing
the official SDK: importing ``mcp`` costs a worker about a second of start-up (its package builds
every protocol model), and a worker that never reaches an upstream never needs it. The SDK is
imported when the first session is opened (``pool.default_connect``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The clientInfo of our initialize (and of a 2026-07-28 request's _meta), as JSON.
CLIENT_INFO_WIRE: dict[str, str] = {"name": "mcpsite-upstream", "version": "1"}


@dataclass
class Handshake:
    """What a session was made with, for the calls' lean path (filled by ``connect``)."""

    session_id: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    sse: bool = False  # the legacy HTTP+SSE transport: no lean path over it
    # Given, not filled: a per-user session's token (a ``user`` upstream, ``pool.py``), sent as
    # ``Authorization: Bearer`` *instead of* the upstream's listing credential.
    bearer: str | None = field(default=None, repr=False)
    # Over the legacy transport, where the SDK session carries the calls: the calls in flight
    # (``sdk_relay.Calls``), which the session's callbacks route the upstream's logs and
    # questions to. None: refused (a session for listing, or calls on the lean path).
    calls: Any = None
