"""Issue 39, "Show": the official SDK client through the built-in authorization server on two
virtual servers, ``/mcp/a`` and ``/mcp/b``; each token works on its own endpoint only.

A real server (``MCP_AUTH=oauth``, ``MCP_OAUTH_ISSUER=self``) with two enabled servers and a
disabled one. The SDK's ``OAuthClientProvider`` finds each endpoint's RFC 9728 metadata from its
401, asks for a token whose ``resource`` is that endpoint (RFC 8707), and a person signs in and
consents (driven over HTTP, ``tests/support/oauth_flow.py``: the consent page names the server).
A token for ``a`` is refused on ``b`` and on ``/mcp``: 401 ``invalid_token``.

The tests that speak MCP on ``/mcp/<slug>`` need the router of ``/mcp/<slug>`` (the core's part of
issue 39): without it they are skipped, saying so; the metadata, consent and token tests run
either way.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import jwt
import pytest

from tests.support import LiveServer
from tests.support.live_server import REGISTRY_PROVIDER
from tests.support.mcp_http import POST_HEADERS, initialize_message
from tests.support.oauth_flow import PKCE, OAuthFlow, self_issuing_env, user
from tests.support.ports import free_port

REDIRECT = "http://127.0.0.1:9/cb"
SCOPES = {"mcp": {}}
USER, PASSWORD = "erin", "erin-password-1"
# Rows as stored, made before the server starts (its first snapshot holds them).
SERVERS = """
from django.apps import apps
from django.db.models import QuerySet
model = apps.get_model("registry", "VirtualServer")
QuerySet(model).bulk_create([
    model(slug="a", name="server-a", title="Server A", tools=["echo"]),
    model(slug="b", name="server-b", title="Server B", tools=["echo", "greet"]),
    model(slug="off", name="server-off", enabled=False, tools=["echo"]),
])
"""


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    port = free_port()
    env = self_issuing_env(port, SCOPES)
    load = [["load_demo"], ["shell", "-c", SERVERS]]
    server = LiveServer(env=env, port=port, provider=REGISTRY_PROVIDER, load=load).start()
    try:
        user(server.manage, USER, PASSWORD)
        yield server
    finally:
        server.stop()


@pytest.fixture
def routed(live: LiveServer) -> None:
    """Skip unless ``/mcp/<slug>`` is the MCP endpoint (an unknown slug: a JSON-RPC 404 body)."""
    probe = httpx.post(f"{live.url}/no-such-server", json=initialize_message("2025-11-25"),
                       headers=POST_HEADERS)
    if probe.status_code != 404 or not probe.headers.get("content-type", "").startswith("application/json"):
        pytest.skip("needs the /mcp/<slug> router (issue 39, the core's part): run after the merge")


def token_for(live: LiveServer, slug: str) -> tuple[str, str]:
    """A whole flow for ``/mcp/<slug>``: (the access token, the consent page's text)."""
    flow = OAuthFlow(live.base_url, USER, PASSWORD, resource=f"{live.url}/{slug}")
    try:
        client = flow.register([REDIRECT])
        pkce = PKCE.new()
        page = flow.consent_page(flow.authorize_url(client, pkce, REDIRECT))
        redirect = flow.allow(page)
        return flow.exchange(client, redirect.code, pkce, REDIRECT)["access_token"], page.text
    finally:
        flow.close()


def initialize(url: str, token: str) -> httpx.Response:
    return httpx.post(url, json=initialize_message("2025-11-25"),
                      headers={**POST_HEADERS, "authorization": f"Bearer {token}"})


# -- without the router ------------------------------------------------------------------------


def test_each_server_publishes_its_own_resource_metadata(live: LiveServer) -> None:
    for slug in ("a", "b"):
        meta = httpx.get(f"{live.base_url}/.well-known/oauth-protected-resource/mcp/{slug}").json()
        assert meta["resource"] == f"{live.url}/{slug}" and meta["authorization_servers"] == [live.base_url]
    assert httpx.get(f"{live.base_url}/.well-known/oauth-protected-resource/mcp/off").status_code == 404


def test_a_token_is_for_the_server_it_was_asked_for_and_the_consent_page_names_it(live: LiveServer) -> None:
    token, consent = token_for(live, "a")
    assert jwt.decode(token, options={"verify_signature": False})["aud"] == f"{live.url}/a"
    assert '<strong class="server-name">Server A</strong>' in consent


def test_no_token_is_issued_for_a_disabled_or_unknown_server(live: LiveServer) -> None:
    for slug in ("off", "nope"):
        flow = OAuthFlow(live.base_url, USER, PASSWORD, resource=f"{live.url}/{slug}")
        try:
            client = flow.register([REDIRECT])
            redirect = flow.authorize(client, PKCE.new(), REDIRECT)
            assert redirect.params["error"] == "invalid_target"
        finally:
            flow.close()


# -- with the router (after the merge) -----------------------------------------------------------


def test_a_token_for_one_server_is_refused_on_the_other_and_on_mcp(live: LiveServer, routed: None) -> None:
    for_a, for_b = token_for(live, "a")[0], token_for(live, "b")[0]
    assert initialize(f"{live.url}/a", for_a).status_code == 200
    assert initialize(f"{live.url}/b", for_b).status_code == 200
    refused = initialize(f"{live.url}/b", for_a)
    assert refused.status_code == 401
    challenge = refused.headers["www-authenticate"]
    assert 'error="invalid_token"' in challenge
    assert f'resource_metadata="{live.base_url}/.well-known/oauth-protected-resource/mcp/b"' in challenge
    assert initialize(live.url, for_a).status_code == 401  # the catch-all's audience is exact


async def sdk_session(live: LiveServer, slug: str) -> tuple[list[str], str, Any]:
    """The SDK's OAuth client on ``/mcp/<slug>``: discovery from the 401, DCR, sign-in and consent
    (over HTTP), the token; the tools it lists, what echo answers, the stored tokens."""
    from mcp import ClientSession
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    url = f"{live.url}/{slug}"
    person = OAuthFlow(live.base_url, USER, PASSWORD)
    returned: list[Any] = []

    async def redirect_handler(authorize_url: str) -> None:
        page = await anyio.to_thread.run_sync(person.consent_page, authorize_url)
        returned.append(await anyio.to_thread.run_sync(person.allow, page))

    async def callback_handler() -> AuthorizationCodeResult:
        params = returned[-1].params
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    storage = Memory()
    provider = OAuthClientProvider(
        url,
        OAuthClientMetadata(client_name=f"SDK client of {slug}", redirect_uris=[REDIRECT],
                            grant_types=["authorization_code", "refresh_token"],
                            token_endpoint_auth_method="none"),
        storage, redirect_handler=redirect_handler, callback_handler=callback_handler,
    )
    http = create_mcp_http_client(auth=provider)
    try:
        async with http, streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(60):
                    await session.initialize()
                    tools = [t.name for t in (await session.list_tools()).tools]
                    echoed = await session.call_tool("echo", {"message": f"via {slug}"})
    finally:
        person.close()
    return tools, echoed.content[0].text, storage  # type: ignore[union-attr]


class Memory:
    """The SDK's ``TokenStorage``, in memory."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client

    async def set_client_info(self, client_info: Any) -> None:
        self.client = client_info


async def test_the_sdk_gets_a_token_per_server_that_works_there_only(live: LiveServer, routed: None) -> None:
    tools_a, said_a, storage_a = await sdk_session(live, "a")
    tools_b, said_b, storage_b = await sdk_session(live, "b")
    assert (tools_a, said_a) == (["echo"], "via a")
    assert set(tools_b) == {"echo", "greet"} and said_b == "via b"
    token_a, token_b = storage_a.tokens.access_token, storage_b.tokens.access_token
    assert jwt.decode(token_a, options={"verify_signature": False})["aud"] == f"{live.url}/a"
    assert (await anyio.to_thread.run_sync(initialize, f"{live.url}/b", token_a)).status_code == 401
    assert (await anyio.to_thread.run_sync(initialize, f"{live.url}/a", token_b)).status_code == 401
