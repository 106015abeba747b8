"""``MCP_AUTH=keys,oauth`` on a real server: a resource server for JWTs signed by a test
authorization server (keys made here, the JWKS served on loopback by this process). MCP
basic/authorization.mdx (2025-06-18+), RFC 9728, RFC 8707, RFC 6750.

Accepted: a token for this resource from the issuer, signed by a key of the JWKS (also a key added
to the JWKS after the server cached it: an unknown ``kid`` refreshes the JWKS). Refused with 401
``invalid_token``: wrong audience, wrong issuer, expired, ``alg: none``, HS256 signed with the public
key, an unknown ``kid``, a bad signature. 403 ``insufficient_scope``: a valid token whose scopes
grant nothing. The metadata at both well-known URIs; the challenge names it; sessions are bound
to (issuer, subject); scopes map to grants.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from tests.support import MEMORY_PROVIDER, LiveServer
from tests.support.mcp_http import POST_HEADERS, initialize_message, notification, request, session_headers
from tests.support.ports import free_port

pytestmark = pytest.mark.timeout(90)


class AuthorizationServer:
    """Just the JWKS endpoint of an authorization server, and a signer of tokens."""

    def __init__(self) -> None:
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.keys: dict[str, Any] = {}
        self.fetches = 0
        self.add_key("rsa-1", rsa.generate_private_key(public_exponent=65537, key_size=2048))
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.fetches += 1
                body = json.dumps(outer.jwks()).encode()
                self.send_response(200 if self.path == "/jwks.json" else 404)
                self.send_header("content-type", "application/json")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def add_key(self, kid: str, private: Any) -> None:
        self.keys[kid] = private

    def jwks(self) -> dict[str, Any]:
        out = []
        for kid, private in self.keys.items():
            if isinstance(private, rsa.RSAPrivateKey):
                jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key()))
            else:
                jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(private.public_key()))
            out.append({**jwk, "kid": kid, "use": "sig"})
        return {"keys": out}

    def claims(self, audience: str, **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        claims = {"iss": self.issuer, "sub": "alice", "aud": audience, "iat": now, "nbf": now,
                  "exp": now + 300, "scope": "mcp", "jti": uuid.uuid4().hex}
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}

    def token(self, audience: str, *, kid: str = "rsa-1", alg: str | None = None, **claims: Any) -> str:
        private = self.keys[kid]
        alg = alg or ("RS256" if isinstance(private, rsa.RSAPrivateKey) else "ES256")
        return jwt.encode(self.claims(audience, **claims), private, algorithm=alg, headers={"kid": kid})

    def public_pem(self, kid: str = "rsa-1") -> bytes:
        return bytes(self.keys[kid].public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(header: dict[str, Any], claims: dict[str, Any], key: bytes | None = None) -> str:
    """A token built by hand: ``alg: none``, or HS256 with ``key`` as the HMAC secret."""
    signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
    signature = b"" if key is None else hmac.new(key, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{_b64(signature)}"


@pytest.fixture(scope="module")
def auth_server() -> Iterator[AuthorizationServer]:
    server = AuthorizationServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def live(auth_server: AuthorizationServer) -> Iterator[LiveServer]:
    port = free_port()
    scopes = {"mcp": {}, "mcp:echo": {"tools": ["echo"], "resources": [], "prompts": []},
              "profile": {"tools": [], "resources": [], "prompts": []}}
    env = {"MCP_AUTH": "keys,oauth", "MCP_OAUTH_ISSUER": auth_server.issuer,
           "MCP_OAUTH_JWKS_URL": f"{auth_server.issuer}/jwks.json",
           "MCP_RESOURCE_URL": f"http://127.0.0.1:{port}/mcp", "MCP_OAUTH_SCOPES": json.dumps(scopes),
           "MCP_OAUTH_JWKS_MIN_REFRESH": "0.2"}
    server = LiveServer(env=env, provider=MEMORY_PROVIDER, port=port, migrate=True).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as c:
        yield c


def bearer(token: str) -> dict[str, str]:
    return {**POST_HEADERS, "authorization": f"Bearer {token}"}


async def initialize(client: httpx.AsyncClient, live: LiveServer, token: str) -> httpx.Response:
    return await client.post(live.url, headers=bearer(token), json=initialize_message())


async def test_the_protected_resource_metadata_is_at_both_well_known_uris(
    live: LiveServer, auth_server: AuthorizationServer, client: httpx.AsyncClient
) -> None:
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        response = await client.get(live.base_url + path)
        assert response.status_code == 200
        body = response.json()
        assert body["resource"] == live.url
        assert body["authorization_servers"] == [auth_server.issuer]
        assert body["scopes_supported"] == ["mcp", "mcp:echo", "profile"]
        assert body["bearer_methods_supported"] == ["header"]


async def test_no_token_is_401_naming_the_metadata_and_scopes(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    response = await client.post(live.url, headers=POST_HEADERS, json=initialize_message())
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == (
        f'Bearer resource_metadata="{live.base_url}/.well-known/oauth-protected-resource/mcp", '
        'scope="mcp mcp:echo profile"')


async def test_a_token_from_the_authorization_server_is_accepted(
    live: LiveServer, auth_server: AuthorizationServer, client: httpx.AsyncClient
) -> None:
    token = auth_server.token(live.url)
    response = await initialize(client, live, token)
    assert response.status_code == 200, response.text
    sid = response.headers["mcp-session-id"]
    tools = await client.post(live.url, headers={**session_headers(sid), "authorization": f"Bearer {token}"},
                              json=request(1, "tools/list"))
    assert tools.json()["result"]["tools"]


@pytest.mark.parametrize("case", ["audience", "issuer", "expired", "not_yet", "none", "hs256_public_key",
                                  "unknown_kid", "bad_signature", "no_subject", "garbage"])
async def test_bad_tokens_are_refused_with_invalid_token(
    live: LiveServer, auth_server: AuthorizationServer, client: httpx.AsyncClient, case: str
) -> None:
    now = int(time.time())
    good = auth_server.claims(live.url)
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)  # not in the JWKS
    token = {
        "audience": lambda: auth_server.token("http://127.0.0.1:1/mcp"),
        "issuer": lambda: auth_server.token(live.url, iss="http://evil.example"),
        "expired": lambda: auth_server.token(live.url, exp=now - 120, iat=now - 600, nbf=now - 600),
        "not_yet": lambda: auth_server.token(live.url, nbf=now + 600),
        "none": lambda: unsigned({"alg": "none", "typ": "JWT", "kid": "rsa-1"}, good),
        "hs256_public_key": lambda: unsigned({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}, good,
                                             auth_server.public_pem()),
        "unknown_kid": lambda: jwt.encode(good, stranger, algorithm="RS256", headers={"kid": "nobody"}),
        "bad_signature": lambda: jwt.encode(good, stranger, algorithm="RS256", headers={"kid": "rsa-1"}),
        "no_subject": lambda: auth_server.token(live.url, sub=None),
        "garbage": lambda: "not.a.jwt",
    }[case]()
    response = await initialize(client, live, token)
    assert response.status_code == 401, response.text
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer resource_metadata="') and challenge.endswith('error="invalid_token"')
    assert token not in (live.log_text())


async def test_a_token_whose_scopes_grant_nothing_is_403_insufficient_scope(
    live: LiveServer, auth_server: AuthorizationServer, client: httpx.AsyncClient
) -> None:
    response = await initialize(client, live, auth_server.token(live.url, scope="email"))
    assert response.status_code == 403
    assert 'error="insufficient_scope"' in response.headers["www-authenticate"]


async def test_scopes_map_to_grants(
    live: LiveServer, auth_server: AuthorizationServer, client: httpx.AsyncClient
) -> None:
    token = auth_server.token(live.url, scope="mcp:echo profile", sub="bob")
    sid = (await initialize(client, live, token)).headers["mcp-session-id"]
    headers = {**session_headers(sid), "authorization": f"Bearer {token}"}
    await client.post(live.url, headers=headers, json=notification("notifications/initialized"))
    tools = (await client.post(live.url, headers=headers, json=request(1, "tools/list"))).json()
    assert [t["name"] for t in tools["result"]["tools"]] == ["echo"]


async def test_a_key_added_to_the_jwks_later_is_found_by_its_kid(
    live: LiveServer, auth_server: AuthorizationServer, client: httpx.AsyncClient
) -> None:
    assert (await initialize(client, live, auth_server.token(live.url))).status_code == 200  # JWKS cached
    auth_server.add_key("ec-2", ec.generate_private_key(ec.SECP256R1()))
    await asyncio.sleep(0.3)  # past MCP_OAUTH_JWKS_MIN_REFRESH: the unknown kid may refetch now
    response = await initialize(client, live, auth_server.token(live.url, kid="ec-2"))
    assert response.status_code == 200, response.text


async def test_a_session_is_a_404_for_another_subject(
    live: LiveServer, auth_server: AuthorizationServer, client: httpx.AsyncClient
) -> None:
    alice, mallory = auth_server.token(live.url, sub="alice"), auth_server.token(live.url, sub="mallory")
    sid = (await initialize(client, live, alice)).headers["mcp-session-id"]
    as_mallory = {**session_headers(sid), "authorization": f"Bearer {mallory}"}
    other = await client.post(live.url, headers=as_mallory, json=request(2, "ping"))
    assert other.status_code == 404
    again = auth_server.token(live.url, sub="alice")  # another token of the same principal
    same = await client.post(live.url, headers={**session_headers(sid), "authorization": f"Bearer {again}"},
                             json=request(3, "ping"))
    assert same.status_code == 200


async def test_api_keys_work_beside_tokens(live: LiveServer, client: httpx.AsyncClient) -> None:
    # Made by another process while the server runs on the in-memory bus: found by the key ring's
    # poll of the table's version, within about a second.
    token = live.manage("mcp_keys", "create", "beside-oauth", "--tools", "echo").strip()
    deadline = time.monotonic() + 10
    while (response := await initialize(client, live, token)).status_code == 401:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.1)
    assert response.status_code == 200


async def test_the_official_sdk_client_connects_with_a_bearer_token(
    live: LiveServer, auth_server: AuthorizationServer
) -> None:
    token = auth_server.token(live.url, scope="mcp:echo", sub="sdk-user")
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http, streamable_http_client(live.url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            with anyio.fail_after(20):
                await session.initialize()
                assert [t.name for t in (await session.list_tools()).tools] == ["echo"]
                echoed = await session.call_tool("echo", {"message": "hi"})
                assert echoed.content[0].text == "hi"  # type: ignore[union-attr]
                # Outside mcp:echo's grant, inside mcp's: a step-up 403 (auth/step_up.py), which a
                # client holding a bare token (no OAuth provider) can only report.
                with pytest.raises(MCPError, match="insufficient scope"):
                    await session.call_tool("add", {"a": 1, "b": 2})


async def test_a_stateless_2026_request_is_authenticated_and_scoped_too(
    live: LiveServer, auth_server: AuthorizationServer, client: httpx.AsyncClient
) -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    headers = {**POST_HEADERS, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
    refused = await client.post(live.url, headers=headers, json=body)
    assert refused.status_code == 401 and "resource_metadata=" in refused.headers["www-authenticate"]
    token = auth_server.token(live.url, scope="mcp:echo")
    listed = await client.post(live.url, headers={**headers, "authorization": f"Bearer {token}"}, json=body)
    assert [t["name"] for t in listed.json()["result"]["tools"]] == ["echo"]
