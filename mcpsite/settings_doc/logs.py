"""The settings reference's rows for what the processes log and how /metrics is collected."""

from __future__ import annotations

from .rows import Section, Text, Var, mcp

LOGS_AND_METRICS: Section = (
    "Logs and metrics",
    "See [Operations](../guides/operations.md); traces take the standard `OTEL_*` variables ([Tracing](../guides/tracing.md)).",
    [
        Var("MCP_LOG_LEVEL", Text("`INFO`"), "Server log level (logs go to stderr)."),
        Var(
            "MCP_LOG_FORMAT",
            Text("`plain`"),
            "`json`: one JSON object per log line (time, level, logger, message; inside an `/mcp` request also `request_id`, a truncated `session` and `principal`).",
        ),
        Var(
            "MCP_METRICS",
            mcp("METRICS"),
            "Record the Prometheus metrics of `/mcp` (served at `/metrics`).",
        ),
        Var(
            "PROMETHEUS_MULTIPROC_DIR",
            Text("unset"),
            "A directory shared by the worker processes of one host (emptied before they start): `/metrics` on any of them then reports all of them. Unset: each process reports its own.",
        ),
    ],
)
