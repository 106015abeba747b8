"""A real HTTP API on loopback for the ``http`` tool kind's tests: an aiohttp app in a thread.

    with Upstream(secret=b"s") as api:          # one per test module (a fixture)
        ... tools calling f"{api.url}/echo/x" ...
        api.requests                            # what arrived, in order

Routes (any method):

- ``/echo/{tail}``: 200 with ``{"method", "path", "query", "headers", "body"}`` of the request;
- ``/status/{code}``: that status with ``{"error": {"message": "upstream says <code>"}}``;
- ``/flaky/{key}/{failures}``: 503 for the first ``failures`` requests of ``key``, then 200
  ``{"attempts": n}`` (``attempts(key)`` counts them: retries are counted by the upstream); with
  ``?retry_after=N`` the 503s carry ``Retry-After: N``;
- ``/drop/{key}/{failures}``: closes the connection without answering for the first ``failures``
  requests of ``key`` (a connection error for the client), then 200 ``{"attempts": n}``;
- ``/slow``: answers after 10 s, or when the server stops (a deadline test gives up long before);
- ``/hold/{key}``: holds each request 0.1 s and records the most held at once (``peak(key)``);
- ``/api/v3/pet...``: three operations of the Swagger Petstore (``GET /pet/{petId}``,
  ``GET /pet/findByStatus``, ``POST /pet``), for tools imported from its OpenAPI document;
- ``/signed...`` (any tail): checks ``X-MCP-Signature`` with ``secret`` as a receiver does
  (docs/guides/http-tools.md "Signed calls"): ``v1=`` over ``X-MCP-Timestamp`` + "." + body,
  ``v2=`` over timestamp, method, the URL it was sent to and the body's SHA-256 (HMAC-SHA256, hex),
  and answers ``{"verified": bool}``.

Every request is recorded (method, path, raw path, query, headers, body bytes, the client's port). The
server runs on its own loop in a daemon thread, on a free port, stopped on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import threading
from collections import Counter
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from aiohttp import web

from .ports import free_port


@dataclass
class Received:
    method: str
    path: str
    raw_path: str  # as sent: percent-encoded, with the query
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    peer_port: int

    def json(self) -> Any:
        return json.loads(self.body)


class Upstream:
    def __init__(self, secret: bytes = b"") -> None:
        self.secret = secret
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.requests: list[Received] = []
        self._counts: Counter[str] = Counter()
        self._held: Counter[str] = Counter()
        self._peaks: Counter[str] = Counter()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None

    # -- what the tests read ----------------------------------------------------------------------
    def attempts(self, key: str) -> int:
        return self._counts[key]

    def peak(self, key: str) -> int:
        return self._peaks[key]

    def clear(self) -> None:
        self.requests.clear()

    # -- the routes -------------------------------------------------------------------------------
    async def _record(self, request: web.Request) -> bytes:
        body = await request.read()
        peer = request.transport.get_extra_info("peername") if request.transport else None
        self.requests.append(
            Received(
                request.method,
                request.path,
                request.raw_path,
                dict(request.query),
                dict(request.headers),
                body,
                peer[1] if peer else 0,
            )
        )
        return body

    async def echo(self, request: web.Request) -> web.Response:
        body = await self._record(request)
        try:
            parsed: Any = json.loads(body) if body else None
        except ValueError:
            parsed = body.decode("utf-8", "replace")
        return web.json_response(
            {
                "method": request.method,
                "path": request.path,
                "query": dict(request.query),
                "headers": dict(request.headers),
                "body": parsed,
            }
        )

    async def status(self, request: web.Request) -> web.Response:
        await self._record(request)
        code = int(request.match_info["code"])
        return web.json_response({"error": {"message": f"upstream says {code}"}}, status=code)

    async def flaky(self, request: web.Request) -> web.Response:
        await self._record(request)
        key = request.match_info["key"]
        self._counts[key] += 1
        if self._counts[key] <= int(request.match_info["failures"]):
            wait = request.query.get("retry_after")  # sent back as Retry-After when asked
            headers = {"Retry-After": wait} if wait else None
            return web.json_response({"error": "busy"}, status=503, headers=headers)
        return web.json_response({"attempts": self._counts[key]})

    async def drop(self, request: web.Request) -> web.StreamResponse:
        await self._record(request)
        key = request.match_info["key"]
        self._counts[key] += 1
        if self._counts[key] <= int(request.match_info["failures"]):
            assert request.transport is not None
            request.transport.close()  # no status line: the client sees the connection end
            return web.StreamResponse()
        return web.json_response({"attempts": self._counts[key]})

    async def slow(self, request: web.Request) -> web.Response:
        await self._record(request)
        with contextlib.suppress(TimeoutError):  # released when the server stops
            await asyncio.wait_for(self._release.wait(), 10)
        return web.json_response({})

    async def hold(self, request: web.Request) -> web.Response:
        await self._record(request)
        key = request.match_info["key"]
        self._held[key] += 1
        self._peaks[key] = max(self._peaks[key], self._held[key])
        try:
            await asyncio.sleep(0.1)
        finally:
            self._held[key] -= 1
        return web.json_response({"held": True})

    async def signed(self, request: web.Request) -> web.Response:
        body = await self._record(request)
        timestamp = request.headers.get("X-MCP-Timestamp", "")
        given = request.headers.get("X-MCP-Signature", "")
        if given.startswith("v2="):
            url = f"http://{request.host}{request.raw_path}"  # as the client sent it
            signed = "\n".join(("v2", timestamp, request.method, url, hashlib.sha256(body).hexdigest()))
            expected = "v2=" + hmac.new(self.secret, signed.encode(), hashlib.sha256).hexdigest()
        else:
            mac = hmac.new(self.secret, timestamp.encode() + b"." + body, hashlib.sha256)
            expected = "v1=" + mac.hexdigest()
        return web.json_response({"verified": bool(timestamp) and hmac.compare_digest(expected, given)})

    async def pet(self, request: web.Request) -> web.Response:
        await self._record(request)
        pet_id = int(request.match_info["pet_id"])
        if pet_id == 404:
            return web.json_response({"message": "Pet not found"}, status=404)
        return web.json_response({"id": pet_id, "name": "doggie", "photoUrls": [], "status": "available"})

    async def pets_by_status(self, request: web.Request) -> web.Response:
        await self._record(request)
        status = request.query.get("status", "available")
        return web.json_response([{"id": 1, "name": "rex", "photoUrls": [], "status": status}])

    async def add_pet(self, request: web.Request) -> web.Response:
        body = await self._record(request)
        return web.json_response({**json.loads(body), "id": 10})

    # -- start and stop ---------------------------------------------------------------------------
    def __enter__(self) -> Upstream:
        app = web.Application()
        app.router.add_route("*", "/echo/{tail:.*}", self.echo)
        app.router.add_route("*", "/status/{code}", self.status)
        app.router.add_route("*", "/flaky/{key}/{failures}", self.flaky)
        app.router.add_route("*", "/slow", self.slow)
        app.router.add_route("*", "/drop/{key}/{failures}", self.drop)
        app.router.add_route("*", "/hold/{key}", self.hold)
        app.router.add_route("*", "/signed{tail:.*}", self.signed)
        app.router.add_get("/api/v3/pet/findByStatus", self.pets_by_status)
        app.router.add_get("/api/v3/pet/{pet_id:[0-9]+}", self.pet)
        app.router.add_post("/api/v3/pet", self.add_pet)
        self._thread.start()
        self._runner = web.AppRunner(app, access_log=None)
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    async def _start(self) -> None:
        assert self._runner is not None
        self._release = asyncio.Event()
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._runner is not None:
            self._loop.call_soon_threadsafe(self._release.set)
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
