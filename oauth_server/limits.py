"""Rate limits on the endpoints anyone can call (token, revocation, registration): a fixed window
per client address and endpoint in Django's cache (Redis with REDIS_URL, so every worker counts
together; the process's memory otherwise). Over the limit: 429 with ``Retry-After`` and an OAuth
error body (RFC 6749 §5.2 shape; ``temporarily_unavailable`` is the closest registered code).

With the cache unreachable (Redis down) the endpoint answers 503 with ``Retry-After`` and the same
error shape (``mcp_django.cache_outage``), before the view runs: the code or refresh token in the
request is not spent and works once Redis is back (issue 38 item 5).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, JsonResponse

from mcp_django.cache_outage import CACHE_DOWN, oauth_unavailable

from .conf import server_settings


def parse(spec: object) -> tuple[int, float] | None:
    """``"N/S"``: N per S seconds; empty: no limit."""
    if not spec:
        return None
    count, _, seconds = str(spec).partition("/")
    return int(count), float(seconds or 1)


def _limit(name: str) -> tuple[int, float] | None:
    return parse(server_settings().get(name))


def hit(key: str, seconds: float) -> tuple[int, int]:
    """Count one use of ``key`` in the current window of ``seconds``: (uses so far in it, seconds
    until it ends). Raises one of ``CACHE_DOWN`` when the cache is unreachable."""
    window = int(time.time() // seconds)
    full = f"{key}:{window}"
    cache.add(full, 0, timeout=int(seconds) + 1)
    try:
        used = int(cache.incr(full))
    except ValueError:  # evicted between add and incr
        used = 1
    return used, max(1, int((window + 1) * seconds - time.time()))


def rate_limited(name: str) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            limit = _limit(name)
            if limit is not None:
                count, seconds = limit
                try:
                    used, retry = hit(f"mcp-oauth-rate:{name}:{request.META.get('REMOTE_ADDR', '')}", seconds)
                except CACHE_DOWN as exc:
                    return oauth_unavailable(exc)
                if used > count:
                    response = JsonResponse(
                        {
                            "error": "temporarily_unavailable",
                            "error_description": f"rate limit: retry in {retry} s",
                        },
                        status=429,
                    )
                    response["Retry-After"] = str(retry)
                    return response
            return view(request, *args, **kwargs)

        return wrapped

    return decorate
