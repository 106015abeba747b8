"""A bound on password guesses at the sign-in pages: ``/oauth/login/`` (anyone may reach it) and
the admin's ``/admin/login/`` (issue 37 item 7; OWASP ASVS 2.2.1, NIST SP 800-63B §5.2.2).

Failed sign-ins are counted (Django's ``user_login_failed``) in fixed windows of Django's cache,
which is Redis with ``REDIS_URL`` so every worker counts together: per account (the username as
typed, case folded: a distributed guesser of one password is bounded too) and per client address
(one guesser of many accounts). Over either limit, a sign-in POST is answered 429 with
``Retry-After`` and a page that says when to come back, before any password is checked: a right
password does not get through a window that is spent. A successful sign-in clears its account's
count. Limits: ``MCP_OAUTH_SERVER["SIGN_IN_RATE"]`` (per account) and ``["SIGN_IN_ADDRESS_RATE"]``.

Counts, not locks: an attacker who spends an account's window delays its owner until the window
ends (at most ``S`` seconds), and never longer. With the cache unreachable the page answers 503
with ``Retry-After`` (``mcp_django.cache_outage``): no sign-in, since none can be counted.

Why not django-axes: it counts in the database by default and locks until an admin resets; this
is a small module on the cache the token endpoint already counts in (``limits``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import admin
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from mcp_django.cache_outage import CACHE_DOWN, RETRY_AFTER_SECONDS, warn

from .conf import server_settings
from .limits import hit, parse


def _keys(username: str, address: str) -> list[tuple[str, str]]:
    """(setting, cache key) of each count a sign-in as ``username`` from ``address`` spends."""
    return [
        ("SIGN_IN_RATE", f"mcp-sign-in:account:{username.strip().casefold()[:150]}"),
        ("SIGN_IN_ADDRESS_RATE", f"mcp-sign-in:address:{address}"),
    ]


def _retry_after(username: str, address: str) -> int | None:
    """Seconds until a sign-in may be tried again, or None if it may be now."""
    waits = []
    for setting, key in _keys(username, address):
        limit = parse(server_settings().get(setting))
        if limit is None:
            continue
        count, seconds = limit
        window = int(time.time() // seconds)
        if int(cache.get(f"{key}:{window}") or 0) >= count:
            waits.append(max(1, int((window + 1) * seconds - time.time())))
    return max(waits) if waits else None


def _page(request: HttpRequest, status: int, retry: int, message: str) -> HttpResponse:
    context = {**admin.site.each_context(request), "title": "Sign-in paused", "message": message}
    response = TemplateResponse(request, "oauth_server/sign_in_limited.html", context, status=status)
    response["Retry-After"] = str(retry)
    return response


def sign_in_limited(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """``view`` (a sign-in form) refuses its POSTs while the account or the address is over."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method == "POST":
            username = str(request.POST.get("username", ""))
            try:
                retry = _retry_after(username, str(request.META.get("REMOTE_ADDR", "")))
            except CACHE_DOWN as exc:
                warn(exc)
                message = "Signing in is unavailable for a moment. Please try again shortly."
                return _page(request, 503, RETRY_AFTER_SECONDS, message)
            if retry is not None:
                minutes = (retry + 59) // 60
                message = (
                    "Too many failed sign-ins for this account or from this address. "
                    f"Please try again in {minutes} minute{'s' if minutes != 1 else ''}."
                )
                return _page(request, 429, retry, message)
        return view(request, *args, **kwargs)

    return wrapped


def _count_failure(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **kw: Any
) -> None:
    address = str(request.META.get("REMOTE_ADDR", "")) if request is not None else ""
    try:
        for setting, key in _keys(str(credentials.get("username", "")), address):
            limit = parse(server_settings().get(setting))
            if limit is not None:
                hit(key, limit[1])
    except CACHE_DOWN as exc:
        warn(exc)  # the form's check before it refuses the next try


def _clear_account(sender: Any, request: HttpRequest | None = None, user: Any = None, **kw: Any) -> None:
    limit = parse(server_settings().get("SIGN_IN_RATE"))
    if limit is None or user is None:
        return
    setting_key = _keys(user.get_username(), "")[0][1]
    try:
        cache.delete(f"{setting_key}:{int(time.time() // limit[1])}")
    except CACHE_DOWN as exc:
        warn(exc)


def connect() -> None:
    user_login_failed.connect(_count_failure, dispatch_uid="oauth_server.sign_in_limits.failed")
    user_logged_in.connect(_clear_account, dispatch_uid="oauth_server.sign_in_limits.succeeded")
