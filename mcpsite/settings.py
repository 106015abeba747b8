"""Settings, read from the environment. Every variable is documented in README.md.

The defaults are for development only: a fixed dev SECRET_KEY, SQLite, in-process stores, open
mode on 127.0.0.1. Set ``DJANGO_DEBUG=0`` and a real ``SECRET_KEY`` in production.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


DEBUG = env_bool("DJANGO_DEBUG", True)
# Development-only default; production sets SECRET_KEY in the environment.
SECRET_KEY = os.environ.get("SECRET_KEY", "dev-insecure-mcpsite-secret-key-change-me")
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "mcp_protocol",
    "registry",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
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
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"

# Hosts the registry's "http" tool kind may POST to (exact names or "*.example.com").
REGISTRY_HTTP_ALLOWED_HOSTS = env_list("REGISTRY_HTTP_ALLOWED_HOSTS", [])

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

MCP = {
    "PROVIDER": {
        "BACKEND": os.environ.get("MCP_PROVIDER", "registry.provider.RegistryProvider"),
        "OPTIONS": {},
    },
    "SERVER_NAME": os.environ.get("MCP_SERVER_NAME", "mcpsite"),
    "SESSION_TTL": float(os.environ.get("MCP_SESSION_TTL", "1800")),
    "MAX_SESSIONS": int(os.environ.get("MCP_MAX_SESSIONS", "10000")),
    "MAX_SESSIONS_PER_PRINCIPAL": int(os.environ.get("MCP_MAX_SESSIONS_PER_PRINCIPAL", "1000")),
    "ALLOWED_ORIGINS": env_list("MCP_ALLOWED_ORIGINS", []),
    "ALLOWED_HOSTS": env_list("MCP_ALLOWED_HOSTS", []),
    "MAX_BODY_BYTES": int(os.environ.get("MCP_MAX_BODY_BYTES", str(4 * 1024 * 1024))),
    "KEEPALIVE_SECONDS": float(os.environ.get("MCP_KEEPALIVE_SECONDS", "15")),
    "ALWAYS_STREAM": env_bool("MCP_ALWAYS_STREAM", False),
    "CLIENT_REQUEST_TIMEOUT": float(os.environ.get("MCP_CLIENT_REQUEST_TIMEOUT", "60")),
    # MRTR requestState key ring (issue 13): comma-separated, first signs, all open.
    "REQUEST_STATE_KEYS": env_list("MCP_REQUEST_STATE_KEYS", []),
    "REQUEST_STATE_TTL": float(os.environ.get("MCP_REQUEST_STATE_TTL", "900")),
    "CLOSE_STREAM_AFTER_SECONDS": (
        float(os.environ["MCP_CLOSE_STREAM_AFTER_SECONDS"])
        if os.environ.get("MCP_CLOSE_STREAM_AFTER_SECONDS")
        else None
    ),
}
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
        }
    )

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.BasicAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAdminUser"],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    # stderr only: stdout belongs to the stdio transport.
    "handlers": {
        "stderr": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr", "formatter": "plain"}
    },
    "root": {"handlers": ["stderr"], "level": os.environ.get("MCP_LOG_LEVEL", "INFO")},
}
