"""Build the project's wheel the way ``pip install`` does, from a copy of the source tree.

A copy, because an in-tree build writes ``build/`` and ``*.egg-info`` into the checkout that other
test workers are reading. The copy leaves out what is not source (virtualenvs, tools, caches,
databases). pip builds in its isolated environment with the pinned build backend (the pip cache
makes that quick after the first time).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOT_SOURCE = shutil.ignore_patterns(
    ".git",
    ".venv*",
    ".tools",
    "node_modules",
    "__pycache__",
    "*.pyc",
    "build",
    "*.egg-info",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    "staticfiles",
    "*.sqlite3",
    ".notes",
)


def build_wheel(workdir: Path, timeout: float = 300.0) -> Path:
    """The wheel of this checkout, built under ``workdir``; its path."""
    source, out = workdir / "src", workdir / "dist"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE, symlinks=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(out), str(source)],
        check=True,
        timeout=timeout,
        capture_output=True,
    )
    (wheel,) = out.glob("mcpsite-*.whl")
    return wheel
