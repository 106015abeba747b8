"""The JWKS cache of the resource server (``auth/oauth.py``): one fetch for many concurrent first
requests, a refetch on an unknown ``kid`` at most every ``min_refresh`` seconds."""

from __future__ import annotations

import asyncio
import json
import threading

import jwt
from cryptography.hazmat.primitives.asymmetric import ec

from mcp_protocol.auth.oauth import JWKS, InvalidToken


def _jwks(*kids: str) -> bytes:
    keys = []
    for kid in kids:
        public = ec.generate_private_key(ec.SECP256R1()).public_key()
        keys.append({**json.loads(jwt.algorithms.ECAlgorithm.to_jwk(public)), "kid": kid})
    return json.dumps({"keys": keys}).encode()


class AuthorizationServer:
    """The fetch function of a JWKS whose keys the test changes; counts fetches, can be slow."""

    def __init__(self, *kids: str) -> None:
        self.body, self.fetches, self.gate = _jwks(*kids), 0, threading.Event()
        self.gate.set()

    def __call__(self, url: str, timeout: float) -> bytes:
        self.fetches += 1
        assert self.gate.wait(timeout)
        return self.body


async def test_concurrent_first_requests_share_one_fetch() -> None:
    server = AuthorizationServer("a")
    server.gate.clear()
    jwks = JWKS("http://as/jwks", fetch=server, min_refresh=60)
    waiting = [asyncio.ensure_future(jwks.key("a")) for _ in range(16)]
    await asyncio.sleep(0.05)
    server.gate.set()
    keys = await asyncio.wait_for(asyncio.gather(*waiting), 5)
    assert {k.key_id for k in keys} == {"a"} and server.fetches == 1


async def test_an_unknown_kid_refetches_at_most_every_min_refresh() -> None:
    server = AuthorizationServer("a")
    jwks = JWKS("http://as/jwks", fetch=server, min_refresh=0.2)
    await jwks.key("a")
    server.body = _jwks("a", "b")
    for _ in range(5):  # within min_refresh: refused from the cache, no fetch
        try:
            await jwks.key("b")
        except InvalidToken:
            pass
    assert server.fetches == 1
    await asyncio.sleep(0.25)
    assert (await jwks.key("b")).key_id == "b" and server.fetches == 2
