"""The ``REGISTRY_HTTP_*`` settings of the ``http`` tool kind, and their only defaults.

Read when asked (``override_settings`` in tests, no reload signal needed), like
``REGISTRY_HTTP_ALLOWED_HOSTS``; ``mcpsite/settings.py`` sets a key only when its environment
variable is present.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

DEFAULTS: dict[str, Any] = {
    # Hosts an http tool may call: exact names, "*.example.com" for subdomains, "*" for any.
    "REGISTRY_HTTP_ALLOWED_HOSTS": [],
    # The pooled client of each worker: connections in all, kept alive, and how long an idle one
    # stays open. Per host: at most this many requests (so connections) at once to one origin.
    "REGISTRY_HTTP_MAX_CONNECTIONS": 100,
    "REGISTRY_HTTP_MAX_CONNECTIONS_PER_HOST": 32,
    "REGISTRY_HTTP_KEEPALIVE_SECONDS": 30.0,
    # Refuse addresses that are not public (loopback, RFC 1918, link-local, ULA...), checked on
    # the resolved address (guard.py). Off by default: the allow-list already names every host.
    "REGISTRY_HTTP_FORBID_PRIVATE": False,
    # Idempotent tools (idempotentHint, or GET) retry connection errors and 502/503/504 this many
    # times, waiting a jittered backoff from BACKOFF seconds, doubling, within their timeout.
    "REGISTRY_HTTP_RETRIES": 2,
    "REGISTRY_HTTP_RETRY_BACKOFF": 0.1,
}


# name -> (type, least value, greatest value): what ``problems`` checks (registry.E003).
BOUNDS: dict[str, tuple[type, float, float]] = {
    "REGISTRY_HTTP_MAX_CONNECTIONS": (int, 1, 100_000),
    "REGISTRY_HTTP_MAX_CONNECTIONS_PER_HOST": (int, 1, 100_000),
    "REGISTRY_HTTP_KEEPALIVE_SECONDS": (float, 0.1, 3600),
    "REGISTRY_HTTP_RETRIES": (int, 0, 10),
    "REGISTRY_HTTP_RETRY_BACKOFF": (float, 0, 60),
}


def problems() -> list[str]:
    """What is wrong with the numeric settings, one sentence each (the system check says them)."""
    found = []
    for name, (kind, least, greatest) in BOUNDS.items():
        value = get(name)
        wanted = int if kind is int else int | float
        if isinstance(value, bool) or not isinstance(value, wanted):
            found.append(f"{name} must be {'an integer' if kind is int else 'a number'}, not {value!r}")
        elif not least <= value <= greatest:
            found.append(f"{name} must be between {least:g} and {greatest:g}, not {value!r}")
    return found


def get(name: str) -> Any:
    return getattr(settings, name, DEFAULTS[name])


def allowed_hosts() -> list[str]:
    return [h.lower() for h in get("REGISTRY_HTTP_ALLOWED_HOSTS")]
