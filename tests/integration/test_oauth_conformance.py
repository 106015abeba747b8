"""The official conformance suite's authorization-server scenarios (its ``authorization`` command)
against the built-in authorization server: ``authorization-server-metadata-endpoint`` and
``authorization-code-grant``. The second prints an authorization URL and waits on its own loopback
callback for a browser to finish; here the browser is ``tests/support/oauth_flow.py`` (sign in,
consent), and the client is one registered beforehand, as an operator would in the admin, with a
loopback redirect (any port, RFC 8252 §7.3)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support import LiveServer
from tests.support.conformance import NODE, SUITE, describe, installed
from tests.support.live_server import MEMORY_PROVIDER, ROOT
from tests.support.oauth_flow import OAuthFlow, user
from tests.support.ports import free_port

CLIENT_ID = "conformance-suite"
TIMEOUT = 60.0


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    if not installed():
        pytest.skip("conformance suite not installed: run scripts/install-tools.sh")
    port = free_port()
    env = {
        "MCP_AUTH": "oauth",
        "MCP_OAUTH_ISSUER": "self",
        "MCP_RESOURCE_URL": f"http://127.0.0.1:{port}/mcp",
        "MCP_OAUTH_REGISTRATION_RATE": "2/3600",  # the suite registers nothing: only the test below
    }
    server = LiveServer(env=env, port=port, provider=MEMORY_PROVIDER, migrate=True).start()
    try:
        user(server.manage, "carol", "carol-password-1")
        server.manage(
            "shell",
            "-c",
            (  # a public client, pre-registered as in the admin
                "from oauth2_provider.models import Application; Application.objects.create("
                f"client_id={CLIENT_ID!r}, name='Conformance suite', client_type='public', "
                "authorization_grant_type='authorization-code', redirect_uris='http://127.0.0.1/callback', "
                "hash_client_secret=False, client_secret='')"
            ),
        )
        yield server
    finally:
        server.stop()


def suite(live: LiveServer, scenario: str | None, out: Path, *extra: str) -> subprocess.Popen[str]:
    """The suite's ``authorization`` command: ``scenario``, or every authorization-server scenario
    (the code grant reads the metadata scenario's result, so it runs only after it)."""
    argv = [
        str(NODE),
        str(SUITE),
        "authorization",
        "--url",
        live.base_url.rstrip("/"),
        *(("--scenario", scenario) if scenario else ()),
        "--output-dir",
        str(out),
        *extra,
    ]
    return subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT, env=dict(os.environ)
    )


def checks(out: Path) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    for path in sorted(out.glob("**/checks.json")):
        found.extend(json.loads(path.read_text()))
    return found


def test_the_metadata_endpoint_scenario_passes(live: LiveServer, tmp_path: Path) -> None:
    run = suite(live, "authorization-server-metadata-endpoint", tmp_path)
    output, _ = run.communicate(timeout=TIMEOUT)
    found = checks(tmp_path)
    failures = [c for c in found if c.get("status") != "SUCCESS"]
    assert found and not failures, "\n".join(map(describe, failures)) or output


def test_the_authorization_code_grant_scenario_passes(live: LiveServer, tmp_path: Path) -> None:
    port = free_port()
    run = suite(live, None, tmp_path, "--client-id", CLIENT_ID, "--port", str(port), "--resource", live.url)
    assert run.stdout is not None
    printed: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in run.stdout or ():
            printed.put(line)
        printed.put("")  # the suite is done

    threading.Thread(target=read, daemon=True).start()
    lines: list[str] = []
    try:
        authorize = ""
        while not authorize:
            try:
                line = printed.get(timeout=TIMEOUT)  # the deadline: the suite prints within it
            except queue.Empty:
                pytest.fail("the suite never printed its authorization URL:\n" + "".join(lines))
            if not line:
                pytest.fail("the suite ended without an authorization URL:\n" + "".join(lines))
            lines.append(line)
            if "/oauth/authorize/?" in line:
                authorize = line.strip()
        flow = OAuthFlow(live.base_url, "carol", "carol-password-1")
        page = flow.consent_page(authorize)  # a browser: sign in, then the consent page
        assert page.status_code == 200, page.text[:500]
        redirect = flow.allow(page)
        assert redirect.params["iss"] == live.base_url.rstrip("/")
        assert httpx.get(redirect.location).status_code == 200  # the suite's own callback
        run.wait(timeout=TIMEOUT)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    found = checks(tmp_path)
    failures = [c for c in found if c.get("status") != "SUCCESS"]
    assert {c.get("id") for c in found} >= {"authorization-server-metadata", "authorization-code-grant"}
    assert not failures, "\n".join(map(describe, failures)) or "".join(lines)


def test_registration_is_rate_limited_per_address(live: LiveServer) -> None:
    body = {"redirect_uris": ["http://127.0.0.1/cb"], "token_endpoint_auth_method": "none"}
    answers = [httpx.post(f"{live.base_url}/oauth/register/", json=body) for _ in range(3)]
    assert [a.status_code for a in answers] == [201, 201, 429]
    assert answers[2].json()["error"] == "temporarily_unavailable"
    assert int(answers[2].headers["retry-after"]) > 0
