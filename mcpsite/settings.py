"""Settings, read from the environment. Every variable is documented in README.md.

The defaults are for development only: a fixed dev SECRET_KEY, SQLite, in-process stores, open
mode on 127.0.0.1. Set ``DJANGO_DEBUG=0`` and a real ``SECRET_KEY`` in production.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from oauth_server.conf import provider_settings  # a function of settings: imports no model

BASE_DIR = Path(__file__).resolve().parent.parent


def as_bool(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


def as_list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else as_bool(value)


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    return default if value is None else as_list(value)


_UNSET = object()  # an empty variable that means "the default", as an absent one does


def env_settings(spec: dict[str, tuple[str, Callable[[str], Any]]]) -> dict[str, Any]:
    """``{key: parse(value)}`` for each ``key: (variable, parse)`` whose variable is set: the MCP
    setting's defaults live in ``mcp_django/conf.py`` (``DEFAULTS``), not restated here."""
    found = {key: parse(os.environ[name]) for key, (name, parse) in spec.items() if name in os.environ}
    return {key: value for key, value in found.items() if value is not _UNSET}


def or_unset(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    return lambda value: parse(value) if value.strip() else _UNSET


DEBUG = env_bool("DJANGO_DEBUG", True)
# Development-only default; production sets SECRET_KEY in the environment. With DEBUG off the
# development key is refused outright: it is public (in this file), and it signs sessions, CSRF
# tokens, pagination cursors and the requestState of every worker.
_DEVELOPMENT_SECRET_KEY = "dev-insecure-mcpsite-secret-key-change-me"
SECRET_KEY = os.environ.get("SECRET_KEY", _DEVELOPMENT_SECRET_KEY)
if not DEBUG and SECRET_KEY == _DEVELOPMENT_SECRET_KEY:
    raise ImproperlyConfigured(
        "DJANGO_DEBUG=0 needs a SECRET_KEY of its own: set SECRET_KEY in the environment (50 or more "
        "random characters, e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))'); the "
        "development default is public"
    )
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])

# HTTPS (README "Deploy with compose"): with DEBUG off, by default, the admin and the API redirect
# to https, send HSTS, and mark the session and CSRF cookies Secure, as `manage.py check --deploy`
# asks; each has its variable (the loopback fleet and tests over plain HTTP turn them off:
# mcpsite.fleet.PLAIN_HTTP). Behind a TLS proxy the scheme comes from uvicorn --proxy-headers
# (X-Forwarded-Proto of the trusted balancer only, FORWARDED_ALLOW_IPS); a server that does not
# read it is told by DJANGO_SECURE_PROXY_SSL_HEADER (a header the proxy always sets, e.g.
# X-Forwarded-Proto). /mcp is not behind Django's middleware: the proxy's TLS covers it.
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", not DEBUG)
# Probes reach a worker over the private network in plain HTTP (the image's HEALTHCHECK, readiness).
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_SECURE_HSTS_SECONDS", "0" if DEBUG else "31536000"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", not DEBUG)
SESSION_COOKIE_SECURE = env_bool("DJANGO_SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("DJANGO_CSRF_COOKIE_SECURE", not DEBUG)
if os.environ.get("DJANGO_SECURE_PROXY_SSL_HEADER"):
    SECURE_PROXY_SSL_HEADER = (
        "HTTP_" + os.environ["DJANGO_SECURE_PROXY_SSL_HEADER"].strip().upper().replace("-", "_"), "https"
    )

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "simple_history",  # the registry's history (registry/history.py): its commands
    "mcp_django",
    "registry",
    "access",
    "oauth2_provider",
    "oauth_server",
    "management_api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files from this process (uvicorn, daphne, every worker): right after security, before
    # sessions, so a stylesheet costs no session or database work.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Who saved a historical version (registry definitions, API keys): the request's user.
    "simple_history.middleware.HistoryRequestMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "mcpsite.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]
WSGI_APPLICATION = None
ASGI_APPLICATION = "mcpsite.asgi.application"

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"), conn_max_age=0
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Concurrent writers (two API clients, the admin and the API) queue for SQLite's write lock
    # instead of failing with "database is locked": a deferred transaction that reads and then
    # writes cannot wait for the lock, an IMMEDIATE one takes it up front (Django 5.1+).
    DATABASES["default"].setdefault("OPTIONS", {}).update({"transaction_mode": "IMMEDIATE", "timeout": 20})
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("DJANGO_STATIC_ROOT", str(BASE_DIR / "staticfiles")))
# The site's own files (favicon, the admin's stylesheet), beside the apps' static folders.
STATICFILES_DIRS = [BASE_DIR / "static"]
# Development (DEBUG): WhiteNoise serves straight from the apps (its finders, re-scanned on every
# request), no collectstatic. Production: `manage.py collectstatic` writes hashed, compressed
# (gzip/brotli) copies to STATIC_ROOT, which WhiteNoise serves with far-future cache headers.
# Fixed here from DJANGO_DEBUG, not read from DEBUG when the middleware starts (test runners turn
# DEBUG off at run time, and WhiteNoise would then look for a STATIC_ROOT development never has).
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Hosts the registry's "http" tool kind may POST to (exact names or "*.example.com").
REGISTRY_HTTP_ALLOWED_HOSTS = env_list("REGISTRY_HTTP_ALLOWED_HOSTS", [])
# The http kind's pooled client per worker, its private-address guard and retries (defaults:
# registry/upstream/config.py).
if os.environ.get("REGISTRY_HTTP_MAX_CONNECTIONS"):
    REGISTRY_HTTP_MAX_CONNECTIONS = int(os.environ["REGISTRY_HTTP_MAX_CONNECTIONS"])
if os.environ.get("REGISTRY_HTTP_MAX_CONNECTIONS_PER_HOST"):
    REGISTRY_HTTP_MAX_CONNECTIONS_PER_HOST = int(os.environ["REGISTRY_HTTP_MAX_CONNECTIONS_PER_HOST"])
if os.environ.get("REGISTRY_HTTP_KEEPALIVE_SECONDS"):
    REGISTRY_HTTP_KEEPALIVE_SECONDS = float(os.environ["REGISTRY_HTTP_KEEPALIVE_SECONDS"])
if os.environ.get("REGISTRY_HTTP_FORBID_PRIVATE"):
    REGISTRY_HTTP_FORBID_PRIVATE = env_bool("REGISTRY_HTTP_FORBID_PRIVATE", False)
if os.environ.get("REGISTRY_HTTP_RETRIES"):
    REGISTRY_HTTP_RETRIES = int(os.environ["REGISTRY_HTTP_RETRIES"])
if os.environ.get("REGISTRY_HTTP_RETRY_BACKOFF"):
    REGISTRY_HTTP_RETRY_BACKOFF = float(os.environ["REGISTRY_HTTP_RETRY_BACKOFF"])
# Environment variables an http tool may send as its secret header (registry/secret_env.py; unset:
# names starting with MCP_TOOL_SECRET_ only).
if "REGISTRY_HTTP_SECRET_ENV_PREFIXES" in os.environ:
    REGISTRY_HTTP_SECRET_ENV_PREFIXES = env_list("REGISTRY_HTTP_SECRET_ENV_PREFIXES", [])
REGISTRY_HTTP_SECRET_ENV_ALLOWED = env_list("REGISTRY_HTTP_SECRET_ENV_ALLOWED", [])
# How often each worker checks the database for registry changes its bus missed, and how long a
# change set may take to commit (registry/reconcile.py; defaults there).
if "REGISTRY_RECONCILE_SECONDS" in os.environ:
    REGISTRY_RECONCILE_SECONDS = float(os.environ["REGISTRY_RECONCILE_SECONDS"])
# Days of registry history prune_history keeps (registry/retention.py; default there).
if "REGISTRY_HISTORY_RETENTION_DAYS" in os.environ:
    REGISTRY_HISTORY_RETENTION_DAYS = int(os.environ["REGISTRY_HISTORY_RETENTION_DAYS"])
if "REGISTRY_RECONCILE_SETTLE_SECONDS" in os.environ:
    REGISTRY_RECONCILE_SETTLE_SECONDS = float(os.environ["REGISTRY_RECONCILE_SETTLE_SECONDS"])

REDIS_URL = os.environ.get("REDIS_URL") or None
_KEY_PREFIX = os.environ.get("MCP_KEY_PREFIX", "mcp")
# How REDIS_URL is reached (README "Redis Cluster and Sentinel"): one server, a Cluster (REDIS_URL
# is any node), or the master Sentinel names (REDIS_URL gives its credentials and database only).
_REDIS_OPTIONS = {
    "url": REDIS_URL,
    "prefix": _KEY_PREFIX,
    "mode": os.environ.get("MCP_REDIS_MODE", "standalone"),
    "sentinels": env_list("MCP_REDIS_SENTINELS", []),
    "sentinel_master": os.environ.get("MCP_REDIS_SENTINEL_MASTER", "mymaster"),
    "sentinel_password": os.environ.get("MCP_REDIS_SENTINEL_PASSWORD") or None,
}

MCP: dict[str, Any] = env_settings({
    # Unset: the provider the installed registry app declares (registry.provider.RegistryProvider).
    "PROVIDER": ("MCP_PROVIDER", lambda path: {"BACKEND": path, "OPTIONS": {}}),
    "SERVER_NAME": ("MCP_SERVER_NAME", str),
    "SESSION_TTL": ("MCP_SESSION_TTL", float),
    "MAX_SESSIONS": ("MCP_MAX_SESSIONS", int),
    "MAX_SESSIONS_PER_PRINCIPAL": ("MCP_MAX_SESSIONS_PER_PRINCIPAL", int),
    "ALLOWED_ORIGINS": ("MCP_ALLOWED_ORIGINS", as_list),
    "ALLOWED_HOSTS": ("MCP_ALLOWED_HOSTS", as_list),
    "MAX_BODY_BYTES": ("MCP_MAX_BODY_BYTES", int),
    "KEEPALIVE_SECONDS": ("MCP_KEEPALIVE_SECONDS", float),
    "ALWAYS_STREAM": ("MCP_ALWAYS_STREAM", as_bool),
    # Prometheus metrics of /mcp (README "Operations"); off saves their small cost per request.
    "METRICS": ("MCP_METRICS", as_bool),
    # The worker's GC, tuned at startup for long-lived streams (empty: left as it is).
    "GC_THRESHOLD": ("MCP_GC_THRESHOLD", lambda value: tuple(int(n) for n in as_list(value)) or None),
    "CLIENT_REQUEST_TIMEOUT": ("MCP_CLIENT_REQUEST_TIMEOUT", float),
    # MRTR requestState key ring (issue 13): comma-separated, first signs, all open.
    "REQUEST_STATE_KEYS": ("MCP_REQUEST_STATE_KEYS", as_list),
    "REQUEST_STATE_TTL": ("MCP_REQUEST_STATE_TTL", float),
    "SHUTDOWN_GRACE_SECONDS": ("MCP_SHUTDOWN_GRACE_SECONDS", float),
    "PRINCIPAL_RESOLVER": ("MCP_PRINCIPAL_RESOLVER", str),
    "CLOSE_STREAM_AFTER_SECONDS": ("MCP_CLOSE_STREAM_AFTER_SECONDS", or_unset(float)),
    # Tasks (README "Tasks"): the lease of a running task, a task's lifetime, the poll interval
    # suggested to clients, how long a call may take before it becomes a task.
    "MAX_TASKS_PER_PRINCIPAL": ("MCP_MAX_TASKS_PER_PRINCIPAL", int),
    "TASK_LEASE_SECONDS": ("MCP_TASK_LEASE_SECONDS", float),
    "TASK_TTL_MS": ("MCP_TASK_TTL_MS", int),
    "TASK_POLL_INTERVAL_MS": ("MCP_TASK_POLL_INTERVAL_MS", int),
    "TASK_IMMEDIATE_SECONDS": ("MCP_TASK_IMMEDIATE_SECONDS", float),
})
# Who may call what on /mcp (README "Authentication"): mcp_protocol/auth/policy.py.
MCP_AUDIT_RETENTION_DAYS = int(os.environ.get("MCP_AUDIT_RETENTION_DAYS", "90"))
# Where the serving processes put audit entries (README "The audit log"): "database" (a thread of
# each worker inserts them) or "redis" (appended to a Redis stream that `manage.py drain_audit`,
# a process of its own, writes to the database). With the fleet's REDIS_URL the spool is the
# default: the insert leaves the serving process (bench/results/2026-11-24-1629-audit-spool-session11.md).
_AUDIT_SINKS = {"database": "access.audit.DatabaseAuditSink", "redis": "access.spool.RedisSpoolSink"}
_AUDIT_SINK = os.environ.get("MCP_AUDIT_SINK") or ("redis" if REDIS_URL else "database")
_AUDIT_REDIS_URL = os.environ.get("MCP_AUDIT_REDIS_URL") or REDIS_URL
if _AUDIT_SINK not in _AUDIT_SINKS:
    raise ImproperlyConfigured("MCP_AUDIT_SINK must be database or redis")
if _AUDIT_SINK == "redis" and not _AUDIT_REDIS_URL:
    raise ImproperlyConfigured("MCP_AUDIT_SINK=redis needs REDIS_URL or MCP_AUDIT_REDIS_URL")
_AUDIT_SINK_OPTIONS: dict[str, object] = {} if _AUDIT_SINK == "database" else {
    **_REDIS_OPTIONS, "url": _AUDIT_REDIS_URL,
    "max_entries": int(os.environ.get("MCP_AUDIT_SPOOL_MAX_ENTRIES", "100000")),
}
MCP["ACCESS"] = {
    # The project's choice, not a default restated: this project has the access app, so it keeps
    # an audit log unless MCP_AUDIT=0 (the adapter's default is none).
    "AUDIT_SINK": _AUDIT_SINKS[_AUDIT_SINK] if env_bool("MCP_AUDIT", True) else None,
    "AUDIT_SINK_OPTIONS": _AUDIT_SINK_OPTIONS,
    **env_settings({
        "MODE": ("MCP_AUTH", str),
        "RATE": ("MCP_RATE_LIMIT", or_unset(str)),
        "TOOL_RATE": ("MCP_TOOL_RATE_LIMIT", or_unset(str)),
        "TOOL_RATES": ("MCP_TOOL_RATE_LIMITS", or_unset(json.loads)),
        "MAX_IN_FLIGHT": ("MCP_MAX_IN_FLIGHT", or_unset(int)),
        "RESOURCE_URL": ("MCP_RESOURCE_URL", str),
        "OAUTH_ISSUER": ("MCP_OAUTH_ISSUER", or_unset(str)),
        "OAUTH_JWKS_URL": ("MCP_OAUTH_JWKS_URL", or_unset(str)),
        "OAUTH_JWKS_SOURCE": ("MCP_OAUTH_JWKS_SOURCE", or_unset(str)),
        "OAUTH_ALGORITHMS": ("MCP_OAUTH_ALGORITHMS", as_list),
        "OAUTH_SCOPES": ("MCP_OAUTH_SCOPES", or_unset(json.loads)),
        "OAUTH_JWKS_MIN_REFRESH": ("MCP_OAUTH_JWKS_MIN_REFRESH", float),
        "OAUTH_REQUIRE_TYP": ("MCP_OAUTH_REQUIRE_TYP", as_bool),
    }),
}
# The built-in OAuth authorization server (oauth_server, README "Connect Claude.ai, ChatGPT, VS
# Code"), on with MCP_OAUTH_ISSUER=self; its defaults live in oauth_server/conf.py.
MCP_OAUTH_SERVER = env_settings({
    "DCR": ("MCP_OAUTH_DCR", as_bool),
    "CIMD": ("MCP_OAUTH_CIMD", as_bool),
    "CIMD_ALLOW_PRIVATE": ("MCP_OAUTH_CIMD_ALLOW_PRIVATE", as_bool),
    "ACCESS_TOKEN_SECONDS": ("MCP_OAUTH_ACCESS_TOKEN_SECONDS", int),
    "REFRESH_TOKEN_SECONDS": ("MCP_OAUTH_REFRESH_TOKEN_SECONDS", int),
    "CODE_SECONDS": ("MCP_OAUTH_CODE_SECONDS", int),
    "ALGORITHM": ("MCP_OAUTH_SIGNING_ALGORITHM", str),
    "SIGNING_KEYS": ("MCP_OAUTH_SIGNING_KEYS", str),  # a secret: from the environment only
    "KEY_PUBLISH_SECONDS": ("MCP_OAUTH_KEY_PUBLISH_SECONDS", int),
    "TOKEN_RATE": ("MCP_OAUTH_TOKEN_RATE", str),
    "REGISTRATION_RATE": ("MCP_OAUTH_REGISTRATION_RATE", str),
})
OAUTH2_PROVIDER = provider_settings(MCP_OAUTH_SERVER)
# The toolkit's RFC 9700 check refuses "http" among the redirect schemes outright; native MCP
# clients need it for loopback redirects (RFC 8252 §7.3), and our validator refuses plain http to
# any other host (oauth_server/validator.py, plain_http_allowed).
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.E003"]
if REDIS_URL:
    # Named here, at startup, rather than as a backend's error on the first request.
    if _REDIS_OPTIONS["mode"] not in ("standalone", "cluster", "sentinel"):
        raise ImproperlyConfigured("MCP_REDIS_MODE must be standalone, cluster or sentinel")
    if _REDIS_OPTIONS["mode"] == "sentinel" and not _REDIS_OPTIONS["sentinels"]:
        raise ImproperlyConfigured("MCP_REDIS_MODE=sentinel needs MCP_REDIS_SENTINELS (host:port,...)")
    MCP.update(
        {
            "SESSION_STORE": {
                "BACKEND": "mcp_protocol.stores.redis.RedisSessionStore",
                "OPTIONS": dict(_REDIS_OPTIONS),
            },
            "EVENT_STORE": {
                "BACKEND": "mcp_protocol.stores.redis.RedisEventStore",
                "OPTIONS": {
                    **_REDIS_OPTIONS,
                    "buckets": int(os.environ.get("MCP_REDIS_EVENT_BUCKETS", "16")),
                },
            },
            "BUS": {
                "BACKEND": "mcp_protocol.bus.redis.RedisBus",
                "OPTIONS": dict(_REDIS_OPTIONS),
            },
            "TASK_STORE": {
                "BACKEND": "mcp_protocol.stores.redis.RedisTaskStore",
                "OPTIONS": dict(_REDIS_OPTIONS),
            },
        }
    )
    # Rate limits shared by every worker.
    MCP["ACCESS"]["RATE_LIMITER"] = {
        "BACKEND": "mcp_protocol.auth.limits.RedisRateLimiter", "OPTIONS": dict(_REDIS_OPTIONS),
    }

def _sentinel_location(url: str, master: str) -> str:
    """REDIS_URL with its host replaced by the master's service name (django-redis's form)."""
    parts = urlsplit(url)
    userinfo = parts.netloc.rpartition("@")[0]
    return urlunsplit(parts._replace(netloc=f"{userinfo}@{master}" if userinfo else master))


# Django's cache: DRF's throttle counters. With REDIS_URL, Redis (django-redis), so every worker
# shares the counts; otherwise this process's memory.
if REDIS_URL and _REDIS_OPTIONS["mode"] == "standalone":
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": f"{_KEY_PREFIX}:cache",
        }
    }
elif REDIS_URL and _REDIS_OPTIONS["mode"] == "sentinel":
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            # django-redis asks the Sentinels for the master named by the URL's host.
            "LOCATION": _sentinel_location(REDIS_URL, _REDIS_OPTIONS["sentinel_master"]),
            "KEY_PREFIX": f"{_KEY_PREFIX}:cache",
            "OPTIONS": {
                "CLIENT_CLASS": "django_redis.client.SentinelClient",
                "CONNECTION_POOL_CLASS": "redis.sentinel.SentinelConnectionPool",
                "SENTINELS": [
                    (h.rsplit(":", 1)[0], int(h.rsplit(":", 1)[1])) for h in _REDIS_OPTIONS["sentinels"]
                ],
                "SENTINEL_KWARGS": {"password": _REDIS_OPTIONS["sentinel_password"]},
            },
        }
    }
else:
    # No REDIS_URL, or a Redis Cluster (which django-redis does not speak): per-process counts.
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

REST_FRAMEWORK = {
    # Tokens first: the first class names the WWW-Authenticate challenge of a 401.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "management_api.auth.ManagementTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAdminUser"],
    "DEFAULT_THROTTLE_CLASSES": [
        "management_api.auth.AnonRateThrottle",
        "management_api.auth.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": os.environ.get("API_THROTTLE_ANON", "60/minute"),
        "user": os.environ.get("API_THROTTLE_USER", "6000/minute"),
    },
    # DRF's, with the JSON parser's nesting bounded (a body too deep to parse was a 500).
    "DEFAULT_PARSER_CLASSES": [
        "management_api.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    # Errors of list items keyed by index (DRF 3.20's only form; the list form is deprecated).
    "LIST_SERIALIZER_ERRORS_AS_DICT": True,
    # A throttled client is REMOTE_ADDR, which the ASGI server sets from X-Forwarded-For only when
    # the trusted balancer sent it; DRF's default would count the raw header, which any client
    # writes (issue 24 item 11).
    "NUM_PROXIES": 0,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "mcpsite management API",
    "DESCRIPTION": "Tools, resources, resource templates and prompts of the MCP registry; live MCP "
    "sessions; import and export of the whole registry. Writes reach every connected MCP client.",
    "VERSION": "1",
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAdminUser"],
    "SWAGGER_UI_DIST": "SIDECAR",  # local assets: a deployment may have no internet
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "mcpsite.logformat.JSONFormatter"},
    },
    # stderr only: stdout belongs to the stdio transport.
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stderr",
            # MCP_LOG_FORMAT=json: one JSON object per line (mcpsite/logformat.py).
            "formatter": "json" if os.environ.get("MCP_LOG_FORMAT", "plain") == "json" else "plain",
        }
    },
    "root": {"handlers": ["stderr"], "level": os.environ.get("MCP_LOG_LEVEL", "INFO")},
}
if os.environ.get("MCP_LOG_FORMAT") == "json":
    # uvicorn's loggers have handlers of their own (set before Django starts), and Django's own
    # "django" logger prints plain lines in DEBUG: route them through ours, so that every line of
    # a worker's stderr is JSON, not only the project's.
    # uvicorn.access only when uvicorn gave it a handler: --no-access-log must stay off (and not
    # "uvicorn" itself: configuring a parent resets its children, access log included).
    _access = ("uvicorn.access",) if logging.getLogger("uvicorn.access").handlers else ()
    LOGGING["loggers"] = {
        name: {"handlers": ["stderr"], "propagate": False}
        for name in ("uvicorn.error", *_access, "django")
    }
