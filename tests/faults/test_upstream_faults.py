"""An upstream MCP server failing under calls (issue 40 item 4): killed mid-call → the call is an
``isError`` result naming it, and the server's other tools are unaffected and just as fast; an
unreachable upstream opens its circuit breaker (calls then fail at once), which half-opens after
its cool-down and closes on the probe's success once the upstream is back; the breaker's state on
``/metrics``. Real processes: an official SDK server (``tests/support/sdk_upstream_process.py``)
and a mcpsite server with the mirrored rows in its database.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from mcp import types
from mcp.client.client import Client
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.support.live_server import REGISTRY_PROVIDER, LiveServer
from tests.support.ports import free_port
from tests.support.scrape import scrape
from tests.support.sdk_upstream_process import UpstreamProcess
from tests.support.upstream_rows import mirror_script

pytestmark = pytest.mark.timeout(120)
COOLDOWN = 5.0  # s: REGISTRY_UPSTREAM_BREAKER_COOLDOWN of the server (the upstream starts in it)
ENV = {
    "MCP_PROVIDER": REGISTRY_PROVIDER, "REGISTRY_HTTP_ALLOWED_HOSTS": "127.0.0.1", "MCP_METRICS": "1",
    "REGISTRY_UPSTREAM_BREAKER_FAILURES": "2", "REGISTRY_UPSTREAM_BREAKER_COOLDOWN": str(COOLDOWN),
}


@contextlib.asynccontextmanager
async def _client(url: str) -> AsyncIterator[ClientSession]:
    async with Client(streamable_http_client(url), mode="legacy") as client:
        yield client.session


def _text(result: Any) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def _latency(session: ClientSession, tool: str, n: int = 15) -> float:
    took = []
    for _ in range(n):
        started = time.perf_counter()
        result = await session.call_tool(tool, {})
        took.append(time.perf_counter() - started)
        assert result.is_error is False, _text(result)
    return statistics.median(took)


@pytest.fixture
def doomed() -> Iterator[tuple[UpstreamProcess, LiveServer]]:
    with UpstreamProcess() as upstream:
        script = mirror_script("up", upstream.url, tools=("slow", "echo"), timeout=20.0, local=True)
        with LiveServer(env=ENV, load=[["shell", "-c", script]]) as server:
            yield upstream, server


async def test_an_upstream_killed_mid_call_is_an_error_and_other_tools_keep_their_pace(
    doomed: tuple[UpstreamProcess, LiveServer],
) -> None:
    upstream, server = doomed
    async with _client(server.url) as session:
        assert (await session.call_tool("up_echo", {"text": "warm"})).is_error is False
        before = await _latency(session, "local_echo")
        call = asyncio.create_task(session.call_tool("up_slow", {"seconds": 60, "steps": 1, "key": "k"}))
        await asyncio.sleep(0.5)
        during = await _latency(session, "local_echo")  # an upstream call hanging meanwhile
        upstream.kill()
        killed_at = time.perf_counter()
        result = await asyncio.wait_for(call, 15)
        answered_in = time.perf_counter() - killed_at
        after = await _latency(session, "local_echo")
        echo = await session.call_tool("up_echo", {"text": "anyone?"})
    assert result.is_error is True and "upstream up" in _text(result), _text(result)
    assert answered_in < 5, answered_in  # the dropped connection, not the 20 s timeout
    # Just as fast: a hanging, then dead upstream takes nothing from a local tool (loopback noise
    # on a shared machine: a few ms).
    assert during < before + 0.02 and after < before + 0.02, (before, during, after)
    assert echo.is_error is True and "upstream up" in _text(echo)


async def test_the_breaker_opens_fails_fast_half_opens_and_closes() -> None:
    port = free_port()  # nothing listens yet: connection refused
    url = f"http://127.0.0.1:{port}/mcp"
    script = mirror_script("back", url, tools=("echo",), timeout=5.0, local=True, resources=False)
    with LiveServer(env=ENV, load=[["shell", "-c", script]]) as server:
        async with _client(server.url) as session:
            for _ in range(2):  # REGISTRY_UPSTREAM_BREAKER_FAILURES
                refused = await session.call_tool("back_echo", {"text": "x"})
                assert refused.is_error is True and "upstream back is unreachable" in _text(refused)
            started = time.perf_counter()
            fast = await session.call_tool("back_echo", {"text": "x"})
            opened_by = started  # the second refusal, just before, opened it
            assert time.perf_counter() - started < 0.1
            assert fast.is_error is True
            assert _text(fast) == "upstream back is unavailable (circuit open)"
            assert scrape(server.base_url).value("mcp_upstream_circuit_open", upstream="back") == 1
            with UpstreamProcess(port=port):
                # Still open until the cool-down ends, though the upstream is back.
                assert time.perf_counter() - opened_by < COOLDOWN
                assert "circuit open" in _text(await session.call_tool("back_echo", {"text": "x"}))
                await asyncio.sleep(COOLDOWN + 0.2 - (time.perf_counter() - opened_by))
                probe = await session.call_tool("back_echo", {"text": "probe"})  # half-open: one goes
                assert probe.is_error is False and _text(probe) == "probe", _text(probe)
                again = await session.call_tool("back_echo", {"text": "closed"})
                assert _text(again) == "closed"
                assert scrape(server.base_url).value("mcp_upstream_circuit_open", upstream="back") == 0
            # Down again: the failures count from zero, then it opens once more.
            for _ in range(2):
                assert "unreachable" in _text(await session.call_tool("back_echo", {"text": "x"}))
            assert "circuit open" in _text(await session.call_tool("back_echo", {"text": "x"}))
