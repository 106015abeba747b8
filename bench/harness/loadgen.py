"""Closed-loop load over MCP Streamable HTTP: the scenarios, the workers and the statistics.

Each of ``concurrency`` workers owns one keep-alive connection and sends its next request as soon
as the previous response is complete (for SSE responses: when the server ends the stream), so
latency is the whole exchange the client sees. Scenarios, all on protocol 2025-11-25:

- ``call``: a session per worker (initialize + notifications/initialized), then
  ``tools/call echo {"message": "hello"}`` in a loop;
- ``list``: the same, looping ``tools/list`` (the servers hold 100 tools, checked once per run);
- ``session``: a loop of initialize → notifications/initialized → DELETE; one sample is the
  whole three-request cycle;
- ``stateless``: ``tools/call echo`` of protocol 2026-07-28, no session: each request carries its
  version and capabilities in ``_meta`` and the ``Mcp-Method``/``Mcp-Name`` headers.

A response counts as an error unless it has the expected status and a JSON-RPC ``result`` (for
``call``, one that echoes ``hello``). Requests started during the warm-up are not counted.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .httpclient import Client, Response, raw_connector

PROTOCOL = "2025-11-25"
SCENARIOS = ("call", "list", "session", "stateless")
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "mcpsite-bench", "version": "1"},
        },
    }
).encode()
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
CALL = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call",'
    b'"params":{"name":"echo","arguments":{"message":"hello"}}}'
)
LIST = b'{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}'
MODERN = "2026-07-28"
STATELESS_CALL = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"},'
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":{}}}}'
)
STATELESS_HEADERS = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "echo"}


class BenchError(Exception):
    """A server answered a setup request wrongly; the run cannot measure anything meaningful."""


@dataclass
class Result:
    scenario: str
    concurrency: int
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    first_error: str = ""
    elapsed: float = 0.0
    client_cpu: float = 0.0
    total_requests: int = 0
    server_cpu: float = 0.0  # the server process's CPU seconds over the run (bench.run_all)

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.elapsed if self.elapsed else 0.0

    def percentile(self, fraction: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]

    @property
    def p50_ms(self) -> float:
        return self.percentile(0.5) * 1e3

    @property
    def p99_ms(self) -> float:
        return self.percentile(0.99) * 1e3

    @property
    def client_us_per_request(self) -> float:
        return self.client_cpu / max(self.total_requests, 1) * 1e6

    @property
    def server_us_per_request(self) -> float:
        """Server CPU per request, warm-up requests included (they cost the server too)."""
        return self.server_cpu / self.total_requests * 1e6 if self.total_requests else 0.0

    def note_error(self, response: Response) -> None:
        self.errors += 1
        if not self.first_error:
            self.first_error = f"HTTP {response.status}: {response.body[:300]!r}"


def message_of(response: Response) -> dict[str, object]:
    """The JSON-RPC message of a JSON body, or of the last ``data:`` line of an SSE body."""
    body = response.body.strip()
    if body.startswith(b"{"):
        return dict(json.loads(body))
    data = [line[5:].strip() for line in body.splitlines() if line.startswith(b"data:")]
    messages = [json.loads(item) for item in data if item.startswith(b"{")]
    if not messages:
        raise BenchError(f"no JSON-RPC message in HTTP {response.status} body {response.body[:300]!r}")
    return dict(messages[-1])


def session_headers(session_id: str) -> dict[str, str]:
    return {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": PROTOCOL}


async def open_session(client: Client) -> str:
    response = await client.send("POST", INITIALIZE, {})
    if response.status != 200 or not response.session_id or "result" not in message_of(response):
        raise BenchError(f"initialize failed: HTTP {response.status} {response.body[:300]!r}")
    ack = await client.send("POST", INITIALIZED, session_headers(response.session_id))
    if ack.status != 202:
        raise BenchError(f"notifications/initialized got HTTP {ack.status} {ack.body[:300]!r}")
    return response.session_id


async def check_tool_count(client: Client, session_id: str, expected: int) -> None:
    message = message_of(await client.send("POST", LIST % 1, session_headers(session_id)))
    result = message.get("result")
    tools = result.get("tools") if isinstance(result, dict) else None
    if (
        not isinstance(tools, list)
        or len(tools) != expected
        or (isinstance(result, dict) and result.get("nextCursor"))
    ):
        count = len(tools) if isinstance(tools, list) else None
        raise BenchError(f"tools/list returned {count} tools on its first page, the bench needs {expected}")


async def request_loop(
    client: Client,
    session_id: str | None,
    template: bytes,
    expect: bytes,
    start: float,
    deadline: float,
    result: Result,
) -> None:
    headers = session_headers(session_id) if session_id else STATELESS_HEADERS
    request_id = 1
    while (began := time.perf_counter()) < deadline:
        request_id += 1
        response = await client.send("POST", template % request_id, headers)
        ended = time.perf_counter()
        result.total_requests += 1
        if response.status != 200 or b'"result"' not in response.body or expect not in response.body:
            result.note_error(response)
        elif began >= start:
            result.latencies.append(ended - began)


async def closed_loop(
    url: str,
    template: bytes,
    expect: bytes,
    label: str,
    concurrency: int,
    duration: float,
    warmup: float,
    cpu: Callable[[], float],
) -> Result:
    """``template`` requests in a closed loop on ``concurrency`` sessions of their own, each answer
    checked for ``expect``; ``cpu()`` (the server's CPU seconds) read around the measured part."""
    connect = raw_connector(url)
    clients = [connect() for _ in range(concurrency)]
    result = Result(label, concurrency)
    try:
        sessions = await asyncio.gather(*(open_session(c) for c in clients))
        cpu0 = cpu()
        start = time.perf_counter() + warmup
        deadline = start + duration
        await asyncio.gather(*(request_loop(c, s, template, expect, start, deadline, result)
                               for c, s in zip(clients, sessions, strict=True)))
        result.elapsed = time.perf_counter() - start
        result.server_cpu = cpu() - cpu0
    finally:
        for client in clients:
            await client.close()
    return result


async def session_loop(client: Client, start: float, deadline: float, result: Result) -> None:
    while (began := time.perf_counter()) < deadline:
        response = await client.send("POST", INITIALIZE, {})
        result.total_requests += 1
        if response.status != 200 or not response.session_id or b'"result"' not in response.body:
            result.note_error(response)
            continue
        headers = session_headers(response.session_id)
        ack = await client.send("POST", INITIALIZED, headers)
        closed = await client.send("DELETE", None, headers)
        ended = time.perf_counter()
        if ack.status != 202:
            result.note_error(ack)
        elif not 200 <= closed.status < 300:
            result.note_error(closed)
        elif began >= start:
            result.latencies.append(ended - began)


async def run_scenario(
    connect: Callable[[], Client], scenario: str, concurrency: int, duration: float, warmup: float, tools: int
) -> Result:
    result = Result(scenario, concurrency)
    clients = [connect() for _ in range(concurrency)]
    sessions: list[str] = []
    try:
        if scenario in ("call", "list"):
            sessions = list(await asyncio.gather(*(open_session(client) for client in clients)))
        if scenario == "list":
            await check_tool_count(clients[0], sessions[0], tools)
        cpu_before = time.process_time()
        start = time.perf_counter() + warmup
        deadline = start + duration
        if scenario == "session":
            workers = [session_loop(client, start, deadline, result) for client in clients]
        elif scenario == "stateless":
            workers = [
                request_loop(client, None, STATELESS_CALL, b"hello", start, deadline, result)
                for client in clients
            ]
        else:
            template, expect = (CALL, b"hello") if scenario == "call" else (LIST, b'"tools"')
            workers = [
                request_loop(client, session, template, expect, start, deadline, result)
                for client, session in zip(clients, sessions, strict=True)
            ]
        await asyncio.gather(*workers)
        result.elapsed = time.perf_counter() - start
        result.client_cpu = time.process_time() - cpu_before
        for client, session in zip(clients, sessions, strict=False):
            await client.send("DELETE", None, session_headers(session))
    finally:
        for client in clients:
            await client.close()
    return result


async def json_calls(
    url: str, concurrency: int, duration: float, warmup: float, tools: int, token: str | None = None
) -> Result:
    """The common row: JSON tools/call of one server at ``concurrency`` (a bearer ``token`` when
    given), measured for ``duration`` after ``warmup``."""
    return await run_scenario(raw_connector(url, token), "call", concurrency, duration, warmup, tools)
