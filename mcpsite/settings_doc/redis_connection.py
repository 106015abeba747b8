"""The settings reference's rows for how the processes reach Redis (one server, a Cluster or
Sentinels)."""

from __future__ import annotations

from .rows import Section, Text, Var

REDIS: Section = (
    "Redis",
    "Without `REDIS_URL` everything is kept in the process (one worker). See [Several workers](../guides/scaling.md).",
    [
        Var(
            "REDIS_URL",
            Text("unset"),
            "Unset: in-process session/event/task stores and bus (one process). Set: Redis stores and bus, for several workers.",
        ),
        Var(
            "MCP_KEY_PREFIX",
            Text("`mcp`"),
            "Namespace of every Redis key and channel (no braces: it goes inside hash tags).",
        ),
        Var(
            "MCP_REDIS_MODE",
            Text("`standalone`"),
            "How `REDIS_URL` is reached: `standalone` (one server), `cluster` (Redis Cluster; `REDIS_URL` is any one node) or `sentinel` (the master Sentinel names; `REDIS_URL` gives only its credentials and database).",
        ),
        Var(
            "MCP_REDIS_SENTINELS",
            Text("empty"),
            "`sentinel` mode: comma-separated `host:port` of the Sentinels (at least one).",
        ),
        Var(
            "MCP_REDIS_SENTINEL_MASTER",
            Text("`mymaster`"),
            "`sentinel` mode: the master's service name in Sentinel's configuration.",
        ),
        Var(
            "MCP_REDIS_SENTINEL_PASSWORD",
            Text("unset"),
            "`sentinel` mode: password of the Sentinels themselves (their `requirepass`), if any.",
        ),
        Var(
            "MCP_REDIS_EVENT_BUCKETS",
            Text("`16`"),
            "Buckets of the event logs: the live tail reads each bucket's streams with one `XREAD` (on a Cluster, one per bucket). Every worker must use the same value; changing it orphans the logs (a `Last-Event-ID` from before is then unknown).",
        ),
    ],
)
