"""``mcpsite.fleet.free_port`` (the suite's and ``scripts/fleet.sh``'s): a port picked below the
kernel's ephemeral range, which an outgoing connection cannot take between the pick and the
server's bind; and never one something listens on."""

from __future__ import annotations

import socket

import pytest

from mcpsite import fleet


def test_a_port_below_the_ephemeral_range_that_a_server_can_bind() -> None:
    first = fleet._first_ephemeral()
    if first is None or first - fleet._LOWEST < 1000:
        pytest.skip("no ephemeral range known here to stay below")
    for _ in range(20):
        port = fleet.free_port()
        assert fleet._LOWEST <= port < first
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))


def test_a_port_something_listens_on_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        # Whatever the chooser draws first is the listening port; the next draw is taken instead.
        draws = iter([busy, busy, busy + 1 if busy + 1 < 65536 else busy - 1])
        monkeypatch.setattr(fleet, "_first_ephemeral", lambda: busy + 2000)
        monkeypatch.setattr(fleet, "_LOWEST", max(1024, busy - 2000))
        monkeypatch.setattr(fleet.random.SystemRandom, "randrange", lambda self, a, b: next(draws))
        assert fleet.free_port() != busy


def test_without_a_known_range_the_kernel_picks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fleet, "_first_ephemeral", lambda: None)
    port = fleet.free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
