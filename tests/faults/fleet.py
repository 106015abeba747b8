"""Real worker processes on a private Redis for the fault tests: start them warm or cold, kill them.

A *warm* worker has served ``/mcp`` (the launcher's readiness probe is a GET of ``/mcp``); a *cold*
one has answered only ``/healthz``, so whatever it does it does from its own startup, not from a
request. Every wait has a deadline; the private ``redis-server`` is never the shared 6379.
"""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.support import LiveServer
from tests.support.live_server import MEMORY_PROVIDER
from tests.support.private_redis import PrivateRedis

KEEPALIVE = 0.5  # s: quiet streams show a comment this often


def fleet_env(redis_server: PrivateRedis, **extra: str) -> dict[str, str]:
    return {
        "REDIS_URL": redis_server.url,
        "MCP_KEY_PREFIX": f"mcpfault-{uuid.uuid4().hex[:8]}",
        "MCP_PROVIDER": MEMORY_PROVIDER,
        "MCP_KEEPALIVE_SECONDS": str(KEEPALIVE),
        **extra,
    }


def worker(
    env: Mapping[str, str], *, cold: bool = False, server: str = "uvicorn", **kwargs: Any
) -> LiveServer:
    probe = "/healthz" if cold else None
    return LiveServer(env=env, server=server, migrate=False, probe_path=probe, **kwargs).start()


def kill9(server: LiveServer) -> None:
    """SIGKILL the worker's whole process group: no goodbye, no lifespan shutdown."""
    assert server.process is not None
    os.killpg(server.process.pid, signal.SIGKILL)
    server.process.wait(10)


def private_redis(directory: Path) -> PrivateRedis:
    return PrivateRedis(directory).start()


class Fleet:
    """Workers sharing one private Redis; ``stop()`` ends them all and the Redis."""

    def __init__(self, directory: Path, **env: str) -> None:
        self.redis = private_redis(directory)
        self.env = fleet_env(self.redis, **env)
        self.servers: list[LiveServer] = []

    def worker(self, *, cold: bool = False, server: str = "uvicorn", **env: str) -> LiveServer:
        started = worker({**self.env, **env}, cold=cold, server=server)
        self.servers.append(started)
        return started

    def stop(self) -> None:
        for server in self.servers:
            server.stop()
        if self.redis.ping():
            self.redis.stop()
