"""``manage.py`` in a process of its own, for tests and the bench: the one way to run a management
command against a server's database and Redis (migrate, load a registry, create keys or tokens).

    out = manage(env, "mcp_keys", "create", "ci")     # env: the variables that differ

``env`` goes over this process's environment with ``DJANGO_SETTINGS_MODULE=mcpsite.settings``
(``inherit=False``: ``env`` is the whole environment, as a ``LiveServer`` of another project
builds it). A failure raises with the command's output.

A test that runs several commands against the same environment keeps one process for them all::

    with ManageSession(env) as session:     # one Django start-up (about 2-3 s on the CI machine)
        token = session("mcp_keys", "create", "ci")
        session("mcp_keys", "revoke", token.split("_")[1])

Each command still runs as ``manage.py`` would run it (``tests/support/manage_runner.py``) and
reads the database afresh; only the process and its start-up are shared. Everything the servers
learn still comes through the database and the bus, as from an operator's separate process.
Two things differ from a fresh process, so some commands keep ``manage()``: what a process caches
lives on between commands (a backend ``mcp_settings`` made, whose asyncio client is bound to the
loop of the first ``asyncio.run``; a key table re-read every few seconds), and a change a command
publishes reaches the workers in milliseconds, with no process exit before the next request (a
test that uses a key at once waits until the workers know it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def manage_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment for mcpsite's ``manage.py``, with ``env`` over it."""
    return {**os.environ, "DJANGO_SETTINGS_MODULE": "mcpsite.settings", **(env or {})}


def manage(
    env: Mapping[str, str] | None,
    *argv: str,
    inherit: bool = True,
    project_dir: Path = ROOT,
    python: str = sys.executable,
    timeout: float = 120.0,
) -> str:
    """Run ``manage.py argv``; its standard output (a ``RuntimeError`` with both outputs if it fails)."""
    done = subprocess.run(
        [python, str(project_dir / "manage.py"), *argv],
        cwd=project_dir,
        env=manage_env(env) if inherit else dict(env or {}),
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"manage.py {' '.join(argv)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
    return done.stdout


class ManageSession:
    """One ``manage.py`` process for many commands (see the module's docstring): ``session(*argv)``
    is ``manage(env, *argv)`` without the process start-up. Safe to call from several threads
    (one command at a time). For another project, ``env`` names its ``DJANGO_SETTINGS_MODULE``
    (the runner's default is mcpsite's)."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        inherit: bool = True,
        python: str = sys.executable,
        project_dir: Path = ROOT,
    ) -> None:
        self._env = manage_env(env) if inherit else dict(env or {})
        self._python = python
        # Another project (examples/): its folder, and its settings named in ``env`` (the runner's
        # default is mcpsite's).
        self._project_dir = project_dir
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None
        self._log: tempfile._TemporaryFileWrapper[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        # stderr to a file, not a pipe: nobody reads it between commands, and a full pipe would block.
        self._log = tempfile.NamedTemporaryFile("w+", prefix="mcpsite-manage-", suffix=".log")
        self._process = subprocess.Popen(
            [self._python, str(Path(__file__).with_name("manage_runner.py"))],
            cwd=self._project_dir,
            env=self._env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            errors="replace",
        )
        return self._process

    def __call__(self, *argv: str, timeout: float = 120.0) -> str:
        """Run ``manage.py argv`` in the session's process; its standard output (a ``RuntimeError``
        with both outputs if it fails)."""
        with self._lock:
            process = self._process or self._start()
            assert process.stdin is not None and process.stdout is not None
            reply: dict[str, object] = {}
            timer = threading.Timer(timeout, process.kill)  # a hung command fails, as manage()'s timeout
            timer.start()
            try:
                process.stdin.write(json.dumps(list(argv)) + "\n")
                process.stdin.flush()
                line = process.stdout.readline()
                reply = json.loads(line) if line else {}
            except (BrokenPipeError, ValueError):
                reply = {}
            finally:
                timer.cancel()
            if not reply:
                self._process = None
                process.kill()
                process.wait()
                ended = f"manage.py {' '.join(argv)}: the session process ended"
                raise RuntimeError(f"{ended}:\n{self._log_text()}")
        if reply["code"] != 0:
            raise RuntimeError(
                f"manage.py {' '.join(argv)} failed ({reply['code']}):\n{reply['stdout']}\n{reply['stderr']}"
            )
        return str(reply["stdout"])

    def run_all(self, commands: Sequence[Sequence[str]]) -> list[str]:
        """Each of ``commands`` in order; their standard outputs."""
        return [self(*argv) for argv in commands]

    def _log_text(self) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read()[-4000:]

    def close(self) -> None:
        """End the process (its standard input closed, it exits); idempotent."""
        process, self._process = self._process, None
        if process is not None:
            assert process.stdin is not None
            try:
                process.stdin.close()
                process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                process.kill()
                process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> ManageSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
