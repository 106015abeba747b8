"""What a private Redis (one server, or every master of a Cluster) did over a window: commands by
name from ``INFO commandstats``, bytes in and out from ``INFO stats``, ``used_memory`` from ``INFO
memory`` and the servers' CPU time from ``/proc``, summed over the nodes. Only for the bench's
private servers: on a shared Redis the deltas would count everyone's traffic.

    nodes = RedisNodes([port])                      # or the three masters of a PrivateCluster
    before = nodes.snapshot(); ...; after = nodes.snapshot()
    work = after - before                           # a Snapshot of the window's deltas

The snapshot's own ``INFO`` calls are excluded from the command counts (``info`` is dropped); the
bytes of its replies are not, so a caller subtracts an idle window of the same shape (same number
of snapshots) to cancel them, and with them the background work (heartbeats, claim refreshes).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

import redis

from .servers import cpu_seconds

# The snapshot's own probes, and the cluster's bookkeeping commands that clients issue
# (redis-py's CLUSTER SLOTS refresh): not the product's work.
IGNORED = {"info", "cluster|slots", "cluster|shards", "cluster|nodes", "command|docs", "command"}


@dataclass
class Snapshot:
    calls: dict[str, int] = field(default_factory=dict)
    net_in: int = 0
    net_out: int = 0
    used_memory: int = 0
    cpu: float = 0.0  # the redis-server processes' CPU seconds (/proc), the cost behind the commands

    def __sub__(self, other: Snapshot) -> Snapshot:
        names = set(self.calls) | set(other.calls)
        return Snapshot({n: self.calls.get(n, 0) - other.calls.get(n, 0) for n in names},
                        self.net_in - other.net_in, self.net_out - other.net_out,
                        self.used_memory - other.used_memory, self.cpu - other.cpu)

    def scaled(self, factor: float) -> Snapshot:
        return Snapshot({n: round(c * factor) for n, c in self.calls.items()}, round(self.net_in * factor),
                        round(self.net_out * factor), round(self.used_memory * factor), self.cpu * factor)

    @property
    def commands(self) -> int:
        return sum(self.calls.values())

    def per(self, count: float) -> dict[str, object]:
        """Commands, bytes and the busiest commands per ``count`` units of work."""
        top = sorted(((c, n) for n, c in self.calls.items() if c > 0), reverse=True)[:6]
        return {"commands": round(self.commands / count, 2),
                "bytes_in": round(self.net_in / count), "bytes_out": round(self.net_out / count),
                "redis_cpu_us": round(self.cpu / count * 1e6, 1),
                "by_command": {n: round(c / count, 2) for c, n in top}}


class RedisNodes:
    def __init__(self, ports: list[int]) -> None:
        self.clients = [redis.Redis(port=p, decode_responses=True) for p in ports]
        self.pids = [int(client.info("server")["process_id"]) for client in self.clients]

    def snapshot(self) -> Snapshot:
        total = Snapshot(cpu=sum(cpu_seconds(pid) for pid in self.pids))
        for client in self.clients:
            stats = client.info("commandstats")
            for name, row in stats.items():
                command = name.removeprefix("cmdstat_")
                if command not in IGNORED:
                    total.calls[command] = total.calls.get(command, 0) + int(row["calls"])
            info = client.info("stats")
            total.net_in += int(info["total_net_input_bytes"])
            total.net_out += int(info["total_net_output_bytes"])
            total.used_memory += int(client.info("memory")["used_memory"])
        return total

    def memory_usage(self, match: str, sample: int = 50) -> tuple[int, float]:
        """How many keys match ``match`` (over every node) and the mean ``MEMORY USAGE`` of up to
        ``sample`` of them, in bytes."""
        count, sizes = 0, []
        for client in self.clients:
            for key in client.scan_iter(match, 1000):
                count += 1
                if len(sizes) < sample:
                    sizes.append(int(client.memory_usage(key, samples=0) or 0))
        return count, statistics.mean(sizes) if sizes else 0.0

    def close(self) -> None:
        for client in self.clients:
            client.close()
