"""The settings reference's rows for the /mcp endpoint (hosts and origins, sessions, streams, request
state) and tasks."""

from __future__ import annotations

from .rows import MCP, Code, Section, Text, Var, mcp

ENDPOINT: Section = (
    "The /mcp endpoint and its sessions",
    "These fill the `MCP` Django setting; a project that takes in the apps sets its keys directly ([Add MCP to your Django project](../guides/django-project.md)).",
    [
        Var(
            "MCP_PROVIDER",
            Text("the registry app's (`registry.provider.RegistryProvider`)"),
            "Dotted path of the definitions provider (`mcp_protocol.memory_provider.MemoryProvider` serves a small in-memory demo).",
        ),
        Var("MCP_SERVER_NAME", mcp("SERVER_NAME"), "`serverInfo.name`."),
        Var(
            "MCP_DEFAULT_SERVER",
            mcp("DEFAULT_SERVER"),
            "What `/mcp` (and the legacy `/sse`) serves: unset, every definition (the catch-all, its sessions belong to `/mcp` only); a virtual server's slug, that server (its sessions are valid on `/mcp` and `/mcp/<slug>` alike); `off`, nothing (404 with a JSON-RPC body). The virtual servers stay at `/mcp/<slug>` either way ([The /mcp endpoint](endpoint.md#virtual-servers)).",
        ),
        Var(
            "MCP_TOOL_SEARCH",
            mcp("TOOL_SEARCH"),
            "Tool search on the catch-all `/mcp`: `off` lists every tool; `on` lists `search_tools`, `call_tool` and the pinned tools, the model finds the rest by searching; `auto`, on when the caller may see more than `MCP_TOOL_SEARCH_THRESHOLD` tools. A virtual server has its own mode ([Tool search](../guides/tool-search.md#serving)).",
        ),
        Var("MCP_TOOL_SEARCH_THRESHOLD", mcp("TOOL_SEARCH_THRESHOLD"), "`auto` tool search: on above this many tools in the caller's view."),
        Var("MCP_TOOL_SEARCH_RANKING", mcp("TOOL_SEARCH_RANKING"), "How `search_tools` ranks, on every endpoint: `default` (BM25 over weighted fields, stems, related words), `plain` (BM25 alone), `embedding` (with a small sentence model; needs the `search-embedding` extra and the model package: [Tool search](../guides/tool-search.md#modes))."),
        Var(
            "MCP_TOOLS_LIST_FILTER",
            mcp("TOOLS_LIST_FILTER"),
            "Serve the draft SEP-2564 `filter` on `tools/list` (`namePatterns`, globs with `*` and `?`) on every endpoint, advertised as `capabilities.tools.filtering` ([Tool search](../guides/tool-search.md#filtering-toolslist-sep-2564)).",
        ),
        Var("MCP_SESSION_TTL", mcp("SESSION_TTL"), "Idle seconds before a session expires (sliding)."),
        Var("MCP_MAX_SESSIONS", mcp("MAX_SESSIONS"), "Cap on live sessions overall."),
        Var(
            "MCP_MAX_SESSIONS_PER_PRINCIPAL",
            mcp("MAX_SESSIONS_PER_PRINCIPAL"),
            "Cap on live sessions per principal, and on its GET streams open on one worker (standalone streams and resumes alike; one more is a 429 with `Retry-After`).",
        ),
        Var(
            "MCP_ALLOWED_ORIGINS",
            Code(MCP, "DEFAULTS", "ALLOWED_ORIGINS", "(loopback origins only)"),
            "Comma-separated `Origin` values accepted on `/mcp`; others get 403.",
        ),
        Var(
            "MCP_ALLOWED_HOSTS",
            Code(MCP, "DEFAULTS", "ALLOWED_HOSTS", "(loopback hosts only)"),
            "Comma-separated `Host` values accepted on `/mcp` (DNS-rebinding protection); others get 421 ([Troubleshooting](../troubleshooting.md)).",
        ),
        Var("MCP_MAX_BODY_BYTES", mcp("MAX_BODY_BYTES"), "Largest POST body; larger gets 413."),
        Var("MCP_KEEPALIVE_SECONDS", mcp("KEEPALIVE_SECONDS"), "Interval of SSE keep-alive comments."),
        Var(
            "MCP_ALWAYS_STREAM",
            mcp("ALWAYS_STREAM"),
            "Answer every request with an SSE stream instead of JSON.",
        ),
        Var(
            "MCP_CLOSE_STREAM_AFTER_SECONDS",
            mcp("CLOSE_STREAM_AFTER_SECONDS"),
            "Close long-running request streams after this many seconds (SEP-1699 polling); clients resume with `Last-Event-ID`.",
        ),
        Var(
            "MCP_CLIENT_REQUEST_TIMEOUT",
            mcp("CLIENT_REQUEST_TIMEOUT"),
            "Seconds a handler waits for the client's answer to a sampling, elicitation or roots request before it gets an error.",
        ),
        Var(
            "MCP_REQUEST_STATE_KEYS",
            Code(MCP, "DEFAULTS", "REQUEST_STATE_KEYS", "(one key derived from `SECRET_KEY`)"),
            "Comma-separated keys sealing the 2026-07-28 `requestState` (HMAC-SHA256): the first signs, every one opens, so keys rotate by prepending a new one and dropping the old after `MCP_REQUEST_STATE_TTL`. Every worker must hold the same list.",
        ),
        Var(
            "MCP_REQUEST_STATE_TTL",
            mcp("REQUEST_STATE_TTL"),
            "Seconds a `requestState` stays valid (an input-required retry after that gets -32602 and starts over).",
        ),
        Var(
            "MCP_SHUTDOWN_GRACE_SECONDS",
            mcp("SHUTDOWN_GRACE_SECONDS"),
            'After SIGTERM (uvicorn), how long requests in flight may finish before they are answered with -32603 "the worker … stopped; the request may be retried".',
        ),
        Var(
            "MCP_PRINCIPAL_RESOLVER",
            mcp("PRINCIPAL_RESOLVER"),
            "Who is calling `/mcp`: open mode (everyone is anonymous), or `mcp_django.users.django_user` (a logged-in Django session cookie or `Authorization: Bearer <management API token>`, else 401). See [Add MCP to your Django project](../guides/django-project.md).",
        ),
        Var(
            "MCP_GC_THRESHOLD",
            mcp("GC_THRESHOLD"),
            "The worker's cyclic GC thresholds, set at startup after `gc.freeze()` of what startup built (a 10,000-stream worker otherwise spends a quarter of its CPU in full collections). Empty: the GC is left as it is.",
        ),
    ],
)


TASKS: Section = (
    "Tasks",
    "See [Tasks](../guides/tasks.md).",
    [
        Var(
            "MCP_MAX_TASKS_PER_PRINCIPAL",
            mcp("MAX_TASKS_PER_PRINCIPAL"),
            "Unfinished tasks (working or input_required) one principal may have at once; one more → -32000 with `data.limit`.",
        ),
        Var(
            "MCP_MAX_FINISHED_TASKS_PER_PRINCIPAL",
            mcp("MAX_FINISHED_TASKS_PER_PRINCIPAL"),
            "Finished tasks (completed, failed, cancelled: with their results) kept per principal before their `ttlMs` ends; past it the oldest finished is dropped first, never an unfinished one.",
        ),
        Var(
            "MCP_TASK_LEASE_SECONDS",
            mcp("TASK_LEASE_SECONDS"),
            "Lease of a running task: renewed every third of it; a worker that dies has its tasks taken over (idempotent tools) or failed within about twice it (a lease is taken over once seen lapsed for half of it).",
        ),
        Var(
            "MCP_TASK_TTL_MS",
            mcp("TASK_TTL_MS"),
            "How long a task is kept after its creation (`ttlMs`; a 2025-11-25 client's `task.ttl` may ask for less).",
        ),
        Var(
            "MCP_TASK_POLL_INTERVAL_MS",
            mcp("TASK_POLL_INTERVAL_MS"),
            "The `pollIntervalMs` suggested to clients.",
        ),
        Var(
            "MCP_TASK_IMMEDIATE_SECONDS",
            mcp("TASK_IMMEDIATE_SECONDS"),
            "A task-capable call done sooner is answered at once instead of as a task.",
        ),
    ],
)
