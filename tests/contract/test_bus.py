"""Contract of ``Bus`` (mcp_protocol/bus/base.py), run against memory and Redis.

Two buses made by ``make_bus`` stand for two workers (for memory: one process, one bus).
Absence of a message is checked without sleeping: a marker published after it on the same
channel must arrive first.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from mcp_protocol.bus.base import CHANGES, Bus, Subscription, session_channel
from tests.support.polling import within
from tests.support.subscriptions import take

Make = Callable[..., Bus]


async def receive(sub: Subscription, n: int = 1, seconds: float = 5.0) -> list[dict[str, Any]]:
    return await take(sub, n, seconds)


async def drained(sub: Subscription) -> list[dict[str, Any]]:
    async def collect() -> list[dict[str, Any]]:
        return [m async for m in sub]

    return await within(collect())


async def test_message_published_right_after_subscribe_is_delivered(make_bus: Make) -> None:
    bus = make_bus()
    sub = await bus.subscribe(CHANGES)
    await bus.publish(CHANGES, {"kind": "tools", "uris": []})
    assert await receive(sub) == [{"kind": "tools", "uris": []}]
    await sub.close()


async def test_every_worker_receives_a_message_published_by_one(make_bus: Make) -> None:
    a, b = make_bus(), make_bus()
    on_a, on_b = await a.subscribe(CHANGES), await b.subscribe(CHANGES)
    message = {"kind": "resources", "uris": ["file:///a"], "nested": {"x": [1, None, "é"]}}
    await b.publish(CHANGES, message)
    assert await receive(on_a) == [message]
    assert await receive(on_b) == [message]
    await on_a.close()
    await on_b.close()


async def test_messages_keep_their_order_for_each_subscriber(make_bus: Make) -> None:
    a, b = make_bus(), make_bus()
    subs = [await a.subscribe("ordered"), await a.subscribe("ordered"), await b.subscribe("ordered")]
    for i in range(50):
        await b.publish("ordered", {"n": i})
    for sub in subs:
        assert [m["n"] for m in await receive(sub, 50)] == list(range(50))
        await sub.close()


async def test_channels_are_isolated(make_bus: Make) -> None:
    bus = make_bus()
    mine = await bus.subscribe(session_channel("s1"))
    await bus.publish(session_channel("s2"), {"for": "s2"})
    await bus.publish(CHANGES, {"for": "changes"})
    await bus.publish(session_channel("s1"), {"for": "s1"})
    assert await receive(mine) == [{"for": "s1"}]
    await mine.close()


async def test_closed_subscription_ends_and_receives_nothing_more(make_bus: Make) -> None:
    a, b = make_bus(), make_bus()
    leaving, staying = await a.subscribe("ch"), await a.subscribe("ch")
    await leaving.close()
    await b.publish("ch", {"n": 1})
    assert await receive(staying) == [{"n": 1}]
    assert await drained(leaving) == []  # iteration ends at once after close
    await staying.close()


async def test_unsubscribe_of_the_last_local_subscriber_and_resubscribe(make_bus: Make) -> None:
    a, b = make_bus(), make_bus()
    first = await a.subscribe("ch")
    await first.close()
    await b.publish("ch", {"n": "lost"})  # nobody listens: at-most-once, not kept
    again = await a.subscribe("ch")
    await b.publish("ch", {"n": "kept"})
    assert await receive(again) == [{"n": "kept"}]
    await again.close()


async def test_last_subscriber_leaving_while_another_arrives_leaves_the_newcomer_subscribed(
        make_bus: Make) -> None:
    a, b = make_bus(), make_bus()
    for i in range(10):
        leaving = await a.subscribe("ch")
        _, arriving = await within(asyncio.gather(leaving.close(), a.subscribe("ch")))
        await b.publish("ch", {"round": i})
        assert await receive(arriving) == [{"round": i}]
        await arriving.close()


async def test_close_wakes_a_reader_blocked_on_the_subscription(make_bus: Make) -> None:
    bus = make_bus()
    sub = await bus.subscribe("ch")
    reading = asyncio.create_task(receive(sub, 1))
    await asyncio.sleep(0)  # let the reader block
    await sub.close()
    assert await within(reading) == []


async def test_subscription_as_context_manager_closes_on_exit(make_bus: Make) -> None:
    bus = make_bus()
    async with await bus.subscribe("ch") as sub:
        await bus.publish("ch", {"n": 1})
        assert await receive(sub) == [{"n": 1}]
    assert await drained(sub) == []


async def test_publish_sync_from_a_thread_without_a_loop_is_delivered(make_bus: Make) -> None:
    a, b = make_bus(), make_bus()
    sub = await a.subscribe(CHANGES)
    errors: list[BaseException] = []

    def signal_handler() -> None:  # like a Django post_save handler run in a shell
        try:
            b.publish_sync(CHANGES, {"kind": "prompts", "uris": []})
        except BaseException as exc:  # reported to the test below
            errors.append(exc)

    thread = threading.Thread(target=signal_handler)
    thread.start()
    await within(asyncio.to_thread(thread.join, 5.0))
    assert errors == []
    assert await receive(sub) == [{"kind": "prompts", "uris": []}]
    await sub.close()


async def test_publish_sync_from_a_worker_thread_of_the_running_loop_is_delivered(make_bus: Make) -> None:
    bus = make_bus()
    sub = await bus.subscribe("ch")
    # As a sync signal handler under sync_to_async: a worker thread while this loop runs.
    await within(asyncio.to_thread(bus.publish_sync, "ch", {"n": 7}))
    assert await receive(sub) == [{"n": 7}]
    await sub.close()


async def test_many_channels_on_one_worker_each_get_their_own_messages(make_bus: Make) -> None:
    a, b = make_bus(), make_bus()
    subs = {f"session:{i}": await a.subscribe(f"session:{i}") for i in range(20)}
    for name in subs:
        await b.publish(name, {"to": name})
    for name, sub in subs.items():
        assert await receive(sub) == [{"to": name}]
        await sub.close()


async def test_concurrent_publishers_on_two_workers_lose_nothing_for_a_keeping_up_subscriber(
        make_bus: Make) -> None:
    a, b = make_bus(), make_bus()
    sub = await a.subscribe("ch")

    async def publisher(bus: Bus, name: str) -> None:
        for i in range(100):
            await bus.publish("ch", {"from": name, "n": i})

    await within(asyncio.gather(*(publisher(bus, f"{bus_name}{k}") for k in range(3)
                                  for bus_name, bus in (("a", a), ("b", b)))), 20.0)
    got = await receive(sub, 600, 20.0)
    by_publisher: dict[str, list[int]] = {}
    for message in got:
        by_publisher.setdefault(message["from"], []).append(message["n"])
    assert len(by_publisher) == 6
    assert all(ns == list(range(100)) for ns in by_publisher.values())  # each one's order kept
    await sub.close()
