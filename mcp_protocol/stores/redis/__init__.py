"""The Redis backend: the state every worker shares, on one server, Redis Cluster or Sentinel
(through ``mcp_protocol.redis_client``). Values are JSON, never pickle.

    sessions.py   ``RedisSessionStore``: session records and their indexes
    events.py     ``RedisEventStore``: one Redis Stream per (session, stream); its ``claims``
    replay.py     the script answering a resume from a Last-Event-ID, and event ids <-> entry ids
    tail.py       the live tail of every open ``listen`` of a process, read by shared XREADs
    claims.py     ``RedisClaimStore``: stream claims and one-time jobs

Settings name the classes from this package: ``mcp_protocol.stores.redis.RedisSessionStore``,
``mcp_protocol.stores.redis.RedisEventStore``.
"""

from .claims import RedisClaimStore
from .events import RedisEventStore
from .sessions import RedisSessionStore
from .tasks import RedisTaskStore

__all__ = ["RedisClaimStore", "RedisEventStore", "RedisSessionStore", "RedisTaskStore"]
