"""Clients of the built-in authorization server: Client ID Metadata Documents (served over HTTPS on
loopback, ``tests/support/cimd_host.py``, which ``MCP_OAUTH_CIMD_ALLOW_PRIVATE`` lets in for
development) and the official Python SDK's ``OAuthClientProvider`` completing the whole flow,
with DCR and with CIMD, through chromium (sign in, consent), then listing and calling tools; a
user who grants less sees less. One server and one document host for the module.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest

from tests.support import LiveServer
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, sign_in_and_consent
from tests.support.cimd_host import DocumentHost
from tests.support.live_server import REGISTRY_PROVIDER
from tests.support.oauth_flow import PKCE, OAuthFlow, user
from tests.support.ports import free_port

REDIRECT = "http://127.0.0.1:9/cb"
SCOPES = {"mcp": {}, "mcp:echo": {"tools": ["echo"]}}
USER, PASSWORD = "dana", "dana-password-1"


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DocumentHost]:
    host = DocumentHost(tmp_path_factory.mktemp("cimd")).start()
    client = host.url("/client.json")
    host.documents["/client.json"] = {
        "client_id": client,
        "client_name": "Metadata Document Client",
        "logo_uri": "https://cdn.example/cimd.png",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
    }
    # Claims to be the other document's client: the client_id must equal the URL it came from.
    host.documents["/mismatch.json"] = {**host.documents["/client.json"], "client_id": client}
    yield host
    host.stop()


@pytest.fixture(scope="module")
def live(host: DocumentHost) -> Iterator[LiveServer]:
    port = free_port()
    env = {
        "MCP_AUTH": "oauth",
        "MCP_OAUTH_ISSUER": "self",
        "MCP_RESOURCE_URL": f"http://127.0.0.1:{port}/mcp",
        "MCP_OAUTH_SCOPES": json.dumps(SCOPES),
        "MCP_OAUTH_CIMD_ALLOW_PRIVATE": "1",
        "SSL_CERT_FILE": str(host.cert_path),
    }  # the document host's certificate, verified
    server = LiveServer(env=env, port=port, provider=REGISTRY_PROVIDER, load="load_demo").start()
    try:
        user(server.manage, USER, PASSWORD)
        yield server
    finally:
        server.stop()


def test_a_metadata_document_client_signs_in_and_its_document_is_cached(
    live: LiveServer, host: DocumentHost
) -> None:
    flow = OAuthFlow(live.base_url, USER, PASSWORD)
    client = host.url("/client.json")
    page = flow.consent_page(flow.authorize_url(client, PKCE.new(), REDIRECT))
    assert page.status_code == 200 and "Metadata Document Client" in page.text
    assert 'src="https://cdn.example/cimd.png"' in page.text  # the document's logo_uri
    pkce = PKCE.new()
    redirect = flow.authorize(client, pkce, REDIRECT)
    assert flow.exchange(client, redirect.code, pkce, REDIRECT)["access_token"]
    assert host.hits["/client.json"] == 1  # fetched once: Cache-Control max-age=300 honoured
    flow.close()


def test_a_document_whose_client_id_is_not_its_url_is_refused(live: LiveServer, host: DocumentHost) -> None:
    flow = OAuthFlow(live.base_url, USER, PASSWORD)
    page = flow.consent_page(flow.authorize_url(host.url("/mismatch.json"), PKCE.new(), REDIRECT))
    # An unknown client: no redirect to an unverified URI (RFC 6749 §4.1.2.1), invalid_request.
    assert page.status_code == 400 and "location" not in page.headers
    assert "invalid_request" in page.text or "Invalid client_id" in page.text
    assert "does not match the client_id URL" in live.log_text()
    flow.close()


# -- the official SDK, through a browser ---------------------------------------------------------


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


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium (scripts/test.sh installs it)")
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            await launched.close()


async def connect(
    live: LiveServer,
    browser: Any,
    *,
    metadata_url: str | None = None,
    uncheck: tuple[str, ...] = (),
    then_greet: bool = False,
) -> tuple[list[str], str, Memory]:
    """The SDK's OAuth client provider against ``live``: a person signs in and consents in
    ``browser`` (unticking ``uncheck`` the first time); the tools it lists, what echo answers (and
    then greet, with ``then_greet``), the stored tokens."""
    from mcp import ClientSession
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    page = await browser.new_page()
    returned: list[str] = []

    async def redirect_handler(url: str) -> None:
        untick = () if returned else uncheck
        returned.append(await sign_in_and_consent(page, url, USER, PASSWORD, REDIRECT, uncheck=untick))

    async def callback_handler() -> AuthorizationCodeResult:
        params = {k: v[0] for k, v in parse_qs(urlsplit(returned[-1]).query).items()}
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    storage = Memory()
    provider = OAuthClientProvider(
        live.url,
        OAuthClientMetadata(
            client_name="SDK client",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method="none",
        ),
        storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=metadata_url,
    )
    http = create_mcp_http_client(auth=provider)
    async with http, streamable_http_client(live.url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            with anyio.fail_after(60):
                await session.initialize()
                tools = [t.name for t in (await session.list_tools()).tools]
                echoed = await session.call_tool("echo", {"message": "through OAuth"})
                text = echoed.content[0].text  # type: ignore[union-attr]
                if then_greet:
                    greeted = await session.call_tool("greet", {"name": "Dana"})
                    text += " | " + greeted.content[0].text  # type: ignore[union-attr]
    await page.close()
    return tools, text, storage


async def test_the_sdk_registers_signs_in_and_calls_tools(live: LiveServer, browser: Any) -> None:
    tools, echoed, storage = await connect(live, browser)
    assert "echo" in tools and "greet" in tools
    assert echoed == "through OAuth"
    assert storage.client.client_id and not storage.client.client_id.startswith("https://")  # DCR
    assert storage.tokens.refresh_token


async def test_the_sdk_signs_in_with_a_client_metadata_document(
    live: LiveServer, browser: Any, host: DocumentHost
) -> None:
    tools, echoed, storage = await connect(live, browser, metadata_url=host.url("/client.json"))
    assert echoed == "through OAuth" and "greet" in tools
    assert storage.client.client_id == host.url("/client.json")  # CIMD, not DCR


async def test_a_user_who_grants_less_gives_the_sdk_only_those_tools_until_it_steps_up(
    live: LiveServer, browser: Any
) -> None:
    tools, said, storage = await connect(live, browser, uncheck=("mcp",), then_greet=True)
    assert tools == ["echo"]  # the first consent granted mcp:echo only
    # greet: 403 insufficient_scope naming "mcp:echo mcp"; the SDK re-authorizes with them (the
    # user consents to both this time) and retries.
    assert said.startswith("through OAuth | ") and "Dana" in said
    assert set(storage.tokens.scope.split()) == {"mcp", "mcp:echo"}
