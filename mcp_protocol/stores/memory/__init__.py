"""The in-process backend: the single-process default and the reference for Redis.

    sessions.py   ``MemorySessionStore``
    events.py     ``MemoryEventStore`` (its ``claims``: ``MemoryClaimStore``)
    logs.py       the event store's logs, by (session, stream), and their expiry
    claims.py     ``MemoryClaimStore``

Nothing here is shared between processes: with several workers use ``stores.redis``. Settings
name the classes from this package: ``mcp_protocol.stores.memory.MemorySessionStore``,
``mcp_protocol.stores.memory.MemoryEventStore``.
"""

from .claims import MemoryClaimStore
from .events import MemoryEventStore
from .sessions import MemorySessionStore
from .tasks import MemoryTaskStore

__all__ = ["MemoryClaimStore", "MemoryEventStore", "MemorySessionStore", "MemoryTaskStore"]
