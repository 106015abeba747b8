"""The official MCP conformance suite (npm ``@modelcontextprotocol/conformance``) against our server.

One real server process (uvicorn on a free loopback port, a temporary SQLite database,
``migrate`` + ``load_conformance``) is shared by the module. Every server scenario the pinned
suite tags 2025-11-25 or 2026-07-28, the pending ones included, runs in one
``node … server --spec-version V --suite all`` process per revision, the ``tasks-*`` scenarios of
the extension io.modelcontextprotocol/tasks one process each (``--scenario S --force``), and each
scenario becomes one test that fails with the scenario's FAILURE checks and their messages. The
suite's verdict is read from the ``checks.json`` it writes with ``--output-dir``, not from its
coloured console output. A scenario passes as the suite's own tier assessment counts it: no
FAILURE and at least one SUCCESS (a scenario that only logged INFO lines tested nothing). WARNING checks
(SHOULD-level) do not fail; they are reported as pytest warnings.

The tools come from ``scripts/install-tools.sh`` (node 22 and the suite, pinned in
``tools/package-lock.json``, installed into ``.tools/``); without them the tests skip and say so.
Set ``MCP_CONFORMANCE_URL`` to run the scenarios against an already running server instead, or
``MCP_CONFORMANCE_SERVER=daphne`` to start ours under daphne.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.conformance import (
    NODE,
    SUITE,
    TOOLS,
    ScenarioRun,
    describe,
    installed,
    run_forced_scenarios,
)
from tests.support.live_server import REGISTRY_PROVIDER, ROOT, LiveServer

SUITE_VERSION = "0.2.0-alpha.12"
LEGACY = "2025-11-25"
MODERN = "2026-07-28"

# `list --server` of the pinned suite, in its order: every scenario it runs for 2025-11-25
# (`--spec-version 2025-11-25 --suite all`, pending ones included: our server must pass them too).
LEGACY_SCENARIOS = (
    "server-initialize",
    "server-session-lifecycle",
    "logging-set-level",
    "ping",
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-with-logging",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-sampling",
    "tools-call-elicitation",
    "json-schema-2020-12",
    "elicitation-sep1034-defaults",
    "server-sse-polling",
    "server-sse-multiple-streams",
    "elicitation-sep1330-enums",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "dns-rebinding-protection",
)
# The scenarios tagged 2026-07-28 (`--requirements 2026-07-28` runs these plus the extension
# scenarios, which are not scored for the revision: see docs/reference/endpoint.md "Conformance").
MODERN_SCENARIOS = (
    "server-stateless",
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-progress",
    "json-schema-2020-12",
    "server-sse-multiple-streams",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "sep-2164-resource-not-found",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "dns-rebinding-protection",
    "caching",
    "http-header-validation",
    "http-custom-header-server-validation",
    "input-required-result-basic-elicitation",
    "input-required-result-basic-sampling",
    "input-required-result-basic-list-roots",
    "input-required-result-request-state",
    "input-required-result-multiple-input-requests",
    "input-required-result-multi-round",
    "input-required-result-missing-input-response",
    "input-required-result-non-tool-request",
    "input-required-result-result-type",
    "input-required-result-unsupported-methods",
    "input-required-result-tampered-state",
    "input-required-result-capability-check",
    "input-required-result-ignore-extra-params",
    "input-required-result-validate-input",
)
# The scenarios of the extension io.modelcontextprotocol/tasks (SEP-2663), tagged "[extension]":
# not on the spec timeline, so each runs alone with --force (at 2026-07-28, the suite's choice
# for extension scenarios). tasks-status-notifications only reports SKIPPED (the suite's own
# pending rewrite for subscriptions/listen).
TASKS = "tasks-extension"
TASK_SCENARIOS = (
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
)
SKIPPED_BY_THE_SUITE = frozenset({"tasks-status-notifications"})
RUNS = (
    tuple((LEGACY, name) for name in LEGACY_SCENARIOS)
    + tuple((MODERN, name) for name in MODERN_SCENARIOS)
    + tuple((TASKS, name) for name in TASK_SCENARIOS)
)
# One suite process per revision runs all its scenarios in a few seconds; the deadline is for a
# server that hangs (server-sse-polling alone may wait 10 s for its stream).
SUITE_TIMEOUT = 300.0
# The server runs in its default configuration: server-sse-polling (SEP-1699) passes because the
# test_reconnection handler closes its own POST stream (ctx.close_stream()) after the priming
# event, and the suite fetches the result with GET + Last-Event-ID.
SERVER_ENV: dict[str, str] = {}


def run_suite(url: str, version: str, output_dir: Path) -> dict[str, ScenarioRun]:
    """One suite process for every scenario of ``version`` (``--suite all``: pending ones too);
    its verdict per scenario from ``<dir>/server-<scenario>-<timestamp>/checks.json``. One process
    runs them all in seconds, where a node start per scenario cost minutes on a loaded machine."""
    scenarios = ["--spec-version", version, "--suite", "all"]
    argv = [str(NODE), str(SUITE), "server", "--url", url, *scenarios, "--output-dir", str(output_dir)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=SUITE_TIMEOUT, cwd=ROOT)
        returncode, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        returncode, stdout, stderr = -1, str(exc.stdout or ""), f"timed out after {SUITE_TIMEOUT} s"
    runs: dict[str, ScenarioRun] = {}
    for checks_file in sorted(output_dir.glob("server-*/checks.json")):
        name = re.sub(r"^server-|-\d{4}-\d{2}-\d{2}T.*$", "", checks_file.parent.name)
        run = runs.setdefault(name, ScenarioRun(name, returncode, stdout, stderr))
        run.checks.extend(json.loads(checks_file.read_text()))
    return runs


@pytest.fixture(scope="module")
def suite_installed() -> None:
    if not installed():
        pytest.skip(f"conformance suite not installed in {TOOLS}: run scripts/install-tools.sh")


@pytest.fixture(scope="module")
def server_url(suite_installed: None) -> Iterator[str]:
    if os.environ.get("MCP_CONFORMANCE_URL"):
        yield os.environ["MCP_CONFORMANCE_URL"]
        return
    server = LiveServer(
        env=SERVER_ENV,
        server=os.environ.get("MCP_CONFORMANCE_SERVER", "uvicorn"),
        provider=REGISTRY_PROVIDER,
        load="load_conformance",
    ).start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="module")
def suite_runs(
    server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, ScenarioRun]]:
    """Both revisions' runs, one after the other (each scenario runs alone against the server)."""
    base = tmp_path_factory.mktemp("conformance")
    runs = {version: run_suite(server_url, version, base / version) for version in (LEGACY, MODERN)}
    runs[TASKS] = run_forced_scenarios(server_url, TASK_SCENARIOS, base / TASKS, SUITE_TIMEOUT)
    return runs


@pytest.mark.parametrize(("version", "scenario"), RUNS, ids=[f"{v}-{s}" for v, s in RUNS])
def test_server_passes_conformance_scenario(
    version: str, scenario: str, suite_runs: dict[str, dict[str, ScenarioRun]]
) -> None:
    run = suite_runs[version].get(scenario)
    if run is None:
        any_run = next(iter(suite_runs[version].values()), None)
        tail = any_run.output_tail() if any_run else "(no scenario output at all)"
        pytest.fail(f"{scenario}: the suite did not run it for {version}:\n{tail}", pytrace=False)
    if not run.checks:
        pytest.fail(
            f"{scenario}: the suite recorded no checks (exit {run.returncode}):\n{run.output_tail()}",
            pytrace=False,
        )
    if scenario in SKIPPED_BY_THE_SUITE and all(c.get("status") == "SKIPPED" for c in run.checks):
        pytest.skip(f"{scenario}: skipped by the suite itself ({run.checks[0].get('errorMessage')})")
    failures = [check for check in run.checks if check.get("status") == "FAILURE"]
    if failures:
        report = "\n".join(map(describe, failures))
        pytest.fail(f"{scenario}: {len(failures)} FAILURE check(s):\n{report}", pytrace=False)
    if not any(check.get("status") == "SUCCESS" for check in run.checks):
        pytest.fail(f"{scenario}: no SUCCESS check:\n" + "\n".join(map(describe, run.checks)), pytrace=False)
    for check in run.checks:
        if check.get("status") == "WARNING":
            warnings.warn(f"conformance {scenario}: {describe(check)}", UserWarning, stacklevel=1)


def test_pinned_suite_lists_exactly_these_scenarios(suite_installed: None) -> None:
    version = subprocess.run([str(NODE), str(SUITE), "--version"], capture_output=True, text=True, timeout=30)
    assert version.stdout.strip() == SUITE_VERSION
    listing = subprocess.run(
        [str(NODE), str(SUITE), "list", "--server"], capture_output=True, text=True, timeout=30
    )
    lines = [line.split(maxsplit=2) for line in listing.stdout.splitlines() if line.strip().startswith("- ")]
    tagged = [(parts[1], parts[2] if len(parts) > 2 else "") for parts in lines]
    assert tuple(name for name, tags in tagged if LEGACY in tags) == LEGACY_SCENARIOS
    assert tuple(name for name, tags in tagged if MODERN in tags) == MODERN_SCENARIOS
    assert tuple(name for name, _ in tagged if name.startswith("tasks-")) == TASK_SCENARIOS
