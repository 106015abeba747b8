"""This process's counts of ``/mcp`` requests and tool calls, in plain dicts: the hot path pays
two dict updates and a bisect per tools/call, not prometheus_client's locked value objects
(measured: 6-11 µs per call with those, most of the metrics' cost; ``bench/bench_metrics.py``).

``metrics.py`` turns a ``Tally`` into Prometheus samples: directly at scrape time when each
process reports its own, or by flushing the counts gathered since the last flush into
prometheus_client's shared multiprocess files (at most a second late, and at every scrape).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence

RequestKey = tuple[str, str, str, str]  # http_method, rpc_method, status, era
ToolKey = tuple[str, str]  # tool, outcome


class Tally:
    __slots__ = ("bounds", "durations", "requests", "tool_calls")

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)  # histogram upper bounds, ascending; +Inf is implied
        self.requests: dict[RequestKey, int] = {}
        self.tool_calls: dict[ToolKey, int] = {}
        # Per tool: a count per bound, then the +Inf count, then the sum of the observations.
        self.durations: dict[str, list[float]] = {}

    def __bool__(self) -> bool:
        return bool(self.requests)

    def request(self, key: RequestKey) -> None:
        self.requests[key] = self.requests.get(key, 0) + 1

    def tool_call(self, tool: str, outcome: str, seconds: float) -> None:
        key = (tool, outcome)
        self.tool_calls[key] = self.tool_calls.get(key, 0) + 1
        row = self.durations.get(tool)
        if row is None:
            row = self.durations[tool] = [0.0] * (len(self.bounds) + 2)
        row[bisect_left(self.bounds, seconds)] += 1  # Prometheus buckets are "le": value <= bound
        row[-1] += seconds

    def take(self) -> Tally:
        """The counts so far, leaving this tally empty (for flushing deltas)."""
        taken = Tally(self.bounds)
        taken.requests, self.requests = self.requests, {}
        taken.tool_calls, self.tool_calls = self.tool_calls, {}
        taken.durations, self.durations = self.durations, {}
        return taken

    def cumulative_buckets(self, tool: str) -> Iterator[tuple[str, float]]:
        """(le, cumulative count) pairs of one tool's histogram, ending with +Inf."""
        row, running = self.durations[tool], 0.0
        for bound, count in zip((*map(str, self.bounds), "+Inf"), row[:-1], strict=True):
            running += count
            yield bound, running
