"""The parts of the "as the user" upstream tests (issue 42 item 3): a loopback third party (an
OAuth provider and an API checking its tokens, ``third_party.py``), an upstream MCP server that
checks every request's token there (``user_upstream_process.py``), and an mcpsite server whose
upstream ``mine`` is called as the user through provider ``tp`` (tools ``mine_whoami``,
``mine_seen``, the resource ``user://me/identity``, the prompt ``mine_greeting``), beside an http tool
``tp_me`` calling the provider's API as the user.

    with PerUserStack(env={...}) as stack:
        alice = Person(stack, "alice")
        result = await alice.call("mine_whoami")       # elicitation → connect → the call completes

``Person`` (also ``tests/integration/test_connections.py``'s, given that module's server) holds one
of our OAuth access tokens (a real authorization-code flow) and a "browser" that follows a URL
elicitation: signs in at our server, "signs in" at the provider
(``X-Provider-User: <name>-at-tp``), and the callback stores the token in the vault.
"""

from __future__ import annotations

import contextlib
from types import TracebackType
from typing import Any

import anyio
import httpx
import httpx2
from cryptography.fernet import Fernet
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from .live_server import REGISTRY_PROVIDER, LiveServer
from .oauth_flow import OAuthFlow, self_issuing_env
from .ports import free_port
from .third_party import CLIENT_ID, CLIENT_SECRET, ThirdParty
from .user_upstream_process import UserUpstreamProcess

PEOPLE = {name: f"{name}-password-1" for name in ("alice", "bob", "carol", "dave", "erin", "frank", "grace",
                                                        "heidi", "ivan", "judy")}
OBJECT = {"type": "object", "properties": {}}
ROWS = """
from django.contrib.auth.models import User
for name, password in {people!r}.items():
    User.objects.create_user(name, password=password)
from connections.models import Provider
from registry.models import Prompt, Resource, Tool, Upstream
Provider.objects.create(slug="tp", name="Third Party", authorization_url="{tp}/authorize",
    token_url="{tp}/token", revocation_url="{tp}/revoke", scopes="profile", client_id="{client_id}",
    client_secret_env="MCP_TOOL_SECRET_THIRD_PARTY")
up = Upstream.objects.create(name="mine", prefix="mine", url="{upstream}", transport="streamable-http",
    auth="user", connection="tp", timeout=10.0, connect_timeout=2.0)
for name in ("whoami", "seen"):
    Tool.objects.create(name="mine_" + name, description="mirrored", kind="upstream", upstream=up,
        upstream_name=name, input_schema={object!r}, task_support="forbidden")
Resource.objects.create(uri="user://me/identity", name="mine_me", kind="upstream", upstream=up,
    upstream_name="user://me/identity", mime_type="application/json")
Prompt.objects.create(name="mine_greeting", description="mirrored", upstream=up, upstream_name="greeting",
    upstream_definition={{"name": "greeting", "arguments": []}})
Tool.objects.create(name="tp_me", kind="http", http_method="GET", http_url="{tp}/api/me",
    http_connection="tp", task_support="forbidden")
"""


class PerUserStack:
    def __init__(self, env: dict[str, str] | None = None, legacy: bool = True) -> None:
        self.extra = dict(env or {})
        self.legacy = legacy
        self.stack = contextlib.ExitStack()
        self.third_party = ThirdParty()
        self.upstream: UserUpstreamProcess | None = None
        self.live: LiveServer | None = None

    def __enter__(self) -> PerUserStack:
        try:
            self.third_party.start()
            self.stack.callback(self.third_party.stop)
            self.upstream = self.stack.enter_context(UserUpstreamProcess(self.third_party.url(), self.legacy))
            port = free_port()
            env = {**acting_env(port), **self.extra}
            rows = ROWS.format(tp=self.third_party.url(), client_id=CLIENT_ID, people=PEOPLE,
                               upstream=self.upstream.url, object=OBJECT)
            self.live = self.stack.enter_context(
                LiveServer(env=env, port=port, provider=REGISTRY_PROVIDER, load=[["shell", "-c", rows]]))
        except BaseException:
            self.stack.close()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stack.close()


def acting_env(port: int) -> dict[str, str]:
    """A server that acts for its users: OAuth by its own authorization server on ``port``, a
    fresh vault key, the third party reachable on loopback and its client secret."""
    return {
        **self_issuing_env(port),
        "REGISTRY_HTTP_ALLOWED_HOSTS": "127.0.0.1",
        "CONNECTIONS_VAULT_KEYS": Fernet.generate_key().decode(),
        "MCP_TOOL_SECRET_THIRD_PARTY": CLIENT_SECRET,
    }


class Person:
    """A user with an MCP access token of our server, and a browser for the pages it opens."""

    def __init__(self, server: PerUserStack | LiveServer, name: str) -> None:
        live = server.live if isinstance(server, PerUserStack) else server
        assert live is not None
        self.live = live
        # Every test module's users are made with this password (PEOPLE here, test_connections').
        self.name, self.password = name, f"{name}-password-1"
        flow = OAuthFlow(self.live.base_url, name, self.password)
        try:
            self.token = flow.access_token()["access_token"]
        finally:
            flow.close()
        self.browser = httpx.Client(follow_redirects=True, timeout=10.0,
                                    headers={"X-Provider-User": f"{name}-at-tp"})
        self.opened: list[types.ElicitRequestURLParams] = []
        self.completed: list[str] = []  # elicitationIds of notifications/elicitation/complete

    def open(self, url: str) -> httpx.Response:
        page = self.browser.get(url)
        if "/oauth/login/" in str(page.url):
            form = {"username": self.name, "password": self.password,
                    "csrfmiddlewaretoken": self.browser.cookies["csrftoken"]}
            page = self.browser.post(str(page.url), data=form)
        return page

    async def on_elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams), params
        self.opened.append(params)
        page = await anyio.to_thread.run_sync(self.open, params.url)
        assert page.status_code == 200 and "is connected" in page.text, page.text[-2000:]
        return types.ElicitResult(action="accept")

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ElicitCompleteNotification):
            self.completed.append(message.params.elicitation_id)

    @contextlib.asynccontextmanager
    async def session(self, *, elicit: bool = True) -> Any:
        client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.token}"}, timeout=30.0)
        callbacks: dict[str, Any] = {"elicitation_callback": self.on_elicit,
                                     "message_handler": self.on_message} if elicit else {}
        async with client, streamable_http_client(self.live.url, http_client=client) as (read, write):
            async with ClientSession(read, write, **callbacks) as session:
                with anyio.fail_after(40):
                    await session.initialize()
                yield session

    async def call(self, tool: str = "mine_whoami", *, elicit: bool = True) -> types.CallToolResult:
        async with self.session(elicit=elicit) as session:
            with anyio.fail_after(40):
                result: types.CallToolResult = await session.call_tool(tool, {})
                return result
