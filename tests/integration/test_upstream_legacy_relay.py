"""A legacy HTTP+SSE upstream (2024-11-05 transport) through us, and what an endpoint of mirrored
rows only advertises (issue 40 items 3 and 4), end to end on loopback: the official Python SDK's
``MCPServer`` served over its ``sse_app`` (``tests/support/sdk_upstream.py``), its tools mirrored
into a real mcpsite server process (no tool of our own beside them), the official SDK's client
calling mcpsite in either era.

- a tool that logs during the call: our client gets the log message (``sdk_relay.py`` routes the
  SDK session's logging callback to the call in flight);
- a tool that elicits during the call: our client is asked and its answer reaches the upstream's
  tool; a client without the elicitation capability: the upstream's tool is refused; while another
  call is in flight on the worker's session the question cannot be tied to its caller and is
  refused, never sent to the wrong one;
- capabilities: the upstream declares prompts, resources and completions, but the virtual server
  ``/mcp/mirrored`` serves only its tools, so neither ``initialize`` nor ``server/discover`` there
  advertises them; ``logging`` (declared by the upstream) is advertised. ``/mcp``, which also
  serves a resource of our own, advertises everything.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import types
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

from tests.support.live_server import REGISTRY_PROVIDER, LiveServer
from tests.support.sdk_upstream import SdkUpstream

pytestmark = pytest.mark.timeout(300)
ENV = {"MCP_PROVIDER": REGISTRY_PROVIDER, "REGISTRY_HTTP_ALLOWED_HOSTS": "127.0.0.1"}
OBJECT = {"type": "object", "properties": {}}
# What the upstream's handshake declared, as the sync records it (Upstream.server_info).
DECLARED = {"tools": {"listChanged": True}, "logging": {}, "prompts": {}, "completions": {},
            "resources": {"subscribe": True}}


class Name(BaseModel):
    name: str


def _server() -> MCPServer:
    server = MCPServer("legacy-upstream", version="1.0")

    @server.tool(description="Logs the text at warning, then returns it.")
    async def chatty(text: str, ctx: Context) -> str:
        await ctx.warning(text, logger_name="legacy")
        return text

    @server.tool(description="Asks the client for a name.")
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", Name)
        return f"{answer.action}:{getattr(getattr(answer, 'data', None), 'name', '')}"

    @server.tool(description="Waits, then answers.")
    async def hold(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "held"

    @server.prompt(description="A prompt this endpoint does not mirror.")
    def unused() -> str:
        return "unused"

    return server


def _script(url: str) -> str:
    lines = [
        "from registry.models import Upstream, Tool, Resource, VirtualServer",
        # One definition of our own on /mcp; /mcp/mirrored selects the mirrored tools only.
        "Resource.objects.create(uri='memo://ours', name='ours', kind='text', text='ours')",
        "VirtualServer.objects.create(slug='mirrored', name='Mirrored', tools=['lg_chatty', 'lg_ask', "
        "'lg_hold'])",
        f"up = Upstream.objects.create(name='lg', prefix='lg', url={url!r}, transport='sse', "
        f"timeout=10.0, connect_timeout=2.0, server_info={{'capabilities': {DECLARED!r}}})",
    ]
    for name in ("chatty", "ask", "hold"):
        lines.append(f"Tool.objects.create(name='lg_{name}', description='mirrored', kind='upstream', "
                     f"upstream=up, upstream_name={name!r}, input_schema={OBJECT!r})")
    return "; ".join(lines)


@pytest.fixture(scope="module")
def served() -> Iterator[LiveServer]:
    with contextlib.ExitStack() as stack:
        upstream = stack.enter_context(SdkUpstream(_server()))
        yield stack.enter_context(LiveServer(env=ENV, load=[["shell", "-c", _script(upstream.sse_url)]]))


def _text(result: Any) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def _name(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def test_a_legacy_upstreams_log_message_reaches_our_client(served: LiveServer) -> None:
    heard: list[tuple[str, Any, str | None]] = []

    async def log(params: types.LoggingMessageNotificationParams) -> None:
        heard.append((params.level, params.data, params.logger))

    async with Client(streamable_http_client(served.url), mode="legacy", logging_callback=log) as client:
        await client.session.set_logging_level("info")
        result = await client.session.call_tool("lg_chatty", {"text": "said over sse"})
        assert result.is_error is False and _text(result) == "said over sse"
    assert ("warning", "said over sse", "legacy") in heard


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_legacy_upstreams_elicitation_is_asked_of_our_client(served: LiveServer, mode: str) -> None:
    """In a 2025 session we send our client a real elicitation/create; in 2026-07-28 our own
    input-required round, which the SDK client answers and retries."""
    async with Client(streamable_http_client(served.url), mode=mode,  # type: ignore[arg-type]
                      elicitation_callback=_name) as client:
        result = await client.call_tool("lg_ask", {})
    assert result.is_error is False, _text(result)
    assert _text(result) == "accept:Ada"


async def test_a_client_without_elicitation_gets_the_upstreams_refusal(served: LiveServer) -> None:
    async with Client(streamable_http_client(served.url), mode="legacy") as client:
        result = await client.session.call_tool("lg_ask", {})
    assert result.is_error is True
    assert "elicitation" in _text(result), _text(result)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_endpoint_of_mirrored_tools_advertises_only_what_it_serves(
        served: LiveServer, mode: str) -> None:
    url = served.base_url + "/mcp/mirrored"
    async with Client(streamable_http_client(url), mode=mode) as client:  # type: ignore[arg-type]
        caps = client.session.server_capabilities
        assert caps is not None
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert names == {"lg_chatty", "lg_ask", "lg_hold"}
    assert caps.tools is not None
    assert caps.prompts is None and caps.resources is None and caps.completions is None
    if mode == "legacy":
        assert caps.logging is not None  # the upstream's log messages are relayed
    # /mcp serves a resource of our own beside them: everything we offer.
    async with Client(streamable_http_client(served.url), mode=mode) as client:  # type: ignore[arg-type]
        ours = client.session.server_capabilities
    assert ours is not None and ours.prompts is not None and ours.resources is not None
    assert ours.resources.subscribe is True

async def test_a_question_with_another_call_in_flight_is_refused_not_misrouted(served: LiveServer) -> None:
    asked: list[str] = []

    async def other(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append("holder")  # the holding client must never be asked
        return types.ElicitResult(action="accept", content={"name": "Mallory"})

    async def mine(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append("asker")
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async with Client(streamable_http_client(served.url), mode="legacy", elicitation_callback=other) as a, \
            Client(streamable_http_client(served.url), mode="legacy", elicitation_callback=mine) as b:
        holding = asyncio.create_task(a.session.call_tool("lg_hold", {"seconds": 2.0}))
        await asyncio.sleep(0.5)
        result = await b.session.call_tool("lg_ask", {})
        assert _text(await holding) == "held"
    assert result.is_error is True and "several calls are in flight" in _text(result), _text(result)
    assert asked == []
