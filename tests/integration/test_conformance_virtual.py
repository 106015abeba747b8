"""The official conformance suite on a virtual server (issue 39 "Show": it passes on a virtual
endpoint as on ``/mcp``): the same scenarios as ``test_conformance.py`` for both revisions, against
``/mcp/everything``, a server selecting every definition ``load_conformance`` made
(``tests/support/virtual_servers.py``). One more server process and one suite process per
revision; the tasks extension's scenarios run on ``/mcp`` only (``test_conformance.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.integration.test_conformance import LEGACY, LEGACY_SCENARIOS, MODERN, MODERN_SCENARIOS, run_suite
from tests.support.conformance import ScenarioRun, describe, installed
from tests.support.live_server import LiveServer
from tests.support.mcp_http import POST_HEADERS, initialize_message

RUNS = tuple((LEGACY, name) for name in LEGACY_SCENARIOS) + tuple((MODERN, name) for name in MODERN_SCENARIOS)


@pytest.fixture(scope="module")
def virtual_url() -> Iterator[str]:
    if not installed():
        pytest.skip("conformance suite not installed: run scripts/install-tools.sh")
    server = LiveServer(
        provider="tests.support.virtual_servers.EverythingServer",
        load="load_conformance",
        mcp_path="/mcp/everything",
    ).start()
    try:
        answer = httpx.post(server.url, headers=POST_HEADERS, json=initialize_message(), timeout=10)
        assert answer.json()["result"]["serverInfo"]["name"] == "everything"  # the virtual server
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="module")
def virtual_runs(
    virtual_url: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, ScenarioRun]]:
    base = tmp_path_factory.mktemp("conformance-virtual")
    return {version: run_suite(virtual_url, version, base / version) for version in (LEGACY, MODERN)}


@pytest.mark.parametrize(("version", "scenario"), RUNS, ids=[f"{v}-{s}" for v, s in RUNS])
def test_a_virtual_server_passes_conformance_scenario(
    version: str, scenario: str, virtual_runs: dict[str, dict[str, ScenarioRun]]
) -> None:
    run = virtual_runs[version].get(scenario)
    assert run is not None and run.checks, f"{scenario}: not run for {version}"
    failures = [check for check in run.checks if check.get("status") == "FAILURE"]
    assert not failures, f"{scenario} on /mcp/everything:\n" + "\n".join(map(describe, failures))
    assert any(check.get("status") == "SUCCESS" for check in run.checks), f"{scenario}: no SUCCESS check"
