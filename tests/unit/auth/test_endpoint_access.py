"""Auth per virtual server (issue 39 item 5; ``auth/endpoint_access.py``): the modes an endpoint
accepts, the keys and scopes that may use it, a token's audience (its own resource URL) and the
challenge naming its RFC 9728 metadata. Through the real ``AccessPolicy`` and its resolver, with
the request's scope carrying the endpoint as the router leaves it (``endpoints.SCOPE_KEY``)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from mcp_django.conf import ACCESS_DEFAULTS
from mcp_protocol.auth.keys import KeyRecord, KeySource, digest, new_token
from mcp_protocol.auth.limits import MemoryRateLimiter
from mcp_protocol.auth.policy import AccessPolicy
from mcp_protocol.auth.principal import ALL, ANONYMOUS, Grant
from mcp_protocol.bus.memory import MemoryBus
from mcp_protocol.endpoints import SCOPE_KEY, EndpointAccess, EndpointSpec
from mcp_protocol.stores.memory import MemoryEventStore, MemorySessionStore
from mcp_protocol.transports.auth import resolve_caller, resolver
from mcp_protocol.transports.responses import HTTPError

ISSUER, BASE = "https://as.example", "https://rs.example/mcp"
PRIVATE = rsa.generate_private_key(public_exponent=65537, key_size=2048)
JWK = {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(PRIVATE.public_key())), "kid": "k1"}
READER, WRITER = new_token(), new_token()  # (token, prefix)


class ListSource(KeySource):
    async def load(self) -> list[KeyRecord]:
        return [KeyRecord(1, READER[1], digest(READER[0]), Grant.of(tools=["echo"])),
                KeyRecord(2, WRITER[1], digest(WRITER[0]), ALL)]

    async def touch(self, last_used: dict[int, float]) -> None:
        pass


def token(aud: str, scope: str = "mcp") -> str:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": aud, "sub": "alice", "exp": now + 300, "scope": scope}
    return jwt.encode(claims, PRIVATE, algorithm="RS256", headers={"kid": "k1"})


def spec(slug: str, **access: Any) -> EndpointSpec:
    return EndpointSpec(slug, slug, access=EndpointAccess(**access))


async def policy(mode: str, *, issuer: str | None = ISSUER) -> AccessPolicy:
    config = {**ACCESS_DEFAULTS, "MODE": mode, "OAUTH_ISSUER": issuer, "RESOURCE_URL": BASE,
              "OAUTH_SCOPES": {"mcp": {}, "mcp:read": {"tools": ["echo"]}, "mcp:admin": {}}}
    access = AccessPolicy(config, MemoryBus(), MemorySessionStore(), MemoryEventStore(),
                          limiter=MemoryRateLimiter(), key_source=ListSource(),
                          jwks_fetch=lambda url, timeout: json.dumps({"keys": [JWK]}).encode())
    await access.start()
    return access


Policies = dict[str, AccessPolicy]


@pytest.fixture
async def policies() -> AsyncIterator[Policies]:
    built = {mode: await policy(mode) for mode in ("open", "keys", "oauth", "keys,oauth")}
    yield built
    for access in built.values():
        await access.close()


async def call(access: AccessPolicy, endpoint: EndpointSpec | None, credential: str | None = None) -> Any:
    """The principal the resolver answers, or the HTTPError it raises."""
    headers = [] if credential is None else [(b"authorization", f"Bearer {credential}".encode())]
    scope = {"type": "http", "headers": headers, SCOPE_KEY: endpoint}
    try:
        return await resolve_caller(resolver(access), scope)
    except HTTPError as exc:
        return exc


def challenge(refusal: HTTPError) -> str:
    return dict(refusal.headers)[b"www-authenticate"].decode()


async def test_an_endpoint_without_modes_accepts_what_the_deployment_does(policies: Policies) -> None:
    plain = spec("a")
    assert await call(policies["open"], plain) is ANONYMOUS
    assert await call(policies["open"], plain, "garbage") is ANONYMOUS  # open: credentials ignored
    assert (await call(policies["keys"], plain, READER[0])).id == "key:1"
    assert (await call(policies["keys"], plain)).status == 401
    assert (await call(policies["oauth"], plain, token(f"{BASE}/a"))).id == f"oauth:{ISSUER} alice"
    assert (await call(policies["oauth"], plain, READER[0])).status == 401


async def test_an_open_endpoint_lets_anyone_in_and_uses_a_presented_credential(policies: Policies) -> None:
    open_too = spec("pub", modes=frozenset({"open", "keys"}))
    assert await call(policies["oauth"], open_too) is ANONYMOUS
    found = await call(policies["oauth"], open_too, READER[0])
    assert found.id == "key:1" and found.grant == Grant.of(tools=["echo"])  # the key's grant, not anonymous's
    assert (await call(policies["oauth"], open_too, "mcp_nothere_x")).status == 401  # not waved in
    only_open = spec("pub", modes=frozenset({"open"}))
    assert (await call(policies["keys"], only_open, WRITER[0])).id == "key:2"  # what MCP_AUTH verifies


async def test_a_credential_of_a_mode_the_endpoint_does_not_accept_is_401(policies: Policies) -> None:
    keys_only = spec("ci", modes=frozenset({"keys"}))
    refused = await call(policies["keys,oauth"], keys_only, token(f"{BASE}/ci"))
    assert refused.status == 401 and 'error="invalid_token"' in challenge(refused)
    oauth_only = spec("agents", modes=frozenset({"oauth"}))
    refused = await call(policies["keys,oauth"], oauth_only, WRITER[0])
    assert refused.status == 401
    assert 'resource_metadata="https://rs.example/.well-known/oauth-protected-resource/mcp/agents"' \
        in challenge(refused)


async def test_a_keys_endpoint_on_an_open_deployment_starts_the_key_ring(policies: Policies) -> None:
    access = policies["open"]
    assert access.keys is not None and not access.keys.started  # open /mcp loads no key
    keys_only = spec("ci", modes=frozenset({"keys"}))
    assert (await call(access, keys_only)).status == 401
    assert (await call(access, keys_only, WRITER[0])).id == "key:2"
    assert access.keys.started
    assert await call(access, None, "garbage") is ANONYMOUS  # /mcp itself stays open


async def test_a_key_not_in_the_endpoints_list_is_403_naming_no_key(policies: Policies) -> None:
    listed = spec("ci", keys=frozenset({WRITER[1]}))
    assert (await call(policies["keys"], listed, WRITER[0])).id == "key:2"
    refused = await call(policies["keys"], listed, READER[0])
    assert refused.status == 403 and 'error="insufficient_scope"' in challenge(refused)
    assert WRITER[1] not in challenge(refused) and WRITER[1] not in refused.message
    assert (await call(policies["keys"], listed, "mcp_00000000_unknown")).status == 401  # as anywhere


async def test_a_token_without_one_of_the_endpoints_scopes_is_403_naming_them(policies: Policies) -> None:
    admin = spec("admin", scopes=frozenset({"mcp:admin"}))
    aud = f"{BASE}/admin"
    assert (await call(policies["oauth"], admin, token(aud, "mcp:admin"))).scopes == ("mcp:admin",)
    refused = await call(policies["oauth"], admin, token(aud, "mcp:read"))
    assert refused.status == 403
    assert 'scope="mcp:admin"' in challenge(refused) and 'error="insufficient_scope"' in challenge(refused)
    assert 'oauth-protected-resource/mcp/admin"' in challenge(refused)


async def test_a_token_is_for_one_endpoint_only(policies: Policies) -> None:
    access = policies["oauth"]
    a, b = spec("a"), spec("b")
    for_a = token(f"{BASE}/a")
    assert (await call(access, a, for_a)).id is not None
    assert (await call(access, b, for_a)).status == 401  # cached for a, checked again for b
    assert (await call(access, None, for_a)).status == 401  # the catch-all's audience is exact
    assert (await call(access, a, token(BASE))).status == 401
    assert (await call(access, None, token(BASE))).id is not None


async def test_the_401_of_an_endpoint_names_its_own_metadata_and_scopes(policies: Policies) -> None:
    refused = await call(policies["oauth"], spec("a", scopes=frozenset({"mcp:read"})))
    assert refused.status == 401
    assert challenge(refused) == ('Bearer resource_metadata="https://rs.example/.well-known/'
                                  'oauth-protected-resource/mcp/a", scope="mcp:read"')
    plain = await call(policies["oauth"], None)
    assert "oauth-protected-resource/mcp\"" in challenge(plain)
    keys = await call(policies["keys"], spec("k"))
    assert challenge(keys) == 'Bearer realm="mcp"'


async def test_oauth_on_a_deployment_without_an_issuer_accepts_no_token() -> None:
    access = await policy("keys", issuer=None)
    try:
        agents = spec("agents", modes=frozenset({"oauth", "keys"}))
        refused = await call(access, agents, token(f"{BASE}/agents"))
        assert refused.status == 401 and challenge(refused) == 'Bearer realm="mcp", error="invalid_token"'
        assert (await call(access, agents, WRITER[0])).id == "key:2"
    finally:
        await access.close()


async def test_the_catch_all_accepts_only_what_mcp_auth_names(policies: Policies) -> None:
    # The ring and the verifier exist in every mode for virtual servers; /mcp itself is unchanged.
    assert (await call(policies["oauth"], None, WRITER[0])).status == 401
    assert (await call(policies["keys"], None, token(BASE))).status == 401
    assert (await call(policies["keys,oauth"], None, WRITER[0])).id == "key:2"


async def test_a_step_up_on_an_endpoint_names_its_metadata(policies: Policies) -> None:
    from mcp_protocol.auth.policy import AuthError
    from mcp_protocol.definitions import Snapshot, Tool

    snapshot = Snapshot(version="1", tools=(Tool("echo", {"type": "object"}), Tool("add", {})))
    reader = await call(policies["oauth"], spec("a"), token(f"{BASE}/a", "mcp:read"))
    with pytest.raises(AuthError) as refused:
        policies["oauth"].step_up(reader, snapshot, "tools/call", {"name": "add"}, spec("a"))
    assert refused.value.status == 403
    assert 'resource_metadata="https://rs.example/.well-known/oauth-protected-resource/mcp/a"' in \
        refused.value.challenge
    assert 'error="insufficient_scope"' in refused.value.challenge
