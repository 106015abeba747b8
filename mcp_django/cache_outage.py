"""Django's cache unreachable (Redis, with ``REDIS_URL``): which errors mean it, and the answer the
surfaces outside ``/mcp`` that count in it give (the token endpoint's rate limits, the API's
throttles, the sign-in throttle): what ``/mcp`` answers for its store (``StoreUnavailable``), a
503 the client can read, here with ``Retry-After`` (RFC 9110 §15.6.4, §10.2.3) so it comes back by
itself. The request is refused before it does anything, so nothing it would have changed (a code,
a refresh token, a row) is lost or spent: the same request succeeds once Redis is back (issue 38
item 5).

Not here: the Redis of ``/mcp`` (``mcp_protocol.stores``), which has its own errors and answer.
"""

from __future__ import annotations

import logging
import time

import redis
from django.http import JsonResponse
from django_redis.exceptions import ConnectionInterrupted

logger = logging.getLogger("mcp_django.cache")

# django-redis wraps the client's connection and timeout errors in ConnectionInterrupted; a cache
# backend of Django's own (django.core.cache.backends.redis) lets redis-py's through.
CACHE_DOWN: tuple[type[BaseException], ...] = (
    ConnectionInterrupted,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
)
RETRY_AFTER_SECONDS = 5
MESSAGE = "Service unavailable: the rate-limit store is unreachable; retry later"

_warned_at = -1e18


def warn(exc: BaseException) -> None:
    """Log the outage at most once every ten seconds per process, not once per request."""
    global _warned_at
    if time.monotonic() - _warned_at > 10:
        _warned_at = time.monotonic()
        logger.error("Django's cache (Redis) unreachable: %s", exc)


def oauth_unavailable(exc: BaseException) -> JsonResponse:
    """The OAuth endpoints' answer: RFC 6749 §5.2's error shape; ``temporarily_unavailable`` is
    the registered code that says "come back later" (RFC 6749 §4.1.2.1)."""
    warn(exc)
    response = JsonResponse(
        {"error": "temporarily_unavailable", "error_description": MESSAGE}, status=503
    )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response
