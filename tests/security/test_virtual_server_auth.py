"""Issue 39, an attacker's view of the virtual servers' auth and discovery (docs/security.md
"Virtual servers: auth and discovery"):

- a token for ``/mcp/a`` is refused on ``/mcp/b`` and on ``/mcp`` (401 ``invalid_token``);
- a key that is not in an endpoint's list is refused (403), and the refusal names no key;
- an anonymous read of a keys-only endpoint's server card lists none of its tools;
- the RFC 9728 metadata of an unknown slug is a 404, like a disabled one's.

Through the real endpoint (``MCPEndpoint``, the process's service built from settings, API keys
from the database, tokens checked against a JWKS served in-process); the router's part, putting
the slug in ``url_route``, is played by a small ASGI wrapper (the memory provider serves the spec).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import jwt
import pytest
from asgiref.sync import sync_to_async
from cryptography.hazmat.primitives.asymmetric import rsa
from django.apps import apps
from django.db.models import QuerySet
from django.test import Client, override_settings

from access.models import ApiKey
from mcp_django.service import get_service
from mcp_protocol.endpoints import EndpointAccess, EndpointSpec
from mcp_protocol.transports.endpoints import SLUG_KWARG
from mcp_protocol.transports.http import MCPEndpoint
from mcp_protocol.transports.responses import Receive, Scope, Send
from tests.support.asgi_call import MEMORY_MCP, post

pytestmark = pytest.mark.django_db(transaction=True)

ISSUER, BASE = "https://as.example", "http://127.0.0.1/mcp"
PRIVATE = rsa.generate_private_key(public_exponent=65537, key_size=2048)
JWK = {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(PRIVATE.public_key())), "kid": "k1"}


def jwks_document(url: str, timeout: float) -> bytes:
    """``OAUTH_JWKS_SOURCE``: the issuer's key set, without a request."""
    return json.dumps({"keys": [JWK]}).encode()


ACCESS = {"MODE": "keys,oauth", "OAUTH_ISSUER": ISSUER, "RESOURCE_URL": BASE,
          "OAUTH_JWKS_SOURCE": f"{__name__}.jwks_document", "OAUTH_SCOPES": {"mcp": {}}}


def token(aud: str) -> str:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": aud, "sub": "mallory", "exp": now + 300, "scope": "mcp"}
    return jwt.encode(claims, PRIVATE, algorithm="RS256", headers={"kid": "k1"})


def routed(endpoint: MCPEndpoint, spec: EndpointSpec | None) -> Callable[[Scope, Receive, Send], Any]:
    """``/mcp/<slug>`` as the router hands it over (the slug in ``url_route``), with ``spec`` served
    by the provider's snapshot; ``None``: ``/mcp`` itself. The endpoint puts the spec in the scope
    (``SCOPE_KEY``) before the caller is resolved."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if spec is None:
            await endpoint(scope, receive, send)
            return
        rt = endpoint.host.current() or await endpoint.host.runtime()
        served = {e.slug: e for e in rt.provider.snapshot().endpoints}
        served[spec.slug] = spec
        rt.provider.set_endpoints(served.values())  # type: ignore[attr-defined]
        await endpoint({**scope, "url_route": {"args": (), "kwargs": {SLUG_KWARG: spec.slug}}}, receive, send)

    return app


@pytest.fixture
async def endpoint() -> AsyncIterator[MCPEndpoint]:
    with override_settings(MCP={**MEMORY_MCP, "ACCESS": ACCESS}):
        try:
            yield MCPEndpoint(get_service())
        finally:
            await get_service().shutdown()


def spec(slug: str, **access: Any) -> EndpointSpec:
    return EndpointSpec(slug, slug, access=EndpointAccess(**access))


async def initialize(app: Any, credential: str) -> Any:
    return await post(app, "/mcp", headers={"authorization": f"Bearer {credential}"})


async def test_a_token_for_one_server_is_refused_on_another_and_on_mcp(endpoint: MCPEndpoint) -> None:
    for_a = token(f"{BASE}/a")
    assert (await initialize(routed(endpoint, spec("a")), for_a))[0] == 200
    for app in (routed(endpoint, spec("b")), routed(endpoint, None)):
        status, headers, _ = await initialize(app, for_a)
        assert status == 401 and b'error="invalid_token"' in headers[b"www-authenticate"]


async def test_a_key_not_in_the_servers_list_is_refused_naming_no_key(endpoint: MCPEndpoint) -> None:
    (allowed, allowed_token), (_, other_token) = await sync_to_async(
        lambda: (ApiKey.issue("ci"), ApiKey.issue("intruder")))()
    ci = routed(endpoint, spec("ci", keys=frozenset({allowed.prefix})))
    assert (await initialize(ci, allowed_token))[0] == 200
    status, headers, body = await initialize(ci, other_token)
    assert status == 403
    assert allowed.prefix.encode() not in body + headers[b"www-authenticate"]
    assert (await initialize(ci, "mcp_00000000_forged"))[0] == 401


def test_an_anonymous_card_of_a_keys_only_server_lists_no_tool(db: None, client: Client) -> None:
    model = apps.get_model("registry", "VirtualServer")
    QuerySet(model).bulk_create([model(slug="ops", name="ops", auth_modes=["keys"], api_keys=["abcd1234"],
                                       tools=["CANARY-restart-prod"], instructions="CANARY-runbook")])
    response = client.get("/mcp/ops/server-card")
    assert response.status_code == 200
    assert b"CANARY" not in response.content and b"abcd1234" not in response.content


def test_the_metadata_of_an_unknown_slug_is_a_404(db: None, client: Client) -> None:
    with override_settings(MCP={"ACCESS": ACCESS}):
        for path in ("nope", "..", "%00", "a/b"):
            response = client.get(f"/.well-known/oauth-protected-resource/mcp/{path}")
            assert response.status_code == 404
