"""Rate limits on the endpoints anyone can call (token, revocation, registration): a fixed window
per client address and endpoint in Django's cache (Redis with REDIS_URL, so every worker counts
together; the process's memory otherwise). Over the limit: 429 with ``Retry-After`` and an OAuth
error body (RFC 6749 §5.2 shape; ``temporarily_unavailable`` is the closest registered code)."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, JsonResponse

from .conf import server_settings


def _limit(name: str) -> tuple[int, float] | None:
    spec = server_settings().get(name)
    if not spec:
        return None
    count, _, seconds = str(spec).partition("/")
    return int(count), float(seconds or 1)


def rate_limited(name: str) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            limit = _limit(name)
            if limit is not None:
                count, seconds = limit
                window = int(time.time() // seconds)
                key = f"mcp-oauth-rate:{name}:{request.META.get('REMOTE_ADDR', '')}:{window}"
                cache.add(key, 0, timeout=int(seconds) + 1)
                try:
                    used = cache.incr(key)
                except ValueError:  # evicted between add and incr
                    used = 1
                if used > count:
                    retry = max(1, int((window + 1) * seconds - time.time()))
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
