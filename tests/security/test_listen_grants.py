"""Issue 24 item 4: ``subscriptions/listen`` honours the key's grant, as ``resources/subscribe`` does.

A real server (``MCP_AUTH=keys``, the registry on SQLite, changes on Redis). A key granted only
``demo://open`` listens with ``resourceSubscriptions`` for ``demo://open`` and ``demo://secret``:
the acknowledgment honours ``demo://open`` only, and when both change (the secret first) the
stream gets ``notifications/resources/updated`` for ``demo://open`` and never for
``demo://secret``. Skipped without Redis.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.mcp_http import modern_headers, modern_message, next_data, sse_events
from tests.support.shared_redis import REDIS_URL, drop_keys, new_prefix, require_redis

pytestmark = pytest.mark.timeout(90)
WAIT = 10.0
SUB = "io.modelcontextprotocol/subscriptionId"
RESOURCES = """
from registry.models import Resource
for uri, name in (("demo://open", "open"), ("demo://secret", "secret")):
    Resource.objects.create(uri=uri, name=name, kind="text", text="v1")
"""
CHANGE = """
from registry.models import Resource
for uri in ("demo://secret", "demo://open"):
    r = Resource.objects.get(uri=uri); r.text = "v2"; r.save()
"""


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    require_redis()
    prefix = new_prefix("mcptest-listen")
    env = {"MCP_AUTH": "keys", "REDIS_URL": REDIS_URL, "MCP_KEY_PREFIX": prefix,
           "MCP_KEEPALIVE_SECONDS": "0.5"}
    server = LiveServer(env=env, provider=REGISTRY_PROVIDER, load=[["shell", "-c", RESOURCES]]).start()
    try:
        yield server
    finally:
        server.stop()
        drop_keys(prefix)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WAIT) as c:
        yield c


async def test_listen_honours_and_delivers_only_the_resources_the_key_may_read(
    live: LiveServer, client: httpx.AsyncClient
) -> None:
    token = live.manage("mcp_keys", "create", "open-only", "--tools", "", "--prompts", "",
                        "--resources", "demo://open").strip().splitlines()[-1]
    auth = {"authorization": f"Bearer {token}"}
    message = modern_message("l1", "subscriptions/listen",
                             {"notifications": {"resourceSubscriptions": ["demo://open", "demo://secret"]}})
    for _ in range(100):  # the new key reaches the worker's ring within a second (bus or poll)
        response = await client.send(client.build_request(
            "POST", live.url, headers={**modern_headers(message), **auth}, json=message), stream=True)
        if response.status_code != 401:
            break
        await response.aclose()
        await asyncio.sleep(0.1)
    assert response.status_code == 200, await response.aread()
    try:
        events = sse_events(response)
        ack = (await next_data(events, WAIT)).message
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"] == {"resourceSubscriptions": ["demo://open"]}
        await asyncio.to_thread(live.manage, "shell", "-c", CHANGE)
        updated = (await next_data(events, WAIT)).message
        assert updated["method"] == "notifications/resources/updated"
        assert updated["params"]["uri"] == "demo://open", "a resource outside the grant was reported"
        assert updated["params"]["_meta"][SUB] == "l1"
    finally:
        await response.aclose()
