"""Server processes for the benchmark: ours (uvicorn or daphne) and the SDK peer, loopback only.

Ours is started by the test suite's launcher (``tests/support/live_server.py``), so the bench
measures the server exactly as the integration tests run it, against one temporary SQLite
database prepared once per invocation (``migrate``, ``load_demo``, ``seed_tools``) with
``DJANGO_DEBUG=0``; the SSE variant sets ``MCP_ALWAYS_STREAM=1`` and ``--redis`` sets
``REDIS_URL`` with a key prefix of its own. The SDK peer is not a Django project, so ``Running``
starts it: a subprocess on a free 127.0.0.1 port, its output in a log file under the run's
temporary directory, ready when the port accepts connections (with a deadline), always
terminated on exit.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from mcpsite.fleet import PLAIN_HTTP
from tests.support.live_server import REGISTRY_PROVIDER, LiveServer
from tests.support.manage import manage
from tests.support.ports import free_port

from . import ROOT

BIN = Path(sys.executable).parent
REDIS_PREFIX = f"mcpbench{os.getpid()}"
START_TIMEOUT = 60.0


@dataclass
class ServerSpec:
    label: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)


class Running:
    """Context manager: the server process, started and ready on entry, stopped on exit."""

    def __init__(self, spec: ServerSpec, workdir: Path) -> None:
        self.spec = spec
        self.port = free_port()
        self.log_path = workdir / f"{spec.label.replace(' ', '-')}-{self.port}.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def __enter__(self) -> Running:
        argv = [part.replace("{port}", str(self.port)) for part in self.spec.argv]
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                argv, cwd=ROOT, env={**os.environ, **self.spec.env}, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.spec.label} exited early; log:\n{self.log_tail()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                time.sleep(0.05)  # polling a port has no event to wait on
        self.stop()
        raise RuntimeError(f"{self.spec.label} not listening after {START_TIMEOUT}s; log:\n{self.log_tail()}")

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU time of process ``pid`` so far (Linux ``/proc``; 0.0 elsewhere). Unlike a
    request rate, it hardly moves with other processes' load on the machine."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # After the command name: state is field 3, so utime (14) and stime (15) are at 11 and 12.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def create_key(workdir: Path, name: str = "bench") -> str:
    """A new API key (``mcp_keys create``) in the bench database of ``workdir``: its token."""
    return manage_bench_db(workdir, "mcp_keys", "create", name).strip().splitlines()[-1]


def our_env(workdir: Path, sse: bool = False, redis_url: str | None = None) -> dict[str, str]:
    env = {
        "DJANGO_SETTINGS_MODULE": "mcpsite.settings",
        "DATABASE_URL": f"sqlite:///{workdir / 'bench.sqlite3'}",
        "MCP_PROVIDER": REGISTRY_PROVIDER,
        "DJANGO_DEBUG": "0",
        "SECRET_KEY": "bench-only-secret-key-not-for-production-use-0123456789",
        **PLAIN_HTTP,  # the API benches speak plain HTTP on loopback
        "MCP_LOG_LEVEL": "WARNING",
        "MCP_ALWAYS_STREAM": "1" if sse else "0",
    }
    if redis_url:
        env.update({"REDIS_URL": redis_url, "MCP_KEY_PREFIX": REDIS_PREFIX})
    return env


def clean_redis(redis_url: str) -> int:
    """Delete whatever this run left under its key prefix (sessions expire anyway); the count."""
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        # The stores key by "P:..." and, for hash-tagged keys, "{P}:...".
        keys = [
            key
            for match in (f"{REDIS_PREFIX}:*", f"{{{REDIS_PREFIX}}}:*")
            for key in client.scan_iter(match, 1000)
        ]
        return int(client.delete(*keys)) if keys else 0
    finally:
        client.close()


def manage_bench_db(workdir: Path, *args: str) -> str:
    """``manage.py args`` against the bench database of ``workdir``; its output."""
    return manage(our_env(workdir), *args, timeout=300)


def prepare_database(workdir: Path, tools: int) -> None:
    """migrate + load_demo, then seed filler tools so tools/list returns exactly ``tools`` tools."""
    manage_bench_db(workdir, "migrate", "--noinput")
    manage_bench_db(workdir, "load_demo")
    enabled = "from registry.models import Tool; print(Tool.objects.filter(enabled=True).count())"
    count = int(manage_bench_db(workdir, "shell", "-c", enabled).split()[-1])
    if count < tools:
        manage_bench_db(workdir, "seed_tools", "--count", str(tools - count))
    elif count > tools:
        raise SystemExit(f"load_demo already has {count} tools, more than --tools {tools}")


DIRECT_APP = "bench.apps.direct:application"


def ours(
    server: str, sse: bool, workdir: Path, redis_url: str | None = None, direct: bool = False
) -> tuple[str, LiveServer]:
    """Our server on the prepared database (no migrate/load of its own), not yet started.
    ``direct``: the hand-written dispatch (``bench/apps/direct.py``) instead of ``mcpsite.asgi``."""
    variant = ("-redis" if redis_url else "") + ("-direct" if direct else "")
    label = f"ours-{server}{variant}-{'sse' if sse else 'json'}"
    kwargs = {"app": DIRECT_APP} if direct else {}
    return label, LiveServer(env=our_env(workdir, sse, redis_url), server=server, migrate=False, **kwargs)


def peer(sse: bool, tools: int, workdir: Path, lowlevel: bool = False) -> tuple[str, Running]:
    argv = [
        str(BIN / "python"),
        str(ROOT / "bench" / "apps" / "peer_server.py"),
        "--port",
        "{port}",
        "--tools",
        str(tools),
        "--sse" if sse else "--json",
    ]
    if lowlevel:
        argv.append("--lowlevel")
    spec = ServerSpec(f"peer-{'sse' if sse else 'json'}", argv)
    return spec.label, Running(spec, workdir)
