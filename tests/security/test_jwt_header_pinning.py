"""Issue 24 items 7 and 8: what a JWT's header may say.

Item 7 (RFC 8725 §3.1, RFC 9068 §4): a JWK published with ``alg`` verifies tokens of that
algorithm only (a PS256 token signed by the key of an ``alg: RS256`` JWK is refused), and a token
whose ``typ`` is set must be an access token's (``at+jwt``); ``require_typ`` refuses untyped ones.
Item 8: a malformed header (``"alg": ["RS256"]``, a ``kid`` that is not a string, a header that is
not an object) is a 401 ``invalid_token`` from a real server, never a 500, and logs no traceback.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from mcp_protocol.auth.oauth import JWKS, InvalidToken, TokenVerifier
from mcp_protocol.auth.principal import ALL
from tests.support import MEMORY_PROVIDER, LiveServer
from tests.support.live_server import free_port
from tests.support.mcp_http import POST_HEADERS, initialize_message

pytestmark = pytest.mark.timeout(60)

ISSUER, AUDIENCE = "https://as.example", "https://rs.example/mcp"
PRIVATE = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _jwks(**members: Any) -> bytes:
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(PRIVATE.public_key()))
    return json.dumps({"keys": [{**jwk, "kid": "k1", "use": "sig", **members}]}).encode()


def _verifier(jwks: bytes, **options: Any) -> TokenVerifier:
    return TokenVerifier(issuer=ISSUER, audience=AUDIENCE, jwks=JWKS("x", fetch=lambda url, t: jwks),
                         algorithms=["RS256", "PS256"], scopes={"mcp": ALL}, **options)


def _token(alg: str = "RS256", **header: Any) -> str:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "exp": now + 300, "scope": "mcp"}
    return jwt.encode(claims, PRIVATE, algorithm=alg, headers={"kid": "k1", **header})


async def test_a_ps256_token_does_not_verify_against_a_key_published_for_rs256() -> None:
    pinned = _verifier(_jwks(alg="RS256"))
    assert (await pinned.verify(_token("RS256"))).id == f"oauth:{ISSUER} alice"
    with pytest.raises(InvalidToken, match="published for RS256"):
        await pinned.verify(_token("PS256"))
    # A JWK without alg still signs any algorithm of its key type.
    assert (await _verifier(_jwks()).verify(_token("PS256"))).id is not None


@pytest.mark.parametrize("typ", ["at+jwt", "application/at+jwt", "AT+JWT", "JWT", None])
async def test_an_access_token_typed_at_jwt_or_untyped_is_accepted(typ: str | None) -> None:
    token = jwt.encode(jwt.decode(_token(), options={"verify_signature": False}), PRIVATE,
                       algorithm="RS256", headers={"kid": "k1", "typ": typ})
    assert (await _verifier(_jwks()).verify(token)).id is not None


@pytest.mark.parametrize("typ", ["logout+jwt", "dpop+jwt", "secevent+jwt"])
async def test_a_token_typed_as_something_else_than_an_access_token_is_refused(typ: str) -> None:
    with pytest.raises(InvalidToken, match="RFC 9068"):
        await _verifier(_jwks()).verify(_token(typ=typ))


async def test_require_typ_refuses_a_token_not_typed_at_jwt() -> None:
    strict = _verifier(_jwks(), require_typ=True)
    assert (await strict.verify(_token(typ="at+jwt"))).id is not None
    with pytest.raises(InvalidToken, match="REQUIRE_TYP"):
        await strict.verify(_token(typ="JWT"))


# -- item 8, on a real server ------------------------------------------------------------------
def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _raw(header: Any) -> str:
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "exp": int(time.time()) + 300}
    return f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}.{_b64(b'sig')}"


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    port = free_port()
    env = {"MCP_AUTH": "keys,oauth", "MCP_OAUTH_ISSUER": ISSUER,
           # Never fetched: every token here is refused before a key is looked up.
           "MCP_OAUTH_JWKS_URL": f"http://127.0.0.1:{free_port()}/jwks.json",
           "MCP_RESOURCE_URL": f"http://127.0.0.1:{port}/mcp"}
    server = LiveServer(env=env, provider=MEMORY_PROVIDER, port=port, migrate=True).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize("header", [
    {"alg": ["RS256"], "kid": "k1"},
    {"alg": {"RS256": 1}, "kid": "k1"},
    {"alg": "RS256", "kid": ["k1"]},
    {"alg": "RS256", "kid": {"k": 1}},
    {"alg": "RS256", "kid": "k1", "typ": ["at+jwt"]},
    ["RS256"],
    "RS256",
    None,
], ids=repr)
def test_a_malformed_jwt_header_is_a_401_not_a_500(live: LiveServer, header: Any) -> None:
    response = httpx.post(live.url, json=initialize_message(), timeout=10,
                          headers={**POST_HEADERS, "authorization": f"Bearer {_raw(header)}"})
    assert response.status_code == 401, response.text
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert "Traceback" not in live.log_text()
