"""``/mcp`` on three separate worker processes (A, B, C; one uvicorn worker each, own ports) sharing
one PostgreSQL database and one private Redis, with the demo registry: every request is sent to
the worker the test names, so each cross-worker path is exercised deterministically (no reliance
on the kernel spreading connections, unlike test_http_redis_workers.py).

product.md "State across workers" and [L] basic/transports.mdx: a session initialized on one
worker is served by any other; registry changes reach the GET stream exactly once; a client's
answer or ``notifications/cancelled`` reaches the handler wherever it runs; a stream lost with its
worker (kill -9) resumes elsewhere with exactly the missed events; DELETE ends the session
everywhere; one GET stream per session cluster-wide; a Redis outage is a 503 and the service comes
back by itself. The Redis outage test runs last: it loses Redis state.

Every scenario runs twice: worker by worker, then through nginx (``mcpsite.fleet.Balancer``, the
routes of ``scripts/fleet.sh`` and compose) where A, B and C all mean the balancer, so each request
lands on whichever worker round robin gives it, as a client behind a real load balancer sees.

Skipped without PostgreSQL on 127.0.0.1:5432 or without redis-server (the balanced run without
nginx).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from typing import Any

import httpx
import pytest
import redis

from mcp_protocol.bus.base import CHANGES
from mcp_protocol.bus.redis import RedisBus
from mcp_protocol.stores.events import parse_event_id
from mcp_protocol.stores.redis import RedisEventStore, RedisSessionStore
from mcp_protocol.transports.pending import PendingRequests
from mcp_protocol.transports.standalone import StandaloneOutbound
from mcpsite.fleet import Balancer, nginx_binary
from tests.support import REGISTRY_PROVIDER, LiveServer
from tests.support.admin_client import form_errors, log_in, submit_change
from tests.support.fleets import Fleet, running_fleet
from tests.support.mcp_http import (
    POST_HEADERS,
    SSEEvent,
    initialize_message,
    next_comment,
    next_data,
    notification,
    open_session,
    request,
    session_headers,
    sse_events,
)
from tests.support.postgres import temporary_database
from tests.support.private_redis import PrivateRedis, have_redis_server

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not have_redis_server(), reason="needs redis-server and redis-cli"),
]
KEEPALIVE = 0.5  # s: quiet streams show a comment this often, and heartbeats notice DELETE
WAIT = 10.0  # s: the deadline of every wait for something the cluster does by itself


# -- the cluster --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Balanced:
    """A worker as the balanced run sees it: its requests go to the balancer (so to any worker);
    its process and log are the worker's own."""

    server: LiveServer
    balancer: Balancer

    @property
    def base_url(self) -> str:
        return self.balancer.base_url

    @property
    def url(self) -> str:
        return self.balancer.url

    @property
    def returncode(self) -> int | None:
        return self.server.returncode

    def log_text(self) -> str:
        return self.server.log_text()


@dataclass
class Cluster:
    a: LiveServer | Balanced
    b: LiveServer | Balanced
    c: LiveServer | Balanced
    fleet: Fleet

    @property
    def workers(self) -> list[LiveServer | Balanced]:
        return [self.a, self.b, self.c]

    @property
    def redis(self) -> PrivateRedis:
        return self.fleet.redis

    @property
    def env(self) -> dict[str, str]:
        return self.fleet.env

    def manage(self, *argv: str, env: dict[str, str] | None = None) -> str:
        """A management command in its own process, against the cluster's database and Redis."""
        return self.fleet.manage(*argv, **(env or {}))

    def worker(self) -> LiveServer:
        """A further worker of the cluster (the caller may stop it; the fleet does at the end)."""
        return self.fleet.worker()


@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    with temporary_database("mcpsite_mw") as url:
        yield url


@pytest.fixture(scope="module")
def workers(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    directory = tmp_path_factory.mktemp("redis")
    options = {"provider": REGISTRY_PROVIDER, "database_url": database_url, "keepalive": KEEPALIVE}
    with running_fleet(directory, **options) as fleet:
        fleet.migrate()
        fleet.manage("load_demo")
        a, b, c = fleet.start(3)  # the three start at once
        yield Cluster(a, b, c, fleet)


@pytest.fixture(scope="module", params=["worker by worker", "through nginx"])
def cluster(request: pytest.FixtureRequest, workers: Cluster) -> Iterator[Cluster]:
    if request.param == "worker by worker":
        yield workers
        return
    try:
        nginx_binary()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    ports = [f"127.0.0.1:{w.port}" for w in (workers.a, workers.b, workers.c) if isinstance(w, LiveServer)]
    with Balancer(ports) as balancer:
        yield replace(workers, **{k: Balanced(getattr(workers, k), balancer) for k in ("a", "b", "c")})


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WAIT) as c:
        yield c


# -- helpers ------------------------------------------------------------------------------------
def get_headers(session_id: str, last_event_id: str | None = None) -> dict[str, str]:
    headers = {**session_headers(session_id), "accept": "text/event-stream"}
    if last_event_id:
        headers["last-event-id"] = last_event_id
    return headers


async def post(
    client: httpx.AsyncClient, server: LiveServer | Balanced, session_id: str, message: dict[str, Any]
) -> httpx.Response:
    return await client.post(server.url, headers=session_headers(session_id), json=message)






def count_down(request_id: int, *, steps: int, delay: float, progress_token: str) -> dict[str, Any]:
    """A tools/call of the demo's ``count_down``, reporting its progress under ``progress_token``."""
    params = {
        "name": "count_down",
        "arguments": {"steps": steps, "delay": delay},
        "_meta": {"progressToken": progress_token},
    }
    return request(request_id, "tools/call", params)


async def quiet_for(events: AsyncIterator[SSEEvent], keepalives: int = 2) -> None:
    """Nothing but keep-alives for ``keepalives`` periods: no duplicate or stray message."""
    for _ in range(keepalives):
        await next_comment(events)


async def until_closed(events: AsyncIterator[SSEEvent]) -> list[SSEEvent]:
    """Every remaining event up to the end of the response."""
    found: list[SSEEvent] = []
    async with asyncio.timeout(WAIT):
        async for event in events:
            if event.data:
                found.append(event)
    return found


def text_of(response: dict[str, Any]) -> str:
    return str(response["result"]["content"][0]["text"])


async def tool(
    client: httpx.AsyncClient, server: LiveServer | Balanced, session_id: str, name: str
) -> dict[str, Any]:
    response = await post(client, server, session_id, request(1, "tools/list"))
    assert response.status_code == 200, response.text
    [found] = [t for t in response.json()["result"]["tools"] if t["name"] == name]
    return dict(found)


# -- scenarios ----------------------------------------------------------------------------------
async def test_a_session_initialized_on_one_worker_is_served_by_the_others(
    cluster: Cluster, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, cluster.a.url)
    called = await post(
        client,
        cluster.b,
        session_id,
        request(2, "tools/call", {"name": "echo", "arguments": {"message": "hello B"}}),
    )
    assert called.status_code == 200 and text_of(called.json()) == "hello B"
    async with client.stream("GET", cluster.c.url, headers=get_headers(session_id)) as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        await next_comment(sse_events(stream))


async def test_a_tool_edited_in_the_admin_of_one_worker_reaches_the_stream_on_another_exactly_once(
    cluster: Cluster, client: httpx.AsyncClient
) -> None:
    # The edit runs inside worker A (its admin, its ORM transaction, its on_commit publication);
    # the notification reaches the GET stream open on C once, and B serves the new definition.
    password = secrets.token_urlsafe(12)
    username = f"ops-{uuid.uuid4().hex[:6]}"
    cluster.manage("createsuperuser", "--noinput", "--username", username, "--email", "ops@example.com",
                   env={"DJANGO_SUPERUSER_PASSWORD": password})
    show_pk = "from registry.models import Tool; print(Tool.objects.get(name='echo').pk)"
    found = cluster.manage("shell", "-c", show_pk)
    pk = found.strip().splitlines()[-1]  # the last line: the shell may announce its imports first
    session_id = await open_session(client, cluster.a.url)
    description = f"Edited in worker A's admin {uuid.uuid4().hex}"
    async with httpx.AsyncClient(timeout=WAIT, follow_redirects=False) as browser:
        await log_in(browser, cluster.a.base_url, username, password)
        async with client.stream("GET", cluster.c.url, headers=get_headers(session_id)) as stream:
            assert stream.status_code == 200
            events = sse_events(stream)
            await next_comment(events)
            saved = await submit_change(
                browser, f"{cluster.a.base_url}/admin/registry/tool/{pk}/change/", description=description
            )
            assert saved.status_code == 302, form_errors(saved.text)
            changed = await next_data(events)
            assert changed.message == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
            await quiet_for(events)
    assert (await tool(client, cluster.b, session_id, "echo"))["description"] == description


async def test_a_client_re_listing_right_after_list_changed_sees_the_new_tool_everywhere(
    cluster: Cluster, client: httpx.AsyncClient
) -> None:
    # The fan-out writes list_changed while each worker still rebuilds its snapshot (fanout/listener.py:
    # commit -> first stream does not wait for the database read); a worker's requests wait
    # for its rebuild instead, so the re-list a client sends as soon as it is told sees the tool.
    name = f"fresh_{uuid.uuid4().hex[:8]}"
    session_id = await open_session(client, cluster.a.url)
    async with client.stream("GET", cluster.a.url, headers=get_headers(session_id)) as stream:
        assert stream.status_code == 200
        events = sse_events(stream)
        await next_comment(events)
        create = f"from registry.models import Tool; Tool.objects.create(name={name!r}, kind='template')"
        creating = asyncio.ensure_future(asyncio.to_thread(cluster.manage, "shell", "-c", create))
        changed = await next_data(events)
        assert changed.message == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        listings = await asyncio.gather(*(
            post(client, worker, session_id, request(10 + i, "tools/list"))
            for i, worker in enumerate(cluster.workers)))
        await creating
    for listing in listings:
        assert listing.status_code == 200, listing.text
        assert name in [t["name"] for t in listing.json()["result"]["tools"]]


async def test_a_sampling_request_raised_on_one_worker_is_answered_through_another(
    cluster: Cluster, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, cluster.a.url)
    word = uuid.uuid4().hex[:8]
    call = request(3, "tools/call", {"name": "ask_llm", "arguments": {"question": "Say a word"}})
    async with client.stream("POST", cluster.b.url, headers=session_headers(session_id), json=call) as stream:
        assert stream.status_code == 200
        events = sse_events(stream)
        asked = (await next_data(events)).message
        assert asked["method"] == "sampling/createMessage"
        answer = {
            "jsonrpc": "2.0",
            "id": asked["id"],
            "result": {"role": "assistant", "content": {"type": "text", "text": word}, "model": "mw-model"},
        }
        assert (await post(client, cluster.a, session_id, answer)).status_code == 202
        result = (await next_data(events)).message
    assert result["id"] == 3 and text_of(result) == f"mw-model says: {word}"


async def test_a_get_stream_lost_with_its_worker_resumes_on_another_with_exactly_the_missed_events(
    cluster: Cluster, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, cluster.a.url)
    uris = [f"demo://mw/{uuid.uuid4().hex[:6]}/{n}" for n in range(3)]
    for uri in uris:
        subscribed = await post(
            client, cluster.a, session_id, request(4, "resources/subscribe", {"uri": uri})
        )
        assert subscribed.status_code == 200, subscribed.text
    published: list[dict[str, Any]] = []  # the notifications each change must produce, in order

    async def change(bus: RedisBus, uri: str) -> None:
        await bus.publish(CHANGES, {"id": uuid.uuid4().hex, "kind": "resources", "uris": [uri]})
        published.append({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"})
        published.append(
            {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}}
        )

    doomed = cluster.worker()
    bus = RedisBus(url=cluster.env["REDIS_URL"], prefix=cluster.env["MCP_KEY_PREFIX"])
    seen: list[SSEEvent] = []
    try:
        async with client.stream("GET", doomed.url, headers=get_headers(session_id)) as stream:
            assert stream.status_code == 200
            events = sse_events(stream)
            await next_comment(events)
            await change(bus, uris[0])
            seen = [await next_data(events), await next_data(events)]
            assert doomed.process is not None
            os.killpg(doomed.process.pid, signal.SIGKILL)  # mid-stream, no goodbye
            await change(bus, uris[1])  # published while the stream has no worker
            await change(bus, uris[2])
            with pytest.raises(httpx.HTTPError):
                async with asyncio.timeout(WAIT):
                    async for event in events:  # the connection dies with the worker
                        assert not event.data, f"a dead worker sent {event.data}"
    finally:
        await bus.close()
        doomed.stop()
    assert [e.message for e in seen] == published[:2]

    async def resume(after: str) -> list[SSEEvent]:
        # At once: a GET with Last-Event-ID takes the stream's claim over from the dead worker
        # (which can no longer refresh it) instead of waiting for the claim to lapse.
        async with client.stream("GET", cluster.b.url, headers=get_headers(session_id, after)) as stream:
            assert stream.status_code == 200
            events = sse_events(stream)
            replayed = [await next_data(events) for _ in range(len(published) - len(seen))]
            await quiet_for(events)
            return replayed

    assert seen[-1].id is not None and seen[0].id is not None
    missed = await resume(seen[-1].id)
    assert [e.message for e in missed] == published[2:]  # none lost, in order
    ids = [e.id for e in seen + missed]
    assert len(set(ids)) == len(ids)  # none twice
    assert len({parse_event_id(i)[0] for i in ids if i}) == 1  # all on the standalone stream
    # Resuming again from earlier gives the same events under the same ids.
    async with client.stream("GET", cluster.c.url, headers=get_headers(session_id, seen[0].id)) as stream:
        assert stream.status_code == 200
        events = sse_events(stream)
        again = [await next_data(events) for _ in range(len(published) - 1)]
        await quiet_for(events)
    assert [(e.id, e.message) for e in again] == [(e.id, e.message) for e in seen[1:] + missed]


async def test_a_post_stream_dropped_on_one_worker_resumes_on_another(
    cluster: Cluster, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, cluster.a.url)
    call = count_down(5, steps=4, delay=0.3, progress_token="cd")
    async with client.stream("POST", cluster.b.url, headers=session_headers(session_id), json=call) as stream:
        assert stream.status_code == 200
        first = await next_data(sse_events(stream))
    # The connection is gone; the handler goes on and its events are stored (not cancellation).
    assert first.message["method"] == "notifications/progress" and first.message["params"]["progress"] == 1
    assert first.id is not None
    async with client.stream("GET", cluster.c.url, headers=get_headers(session_id, first.id)) as stream:
        assert stream.status_code == 200
        rest = await until_closed(sse_events(stream))  # ends after the result
    assert [e.message["params"]["progress"] for e in rest[:-1]] == [2, 3, 4]
    assert rest[-1].message["id"] == 5 and text_of(rest[-1].message) == "Counted down 4 steps"
    ids = [first.id, *(e.id for e in rest)]
    assert len(set(ids)) == len(ids)


async def test_delete_on_one_worker_ends_the_session_on_the_others(
    cluster: Cluster, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, cluster.a.url)
    async with client.stream("GET", cluster.c.url, headers=get_headers(session_id)) as stream:
        assert stream.status_code == 200
        events = sse_events(stream)
        await next_comment(events)
        deleted = await client.delete(cluster.a.url, headers=session_headers(session_id))
        assert deleted.status_code == 200
        assert (await post(client, cluster.b, session_id, request(6, "ping"))).status_code == 404
        assert await until_closed(events) == []  # C's stream ends at its next heartbeat
    assert (await post(client, cluster.c, session_id, request(7, "ping"))).status_code == 404


async def test_delete_on_one_worker_stops_a_request_of_the_session_running_on_another(
    cluster: Cluster, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, cluster.a.url)
    call = count_down(8, steps=20, delay=0.5, progress_token="d")
    async with client.stream("POST", cluster.b.url, headers=session_headers(session_id), json=call) as stream:
        events = sse_events(stream)
        assert (await next_data(events)).message["method"] == "notifications/progress"
        deleted = await client.delete(cluster.a.url, headers=session_headers(session_id))
        assert deleted.status_code == 200
        # Without the stop this would run for 20 * 0.5 = 10 s; it ends now, with no response.
        rest = await until_closed(events)
    assert all(e.message.get("method") == "notifications/progress" for e in rest) and len(rest) <= 1


async def test_a_second_get_stream_on_another_worker_is_refused_with_409(
    cluster: Cluster, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, cluster.a.url)
    async with client.stream("GET", cluster.a.url, headers=get_headers(session_id)) as stream:
        assert stream.status_code == 200
        events = sse_events(stream)  # held: a collected reader would close the connection
        await next_comment(events)
        for other in (cluster.b, cluster.c):
            refused = await client.get(other.url, headers=get_headers(session_id))
            assert refused.status_code == 409
            assert refused.json()["error"]["code"] == -32600
    # Closed: the claim is released, so the stream may be opened again anywhere. The release
    # follows the worker noticing the disconnect, a moment after the client closed.
    deadline = asyncio.get_running_loop().time() + WAIT
    while True:
        async with client.stream("GET", cluster.b.url, headers=get_headers(session_id)) as stream:
            if stream.status_code == 200:
                break
            assert stream.status_code == 409
        assert asyncio.get_running_loop().time() < deadline, "the closed stream's claim was never released"
        await asyncio.sleep(0.05)


async def test_a_request_on_the_standalone_stream_is_answered_by_a_post_to_another_worker(
    cluster: Cluster, client: httpx.AsyncClient
) -> None:
    # Bus items (c) and (d): a message addressed to one session's GET stream, sent by code on no
    # worker of the cluster (this test process, like a background job), reaches the stream open
    # on C; the client's answer POSTed to A is routed back to the caller waiting for it.
    session_id = await open_session(client, cluster.a.url, capabilities={"roots": {}})
    url, prefix = cluster.env["REDIS_URL"], cluster.env["MCP_KEY_PREFIX"]
    sessions, events, bus = (RedisSessionStore(url=url, prefix=prefix),
                             RedisEventStore(url=url, prefix=prefix), RedisBus(url=url, prefix=prefix))
    try:
        session = await sessions.load(session_id)
        assert session is not None
        outbound = StandaloneOutbound(events, PendingRequests(bus), session)
        async with client.stream("GET", cluster.c.url, headers=get_headers(session_id)) as stream:
            sse = sse_events(stream)
            await next_comment(sse)  # open
            asking = asyncio.ensure_future(outbound.request("roots/list", None, timeout=WAIT))
            sent = (await next_data(sse)).message
            assert sent["method"] == "roots/list"
            roots = {"roots": [{"uri": "file:///work", "name": "work"}]}
            answer = {"jsonrpc": "2.0", "id": sent["id"], "result": roots}
            assert (await post(client, cluster.a, session_id, answer)).status_code == 202
            assert await asyncio.wait_for(asking, WAIT) == roots
            await outbound.notify("notifications/message", {"level": "info", "data": "indexed"})
            assert (await next_data(sse)).message["params"] == {"level": "info", "data": "indexed"}
    finally:
        for backend in (sessions, events, bus):
            await backend.close()


async def test_a_cancel_posted_to_one_worker_stops_the_request_running_on_another(
    cluster: Cluster, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, cluster.a.url)
    steps = 20
    call = count_down(8, steps=steps, delay=0.5, progress_token="x")
    async with client.stream("POST", cluster.b.url, headers=session_headers(session_id), json=call) as stream:
        assert stream.status_code == 200
        events = sse_events(stream)
        assert (await next_data(events)).message["method"] == "notifications/progress"
        cancel = notification("notifications/cancelled", {"requestId": 8, "reason": "changed my mind"})
        assert (await post(client, cluster.a, session_id, cancel)).status_code == 202
        # Without the cancel this would take steps * delay = 10 s; with it the stream ends at once.
        rest = await until_closed(events)
    assert all(e.message.get("method") == "notifications/progress" for e in rest)  # no response
    assert len(rest) <= 1  # at most a step already under way when the cancel landed


async def test_redis_outage_gives_503_on_every_worker_and_service_resumes_by_itself(
    cluster: Cluster, client: httpx.AsyncClient
) -> None:
    session_id = await open_session(client, cluster.a.url)
    echo = request(9, "tools/call", {"name": "echo", "arguments": {"message": "still there?"}})
    description = f"Changed while Redis was down {uuid.uuid4().hex}"
    edit = (
        "from registry.models import Tool; t = Tool.objects.get(name='echo'); "
        f"t.description = {description!r}; t.save()"
    )
    cluster.redis.stop()
    try:
        # Committed, but its publication fails (logged): no worker hears of it on the bus.
        await asyncio.to_thread(cluster.manage, "shell", "-c", edit)
        for worker in cluster.workers:
            responses = (
                await post(client, worker, session_id, echo),
                await client.post(worker.url, headers=POST_HEADERS, json=initialize_message()),
                await client.get(worker.url, headers=get_headers(session_id)),
            )
            for response in responses:
                assert response.status_code == 503, response.text
                body = response.json()
                assert body["jsonrpc"] == "2.0" and body["error"]["code"] == -32603
            assert worker.returncode is None, worker.log_text()
    finally:
        cluster.redis.start()  # same port, empty

    async def serves(worker: LiveServer | Balanced) -> bool:
        try:
            fresh = await open_session(client, worker.url)
        except AssertionError:
            return False  # still reconnecting
        response = await post(client, worker, fresh, echo)
        assert response.status_code == 200, response.text
        return text_of(response.json()) == "still there?"

    loop = asyncio.get_running_loop()
    deadline = loop.time() + 20
    for worker in cluster.workers:
        while not await serves(worker):
            assert loop.time() < deadline, f"{worker.url} did not come back"
            await asyncio.sleep(0.1)
        assert worker.returncode is None
    # The old session went with Redis's data: unknown now, not an error.
    assert (await post(client, cluster.b, session_id, echo)).status_code == 404
    # Each worker's bus said it may have missed changes once it read again (RESYNC), and each
    # rebuilt its snapshot from the database: the change made during the outage is served.
    for worker in cluster.workers:
        fresh = await open_session(client, worker.url)
        while (await tool(client, worker, fresh, "echo"))["description"] != description:
            assert loop.time() < deadline, f"{worker.url} never caught up with the missed change"
            await asyncio.sleep(0.1)  # the bus reconnects on its own schedule (backoff up to 2 s)
    # The edit's own publish was lost with Redis: the workers' reconcilers find its change set and
    # publish it again (issue 28, registry/changes/reconcile.py), so every session hears of it. Waited for
    # here, by its fan-out claim appearing in the new Redis, so the tests after this one start with
    # streams that stay quiet.
    store = redis.Redis.from_url(cluster.redis.url)
    try:
        while not any(store.scan_iter(match="*once:fanout:cs*", count=1000)):
            assert loop.time() < deadline + 30, "no worker published the change set lost with Redis"
            await asyncio.sleep(0.1)
    finally:
        store.close()
