"""Issue 24 item 5: a key that stops working ends its open streams and its sessions everywhere.

Two real workers (A and B) share SQLite and Redis with ``MCP_AUTH=keys``. A key opens a session on
A and, on B, the session's GET stream and a 2026-07-28 ``subscriptions/listen`` stream. Revoking
the key (``manage.py mcp_keys revoke``, a process of its own) ends both streams on B within the
key ring's reload time, and the session is gone from the store: no heartbeat keeps it alive. A key
that expires while its stream is open is ended the same way. Skipped without Redis.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support import MEMORY_PROVIDER, LiveServer
from tests.support.manage import ManageSession
from tests.support.mcp_http import (
    POST_HEADERS,
    SSEEvent,
    initialize_message,
    modern_headers,
    modern_message,
    next_data,
    notification,
    session_headers,
    sse_events,
    stream_headers,
)
from tests.support.polling import wait_until
from tests.support.shared_redis import REDIS_URL, drop_keys, new_prefix, require_redis

pytestmark = pytest.mark.timeout(120)
WAIT = 10.0
RELOAD = 3.0  # the key ring hears a change on the bus at once and polls every second
SESSION_LIVE = """
import asyncio, json
from mcp_django.conf import mcp_settings
print(json.dumps(asyncio.run(mcp_settings.backend("SESSION_STORE").load({sid!r})) is not None))
"""


@dataclass
class Pair:
    a: LiveServer
    b: LiveServer
    manage: ManageSession  # the module's commands in one process of their own (no start-up each)

    def key(self, name: str, *options: str) -> str:
        """A new key's token, once both workers know it: their key rings reload on the bus message
        the commit publishes (within milliseconds, not at once; a command in a fresh process used
        to hide that window behind its exit). Probe: a GET without a session, 401 until known,
        then 400, with no session made."""
        token = self.manage("mcp_keys", "create", name, *options).strip().splitlines()[-1]
        probe = {"accept": "text/event-stream", "authorization": f"Bearer {token}"}
        wait_until(f"key {name!r} known to both workers",
                   lambda: all(httpx.get(s.url, headers=probe, timeout=5).status_code != 401
                               for s in (self.a, self.b)), RELOAD, step=0.01)
        return token

    def session_live(self, sid: str) -> bool:
        # A fresh process: SESSION_LIVE runs the cached session store under asyncio.run, whose
        # client is bound to the loop of the first run (not for a ManageSession).
        return bool(json.loads(self.a.manage("shell", "-c", SESSION_LIVE.format(sid=sid)).splitlines()[-1]))


@pytest.fixture(scope="module")
def pair() -> Iterator[Pair]:
    require_redis()
    prefix = new_prefix("mcptest-revoke")
    tmp = Path(tempfile.mkdtemp(prefix="mcpsite-revoke-"))
    env = {"REDIS_URL": REDIS_URL, "MCP_KEY_PREFIX": prefix, "MCP_KEEPALIVE_SECONDS": "0.5",
           "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}", "MCP_AUTH": "keys"}
    a = LiveServer(env=env, provider=MEMORY_PROVIDER, migrate=True).start()
    b = LiveServer(env=env, provider=MEMORY_PROVIDER).start()
    session = ManageSession(a.env, inherit=False)
    try:
        yield Pair(a, b, session)
    finally:
        session.close()
        a.stop()
        b.stop()
        drop_keys(prefix)
        for path in tmp.iterdir():
            path.unlink()
        tmp.rmdir()


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WAIT) as c:
        yield c


async def open_session(client: httpx.AsyncClient, server: LiveServer, auth: dict[str, str]) -> str:
    deadline = time.monotonic() + WAIT
    while True:  # a new key reaches each worker's ring within a second
        opened = await client.post(server.url, headers={**POST_HEADERS, **auth}, json=initialize_message())
        if opened.status_code != 401 or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    assert opened.status_code == 200, opened.text
    sid = opened.headers["mcp-session-id"]
    sent = await client.post(server.url, headers={**session_headers(sid), **auth},
                             json=notification("notifications/initialized"))
    assert sent.status_code == 202
    return sid


async def open_stream(client: httpx.AsyncClient, server: LiveServer, sid: str,
                      auth: dict[str, str]) -> httpx.Response:
    deadline = time.monotonic() + WAIT
    while True:
        response = await client.send(client.build_request(
            "GET", server.url, headers={**stream_headers(sid), **auth}), stream=True)
        if response.status_code != 401 or time.monotonic() > deadline:
            break
        await response.aclose()
        await asyncio.sleep(0.1)
    assert response.status_code == 200
    return response


async def open_listen(client: httpx.AsyncClient, server: LiveServer, auth: dict[str, str]) -> httpx.Response:
    message = modern_message("listen", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    response = await client.send(client.build_request(
        "POST", server.url, headers={**modern_headers(message), **auth}, json=message), stream=True)
    assert response.status_code == 200
    return response


async def ends_within(response: httpx.Response, seconds: float,
                      events: AsyncIterator[SSEEvent] | None = None) -> list[str]:
    """The messages the stream still carries before it ends; fails if it is open after ``seconds``."""
    messages = []
    try:
        async with asyncio.timeout(seconds):
            async for event in events or sse_events(response):
                if event.data:
                    messages.append(event.data)
    except TimeoutError:
        raise AssertionError(f"the stream was still open {seconds} s later") from None
    finally:
        await response.aclose()
    return messages


async def test_revoking_a_key_ends_its_streams_and_sessions_on_every_worker(
    pair: Pair, client: httpx.AsyncClient
) -> None:
    token = pair.key("streaming")
    auth = {"authorization": f"Bearer {token}"}
    sid = await open_session(client, pair.a, auth)
    stream = await open_stream(client, pair.b, sid, auth)
    listen = await open_listen(client, pair.b, auth)
    listen_events = sse_events(listen)
    ack = json.loads((await next_data(listen_events, WAIT)).data or "{}")
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    await asyncio.to_thread(pair.manage, "mcp_keys", "revoke", token.split("_")[1])
    _, listen_ended = await asyncio.gather(ends_within(stream, RELOAD),
                                                      ends_within(listen, RELOAD, listen_events))
    # The listen request is answered (graceful closure) as it ends.
    assert any(json.loads(m).get("id") == "listen" and "result" in json.loads(m) for m in listen_ended)
    assert not await asyncio.to_thread(pair.session_live, sid), "the revoked key's session lives on"


async def test_an_expiring_key_ends_its_streams_and_sessions(pair: Pair, client: httpx.AsyncClient) -> None:
    token = pair.key("expiring", "--expires-days", str(6 / 86400))  # six seconds from now
    auth = {"authorization": f"Bearer {token}"}
    sid = await open_session(client, pair.a, auth)
    stream = await open_stream(client, pair.b, sid, auth)
    await ends_within(stream, 6 + RELOAD)
    assert not await asyncio.to_thread(pair.session_live, sid), "the expired key's session lives on"


def test_a_streams_token_stops_being_valid_when_it_expires() -> None:
    # OAuth tokens cannot be revoked at the resource server; their streams end at ``exp`` (the GET
    # stream's keep-alive check and the listen stream's deadline ask this).
    from mcp_django.conf import ACCESS_DEFAULTS
    from mcp_protocol.auth.limits import MemoryRateLimiter
    from mcp_protocol.auth.policy import AccessPolicy
    from mcp_protocol.auth.principal import Principal
    from mcp_protocol.stores.memory import MemoryEventStore, MemorySessionStore

    access = AccessPolicy({**ACCESS_DEFAULTS, "MODE": "oauth", "OAUTH_ISSUER": "https://as.example"},
                          None, MemorySessionStore(), MemoryEventStore(),  # type: ignore[arg-type]  # no key ring: no bus
                          limiter=MemoryRateLimiter())
    now = time.time()
    assert access.still_valid(Principal("oauth:x", expires_at=now + 60), now)
    assert not access.still_valid(Principal("oauth:x", expires_at=now - 1), now)
    assert access.still_valid(Principal("oauth:x"), now)
