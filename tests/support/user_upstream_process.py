"""An upstream MCP server that knows its callers by their own token at a third party (issue 42
item 3): the official Python SDK's ``MCPServer`` over Streamable HTTP, as a process of its own,
behind an ASGI check of every request's ``Authorization: Bearer`` against the loopback third
party's ``/api/me`` (``tests/support/third_party.py``): a missing, unknown, expired or revoked
token is an HTTP 401, as a real resource server answers (RFC 6750 §3.1 ``invalid_token``); a
token the third party answers 403 for (``control("forbid")``) gets that 403, its
``WWW-Authenticate`` challenge and body passed on.

    with UserUpstreamProcess(third_party.url()) as up:   # up.url: http://127.0.0.1:<port>/mcp

``legacy`` (the default): ``server/discover`` is answered "method not found", so clients take the
2025-11-25 initialize handshake and get an ``Mcp-Session-Id``; without it the SDK server speaks
2026-07-28 too (no sessions: each request carries its token alone).

Its tools:

- ``whoami()``: the caller as the third party knows the token, and the ``Mcp-Session-Id`` the
  call came on;
- the resources ``user://me/<anything>`` (JSON: ``user``, ``session``) and the prompt ``greeting`` ("Hello
  <user>, on session <id>"): the same, for ``resources/read`` and ``prompts/get``;
- ``seen()``: every (session id → the users whose tokens came on it) the checker recorded, and
  how many requests were refused (401) and how many POSTs were forbidden (403); a session
  shared between two users shows as two names there.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from collections import defaultdict
from typing import Any

import httpx
from mcp.server.mcpserver import Context, MCPServer

from .sdk_upstream_process import UpstreamProcess


async def _body(receive: Any) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(body: bytes, receive: Any) -> Any:
    """The body read already, then the real ``receive`` (its disconnect, when the client leaves:
    an SSE response listens for it)."""
    sent = False

    async def replayed() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        found: dict[str, Any] = await receive()
        return found

    return replayed


async def _answer(send: Any, status: int, body: bytes, *extra: tuple[bytes, bytes]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), *extra]})
    await send({"type": "http.response.body", "body": body})


def build_app(provider: str, legacy: bool) -> Any:
    server = MCPServer("user-upstream-process", version="1.0")
    sessions: dict[str, set[str]] = defaultdict(set)
    refused = {"count": 0, "forbidden": 0}
    client = httpx.AsyncClient(timeout=5.0)

    async def check(authorization: str) -> httpx.Response | None:
        if not authorization.startswith("Bearer "):
            return None
        return await client.get(f"{provider}/api/me", headers={"Authorization": authorization})

    async def user_of(authorization: str) -> str | None:
        answer = await check(authorization)
        return str(answer.json()["user"]) if answer is not None and answer.status_code == 200 else None

    @server.tool(description="Who the bearer token belongs to, and the session it came on.")
    async def whoami(ctx: Context) -> dict[str, Any]:
        headers = ctx.headers or {}
        user = await user_of(headers.get("authorization", ""))
        return {"user": user, "session": headers.get("mcp-session-id")}

    # A template: the SDK injects a Context into templated resources only.
    @server.resource("user://me/{part}", mime_type="application/json", description="The caller.")
    async def me(part: str, ctx: Context) -> str:
        headers = ctx.headers or {}
        user = await user_of(headers.get("authorization", ""))
        return json.dumps({"user": user, "session": headers.get("mcp-session-id")})

    @server.prompt(description="A greeting for the caller, by the name the third party knows.")
    async def greeting(ctx: Context) -> str:
        user = await user_of((ctx.headers or {}).get("authorization", ""))
        return f"Hello {user}, on session {(ctx.headers or {}).get('mcp-session-id')}"

    @server.tool(description="The users seen on each session id, and the requests refused.")
    def seen() -> dict[str, Any]:
        return {"sessions": {sid: sorted(users) for sid, users in sessions.items()},
                "refused": refused["count"], "forbidden": refused["forbidden"]}

    inner = server.streamable_http_app()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        answer = await check(headers.get("authorization", ""))
        if answer is not None and answer.status_code == 403:  # valid, not allowed: passed on as is
            if scope["method"] == "POST":  # a call or a handshake (not a client's GET stream)
                refused["forbidden"] += 1
            challenge = answer.headers.get("www-authenticate")
            extra = [(b"content-length", str(len(answer.content)).encode())]
            if challenge:
                extra.append((b"www-authenticate", challenge.encode()))
            await _answer(send, 403, answer.content, *extra)
            return
        user = str(answer.json()["user"]) if answer is not None and answer.status_code == 200 else None
        if user is None:
            refused["count"] += 1
            await _answer(send, 401, b'{"error": "invalid_token"}',
                          (b"www-authenticate", b'Bearer error="invalid_token"'))
            return
        if "mcp-session-id" in headers:
            sessions[headers["mcp-session-id"]].add(user)
        if legacy and scope["method"] == "POST":
            # A 2025-era server: server/discover is unknown, so clients fall back to initialize and
            # get an Mcp-Session-Id (the sessions whose sharing the tests look for).
            body = await _body(receive)
            with contextlib.suppress(ValueError):
                message = json.loads(body)
                if isinstance(message, dict) and message.get("method") == "server/discover":
                    error = {"code": -32601, "message": "Method not found"}
                    await _answer(send, 200, json.dumps({"jsonrpc": "2.0", "id": message.get("id"),
                                                         "error": error}).encode())
                    return
            receive = _replay(body, receive)
        await inner(scope, receive, send)

    return app


class UserUpstreamProcess(UpstreamProcess):
    module = "tests.support.user_upstream_process"
    label = "the per-user upstream"

    def __init__(self, provider: str, legacy: bool = True) -> None:
        super().__init__()
        self.provider = provider
        self.legacy = legacy

    def command(self) -> list[str]:
        return [*super().command(), "--provider", self.provider, *(["--legacy"] if self.legacy else [])]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--provider", required=True)
    parser.add_argument("--legacy", action="store_true")
    options = parser.parse_args()
    import uvicorn

    uvicorn.run(build_app(options.provider, options.legacy), host="127.0.0.1", port=options.port,
                log_level="warning", access_log=False, lifespan="on")


if __name__ == "__main__":
    main()
