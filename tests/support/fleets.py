"""A fleet for tests: worker processes (``LiveServer``) sharing one database and one private Redis,
started warm or cold, stopped or killed, with nginx in front when a test wants it.

    fleet = Fleet(tmp_path, provider=REGISTRY_PROVIDER, database_url=url)   # the private Redis is up
    fleet.migrate()                            # the shared database, migrated (migrated.py)
    fleet.manage("load_conformance")           # management commands on the shared database and Redis
    a, b = fleet.start(2)                      # workers started at once, each on its own port
    c = fleet.worker(cold=True)                # one that has answered only /healthz
    balancer = fleet.balance(a, b)             # nginx round robin over them
    kill9(a)                                   # no goodbye, no lifespan shutdown
    fleet.stop()                               # every worker, the balancer and the Redis

Without ``database_url`` each worker has a SQLite database of its own (enough with the memory
provider). The private ``redis-server`` is never the shared 6379. The product's own fleet (uvicorn
workers, nginx and the audit drain: ``scripts/fleet.sh``) is ``mcpsite.fleet.Fleet``; this one
builds on its balancer.
"""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mcpsite.fleet import Balancer, nginx_binary

from .live_server import MEMORY_PROVIDER, LiveServer
from .manage import ManageSession, manage
from .migrated import postgres_copy, sqlite_copy
from .private_redis import PrivateRedis, have_redis_server

KEEPALIVE = 0.5  # s: quiet streams show a comment this often, and heartbeats notice a DELETE


class Fleet:
    def __init__(
        self,
        directory: Path,
        *,
        provider: str = MEMORY_PROVIDER,
        database_url: str | None = None,
        keepalive: float = KEEPALIVE,
        redis_args: tuple[str, ...] = (),
        **env: str,
    ) -> None:
        self.redis = PrivateRedis(directory, *redis_args).start()
        self.env = {
            "REDIS_URL": self.redis.url,
            "MCP_KEY_PREFIX": f"mcpfleet-{uuid.uuid4().hex[:8]}",
            "MCP_PROVIDER": provider,
            "MCP_KEEPALIVE_SECONDS": str(keepalive),
            **({"DATABASE_URL": database_url} if database_url else {}),
            **env,
        }
        self.servers: list[LiveServer] = []
        self.balancers: list[Balancer] = []

    def manage(self, *argv: str, **env: str) -> str:
        """A management command against the fleet's database and Redis; its output."""
        return manage({**self.env, **env}, *argv)

    def manage_all(self, *commands: list[str], **env: str) -> list[str]:
        """Management commands in order, in one process (one Django start-up: ``ManageSession``)."""
        with ManageSession({**self.env, **env}) as session:
            return session.run_all(commands)

    def migrate(self) -> None:
        """The fleet's shared database, migrated: PostgreSQL's and a SQLite file not made yet are
        copies of the test process's template (``migrated.py``); otherwise ``migrate`` itself."""
        url = self.env.get("DATABASE_URL", "")
        sqlite = Path(url[len("sqlite:///"):]) if url.startswith("sqlite:///") else None
        if url.startswith("postgres://"):
            postgres_copy(url)
        elif sqlite is not None and not sqlite.exists():
            sqlite_copy(sqlite, {**os.environ, **self.env, "DJANGO_SETTINGS_MODULE": "mcpsite.settings"})
        else:
            self.manage("migrate", "--noinput")

    def worker(self, *, cold: bool = False, server: str = "uvicorn", **env: str) -> LiveServer:
        """A further worker, started; ``cold``: its readiness probe is ``/healthz``, not ``/mcp``."""
        return self.start(1, cold=cold, server=server, **env)[0]

    def start(
        self, count: int, *, cold: bool = False, server: str = "uvicorn", **env: str
    ) -> list[LiveServer]:
        """``count`` workers started at once (each with ``env`` over the fleet's)."""
        probe = "/healthz" if cold else None
        made = [
            LiveServer(env={**self.env, **env}, server=server, migrate=False, probe_path=probe)
            for _ in range(count)
        ]
        self.servers.extend(made)
        with ThreadPoolExecutor(count) as pool:
            for started in [pool.submit(worker.start) for worker in made]:
                started.result()
        return made

    def balance(self, *workers: LiveServer) -> Balancer:
        """nginx in front of ``workers`` (skips the test without nginx)."""
        try:
            nginx_binary()
        except RuntimeError as exc:
            pytest.skip(str(exc))
        balancer = Balancer([f"127.0.0.1:{w.port}" for w in workers]).start()
        self.balancers.append(balancer)
        return balancer

    def stop(self) -> None:
        for balancer in self.balancers:
            balancer.stop()
        for server in self.servers:
            server.stop()
        if self.redis.ping():
            self.redis.stop()


def kill9(server: LiveServer) -> None:
    """SIGKILL the worker's whole process group: no goodbye, no lifespan shutdown."""
    assert server.process is not None
    os.killpg(server.process.pid, signal.SIGKILL)
    server.process.wait(10)


@contextmanager
def running_fleet(directory: Path, **options: Any) -> Iterator[Fleet]:
    """A ``Fleet`` for a fixture: skips without redis-server, always stops what it started."""
    if not have_redis_server():
        pytest.skip("needs redis-server and redis-cli")
    fleet = Fleet(directory, **options)
    try:
        yield fleet
    finally:
        fleet.stop()
