"""The request path's coarse timers (transports/timer_wheel.py): never early, at most a step late,
disarmed for good, one failing callback reported without stopping the others, and no loop timer
left once nothing is armed."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_protocol.transports.timer_wheel import STEP, TimerWheel


async def test_a_callback_runs_once_between_delay_and_delay_plus_two_steps() -> None:
    wheel, loop = TimerWheel(), asyncio.get_running_loop()
    fired: list[float] = []
    armed_at = loop.time()
    wheel.arm(0.1, lambda: fired.append(loop.time()))
    await asyncio.sleep(0.1 + 3 * STEP)
    assert len(fired) == 1
    assert 0.1 <= fired[0] - armed_at <= 0.1 + 2 * STEP + 0.02  # scheduling slack


async def test_a_disarmed_callback_never_runs_and_the_wheel_stops_turning() -> None:
    wheel = TimerWheel()
    fired: list[str] = []

    class Stream:
        def watch(self) -> None:
            fired.append("watch")

    stream = Stream()
    bucket = wheel.arm(0.1, stream.watch)
    wheel.disarm(bucket, stream.watch)  # a fresh bound method: equal to the armed one
    await asyncio.sleep(0.1 + 3 * STEP)
    assert fired == []
    assert wheel._handle is None  # nothing armed: no loop timer


async def test_a_failing_callback_is_reported_and_the_others_run() -> None:
    wheel, loop = TimerWheel(), asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    fired: list[str] = []

    def fail() -> None:
        raise RuntimeError("boom")

    try:
        wheel.arm(0.05, fail)
        wheel.arm(0.05, lambda: fired.append("ok"))
        await asyncio.sleep(0.05 + 3 * STEP)
    finally:
        loop.set_exception_handler(None)
    assert fired == ["ok"]
    assert isinstance(reported[0]["exception"], RuntimeError)


async def test_callbacks_armed_while_it_turns_still_fire() -> None:
    wheel = TimerWheel()
    fired: list[str] = []
    wheel.arm(0.05, lambda: wheel.arm(0.05, lambda: fired.append("second")))
    await asyncio.sleep(0.1 + 5 * STEP)
    assert fired == ["second"]
