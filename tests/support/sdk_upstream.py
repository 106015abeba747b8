"""An upstream MCP server nobody here wrote, on loopback: the official Python SDK's ``MCPServer``
served by uvicorn in a daemon thread, for the upstream sync tests (issue 40).

    with SdkUpstream() as up:            # tools echo/add, a resource, a template, a prompt
        up.url                           # Streamable HTTP: http://127.0.0.1:<port>/mcp
        up.sse_url                       # the legacy HTTP+SSE transport: .../sse (POST: 405)
        up.server.remove_tool("add")     # what the next listing says

Both transports are mounted on one Starlette app, sharing the one ``MCPServer``. With
``bearer="T"`` every MCP request needs ``Authorization: Bearer T`` (401 otherwise) and ``POST
/token`` is an OAuth token endpoint handing out ``T`` for the client credentials ``me``/``secret``
(RFC 6749 §4.4), recording each request's form in ``token_requests``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from types import TracebackType

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from .ports import free_port


def build_server() -> MCPServer:
    server = MCPServer("sdk-upstream", version="9.9")

    @server.tool(description="Echo the text back.")
    def echo(text: str) -> str:
        return text

    @server.tool(description="Add two integers.")
    def add(a: int, b: int) -> int:
        return a + b

    @server.resource("memo://readme", name="readme", mime_type="text/plain", description="A memo.")
    def readme() -> str:
        return "hello from upstream"

    @server.resource("memo://notes/{slug}", name="note", mime_type="text/plain")
    def note(slug: str) -> str:
        return f"note {slug}"

    @server.prompt(description="Greet someone.")
    def greet(who: str) -> str:
        return f"Hello {who}"

    return server


class _Bearer:
    """401 for an MCP request without the bearer token (the token endpoint is open)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] != "/token":
            headers = dict(scope["headers"])
            if headers.get(b"authorization") != f"Bearer {self.token}".encode():
                await Response(status_code=401)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class SdkUpstream:
    def __init__(self, server: MCPServer | None = None, bearer: str | None = None) -> None:
        self.server = server or build_server()
        self.bearer = bearer
        self.token_requests: list[dict[str, str]] = []
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.sse_url = f"http://127.0.0.1:{self.port}/legacy/sse"
        self._uvicorn: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> SdkUpstream:
        streamable = self.server.streamable_http_app(json_response=True)
        legacy = self.server.sse_app()
        app: ASGIApp = Starlette(
            routes=[Route("/token", self._token, methods=["POST"]), Mount("/legacy", app=legacy),
                    Mount("/", app=streamable)],
            lifespan=lambda app: streamable.router.lifespan_context(app))
        if self.bearer is not None:
            app = _Bearer(app, self.bearer)
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on")
        self._uvicorn = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._uvicorn.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._uvicorn.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the SDK upstream did not start")
            time.sleep(0.02)
        return self

    async def _token(self, request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        self.token_requests.append(form)
        if (form.get("grant_type"), form.get("client_id"), form.get("client_secret")) != (
                "client_credentials", "me", "secret") or self.bearer is None:
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        return JSONResponse({"access_token": self.bearer, "token_type": "Bearer", "expires_in": 3600})

    def stop(self) -> None:
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        with contextlib.suppress(Exception):
            self.stop()
