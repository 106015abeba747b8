"""A private ``redis-server`` on a free loopback port, for tests that stop and restart Redis.

Never the shared 127.0.0.1:6379: ``stop()`` is ``SHUTDOWN NOSAVE`` and ``start()`` comes back on
the same port, empty (``--save ""``, no AOF), as after a crash; or, ``persisted``, with every write
it had (AOF, fsync always), as a production Redis restarted.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from .polling import wait_until
from .ports import free_port


def have_redis_server() -> bool:
    return shutil.which("redis-server") is not None and shutil.which("redis-cli") is not None


def redis_client(
    port: int, *, connect_timeout: float = 0.2, timeout: float = 0.2, decode_responses: bool = False
) -> redis.Redis:
    """A client of the server on ``port`` that never retries: a probe answers now or fails."""
    return redis.Redis(
        port=port,
        socket_connect_timeout=connect_timeout,
        socket_timeout=timeout,
        decode_responses=decode_responses,
        retry=Retry(NoBackoff(), 0),
    )


def start_server(port: int, directory: Path, *extra: str, config: Path | None = None) -> None:
    """``redis-server`` daemonized on ``127.0.0.1:port``, its files under ``directory``, keeping
    nothing across a restart (``--save ""``, no AOF). Returns once started, not once answering."""
    directory.mkdir(parents=True, exist_ok=True)
    head = [str(config)] if config is not None else []
    address = ["--port", str(port), "--bind", "127.0.0.1"]
    volatile = ["--save", "", "--appendonly", "no"]
    files = ["--dir", str(directory), "--pidfile", str(directory / "redis.pid")]
    log = ["--logfile", str(directory / "redis.log")]
    argv = ["redis-server", *head, *address, *volatile, "--daemonize", "yes", *files, *log, *extra]
    subprocess.run(argv, check=True, timeout=10)


def shutdown(port: int) -> None:
    """``SHUTDOWN NOSAVE`` the server on ``port`` (by its port, never by name)."""
    argv = ["redis-cli", "-p", str(port), "shutdown", "nosave"]
    subprocess.run(argv, check=False, timeout=10, capture_output=True)


# Every write on disk before it is answered: a server stopped and started again comes back with
# what it had (the sessions and logs of open streams), as a production Redis with AOF would.
PERSISTED = ("--appendonly", "yes", "--appendfsync", "always")


class PrivateRedis:
    def __init__(self, directory: Path, *, persisted: bool = False) -> None:
        self.port = free_port()
        self.directory = directory
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.extra = PERSISTED if persisted else ()

    def ping(self) -> bool:
        client = redis_client(self.port)
        try:
            return bool(client.ping())
        except redis.exceptions.ConnectionError:
            return False
        finally:
            client.close()

    def _wait(self, up: bool) -> None:
        wait_until(f"private redis on {self.port} {'up' if up else 'down'}", lambda: self.ping() == up, 10)

    def start(self) -> PrivateRedis:
        start_server(self.port, self.directory, *self.extra)
        self._wait(up=True)
        return self

    def stop(self) -> None:
        shutdown(self.port)
        self._wait(up=False)
