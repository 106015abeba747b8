"""The settings reference, ``docs/reference/settings.md``, generated from where the defaults live.

``python -m mcpsite.settings_doc`` writes the page; ``--check`` exits 1 when the committed page is
not what this module generates (``tests/unit/test_settings_doc.py`` makes the same comparison, so
the page cannot drift from the code).

Each variable's default is read from the module that owns it (``Code``): ``mcp_django.conf``
(``DEFAULTS``, ``ACCESS_DEFAULTS``), ``oauth_server.conf.DEFAULTS``, ``registry.kinds.http_client.config``,
``registry.changes.reconcile``, ``registry.history.retention``, ``registry.kinds.http_client.secret_env``. The few defaults that
``mcpsite/settings.py``, the scripts or a command write inline (``os.environ.get(name, "90")``)
are quoted here as text (``Text``); the test checks that every variable ``settings.py`` reads is in
this table, so none goes undocumented.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PAGE = Path(__file__).resolve().parent.parent / "docs" / "reference" / "settings.md"


@dataclass(frozen=True)
class Code:
    """A default read from code: ``module.attribute`` or ``module.attribute[key]``."""

    module: str
    attribute: str
    key: str | None = None
    # Words after the value, e.g. "(loopback hosts only)" for an empty list.
    note: str = ""

    def value(self) -> Any:
        found = getattr(importlib.import_module(self.module), self.attribute)
        return found[self.key] if self.key is not None else found


@dataclass(frozen=True)
class Text:
    """A default written as words (a computed default, or one written inline where it is read)."""

    text: str


@dataclass(frozen=True)
class Var:
    name: str
    default: Code | Text
    meaning: str


def render(value: Any) -> str:
    """A default as the environment variable would be written."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "`1`" if value else "`0`"
    if isinstance(value, float) and value.is_integer():
        return f"`{int(value)}`"
    if isinstance(value, (list, tuple)):
        return f"`{','.join(str(v) for v in value)}`" if value else "empty"
    if isinstance(value, dict):
        return f"`{json.dumps(value)}`"
    if isinstance(value, str) and not value:
        return "empty"
    return f"`{value}`"


def cell(default: Code | Text) -> str:
    if isinstance(default, Text):
        return default.text
    return render(default.value()) + (f" {default.note}" if default.note else "")


MCP = "mcp_django.conf"
ACCESS = (MCP, "ACCESS_DEFAULTS")
OAUTH_SERVER = "oauth_server.conf"
HTTP_KIND = "registry.kinds.http_client.config"


def mcp(key: str) -> Code:
    return Code(MCP, "DEFAULTS", key)


def access(key: str) -> Code:
    return Code(*ACCESS, key)


def oauth_server(key: str) -> Code:
    return Code(OAUTH_SERVER, "DEFAULTS", key)


def http_kind(key: str) -> Code:
    return Code(HTTP_KIND, "DEFAULTS", key)


def debug_on_off(on: str) -> Text:
    return Text(f"`{on}` when `DJANGO_DEBUG=0`, else `0`")


SECTIONS: list[tuple[str, str, list[Var]]] = [
    (
        "Django, HTTPS and the database",
        "",
        [
            Var(
                "SECRET_KEY",
                Text("a fixed development key"),
                "Django's secret; also keys pagination cursors and (unless `MCP_REQUEST_STATE_KEYS`) the `requestState`. **Set it in production**: with `DJANGO_DEBUG=0` the development key refuses to start.",
            ),
            Var("DJANGO_DEBUG", Text("`1`"), "Django debug mode."),
            Var(
                "DJANGO_ALLOWED_HOSTS",
                Text("`127.0.0.1,localhost,[::1]`"),
                "Django's `ALLOWED_HOSTS` (admin, API). `/mcp` has its own, `MCP_ALLOWED_HOSTS`.",
            ),
            Var(
                "DJANGO_SECURE_SSL_REDIRECT",
                debug_on_off("1"),
                "The admin and the API redirect plain HTTP to https (`/healthz`, `/readyz`, `/metrics` excepted: probes use the private network).",
            ),
            Var(
                "DJANGO_SECURE_HSTS_SECONDS",
                Text("`31536000` when `DJANGO_DEBUG=0`, else `0`"),
                "`Strict-Transport-Security` max-age.",
            ),
            Var(
                "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS",
                debug_on_off("1"),
                "Adds `includeSubDomains` to HSTS.",
            ),
            Var("DJANGO_SECURE_HSTS_PRELOAD", debug_on_off("1"), "Adds `preload` to HSTS."),
            Var(
                "DJANGO_SESSION_COOKIE_SECURE",
                debug_on_off("1"),
                "The admin's session cookie is sent over HTTPS only.",
            ),
            Var("DJANGO_CSRF_COOKIE_SECURE", debug_on_off("1"), "The CSRF cookie is sent over HTTPS only."),
            Var(
                "DJANGO_SECURE_PROXY_SSL_HEADER",
                Text("unset"),
                "A header the TLS proxy always sets (e.g. `X-Forwarded-Proto`) from which Django learns the request was HTTPS. Not needed with the image's uvicorn, which takes the scheme from its trusted balancer (`FORWARDED_ALLOW_IPS`); only for a server that does not, behind a proxy that overwrites the header.",
            ),
            Var(
                "FORWARDED_ALLOW_IPS",
                Text("`127.0.0.1` (uvicorn's; the image's)"),
                "uvicorn's: the addresses whose `X-Forwarded-For`/`-Proto` are believed (`--proxy-headers`). Name the balancer only, never `*`: anyone else could choose the address they are seen and throttled as. Compose sets it to the balancer's fixed address (`MCP_LB_ADDRESS`, default `172.30.80.10` in `MCP_NETWORK_SUBNET`, default `172.30.80.0/24`).",
            ),
            Var(
                "DATABASE_URL",
                Text("`sqlite:///db.sqlite3` (in the checkout)"),
                "The registry database (`postgres://…` in production).",
            ),
            Var(
                "DJANGO_STATIC_ROOT",
                Text("`staticfiles/`"),
                "Where `collectstatic` writes the hashed, compressed static files served when `DJANGO_DEBUG=0`.",
            ),
        ],
    ),
    (
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
    ),
    (
        "The /mcp endpoint and its sessions",
        "These fill the `MCP` Django setting; a project that takes in the apps sets its keys directly ([Add MCP to your Django project](../guides/django-project.md)).",
        [
            Var(
                "MCP_PROVIDER",
                Text("the registry app's (`registry.provider.RegistryProvider`)"),
                "Dotted path of the definitions provider (`mcp_protocol.memory_provider.MemoryProvider` serves a small in-memory demo).",
            ),
            Var("MCP_SERVER_NAME", mcp("SERVER_NAME"), "`serverInfo.name`."),
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
    ),
    (
        "Tasks",
        "See [Tasks](../guides/tasks.md).",
        [
            Var(
                "MCP_MAX_TASKS_PER_PRINCIPAL",
                mcp("MAX_TASKS_PER_PRINCIPAL"),
                "Unfinished tasks (working or input_required) one principal may have at once; one more → -32000 with `data.limit`.",
            ),
            Var(
                "MCP_TASK_LEASE_SECONDS",
                mcp("TASK_LEASE_SECONDS"),
                "Lease of a running task: renewed every third of it; a worker that dies has its tasks taken over (idempotent tools) or failed within about 4/3 of it.",
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
    ),
    (
        "Authentication and limits",
        'See [Authentication](../guides/auth.md). These fill `MCP["ACCESS"]`.',
        [
            Var(
                "MCP_AUTH",
                access("MODE"),
                "Who may call `/mcp`: `open` (no credentials; development), `keys` (API keys), `oauth` (JWT access tokens), `keys,oauth`. A system check refuses `open` with `DJANGO_DEBUG=0` and a non-loopback allowed host.",
            ),
            Var(
                "MCP_RESOURCE_URL",
                access("RESOURCE_URL"),
                "The canonical URL of `/mcp`: the audience tokens must carry (RFC 8707) and the base of the RFC 9728 metadata URL.",
            ),
            Var(
                "MCP_OAUTH_ISSUER",
                access("OAUTH_ISSUER"),
                "`oauth`: the authorization server's issuer (`iss` of its tokens); required with `oauth`. `self`: this server's own ([Built-in authorization server](../guides/oauth-server.md)).",
            ),
            Var(
                "MCP_OAUTH_JWKS_URL",
                Text("`<issuer>/.well-known/jwks.json`"),
                "`oauth`: where its signing keys are fetched (cached 10 min; refetched for an unknown `kid`).",
            ),
            Var(
                "MCP_OAUTH_JWKS_SOURCE",
                access("OAUTH_JWKS_SOURCE"),
                "`oauth`: dotted path of a callable `(url, timeout) -> JWKS bytes` used instead of an HTTP GET of the JWKS URL (with `MCP_OAUTH_ISSUER=self`, the built-in server's key set, read in-process).",
            ),
            Var(
                "MCP_OAUTH_JWKS_MIN_REFRESH",
                access("OAUTH_JWKS_MIN_REFRESH"),
                "`oauth`: least seconds between two JWKS fetches caused by unknown `kid`s.",
            ),
            Var(
                "MCP_OAUTH_ALGORITHMS",
                access("OAUTH_ALGORITHMS"),
                "`oauth`: accepted signature algorithms (asymmetric only: `none` and `HS*` are refused by a system check). A JWK published with `alg` verifies that algorithm only (RFC 8725 §3.1).",
            ),
            Var(
                "MCP_OAUTH_REQUIRE_TYP",
                access("OAUTH_REQUIRE_TYP"),
                "`oauth`: `1` refuses tokens whose header is not `typ: at+jwt` (RFC 9068 §4; for issuers that type their access tokens). A token typed otherwise than `at+jwt` (or untyped `JWT`) is refused either way.",
            ),
            Var(
                "MCP_OAUTH_SCOPES",
                access("OAUTH_SCOPES"),
                '`oauth`: JSON, each scope → the grant it gives (`{"tools": [...], "resources": [...], "prompts": [...], "tags": [...]}`; `{}` = everything). A token gets the union of its scopes\' grants; none → 403 `insufficient_scope`.',
            ),
            Var(
                "MCP_RATE_LIMIT",
                access("RATE"),
                "`N/S`: requests per principal (N per S seconds, burst N); a key's own rate overrides it. Shared through Redis when `REDIS_URL` is set.",
            ),
            Var(
                "MCP_TOOL_RATE_LIMIT",
                access("TOOL_RATE"),
                "`N/S`: calls per principal and tool; a key's own tool rate overrides it.",
            ),
            Var(
                "MCP_TOOL_RATE_LIMITS",
                access("TOOL_RATES"),
                'JSON `{"tool": "N/S"}`: per-tool rates (per principal) overriding the two above.',
            ),
            Var(
                "MCP_MAX_IN_FLIGHT",
                access("MAX_IN_FLIGHT"),
                "Cap on one principal's requests running at once, per worker.",
            ),
        ],
    ),
    (
        "The built-in authorization server",
        "On with `MCP_OAUTH_ISSUER=self`; see [Built-in authorization server](../guides/oauth-server.md).",
        [
            Var(
                "MCP_OAUTH_DCR",
                oauth_server("DCR"),
                "RFC 7591 registration at `/oauth/register/` (deprecated by the 2026-07-28 spec, still what most clients do).",
            ),
            Var(
                "MCP_OAUTH_CIMD",
                oauth_server("CIMD"),
                "Client ID Metadata Documents: fetched over HTTPS from public addresses only, 16 KB, 5 s, cached per `Cache-Control` (5 min to 1 day), `client_id` equal to the URL.",
            ),
            Var(
                "MCP_OAUTH_CIMD_ALLOW_PRIVATE",
                oauth_server("CIMD_ALLOW_PRIVATE"),
                "Development only: documents on loopback/private addresses too (a system check warns with `DJANGO_DEBUG=0`).",
            ),
            Var(
                "MCP_OAUTH_ACCESS_TOKEN_SECONDS",
                oauth_server("ACCESS_TOKEN_SECONDS"),
                "Access token lifetime.",
            ),
            Var(
                "MCP_OAUTH_REFRESH_TOKEN_SECONDS",
                oauth_server("REFRESH_TOKEN_SECONDS"),
                "Refresh token lifetime after its access token's expiry.",
            ),
            Var("MCP_OAUTH_CODE_SECONDS", oauth_server("CODE_SECONDS"), "Authorization code lifetime."),
            Var(
                "MCP_OAUTH_SIGNING_ALGORITHM",
                oauth_server("ALGORITHM"),
                "`ES256`, `RS256` or `PS256`, for new keys.",
            ),
            Var(
                "MCP_OAUTH_SIGNING_KEYS",
                oauth_server("SIGNING_KEYS"),
                "Signing keys from the environment instead of the database: PKCS#8 PEM blocks (EC P-256 or RSA), the first signs, all are published; rotate by putting a new key first.",
            ),
            Var(
                "MCP_OAUTH_KEY_PUBLISH_SECONDS",
                oauth_server("KEY_PUBLISH_SECONDS"),
                "A new key is in the JWKS this long before it signs (every worker learns it first).",
            ),
            Var(
                "MCP_OAUTH_TOKEN_RATE",
                oauth_server("TOKEN_RATE"),
                "`N/S` per client address on the token and revocation endpoints; over it, 429 with `Retry-After`.",
            ),
            Var(
                "MCP_OAUTH_REGISTRATION_RATE",
                oauth_server("REGISTRATION_RATE"),
                "`N/S` per client address on the registration endpoint; over it, 429 with `Retry-After`.",
            ),
        ],
    ),
    (
        "The audit log",
        "See [Authentication](../guides/auth.md#the-audit-log).",
        [
            Var(
                "MCP_AUDIT",
                Text("`1`"),
                "Audit log of tool calls, resource reads and prompt gets (admin → Audit records).",
            ),
            Var(
                "MCP_AUDIT_RETENTION_DAYS",
                Text("`90`"),
                "Days of audit records `manage.py prune_audit` keeps (at least 1).",
            ),
            Var(
                "MCP_AUDIT_SINK",
                Text("`redis` with `REDIS_URL`, else `database`"),
                "Where workers put audit entries: `database` (a thread of each worker inserts them) or `redis` (appended to a Redis stream; `manage.py drain_audit` writes them to the database).",
            ),
            Var(
                "MCP_AUDIT_REDIS_URL",
                Text("`REDIS_URL`"),
                "The spool's Redis (same `MCP_REDIS_MODE`); e.g. a Redis with persistence, so a restart keeps what waits.",
            ),
            Var(
                "MCP_AUDIT_SPOOL_MAX_ENTRIES",
                Text("`100000`"),
                'Entries the spool holds at most (undrained); beyond it the newest are dropped and counted in `mcp_audit_dropped_total{reason="sink_full"}`. About 0.3 KB an entry, up to ~4.3 KB with capped arguments.',
            ),
        ],
    ),
    (
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
    ),
    (
        "The registry: changes and history",
        "",
        [
            Var(
                "REGISTRY_RECONCILE_SECONDS",
                Code("registry.changes.reconcile", "INTERVAL"),
                "How often each worker (and `mcp_stdio`) reads the ids of the latest change sets (one query by primary key, off the request path) and publishes again a change whose bus message it never got: another key prefix, a process killed between commit and publish, or an in-memory bus in another process. `0` turns it off.",
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
    ),
    (
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
    ),
    (
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
    ),
    (
        "Scripts and first-run commands",
        "",
        [
            Var("MCP_BIND_HOST", Text("`127.0.0.1`"), "Where `scripts/serve.sh` listens."),
            Var("MCP_BIND_PORT", Text("`8000`"), "The port `scripts/serve.sh` listens on."),
            Var(
                "MCP_DEV_ADMIN_PASSWORD",
                Text("`admin`"),
                "Password of the `admin` user that `scripts/serve.sh` creates when `DJANGO_DEBUG` is on.",
            ),
            Var("MCP_FLEET_WORKERS", Text("`3`"), "`scripts/fleet.sh` default for `--workers`."),
            Var("MCP_FLEET_PORT", Text("a free port"), "`scripts/fleet.sh` default for `--port`."),
            Var(
                "DJANGO_SUPERUSER_USERNAME",
                Text("unset"),
                "With `DJANGO_SUPERUSER_PASSWORD` (and optionally `DJANGO_SUPERUSER_EMAIL`): `manage.py ensure_admin` (compose's `migrate` service) creates this superuser once if it is missing; never resets a password.",
            ),
            Var("DJANGO_SUPERUSER_PASSWORD", Text("unset"), "See `DJANGO_SUPERUSER_USERNAME`."),
            Var("DJANGO_SUPERUSER_EMAIL", Text("empty"), "See `DJANGO_SUPERUSER_USERNAME`."),
        ],
    ),
]


def variables() -> list[Var]:
    return [var for _, _, rows in SECTIONS for var in rows]


def generate() -> str:
    lines = [
        "# Settings",
        "",
        "<!-- Generated by `python -m mcpsite.settings_doc` from the modules that hold the defaults;",
        "     edit mcpsite/settings_doc.py, not this page (tests/unit/test_settings_doc.py). -->",
        "",
        "Every setting comes from an environment variable. The defaults are for development only:",
        "the [production checklist](../production-checklist.md) says which to set. A project that",
        'takes in the apps sets the Django settings the variables fill (`MCP`, `MCP["ACCESS"]`,',
        "`MCP_OAUTH_SERVER`, `REGISTRY_HTTP_*`) in its own settings file instead.",
        "",
    ]
    for title, intro, rows in SECTIONS:
        lines += [f"## {title}", ""]
        if intro:
            lines += [intro, ""]
        lines += ["| variable | default | meaning |", "| --- | --- | --- |"]
        lines += [f"| `{var.name}` | {cell(var.default)} | {var.meaning} |" for var in rows]
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed page differs")
    args = parser.parse_args(argv)
    import django

    django.setup()
    page = generate()
    if args.check:
        if PAGE.read_text() != page:
            print(f"{PAGE} is out of date: run python -m mcpsite.settings_doc", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(page)
    return 0


if __name__ == "__main__":
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")
    sys.exit(main())
