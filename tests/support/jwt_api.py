"""An upstream API on loopback that trusts our authorization server, run as its own process: it
checks a bearer JWT against the server's JWKS (fetched over HTTP, as any resource server would),
its issuer, and that ``aud`` is its own resource, for the token exchange tests (issue 42 item 4).

    api = JwtApi(jwks_url, issuer).start()     # python -m tests.support.jwt_api <port> <jwks> <iss>
    api.resource                               # http://127.0.0.1:<port>/ : register this audience
    GET /me  → {"sub", "aud", "act", "scope", "client_id", "exp", "iat"}; a bad token → 401
    api.tokens()                               # every token it accepted (to look for in logs)
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import httpx


def _app(resource: str, jwks_url: str, issuer: str) -> Any:
    import jwt
    from aiohttp import web

    keys = jwt.PyJWKClient(jwks_url, cache_keys=True, lifespan=30)
    seen: list[str] = []

    async def me(request: web.Request) -> web.Response:
        header = request.headers.get("Authorization", "")
        token = header.removeprefix("Bearer ") if header.startswith("Bearer ") else ""
        try:
            key = keys.get_signing_key_from_jwt(token)
            claims = jwt.decode(token, key, algorithms=["ES256", "RS256", "PS256"], audience=resource,
                                issuer=issuer, options={"require": ["exp", "sub", "aud"]})
        except jwt.PyJWTError as exc:
            return web.json_response({"error": "invalid_token", "why": type(exc).__name__}, status=401)
        seen.append(token)
        return web.json_response({k: claims.get(k) for k in ("sub", "aud", "act", "scope", "client_id",
                                                             "exp", "iat")})

    async def tokens(request: web.Request) -> web.Response:
        return web.json_response(seen)

    app = web.Application()
    app.router.add_get("/me", me)
    app.router.add_post("/control/tokens", tokens)
    return app


class JwtApi:
    def __init__(self, jwks_url: str, issuer: str) -> None:
        from tests.support.ports import free_port

        self.port = free_port()
        self.jwks_url, self.issuer = jwks_url, issuer
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def resource(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def start(self) -> JwtApi:
        self.process = subprocess.Popen([sys.executable, "-m", "tests.support.jwt_api", str(self.port),
                                         self.jwks_url, self.issuer])
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                httpx.post(self.url("/control/tokens"), timeout=1.0)
                return self
            except httpx.TransportError:
                time.sleep(0.05)  # polling a process start, bounded by the deadline
        self.stop()
        raise RuntimeError("the JWT API did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None

    def tokens(self) -> list[str]:
        found: list[str] = httpx.post(self.url("/control/tokens"), timeout=5.0).json()
        return found


if __name__ == "__main__":
    from aiohttp import web

    port = int(sys.argv[1])
    web.run_app(_app(f"http://127.0.0.1:{port}/", sys.argv[2], sys.argv[3]), host="127.0.0.1", port=port,
                print=None)
