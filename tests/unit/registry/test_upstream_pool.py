"""The upstream calls' breaker and pooled sessions (registry/upstreams/breaker.py, pool.py,
calls.py), against an official SDK server process on loopback: one session shared and kept
between calls, re-made after the upstream expired it (404), the breaker's states.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest
from django.test import override_settings
from mcp.client.client import Client
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from registry.upstreams import breaker
from registry.upstreams.calls import UpstreamFailure, run
from registry.upstreams.config import UpstreamConfig
from registry.upstreams.connect import Handshake
from registry.upstreams.pool import UpstreamSessions
from registry.upstreams.relay import Relay
from tests.support.sdk_upstream_process import UpstreamProcess

pytestmark = pytest.mark.timeout(60)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_breaker_opens_after_consecutive_failures_only() -> None:
    clock = Clock()
    b = breaker.Breaker("u", failures=3, cool=10, clock=clock)
    b.failed("x")
    b.failed("x")
    b.succeeded()  # an answer resets the count
    b.failed("x")
    b.failed("x")
    assert b.state == breaker.CLOSED and b.admit()
    b.failed("x")
    assert b.state == breaker.OPEN and not b.admit()
    with pytest.raises(breaker.CircuitOpen, match="upstream u is unavailable"):
        b.check()


def test_half_open_lets_one_probe_through_and_its_outcome_decides() -> None:
    clock = Clock()
    seen: list[tuple[str, str]] = []
    listener = lambda upstream, state, detail: seen.append((upstream, state))  # noqa: E731
    breaker.listeners.append(listener)
    try:
        b = breaker.Breaker("v", failures=1, cool=10, clock=clock)
        b.failed("refused")
        clock.now += 9.9
        assert not b.admit()
        clock.now += 0.2
        assert b.admit()  # the probe
        assert not b.admit()  # the others still fail fast while it runs
        b.failed("refused again")  # the probe failed: open for another cool-down
        assert b.state == breaker.OPEN and not b.admit()
        clock.now += 10
        assert b.admit()
        b.abandoned()  # the probe was cancelled by our client: another may go
        assert b.admit()
        b.succeeded()
        assert b.state == breaker.CLOSED and b.admit() and b.admit()
    finally:
        breaker.listeners.remove(listener)
    assert seen == [("v", "open"), ("v", "half_open"), ("v", "open"), ("v", "half_open"), ("v", "closed")]


@pytest.fixture(scope="module")
def upstream() -> Iterator[UpstreamProcess]:
    with UpstreamProcess() as upstream:
        yield upstream


@contextlib.asynccontextmanager
async def _legacy(config: Any, handshake: Handshake) -> AsyncIterator[ClientSession]:
    # A session-ful (2025-11-25) session, the kind an upstream can expire; connect() would pick the
    # stateless 2026-07-28 revision with this upstream. Its session id goes to the lean path as
    # connect()'s response hook would give it.
    async def seen(response: httpx2.Response) -> None:
        handshake.session_id = response.headers.get("mcp-session-id") or handshake.session_id

    async with (
        httpx2.AsyncClient(event_hooks={"response": [seen]}) as http,
        Client(streamable_http_client(config.url, http_client=http), mode="legacy") as client,
    ):
        yield client.session


def _config(url: str, **over: Any) -> UpstreamConfig:
    return UpstreamConfig(**{"id": 1, "name": "exp", "prefix": "exp", "url": url,
                             "transport": "streamable-http", "auth": "none", "timeout": 5.0, **over})


async def _echo(sessions: UpstreamSessions, config: UpstreamConfig, text: str) -> tuple[str, ClientSession]:
    result = await run(sessions, config, "tools/call", "echo", {"name": "echo", "arguments": {"text": text}},
                       Relay(None))
    live = await sessions.get(config).session()
    return "".join(b["text"] for b in result["content"] if b["type"] == "text"), live.session


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
async def test_one_session_is_shared_kept_and_remade_after_the_upstream_forgot_it() -> None:
    sessions = UpstreamSessions(connect=_legacy)
    sessions.open()
    upstream = UpstreamProcess().start()
    config = _config(upstream.url)
    try:
        answers = await asyncio.gather(*(_echo(sessions, config, str(n)) for n in range(5)))
        assert [text for text, _ in answers] == ["0", "1", "2", "3", "4"]
        assert len({id(session) for _, session in answers}) == 1  # one opening for all five
        first = answers[0][1]
        assert (await _echo(sessions, config, "kept"))[1] is first
        # Restarted, the upstream knows no session: our next request with the old one gets 404
        # ("Session terminated"), or the dropped GET stream ended it first; a new one either way.
        upstream.stop()
        upstream = UpstreamProcess(port=upstream.port).start()
        text, second = await _echo(sessions, config, "after restart")
        assert text == "after restart" and second is not first
    finally:
        await sessions.close()
        upstream.stop()


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
async def test_a_changed_configuration_gets_its_own_session_and_cap(upstream: UpstreamProcess) -> None:
    sessions = UpstreamSessions(connect=_legacy)
    sessions.open()
    try:
        _, before = await _echo(sessions, _config(upstream.url), "a")
        _, after = await _echo(sessions, _config(upstream.url, max_concurrency=3), "b")
        assert after is not before
        assert sessions.get(_config(upstream.url, max_concurrency=3)).slots._value == 3
    finally:
        await sessions.close()


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
async def test_an_unreachable_upstream_is_a_failure_naming_it() -> None:
    from tests.support.ports import free_port

    sessions = UpstreamSessions(connect=_legacy)
    config = _config(f"http://127.0.0.1:{free_port()}/mcp", name="gone")
    with pytest.raises(UpstreamFailure, match="upstream gone is unreachable"):
        await _echo(sessions, config, "x")


@pytest.mark.django_db(transaction=True)
@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
def test_the_admins_try_it_calls_a_mirrored_tool_on_a_one_shot_session(upstream: UpstreamProcess) -> None:
    """Outside a serving loop (the admin's "try it", a command) the call opens a session of its own
    and closes it at once: nothing is left on a loop about to end."""
    from registry.admin.tryit import try_tool
    from registry.models import Tool, Upstream

    up = Upstream.objects.create(name="exp", prefix="exp", url=upstream.url, transport="streamable-http")
    row = Tool.objects.create(name="exp_echo", description="d", kind="upstream", upstream=up,
                              upstream_name="echo", input_schema={"type": "object", "properties": {}})
    outcome = try_tool(row, {"text": "tried"})
    assert outcome.error is None and outcome.result is not None
    assert outcome.result["content"] == [{"type": "text", "text": "tried"}]
