"""``manage.py`` in a process of its own, for tests and the bench: the one way to run a management
command against a server's database and Redis (migrate, load a registry, create keys or tokens).

    out = manage(env, "mcp_keys", "create", "ci")     # env: the variables that differ

``env`` goes over this process's environment with ``DJANGO_SETTINGS_MODULE=mcpsite.settings``
(``inherit=False``: ``env`` is the whole environment, as a ``LiveServer`` of another project
builds it). A failure raises with the command's output.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
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
