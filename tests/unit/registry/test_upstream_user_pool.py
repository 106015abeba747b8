"""Per-user sessions of an upstream called as the user (registry/upstreams/pool.py ``for_user``),
against an official SDK server process on loopback: one session per principal, each opened with
that principal's token, kept between its calls; a new token replaces the session; the bound
(``REGISTRY_UPSTREAM_USER_SESSIONS``) closes the least recently used idle one, never one in use;
an idle one closes after ``REGISTRY_UPSTREAM_USER_SESSION_IDLE``; a token the upstream refuses at
the handshake is ``TokenRefused`` (the vault's and the user's business), not a failure of the
upstream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from django.test import override_settings
from mcp.client.client import Client
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from registry.upstreams.calls import TokenRefused, run
from registry.upstreams.config import UpstreamConfig
from registry.upstreams.connect import Handshake
from registry.upstreams.pool import UpstreamSessions
from registry.upstreams.relay import Relay
from tests.support.polling import eventually
from tests.support.sdk_upstream_process import UpstreamProcess
from tests.support.third_party import ThirdParty
from tests.support.user_upstream_process import UserUpstreamProcess

pytestmark = pytest.mark.timeout(60)


class Recording:
    """The official SDK's legacy handshake, recording the bearer each session was opened with."""

    def __init__(self) -> None:
        self.opened: list[str | None] = []
        self.closed: list[str | None] = []

    @contextlib.asynccontextmanager
    async def __call__(self, config: UpstreamConfig, handshake: Handshake) -> AsyncIterator[ClientSession]:
        self.opened.append(handshake.bearer)
        headers = {"Authorization": f"Bearer {handshake.bearer}"} if handshake.bearer else {}
        seen: list[str] = []

        async def session_id(response: Any) -> None:
            seen.append(response.headers.get("mcp-session-id") or "")

        try:
            async with (
                httpx2.AsyncClient(headers=headers, event_hooks={"response": [session_id]}) as http,
                Client(streamable_http_client(config.url, http_client=http), mode="legacy") as client,
            ):
                handshake.session_id, handshake.headers = next((s for s in seen if s), None), headers
                yield client.session
        finally:
            self.closed.append(handshake.bearer)


def _config(url: str) -> UpstreamConfig:
    return UpstreamConfig(id=1, name="mine", prefix="mine", url=url, transport="streamable-http",
                          auth="user", connection="tp", timeout=5.0)


async def _echo(sessions: UpstreamSessions, config: UpstreamConfig, user: tuple[str, str]) -> str:
    result = await run(sessions, config, "tools/call", "echo",
                       {"name": "echo", "arguments": {"text": user[0]}}, Relay(None), user)
    return "".join(b["text"] for b in result["content"] if b["type"] == "text")


async def _busy(sessions: UpstreamSessions) -> bool:
    return any(entry.busy for entry in sessions.user_entries("mine"))


@pytest.fixture(scope="module")
def upstream() -> Any:
    with UpstreamProcess() as running:
        yield running


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"], REGISTRY_UPSTREAM_USER_SESSIONS=2)
async def test_one_session_per_principal_with_its_token_bounded_least_recently_used_first(
    upstream: UpstreamProcess,
) -> None:
    connect = Recording()
    sessions = UpstreamSessions(connect=connect)
    sessions.open()
    config = _config(upstream.url)
    try:
        assert await _echo(sessions, config, ("alice", "ta")) == "alice"
        assert await _echo(sessions, config, ("bob", "tb")) == "bob"
        assert await _echo(sessions, config, ("alice", "ta")) == "alice"
        assert connect.opened == ["ta", "tb"]  # alice's session kept between her calls
        [a, b] = sessions.user_entries("mine")
        assert {a.bearer, b.bearer} == {"ta", "tb"}
        assert a.slots is b.slots is sessions.get(config).slots  # the upstream's cap, shared
        live_a, live_b = await a.session(), await b.session()
        assert live_a.channel is not None and live_b.channel is not None
        assert live_a.channel.session_id != live_b.channel.session_id
        assert live_a.channel.http is not live_b.channel.http  # no connection or cookie jar shared
        # A new token (refreshed, reconnected): the session made with the old one is replaced.
        assert await _echo(sessions, config, ("alice", "ta2")) == "alice"
        assert connect.opened[-1] == "ta2"
        # carol is the third: the least recently used idle one (bob's) is closed.
        assert await _echo(sessions, config, ("carol", "tc")) == "carol"
        assert sorted(e.bearer or "" for e in sessions.user_entries("mine")) == ["ta2", "tc"]

        async def both_closed() -> bool:  # closed in the background
            return "tb" in connect.closed and "ta" in connect.closed

        await eventually(both_closed)
    finally:
        await sessions.close()


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"], REGISTRY_UPSTREAM_USER_SESSIONS=1)
async def test_a_session_in_use_is_not_evicted(upstream: UpstreamProcess) -> None:
    sessions = UpstreamSessions(connect=Recording())
    sessions.open()
    config = _config(upstream.url)
    try:
        slow = asyncio.create_task(run(
            sessions, config, "tools/call", "hold", {"name": "hold", "arguments": {"key": "busy"}},
            Relay(None), ("alice", "ta")))
        await eventually(lambda: _busy(sessions))  # alice's call is running on her session
        assert await _echo(sessions, config, ("bob", "tb")) == "bob"
        result = await slow
        assert result.get("isError") is not True, result  # not closed under her call
    finally:
        await sessions.close()


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"], REGISTRY_UPSTREAM_USER_SESSION_IDLE=1.0)
async def test_an_idle_session_closes_after_the_timeout(upstream: UpstreamProcess) -> None:
    connect = Recording()
    sessions = UpstreamSessions(connect=connect)
    sessions.open()
    config = _config(upstream.url)
    try:
        assert await _echo(sessions, config, ("alice", "ta")) == "alice"
        assert len(sessions.user_entries("mine")) == 1

        async def closed() -> bool:  # the sweep runs every idle period: closed within two
            return sessions.user_entries("mine") == [] and connect.closed == ["ta"]

        await eventually(closed, seconds=4.0, step=0.1)
        assert await _echo(sessions, config, ("alice", "ta")) == "alice"  # opened again on use
        assert connect.opened == ["ta", "ta"]
    finally:
        await sessions.close()


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"], REGISTRY_UPSTREAM_BREAKER_FAILURES=2)
async def test_a_token_refused_at_the_handshake_is_token_refused_not_a_dead_upstream() -> None:
    # An upstream that checks each request's token at a real provider (401 for an unknown one),
    # reached with the production connect (auth "user": the bearer replaces any credential).
    third_party = ThirdParty().start()
    try:
        with UserUpstreamProcess(third_party.url()) as checking:
            sessions = UpstreamSessions()
            sessions.open()
            config = _config(checking.url)
            try:
                for _ in range(3):  # never counted against the breaker: it stays closed
                    with pytest.raises(TokenRefused):
                        await _echo(sessions, config, ("alice", "not-a-token"))
                shared = sessions.get(config).breaker
                assert shared.state == "closed" and shared.failures == 0
            finally:
                await sessions.close()
    finally:
        third_party.stop()


@override_settings(REGISTRY_HTTP_ALLOWED_HOSTS=["127.0.0.1"])
async def test_a_new_token_lets_a_call_running_on_the_old_session_finish(upstream: UpstreamProcess) -> None:
    connect = Recording()
    sessions = UpstreamSessions(connect=connect)
    sessions.open()
    config = _config(upstream.url)
    try:
        running = asyncio.create_task(run(
            sessions, config, "tools/call", "hold", {"name": "hold", "arguments": {"key": "retire"}},
            Relay(None), ("alice", "old")))
        await eventually(lambda: _busy(sessions))
        assert await _echo(sessions, config, ("alice", "new")) == "alice"  # refreshed meanwhile
        result = await running
        assert result.get("isError") is not True, result  # not closed under the running call

        async def old_closed() -> bool:  # closed once its last call ended
            return connect.closed == ["old"]

        await eventually(old_closed)
        assert [e.bearer for e in sessions.user_entries("mine")] == ["new"]
    finally:
        await sessions.close()
