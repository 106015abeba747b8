"""The OAuth discovery probes that clients such as ``mcp-remote`` (the TypeScript SDK 1.x's auth)
send to a server with ``MCP_AUTH=keys`` after its 401: every one gets the spec's answer (404: no
RFC 9728 or RFC 8414 document, no default endpoints) and none writes a WARNING line to the log
(``mcpsite/discovery_probes.py``); a 404 of any other path still does. With ``keys,oauth`` the
RFC 9728 document is served. Real uvicorn workers, raw httpx."""

from __future__ import annotations

import httpx
import pytest

from tests.support import MEMORY_PROVIDER, LiveServer, live_server_fixture
from tests.support.mcp_http import POST_HEADERS, initialize_message

pytestmark = pytest.mark.timeout(90)
keys = live_server_fixture(provider=MEMORY_PROVIDER, migrate=True, env={"MCP_AUTH": "keys"})

# What mcp-remote (TypeScript SDK 1.x auth.ts) asks for, in its order, after the 401 of /mcp:
# RFC 9728 path-inserted then root; RFC 8414 and OpenID discovery, path-inserted, path-appended
# and root; then the 2025-03-26 default endpoints at the origin.
PROBES = [
    ("GET", "/.well-known/oauth-protected-resource/mcp"),
    ("GET", "/.well-known/oauth-protected-resource"),
    ("GET", "/.well-known/oauth-authorization-server/mcp"),
    ("GET", "/.well-known/oauth-authorization-server"),
    ("GET", "/.well-known/openid-configuration/mcp"),
    ("GET", "/mcp/.well-known/openid-configuration"),
    ("GET", "/.well-known/openid-configuration"),
    ("POST", "/register"),
    ("GET", "/authorize?response_type=code&client_id=x&code_challenge=y&code_challenge_method=S256"),
    ("POST", "/token"),
]


async def test_discovery_probes_to_a_keyed_server_get_404_and_log_no_warning(keys: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=keys.base_url, timeout=10) as client:
        unauthorized = await client.post("/mcp", headers=POST_HEADERS, json=initialize_message())
        assert unauthorized.status_code == 401
        assert unauthorized.headers["www-authenticate"].lower().startswith("bearer")
        headers = {"mcp-protocol-version": "2025-06-18"}
        for method, path in PROBES:
            body = {"redirect_uris": ["http://127.0.0.1:3334/cb"]} if path == "/register" else None
            answer = await client.request(method, path, headers=headers, json=body)
            assert answer.status_code == 404, (method, path, answer.status_code)
        # The contrast: a 404 of a path that is no probe is still a WARNING.
        assert (await client.get("/no-such-page")).status_code == 404
        # The last request's line is in the log once the next one is answered (same worker).
        assert (await client.get("/healthz")).status_code == 200
    log = keys.log_text()
    warnings = [line for line in log.splitlines() if "WARNING" in line]
    assert len(warnings) == 1 and "/no-such-page" in warnings[0], warnings
    assert "Traceback" not in log


def test_with_oauth_accepted_the_protected_resource_metadata_is_served() -> None:
    env = {
        "MCP_AUTH": "keys,oauth",
        "MCP_OAUTH_ISSUER": "https://issuer.example.com",
        "MCP_OAUTH_JWKS_URL": "https://issuer.example.com/jwks.json",
    }
    with LiveServer(provider=MEMORY_PROVIDER, migrate=True, env=env) as live:
        document = httpx.get(f"{live.base_url}/.well-known/oauth-protected-resource/mcp", timeout=10)
        assert document.status_code == 200
        assert document.json()["authorization_servers"] == ["https://issuer.example.com"]
        assert "WARNING" not in live.log_text()
