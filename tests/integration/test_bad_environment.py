"""A bad environment value stops start-up with one line that names the variable, and a non-zero
exit: the server as ``scripts/serve.sh`` starts it (uvicorn), daphne, ``manage.py check`` and
``manage.py runserver``; no traceback (``mcpsite/environment.py``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from mcpsite.environment import EXIT_CODE
from tests.support.live_server import ROOT
from tests.support.ports import free_port

pytestmark = pytest.mark.timeout(120)
BIN = os.path.dirname(sys.executable)


def run(argv: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MCP_", "DJANGO_", "REGISTRY_"))}
    full = {**base, "DJANGO_SETTINGS_MODULE": "mcpsite.settings", "PYTHONUNBUFFERED": "1", **env}
    # A server that started anyway would run until the timeout: the test fails on it.
    return subprocess.run(argv, cwd=ROOT, env=full, capture_output=True, text=True, timeout=60)


def assert_one_line_naming(done: subprocess.CompletedProcess[str], variable: str) -> None:
    output = (done.stdout + done.stderr).strip()
    assert done.returncode == EXIT_CODE, output
    assert "Traceback" not in output
    assert output.count("\n") == 0 and output.startswith(f"mcpsite: {variable}="), output


def uvicorn() -> list[str]:  # as scripts/serve.sh runs it
    return [
        f"{BIN}/uvicorn",
        "mcpsite.asgi:application",
        "--host",
        "127.0.0.1",
        "--port",
        str(free_port("127.0.0.1")),
        "--no-access-log",
    ]


def daphne() -> list[str]:
    return [
        sys.executable,
        "-m",
        "daphne",
        "-b",
        "127.0.0.1",
        "-p",
        str(free_port("127.0.0.1")),
        "mcpsite.asgi:application",
    ]


def check() -> list[str]:
    return [sys.executable, "manage.py", "check"]


def runserver() -> list[str]:  # the autoreloader's child fails; the parent passes its exit on
    return [sys.executable, "manage.py", "runserver", f"127.0.0.1:{free_port('127.0.0.1')}"]


@pytest.mark.parametrize("command", [uvicorn, daphne, check, runserver])
def test_a_session_ttl_that_is_not_a_number_stops_start_up_with_one_line(command: object) -> None:
    done = run(command(), MCP_SESSION_TTL="abc")  # type: ignore[operator]
    assert_one_line_naming(done, "MCP_SESSION_TTL")
    assert "expected a number" in done.stderr


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("MCP_MAX_SESSIONS", "lots", "a whole number"),
        ("MCP_ALWAYS_STREAM", "maybe", "1/true/yes/on or 0/false/no/off"),
        ("MCP_OAUTH_SCOPES", "{not json", "JSON"),
        ("MCP_MAX_IN_FLIGHT", "4.5", "a whole number"),
        ("MCP_AUDIT_RETENTION_DAYS", "ninety", "a whole number"),
        ("REGISTRY_HTTP_RETRIES", "x", "a whole number"),
    ],
)
def test_each_kind_of_bad_value_is_named_with_what_was_expected(
    variable: str, value: str, expected: str
) -> None:
    done = run(check(), **{variable: value})
    assert_one_line_naming(done, variable)
    assert f"expected {expected}" in done.stderr


def test_an_empty_optional_value_still_means_the_default() -> None:
    done = run(check(), MCP_MAX_IN_FLIGHT="", MCP_RATE_LIMIT=" ")
    assert done.returncode == 0, done.stderr
