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

RequestKey = tuple[str, str, str, str, str]  # http_method, rpc_method, status, era, server
ToolKey = tuple[str, str]  # tool, outcome


class Tally:
    __slots__ = ("bounds", "durations", "requests")

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)  # histogram upper bounds, ascending; +Inf is implied
        self.requests: dict[RequestKey, int] = {}
        # Per tool, one list: a count per bound, the +Inf count, the sum of the observations and
        # the number of failed calls (one dict lookup per call for all three metrics).
        self.durations: dict[str, list[float]] = {}

    def __bool__(self) -> bool:
        return bool(self.requests)

    def request(self, key: RequestKey) -> None:
        self.requests[key] = self.requests.get(key, 0) + 1

    def tool_call(self, tool: str, failed: bool, seconds: float) -> None:
        row = self.durations.get(tool)
        if row is None:
            row = self.durations[tool] = [0.0] * (len(self.bounds) + 3)
        row[bisect_left(self.bounds, seconds)] += 1  # Prometheus buckets are "le": value <= bound
        row[-2] += seconds
        if failed:
            row[-1] += 1

    @property
    def tool_calls(self) -> dict[ToolKey, int]:
        """Calls per (tool, outcome); outcome ``ok`` or ``error``."""
        out: dict[ToolKey, int] = {}
        for tool, row in self.durations.items():
            total, failed = sum(row[:-2]), row[-1]
            if total > failed:
                out[(tool, "ok")] = int(total - failed)
            if failed:
                out[(tool, "error")] = int(failed)
        return out

    def take(self) -> Tally:
        """The counts so far, leaving this tally empty (for flushing deltas)."""
        taken = Tally(self.bounds)
        taken.requests, self.requests = self.requests, {}
        taken.durations, self.durations = self.durations, {}
        return taken

    def buckets(self, tool: str) -> list[float]:
        """One tool's count per bucket (not cumulative), ending with +Inf."""
        return self.durations[tool][:-2]

    def duration_sum(self, tool: str) -> float:
        return self.durations[tool][-2]

    def cumulative_buckets(self, tool: str) -> Iterator[tuple[str, float]]:
        """(le, cumulative count) pairs of one tool's histogram, ending with +Inf."""
        running = 0.0
        for bound, count in zip((*map(str, self.bounds), "+Inf"), self.buckets(tool), strict=True):
            running += count
            yield bound, running
