"""The chart's checker, run from the tests: ``render`` runs scripts/chart_check.py with the Python
of .tools/k8s (scripts/install-tools.sh makes it) and returns its JSON report; ``pick`` finds a
rendered object in it. A machine without the tools fails with their name, never skips."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "mcpsite"
VALUE_SETS = sorted((CHART / "ci").glob("*-values.yaml"))
TOOLS = Path(os.environ.get("MCPSITE_TOOLS_DIR", ROOT / ".tools"))
PYTHON = TOOLS / "k8s" / "bin" / "python"
CHECKER = ROOT / "scripts" / "chart_check.py"


def render(*values: Path, inject: dict[str, Any] | None = None, scan: bool = True) -> dict[str, Any]:
    """The checker's report for these value files, ``inject`` merged over each."""
    if not os.access(PYTHON, os.X_OK):
        pytest.fail(f"{PYTHON} is missing: run `bash scripts/install-tools.sh` (the test command does)")
    args = [str(PYTHON), str(CHECKER), str(CHART), *map(str, values), "--set-json", json.dumps(inject or {})]
    if not scan:
        args.append("--no-scan")
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def pick(entry: dict[str, Any], kind: str, name_suffix: str = "") -> list[dict[str, Any]]:
    """The rendered objects of one value set of a kind, named <release>-mcpsite<name_suffix>."""
    return [o["object"] for o in entry["objects"]
            if o["kind"] == kind and o["name"].endswith("mcpsite" + name_suffix)]


def env_of(container: dict[str, Any]) -> dict[str, Any]:
    """A container's env as name → value (a literal, or its valueFrom)."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}
