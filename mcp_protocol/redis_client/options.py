"""``RedisOptions``: how to reach Redis, the one owner of the connection options.

Every Redis backend (the stores, the bus, the rate limiter, the audit spool and its drain) takes
one ``RedisOptions`` as ``redis=`` and hands it to its ``RedisConnector``; the defaults below are
written nowhere else. Whoever reads the settings (the Django adapter) builds it once from a
backend's ``OPTIONS``; a backend built by hand may still be given the flat keys
(``RedisBus(url=..., prefix=...)``), gathered here by ``take``. The checks of ``mode`` and the
sentinel addresses run when the connector's ``RedisTopology`` is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar

DEFAULT_URL = "redis://127.0.0.1:6379/0"


@dataclass(frozen=True, slots=True)
class RedisOptions:
    url: str = field(default=DEFAULT_URL, repr=False)  # may hold a password: kept out of logs
    # TLS: a rediss:// URL (certificate checked against the system's trust store).
    mode: str = "standalone"  # standalone, cluster or sentinel (topology.py)
    sentinels: Sequence[str] | str = ()  # host:port, a list or a comma-separated string
    sentinel_master: str = "mymaster"
    sentinel_password: str | None = field(default=None, repr=False)
    # Short on purpose: an outage is reported within seconds (connection.py).
    socket_timeout: float = 5.0
    connect_timeout: float = 1.0
    # redis-py's pool size per event loop; None: its default. The hot-path client holds one
    # pipelined connection per loop whatever this says.
    max_connections: int | None = None
    # redis-py's PING before reusing an idle connection (s); 0: none (a dead socket fails the
    # command, which is retried once on a fresh connection instead). Not on Cluster clients.
    health_check_interval: float = 0.0

    KEYS: ClassVar[frozenset[str]]

    def __post_init__(self) -> None:
        sentinels = self.sentinels
        if isinstance(sentinels, str):
            sentinels = [s for s in sentinels.split(",") if s.strip()]
        object.__setattr__(self, "sentinels", tuple(sentinels))  # frozen: hashable, comparable

    @classmethod
    def take(cls, given: RedisOptions | None, options: dict[str, Any]) -> RedisOptions:
        """The connection options of a backend: ``given``, with the connection keys of
        ``options`` (popped from it: what is left is the backend's own) laid over it."""
        flat = {key: options.pop(key) for key in list(options) if key in cls.KEYS}
        if given is None:
            return cls(**flat)
        return replace(given, **flat) if flat else given


RedisOptions.KEYS = frozenset(f.name for f in fields(RedisOptions))
