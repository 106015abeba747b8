"""A real server process on a free loopback port, for integration tests, conformance and benchmarks.

    server = LiveServer(env={"MCP_ALWAYS_STREAM": "1"}, provider=MEMORY_PROVIDER).start()
    ... httpx / the mcp SDK client against server.url ...
    server.stop()

or, one process for a whole test module::

    live = live_server_fixture(server="daphne", load="load_demo")   # module-scoped fixture

Each instance gets its own temporary directory (SQLite database, server log) and its own port, so
modules may run in parallel (pytest-xdist). With ``load`` (a management command such as
``load_demo``/``load_conformance``, or a list of argv lists) the database is migrated and loaded
before the server starts. ``start()`` waits, with a deadline, until the endpoint answers HTTP;
``stop()`` terminates the process group (then kills it after a grace period) and removes the
temporary directory. On a failed start the server's log is in the exception message.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpsite.fleet import stop_group

from .manage import ROOT, ManageSession, manage
from .migrated import sqlite_copy
from .ports import free_port

MEMORY_PROVIDER = "mcp_protocol.memory_provider.MemoryProvider"
REGISTRY_PROVIDER = "registry.provider.RegistryProvider"


class LiveServer:
    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        server: str = "uvicorn",
        workers: int = 1,
        provider: str | None = None,
        load: str | Sequence[Sequence[str]] | None = None,
        migrate: bool | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        startup_timeout: float = 30.0,
        extra_args: Sequence[str] = (),
        app: str = "mcpsite.asgi:application",
        mcp_path: str = "/mcp",
        project_dir: Path = ROOT,
        python: str = sys.executable,
        probe_path: str | None = None,
    ) -> None:
        if server not in ("uvicorn", "daphne", "runserver"):
            raise ValueError(f"server must be 'uvicorn', 'daphne' or 'runserver', not {server!r}")
        self.server = server
        self.workers = workers
        self.host = host
        self.port = port or free_port(host)
        self.startup_timeout = startup_timeout
        self.extra_args = list(extra_args)
        self.app = app
        self.mcp_path = mcp_path
        self.project_dir = project_dir  # where manage.py is (another project: examples/)
        self.python = python
        # What the start-up wait GETs: the MCP endpoint by default (which also builds the MCP
        # runtime); "/healthz" leaves the worker cold (tests/faults: it has served no /mcp request).
        self.probe_path = probe_path
        self._load = [[load]] if isinstance(load, str) else [list(c) for c in load or ()]
        self._migrate = bool(self._load) if migrate is None else migrate
        self._env_overrides = dict(env or {})
        if provider is not None:
            self._env_overrides["MCP_PROVIDER"] = provider
        self.tmpdir: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.env: dict[str, str] = {}
        self.last_log = ""

    # -- addresses ------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """The MCP endpoint."""
        return f"{self.base_url}{self.mcp_path}"

    @property
    def log_path(self) -> Path:
        assert self.tmpdir is not None
        return self.tmpdir / "server.log"

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except (OSError, AssertionError):
            return ""

    # -- lifecycle ------------------------------------------------------------------------------
    def _build_env(self) -> dict[str, str]:
        assert self.tmpdir is not None
        env = dict(os.environ)
        env.update(
            {
                "DJANGO_SETTINGS_MODULE": "mcpsite.settings",
                "DATABASE_URL": f"sqlite:///{self.tmpdir / 'db.sqlite3'}",
                "PYTHONUNBUFFERED": "1",
                "PYTHONPATH": str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
            }
        )
        if self.project_dir != ROOT:
            # Another project imports mcpsite's apps from where it installed them, not from here.
            env.pop("DJANGO_SETTINGS_MODULE")
            env.pop("PYTHONPATH")
        env.update(self._env_overrides)
        return env

    def manage(self, *argv: str) -> str:
        """Run a management command against this server's database and environment; returns stdout."""
        return manage(self.env, *argv, inherit=False, project_dir=self.project_dir, python=self.python)

    def command(self) -> list[str]:
        app = self.app
        if self.server == "uvicorn":
            address = ["--host", self.host, "--port", str(self.port), "--workers", str(self.workers)]
            quiet = ["--log-level", "warning", "--no-access-log"]
            return [self.python, "-m", "uvicorn", app, *address, *quiet, *self.extra_args]
        if self.workers != 1:
            raise ValueError(f"{self.server} runs one process; use uvicorn for several workers")
        if self.server == "runserver":
            # Django's development server as daphne's runserver replaces it (daphne in
            # INSTALLED_APPS), autoreloader included: it serves ASGI_APPLICATION, not ``app``.
            address = f"{self.host}:{self.port}"
            return [self.python, str(self.project_dir / "manage.py"), "runserver", address, *self.extra_args]
        return [self.python, "-m", "daphne", "-b", self.host, "-p", str(self.port), *self.extra_args, app]

    def start(self) -> LiveServer:
        self.tmpdir = Path(tempfile.mkdtemp(prefix="mcpsite-live-"))
        self.env = self._build_env()
        try:
            # A SQLite file not made yet (this server's own, or one a test names for several
            # servers) is copied from the migrated template rather than migrated again.
            url = self.env.get("DATABASE_URL", "")
            fresh_sqlite = url.startswith("sqlite:///") and not Path(url[len("sqlite:///"):]).exists()
            commands = [["migrate", "--noinput"]] if self._migrate and not fresh_sqlite else []
            if self._migrate and fresh_sqlite:
                sqlite_copy(Path(url[len("sqlite:///"):]), self.env, self.project_dir, self.python)
            commands += self._load
            # The runner falls back on mcpsite's settings: another project's env must name its own.
            named = self.project_dir == ROOT or "DJANGO_SETTINGS_MODULE" in self.env
            if named and len(commands) > 1:
                # One Django start-up for them all (about 2-3 s each on the CI machine).
                with ManageSession(self.env, inherit=False, python=self.python,
                                   project_dir=self.project_dir) as session:
                    session.run_all(commands)
            else:
                for argv in commands:
                    self.manage(*argv)
            with open(self.log_path, "wb") as log:
                self.process = subprocess.Popen(
                    self.command(),
                    cwd=self.project_dir,
                    env=self.env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group: stop() reaches every worker
                )
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        assert self.process is not None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.server} exited with {self.process.returncode}:\n{self.log_text()}")
            try:
                # Any HTTP answer means the app is serving (a bare GET of /mcp is a 4xx).
                probe = self.url if self.probe_path is None else f"{self.base_url}{self.probe_path}"
                httpx.get(probe, timeout=1.0)
                return
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError(
            f"{self.server} did not answer within {self.startup_timeout} s:\n{self.log_text()}"
        )

    def stop(self, timeout: float = 10.0, *, keep_log: bool = False) -> int | None:
        """SIGTERM the process group, SIGKILL after ``timeout``; returns the exit code. The server's
        log stays readable in ``self.last_log`` (and the directory is kept with ``keep_log``)."""
        process, self.process = self.process, None
        code: int | None = None
        if process is not None:
            stop_group(process, timeout)
            code = process.returncode
        self.last_log = self.log_text()
        if self.tmpdir is not None and not keep_log:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None
        return code

    @property
    def returncode(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def live_server_fixture(**kwargs: Any) -> Callable[[], Iterator[LiveServer]]:
    """A module-scoped pytest fixture running one ``LiveServer(**kwargs)`` for the module."""

    @pytest.fixture(scope="module")
    def _live_server() -> Iterator[LiveServer]:
        server = LiveServer(**kwargs).start()
        try:
            yield server
        finally:
            server.stop()

    return _live_server
