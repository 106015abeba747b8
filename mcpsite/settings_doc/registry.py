"""The settings reference's rows for the http tool kind's outbound rules, how registry changes
reach the workers and how long history is kept, and the REST management API."""

from __future__ import annotations

from .rows import HTTP_KIND, Code, Section, Text, Var, http_kind

HTTP_TOOL_KIND: Section = (
    "The http tool kind",
    "See [Tools from any HTTP API](../guides/http-tools.md).",
    [
        Var(
            "REGISTRY_HTTP_ALLOWED_HOSTS",
            Code(HTTP_KIND, "DEFAULTS", "REGISTRY_HTTP_ALLOWED_HOSTS", "(none)"),
            "Hosts the registry's `http` tool kind may call (exact names or `*.example.com`).",
        ),
        Var(
            "REGISTRY_HTTP_SECRET_ENV_PREFIXES",
            Code("registry.kinds.http_client.secret_env", "DEFAULT_PREFIXES"),
            "Comma-separated prefixes: an `http` tool's secret header (and signing secret) may be read only from an environment variable whose name starts with one of them (checked when the tool is saved and at every call), so no tool editor can send `SECRET_KEY`, `DATABASE_URL` or another server secret upstream.",
        ),
        Var(
            "REGISTRY_HTTP_SECRET_ENV_ALLOWED",
            Text("empty (none)"),
            "Comma-separated exact variable names an `http` tool may send too, beyond the prefixes.",
        ),
        Var(
            "REGISTRY_HTTP_MAX_CONNECTIONS",
            http_kind("REGISTRY_HTTP_MAX_CONNECTIONS"),
            "Connections the `http` tool kind's pooled client keeps per worker, in all (kept alive between calls).",
        ),
        Var(
            "REGISTRY_HTTP_MAX_CONNECTIONS_PER_HOST",
            http_kind("REGISTRY_HTTP_MAX_CONNECTIONS_PER_HOST"),
            "Of those, at most this many to one host at once (further calls wait for one, within their timeout).",
        ),
        Var(
            "REGISTRY_HTTP_KEEPALIVE_SECONDS",
            http_kind("REGISTRY_HTTP_KEEPALIVE_SECONDS"),
            "How long an idle upstream connection stays open.",
        ),
        Var(
            "REGISTRY_HTTP_FORBID_PRIVATE",
            http_kind("REGISTRY_HTTP_FORBID_PRIVATE"),
            "`1`: an `http` tool may call public addresses only, checked on the address a name resolves to (loopback, RFC 1918, link-local such as the cloud metadata service, ULA: refused), so an allowed name whose DNS turns private cannot reach the server's network.",
        ),
        Var(
            "REGISTRY_HTTP_RETRIES",
            http_kind("REGISTRY_HTTP_RETRIES"),
            "Retries of an idempotent `http` tool (`idempotentHint`, or GET) after a connection error or a 502/503/504, inside its timeout (a `Retry-After` up to 5 s is waited for; a longer one ends the retries); other tools are never retried.",
        ),
        Var(
            "REGISTRY_HTTP_RETRY_BACKOFF",
            http_kind("REGISTRY_HTTP_RETRY_BACKOFF"),
            "First pause between retries, in seconds (doubling, full jitter, at most 2 s).",
        ),
    ],
)

UPSTREAM_CALLS: Section = (
    "Calls through upstream MCP servers",
    "See [Upstream MCP servers](../guides/upstreams.md#calls).",
    [
        Var(
            "REGISTRY_UPSTREAM_BREAKER_FAILURES",
            Code("registry.upstreams.breaker", "DEFAULT_THRESHOLD"),
            "Consecutive failures (refused or dropped connections, timeouts) that open an upstream's circuit breaker on a worker: its calls then fail at once.",
        ),
        Var(
            "REGISTRY_UPSTREAM_BREAKER_COOLDOWN",
            Code("registry.upstreams.breaker", "DEFAULT_COOLDOWN"),
            "Seconds an open breaker fails calls before letting one through as a probe (its success closes the breaker).",
        ),
        Var(
            "REGISTRY_UPSTREAM_USER_SESSIONS",
            Code("registry.upstreams.pool", "DEFAULT_USER_SESSIONS"),
            "Per-user sessions kept per upstream called as the user, per worker loop: past it, the least recently used idle one is closed.",
        ),
        Var(
            "REGISTRY_UPSTREAM_USER_SESSION_IDLE",
            Code("registry.upstreams.pool", "DEFAULT_USER_SESSION_IDLE"),
            "Seconds a per-user session of an upstream called as the user may stay unused before it is closed.",
        ),
    ],
)

UPSTREAM_CURRENT: Section = (
    "Keeping upstream MCP servers current",
    "See [Upstream MCP servers](../guides/upstreams.md#keeping-current).",
    [
        Var(
            "REGISTRY_UPSTREAM_SYNC_TICK",
            Code("registry.upstreams.periodic", "TICK"),
            "Seconds between each worker's looks for upstreams due a periodic sync (0: no periodic sync in this worker).",
        ),
        Var(
            "REGISTRY_UPSTREAM_LISTEN_LEASE",
            Code("registry.upstreams.keeper", "LEASE"),
            "Seconds of the lease under which one worker of the fleet holds an upstream's listen stream (renewed every third of it; a dead holder's upstreams are taken over within about this long). 0: this worker holds no listen streams.",
        ),
        Var(
            "REGISTRY_UPSTREAM_LISTEN_DEBOUNCE",
            Code("registry.upstreams.keeper", "DEBOUNCE"),
            "Seconds after an upstream's first list_changed before its sync: the notifications within are one sync.",
        ),
    ],
)


REGISTRY_CHANGES: Section = (
    "The registry: changes and history",
    "",
    [
        Var(
            "REGISTRY_RECONCILE_SECONDS",
            Code("registry.changes.reconcile", "INTERVAL"),
            "How often each worker (and `mcp_stdio`) reads the ids of the latest change sets (one query by primary key, off the request path) and publishes again a change whose bus message it never got: another key prefix, a process killed between commit and publish, or an in-memory bus in another process, or Redis down at the time (published again until it is heard); and finds a database restored under it (its newest change set gone: every list announced as changed). `0` turns it off.",
        ),
        Var(
            "REGISTRY_RECONCILE_SETTLE_SECONDS",
            Code("registry.changes.reconcile", "SETTLE"),
            "How long a change set may take from its first change to its commit (and how far the clocks of the machines may disagree): the reconciler keeps looking for lower ids committing late for this long.",
        ),
        Var(
            "REGISTRY_HISTORY_RETENTION_DAYS",
            Code("registry.history.retention", "RETENTION_DAYS"),
            "Days of registry history (versions and change sets) `manage.py prune_history` keeps; never the latest version of a live row.",
        ),
    ],
)


MANAGEMENT_API: Section = (
    "The REST management API",
    "",
    [
        Var(
            "API_THROTTLE_USER",
            Text("`6000/minute`"),
            "DRF throttle of each authenticated user of `/api/v1/`, counted in Django's cache: Redis (django-redis) when `REDIS_URL` is set in `standalone` or `sentinel` mode, so shared by every worker; per process otherwise (also on a Cluster, which django-redis does not speak).",
        ),
        Var("API_THROTTLE_ANON", Text("`60/minute`"), "DRF throttle of anonymous callers of `/api/v1/`."),
    ],
)
