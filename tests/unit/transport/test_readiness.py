"""``transports/host.py``: the runtime starts at ASGI lifespan startup, a failed start keeps
retrying in the background (not ready meanwhile), and ``ready()`` says started and subscribed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcp_django.conf import ACCESS_DEFAULTS
from mcp_django.routing import lifespan
from mcp_django.service import get_service
from mcp_protocol.auth.limits import MemoryRateLimiter
from mcp_protocol.auth.policy import AccessPolicy
from mcp_protocol.bus.base import Bus
from mcp_protocol.bus.memory import MemoryBus
from mcp_protocol.memory_provider import MemoryProvider
from mcp_protocol.server import Server
from mcp_protocol.stores.memory import MemoryEventStore, MemorySessionStore
from mcp_protocol.transports.host import RuntimeHost
from mcp_protocol.transports.runtime import Runtime, TransportConfig
from mcp_protocol.transports.security import OriginGuard

FAILURES = {"left": 0}


class FlakyProvider(MemoryProvider):
    """Its first refreshes fail, as a registry whose database is not up yet."""

    async def refresh(self) -> None:
        if FAILURES["left"] > 0:
            FAILURES["left"] -= 1
            raise ConnectionError("database not up yet")
        await super().refresh()


MEMORY = {
    "PROVIDER": {"BACKEND": f"{__name__}.FlakyProvider", "OPTIONS": {}},
    "SESSION_STORE": {"BACKEND": "mcp_protocol.stores.memory.MemorySessionStore", "OPTIONS": {}},
    "EVENT_STORE": {"BACKEND": "mcp_protocol.stores.memory.MemoryEventStore", "OPTIONS": {}},
    "BUS": {"BACKEND": "mcp_protocol.bus.memory.MemoryBus", "OPTIONS": {}},
}


@pytest.fixture
async def memory_runtime(settings: Any) -> AsyncIterator[None]:
    settings.MCP = MEMORY
    yield
    await get_service().shutdown()
    FAILURES["left"] = 0


async def run_lifespan_startup() -> asyncio.Task[None]:
    """Send ``lifespan.startup`` as uvicorn does; returns the lifespan task (still running)."""
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    await inbox.put({"type": "lifespan.startup"})
    complete = asyncio.Event()

    async def send(message: dict[str, Any]) -> None:
        assert message == {"type": "lifespan.startup.complete"}
        complete.set()

    task = asyncio.ensure_future(lifespan({"type": "lifespan"}, inbox.get, send))
    await asyncio.wait_for(complete.wait(), 5)
    return task


async def test_lifespan_startup_starts_the_runtime_and_subscribes_before_any_request(
    memory_runtime: None,
) -> None:
    assert not get_service().ready()
    task = await run_lifespan_startup()
    assert get_service().ready()
    rt = get_service().current()
    assert rt is not None and rt.fanout.listening
    task.cancel()


async def test_a_start_that_fails_is_not_ready_and_retries_by_itself(memory_runtime: None) -> None:
    FAILURES["left"] = 3
    await get_service().startup()  # does not raise: the process keeps running, not ready
    assert not get_service().ready()
    deadline = asyncio.get_running_loop().time() + 10
    while not get_service().ready():  # retries back off by time: nothing to wait on but the clock
        assert asyncio.get_running_loop().time() < deadline, "not ready 10 s after the failures ended"
        await asyncio.sleep(0.05)
    assert FAILURES["left"] == 0


class LoopHookProvider(MemoryProvider):
    """Records the provider's per-loop hooks (the registry opens its pooled HTTP session there)."""

    def __init__(self) -> None:
        super().__init__()
        self.hooks: list[tuple[str, asyncio.AbstractEventLoop]] = []

    async def start(self, bus: Bus | None) -> None:
        assert bus is not None  # the runtime's bus, for what the provider publishes itself
        self.hooks.append(("start", asyncio.get_running_loop()))

    async def stop(self) -> None:
        self.hooks.append(("stop", asyncio.get_running_loop()))


def hand_built_runtime(loop: asyncio.AbstractEventLoop, *, provider: Any = None,
                       sessions: MemorySessionStore | None = None) -> Runtime:
    """A runtime with every dependency passed in, no settings read (as the SDK's session manager)."""
    provider = provider or LoopHookProvider()
    sessions, events = sessions or MemorySessionStore(), MemoryEventStore()
    bus = MemoryBus()
    access = AccessPolicy(ACCESS_DEFAULTS, bus, sessions, events, limiter=MemoryRateLimiter())
    config = TransportConfig(always_stream=False, keepalive=15.0, retry_ms=1000, close_after=None,
                             max_body=1 << 20, allowed_hosts=[], allowed_origins=[])
    return Runtime(loop, config=config, provider=provider, sessions=sessions, events=events, bus=bus,
                   server=Server(provider, name="t", version="1", cursor_secret=b"k" * 32),
                   access=access, guard=OriginGuard([], [], ["127.0.0.1"]))


async def test_a_runtime_built_with_its_dependencies_runs_inside_async_with() -> None:
    async with hand_built_runtime(asyncio.get_running_loop()).run() as rt:
        assert rt.ready and rt.fanout.listening
        assert rt.resolve_principal({"headers": []}) is None  # open mode: everyone is anonymous
    assert not rt.fanout.listening


async def test_the_runtime_starts_and_stops_its_provider_on_its_own_loop() -> None:
    loop = asyncio.get_running_loop()
    async with hand_built_runtime(loop).run() as rt:
        assert isinstance(rt.provider, LoopHookProvider) and rt.provider.hooks == [("start", loop)]
    assert rt.provider.hooks == [("start", loop), ("stop", loop)]


class ClosingSessionStore(MemorySessionStore):
    def __init__(self) -> None:
        super().__init__()
        self.closed = 0

    async def close(self) -> None:
        self.closed += 1


async def test_a_runtime_writes_nothing_onto_what_it_is_handed_and_leaves_their_backends_open() -> None:
    loop = asyncio.get_running_loop()
    rt = hand_built_runtime(loop, sessions=ClosingSessionStore())
    server = rt.server
    assert server.interceptor is None and server.tracing is None  # as built: none given
    assert rt.access.audit is None and rt.access.on_revoke is None
    async with rt.run():
        assert rt.ready and rt.access.on_revoke == rt.principals_revoked  # given at its start
    assert not rt.ready and server.interceptor is None
    assert isinstance(rt.sessions, ClosingSessionStore) and rt.sessions.closed == 0  # not the runtime's


async def test_a_runtime_whose_start_failed_stops_what_it_started_and_can_run_again() -> None:
    FAILURES["left"] = 1
    rt = hand_built_runtime(asyncio.get_running_loop(), provider=FlakyProvider())
    with pytest.raises(ConnectionError):
        async with rt.run():
            pass
    assert not rt.ready and not rt.fanout.listening
    async with rt.run():
        assert rt.ready and rt.fanout.listening


async def test_a_host_closes_the_backends_after_its_runtime_stopped() -> None:
    closed: list[Runtime] = []

    async def close_backends(rt: Runtime) -> None:
        assert not rt.ready  # after the runtime stopped
        closed.append(rt)

    host = RuntimeHost(hand_built_runtime, backends=lambda: (MemorySessionStore(), MemoryEventStore(),
                                                              MemoryBus()), close_backends=close_backends)
    async with host.run():
        rt = host.current()
    assert rt is not None and closed == [rt]


async def test_a_host_runs_its_loops_runtime_and_forgets_it_after() -> None:
    host = RuntimeHost(hand_built_runtime, backends=lambda: (MemorySessionStore(), MemoryEventStore(),
                                                              MemoryBus()))
    assert host.current() is None
    async with host.run():
        assert host.ready() and host.current() is not None
        assert await host.terminate("no-such-session") is False
    assert host.current() is None and not host.ready()
