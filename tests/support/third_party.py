"""A third-party service on loopback, run as its own process: an OAuth 2.1 authorization server
(authorization code + PKCE S256, refresh, RFC 7009 revocation) and an API that checks its tokens,
for the tests of acting for the user (issue 42, ``connections``).

    service = ThirdParty().start()      # python -m tests.support.third_party <port>
    service.url("/authorize") ...
    service.stats()               # {"refreshes": n, "revocations": n, "tokens": [live access tokens]}
    service.control("expire")     # every access token issued so far is expired now

Who signs in at the provider: the ``X-Provider-User`` header of the browser's request to
``/authorize`` (a stand-in for the provider's own sign-in page). ``GET /api/me`` answers the
token's user and how many calls it made; an unknown, expired or revoked token is a 401.
``control("forbid", user=..., scope=...)`` makes it a 403 for that user's valid tokens (RFC 6750
§3.1: with ``scope``, an ``insufficient_scope`` challenge naming it; without, a plain 403 with a
reason), until ``control("allow", user=...)``; a token granted every scope named passes (the
authorization request's ``scope`` is granted as asked, ``profile`` when none).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import subprocess
import sys
import time
from typing import Any
from urllib.parse import urlencode

import httpx

CLIENT_ID = "mcpsite-test-client"
CLIENT_SECRET = "third-party-client-secret"  # the server reads it from MCP_TOOL_SECRET_THIRD_PARTY


def _app() -> Any:
    from aiohttp import web

    codes: dict[str, dict[str, str]] = {}
    access: dict[str, dict[str, Any]] = {}  # token -> {"user", "expires"}
    refresh: dict[str, str] = {}  # refresh token -> user
    granted: dict[str, str] = {}  # refresh token -> the scope of its grant
    stats = {"refreshes": 0, "revocations": 0, "lifetime": 3600, "forbidden": 0}
    calls: dict[str, int] = {}
    forbidden: dict[str, str] = {}  # user -> the scope asked for ("": a plain 403)

    def issue(user: str, scope: str) -> dict[str, Any]:
        token = "tp-at-" + secrets.token_urlsafe(24)
        access[token] = {"user": user, "expires": time.time() + stats["lifetime"], "scope": scope}
        return {"access_token": token, "token_type": "Bearer", "expires_in": stats["lifetime"],
                "scope": scope}

    async def authorize(request: web.Request) -> web.Response:
        q = request.query
        user = request.headers.get("X-Provider-User")
        if not user:
            return web.Response(status=401, text="sign in at the provider")
        pkce = q.get("code_challenge_method") == "S256" and q.get("code_challenge")
        if q.get("client_id") != CLIENT_ID or not pkce:
            return web.Response(status=400, text="bad authorization request")
        code = secrets.token_urlsafe(16)
        codes[code] = {"user": user, "challenge": q["code_challenge"], "redirect_uri": q["redirect_uri"],
                       "scope": q.get("scope") or "profile"}  # every scope asked for is granted
        raise web.HTTPFound(f"{q['redirect_uri']}?{urlencode({'code': code, 'state': q.get('state', '')})}")

    async def token(request: web.Request) -> web.Response:
        form = await request.post()
        if form.get("client_id") != CLIENT_ID or form.get("client_secret") != CLIENT_SECRET:
            return web.json_response({"error": "invalid_client"}, status=401)
        if form.get("grant_type") == "authorization_code":
            grant = codes.pop(str(form.get("code")), None)
            verifier = str(form.get("code_verifier", ""))
            digest = hashlib.sha256(verifier.encode()).digest()
            challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
            expected = (challenge, form.get("redirect_uri"))
            if grant is None or (grant["challenge"], grant["redirect_uri"]) != expected:
                return web.json_response({"error": "invalid_grant"}, status=400)
            answer = issue(grant["user"], grant["scope"])
            answer["refresh_token"] = "tp-rt-" + secrets.token_urlsafe(24)
            refresh[answer["refresh_token"]] = grant["user"]
            granted[answer["refresh_token"]] = grant["scope"]
            return web.json_response(answer)
        if form.get("grant_type") == "refresh_token":
            user = refresh.get(str(form.get("refresh_token")))
            if user is None:
                return web.json_response({"error": "invalid_grant"}, status=400)
            stats["refreshes"] += 1
            return web.json_response(issue(user, granted.get(str(form.get("refresh_token")), "profile")))
        return web.json_response({"error": "unsupported_grant_type"}, status=400)

    async def revoke(request: web.Request) -> web.Response:
        form = await request.post()
        if form.get("client_id") != CLIENT_ID or form.get("client_secret") != CLIENT_SECRET:
            return web.json_response({"error": "invalid_client"}, status=401)
        stats["revocations"] += 1
        access.pop(str(form.get("token")), None)
        refresh.pop(str(form.get("token")), None)
        return web.Response(status=200)

    async def me(request: web.Request) -> web.Response:
        header = request.headers.get("Authorization", "")
        held = access.get(header.removeprefix("Bearer ")) if header.startswith("Bearer ") else None
        if held is None or held["expires"] <= time.time():
            return web.json_response({"error": "invalid_token"}, status=401)
        scope = forbidden.get(held["user"])
        if scope is not None and not (scope and set(scope.split()) <= set(held["scope"].split())):
            stats["forbidden"] += 1
            if not scope:
                return web.json_response({"message": f"{held['user']} has no access to this API"}, status=403)
            said = f"this API needs the scope {scope}"
            challenge = f'Bearer error="insufficient_scope", scope="{scope}", error_description="{said}"'
            return web.json_response({"error": "insufficient_scope", "error_description": said},
                                     status=403, headers={"WWW-Authenticate": challenge})
        calls[held["user"]] = calls.get(held["user"], 0) + 1
        return web.json_response({"user": held["user"], "calls": calls[held["user"]]})

    async def control(request: web.Request) -> web.Response:
        what = request.match_info["what"]
        if what == "expire":
            for held in access.values():
                held["expires"] = 0
        elif what == "forget-refresh":
            refresh.clear()
        elif what == "forbid":
            forbidden[request.query["user"]] = request.query.get("scope", "")
        elif what == "allow":
            forbidden.pop(request.query["user"], None)
        elif what == "lifetime":
            stats["lifetime"] = int(request.query["seconds"])
        live = [t for t, h in access.items() if h["expires"] > time.time()]
        return web.json_response({**stats, "tokens": live, "refresh_tokens": list(refresh)})

    app = web.Application()
    app.router.add_get("/authorize", authorize)
    app.router.add_post("/token", token)
    app.router.add_post("/revoke", revoke)
    app.router.add_get("/api/me", me)
    app.router.add_post("/control/{what}", control)
    return app


class ThirdParty:
    def __init__(self) -> None:
        from tests.support.ports import free_port

        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def start(self) -> ThirdParty:
        self.process = subprocess.Popen([sys.executable, "-m", "tests.support.third_party", str(self.port)])
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                httpx.post(self.url("/control/stats"), timeout=1.0)
                return self
            except httpx.TransportError:
                time.sleep(0.05)  # polling a process start, bounded by the deadline
        self.stop()
        raise RuntimeError("the third-party service did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None

    def __enter__(self) -> ThirdParty:  # a module's fixture: ``with ThirdParty() as service: yield service``
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def control(self, what: str, **query: Any) -> dict[str, Any]:
        answer: dict[str, Any] = httpx.post(self.url(f"/control/{what}"), params=query, timeout=5.0).json()
        return answer

    def stats(self) -> dict[str, Any]:
        return self.control("stats")

    def token_for(self, user: str) -> str:
        """An access token of ``user``, by the authorization-code flow with PKCE (as a client
        holding one shared account's token would have got it)."""
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        redirect = "http://127.0.0.1/callback"
        query = {"client_id": CLIENT_ID, "redirect_uri": redirect, "code_challenge": challenge,
                 "code_challenge_method": "S256", "response_type": "code"}
        sent = httpx.get(self.url("/authorize"), params=query, headers={"X-Provider-User": user}, timeout=5.0)
        code = httpx.URL(sent.headers["location"]).params["code"]
        form = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier,
                "redirect_uri": redirect, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}
        token: str = httpx.post(self.url("/token"), data=form, timeout=5.0).json()["access_token"]
        return token


if __name__ == "__main__":
    from aiohttp import web

    web.run_app(_app(), host="127.0.0.1", port=int(sys.argv[1]), print=None)
