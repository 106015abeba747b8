"""The official conformance suite's three skills scenarios (SEP-2640, extension
``io.modelcontextprotocol/skills``) against our server serving the fixture skill set
(``manage.py load_skills``: nested folders, a nested skill, a binary file).

One real server process (``tests/support/live_server.py``) for the module; each scenario runs in
its own suite process (``--scenario S --force``: extension scenarios are not on the spec timeline),
side by side. A scenario passes as ``test_conformance.py`` counts it: no FAILURE and at least one
SUCCESS; WARNING checks (SHOULD-level) are reported as pytest warnings.
"""

from __future__ import annotations

import json
import subprocess
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.conformance import NODE, SUITE, TOOLS, ScenarioRun, describe, installed
from tests.support.live_server import REGISTRY_PROVIDER, ROOT, LiveServer

SCENARIOS = ("sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory")
TIMEOUT = 120.0


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    if not installed():
        pytest.skip(f"conformance suite not installed in {TOOLS}: run scripts/install-tools.sh")
    server = LiveServer(provider=REGISTRY_PROVIDER, load="load_skills").start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="module")
def runs(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, ScenarioRun]:
    base = tmp_path_factory.mktemp("conformance-skills")

    def one(scenario: str) -> tuple[str, ScenarioRun]:
        out: Path = base / scenario
        argv = [str(NODE), str(SUITE), "server", "--url", server_url, "--scenario", scenario, "--force",
                "--output-dir", str(out)]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT)
            run = ScenarioRun(scenario, done.returncode, done.stdout, done.stderr)
        except subprocess.TimeoutExpired as exc:
            run = ScenarioRun(scenario, -1, str(exc.stdout or ""), f"timed out after {TIMEOUT} s")
        for checks_file in sorted(out.glob("server-*/checks.json")):
            run.checks.extend(json.loads(checks_file.read_text()))
        return scenario, run

    with ThreadPoolExecutor(max_workers=len(SCENARIOS)) as pool:
        return dict(pool.map(one, SCENARIOS))


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_server_passes_skills_scenario(scenario: str, runs: dict[str, ScenarioRun]) -> None:
    run = runs[scenario]
    if not run.checks:
        pytest.fail(f"{scenario}: no checks (exit {run.returncode}):\n{run.output_tail()}", pytrace=False)
    failures = [c for c in run.checks if c.get("status") == "FAILURE"]
    if failures:
        report = "\n".join(map(describe, failures))
        pytest.fail(f"{scenario}: {len(failures)} FAILURE check(s):\n{report}", pytrace=False)
    assert any(c.get("status") == "SUCCESS" for c in run.checks), "\n".join(map(describe, run.checks))
    for check in run.checks:
        if check.get("status") in ("WARNING", "SKIPPED"):
            warnings.warn(f"conformance {scenario}: {describe(check)}", UserWarning, stacklevel=1)
