"""The official conformance suite against a server with ``MCP_AUTH=keys``: the scenarios pass with
an API key, and without it the suite gets nowhere (401).

The suite's server mode has no option for credentials, so its node process is started with
``--require tests/support/conformance_auth.cjs``, which adds ``Authorization: Bearer <key>`` to
every ``fetch`` it makes (POSTs, GET streams, DELETE). ``test_conformance.py`` runs every scenario
against an open instance; this module runs a cross-section (lifecycle, tools with sampling and
progress, resources with subscriptions, prompts, completion, both SSE scenarios) with auth on, to
keep the suite's time down. ``dns-rebinding-protection`` is not among them: it sends its requests
without ``fetch``, so no key reaches the server (its "bad Host is refused" half passes, since the
Host/Origin check comes before authentication; its "good Host is accepted" half gets a 401).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.conformance import NODE, SUITE, ScenarioRun, describe, installed
from tests.support.live_server import REGISTRY_PROVIDER, ROOT, LiveServer

PRELOAD = ROOT / "tests" / "support" / "conformance_auth.cjs"
SCENARIOS = (
    "server-initialize", "ping", "tools-list", "tools-call-simple-text", "tools-call-sampling",
    "tools-call-with-progress", "resources-read-text", "resources-subscribe", "prompts-get-with-args",
    "completion-complete", "server-sse-polling", "server-sse-multiple-streams",
)
TIMEOUT = 60.0


@pytest.fixture(scope="module")
def keyed() -> Iterator[tuple[LiveServer, str]]:
    if not installed():
        pytest.skip("conformance suite not installed: run scripts/install-tools.sh")
    server = LiveServer(env={"MCP_AUTH": "keys"}, provider=REGISTRY_PROVIDER, load="load_conformance")
    server.start()
    try:
        token = server.manage("mcp_keys", "create", "conformance").strip()
        deadline = time.monotonic() + 10  # the server's key ring polls the table every second
        while httpx.post(server.url, headers={"authorization": f"Bearer {token}"}).status_code == 401:
            assert time.monotonic() < deadline, "the server never learnt the new key"
            time.sleep(0.1)
        yield server, token
    finally:
        server.stop()


def run(url: str, scenario: str, out: Path, token: str | None) -> ScenarioRun:
    argv = [str(NODE), "--require", str(PRELOAD), str(SUITE), "server", "--url", url,
            "--scenario", scenario, "--output-dir", str(out)]
    env = {**os.environ, "MCP_CONFORMANCE_TOKEN": token or ""}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT, env=env)
    result = ScenarioRun(scenario, done.returncode, done.stdout, done.stderr)
    for checks in sorted(out.glob("*/checks.json")):
        result.checks.extend(json.loads(checks.read_text()))
    return result


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario_passes_with_an_api_key(
    keyed: tuple[LiveServer, str], scenario: str, tmp_path: Path
) -> None:
    server, token = keyed
    result = run(server.url, scenario, tmp_path, token)
    failures = [c for c in result.checks if c.get("status") == "FAILURE"]
    assert result.checks and not failures, "\n".join(map(describe, failures)) or result.output_tail()
    assert any(c.get("status") == "SUCCESS" for c in result.checks)


def test_without_the_key_the_suite_is_refused(keyed: tuple[LiveServer, str], tmp_path: Path) -> None:
    server, _ = keyed
    result = run(server.url, "server-initialize", tmp_path, None)
    assert [c.get("status") for c in result.checks if c.get("id") == "server-initialize"] == ["FAILURE"]
    assert result.returncode != 0
