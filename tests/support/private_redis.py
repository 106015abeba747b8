"""A private ``redis-server`` on a free loopback port, for tests that stop and restart Redis.

Never the shared 127.0.0.1:6379: ``stop()`` is ``SHUTDOWN NOSAVE`` and ``start()`` comes back on
the same port, empty (``--save ""``, no AOF), as after a crash.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from .ports import free_port


def have_redis_server() -> bool:
    return shutil.which("redis-server") is not None and shutil.which("redis-cli") is not None


class PrivateRedis:
    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def ping(self) -> bool:
        client = redis.Redis(port=self.port, socket_connect_timeout=0.2, socket_timeout=0.2,
                             retry=Retry(NoBackoff(), 0))  # fmt: skip
        try:
            return bool(client.ping())
        except redis.exceptions.ConnectionError:
            return False
        finally:
            client.close()

    def _wait(self, up: bool) -> None:
        deadline = time.monotonic() + 10
        while self.ping() != up:
            if time.monotonic() > deadline:
                raise AssertionError(f"private redis on {self.port} did not go {'up' if up else 'down'}")
            time.sleep(0.05)

    def start(self) -> PrivateRedis:
        subprocess.run(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--daemonize", "yes", "--dir", str(self.directory),
             "--pidfile", str(self.directory / "redis.pid"), "--logfile", str(self.directory / "redis.log")],
            check=True, timeout=10,
        )  # fmt: skip
        self._wait(up=True)
        return self

    def stop(self) -> None:
        subprocess.run(["redis-cli", "-p", str(self.port), "shutdown", "nosave"],
                       check=False, timeout=10, capture_output=True)  # fmt: skip
        self._wait(up=False)
