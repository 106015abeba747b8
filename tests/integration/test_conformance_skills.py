"""The official conformance suite's three skills scenarios (SEP-2640, extension
``io.modelcontextprotocol/skills``) against our server serving the fixture skill set
(``manage.py load_skills``: nested folders, a nested skill, a binary file).

One real server process (``tests/support/live_server.py``) for the module; each scenario runs in
its own suite process (``--scenario S --force``: extension scenarios are not on the spec timeline),
side by side. A scenario passes as ``test_conformance.py`` counts it: no FAILURE and at least one
SUCCESS; WARNING checks (SHOULD-level) are reported as pytest warnings.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest

from tests.support.conformance import TOOLS, ScenarioRun, describe, installed, run_forced_scenarios
from tests.support.live_server import REGISTRY_PROVIDER, LiveServer

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
    return run_forced_scenarios(server_url, SCENARIOS, tmp_path_factory.mktemp("conformance-skills"), TIMEOUT)


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
