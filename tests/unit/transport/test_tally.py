"""The per-process tally behind /metrics: Prometheus "le" buckets, cumulative export, and flushing
deltas (each count handed over once)."""

from __future__ import annotations

from mcp_protocol.transports.tally import Tally


def test_observations_land_in_le_buckets_and_export_cumulatively() -> None:
    tally = Tally((0.01, 0.1, 1.0))
    for seconds in (0.005, 0.01, 0.05, 2.0):  # 0.01 is "le 0.01"; 2.0 only in +Inf
        tally.tool_call("echo", False, seconds)
    tally.tool_call("echo", True, 0.5)
    assert list(tally.cumulative_buckets("echo")) == [("0.01", 2), ("0.1", 3), ("1.0", 4), ("+Inf", 5)]
    assert tally.duration_sum("echo") == 0.005 + 0.01 + 0.05 + 2.0 + 0.5
    assert tally.tool_calls == {("echo", "ok"): 4, ("echo", "error"): 1}


def test_take_hands_over_the_counts_once() -> None:
    tally = Tally((1.0,))
    key = ("POST", "tools/call", "200", "legacy")
    tally.request(key)
    tally.request(key)
    taken = tally.take()
    assert taken.requests == {key: 2} and not tally
    tally.request(key)
    assert tally.take().requests == {key: 1}
