"""Django's own authentication on ``/mcp``: a logged-in session cookie or a management API token.

For in-house tools that act as the Django user. Turned on by a setting (or per route)::

    MCP = {"PRINCIPAL_RESOLVER": "mcp_protocol.transports.django_auth.django_user"}
    # or: mcp_path("mcp", resolve_principal=django_user)

``django_user`` accepts the site's session cookie (``SESSION_COOKIE_NAME``; the session is
verified like ``django.contrib.auth.get_user`` does, so a password change logs it out) or
``Authorization: Bearer mcpm_…``, a management API token (the ``management_api`` app's, when
installed; looked up by name in Django's app registry, so nothing here imports that app, which
sits above this one). The principal is ``django-user:<pk>``: the same user by cookie or token owns
the same sessions. Anything else is 401 with ``WWW-Authenticate: Bearer``. A cookie-authenticated
request from another site is refused before this runs by the Origin allow-list (``security.py``:
403).

Looking the user up reads the database, so a verified credential is remembered for
``CACHE_SECONDS`` (keyed by its SHA-256, never the credential itself): the hot path stays off the
database, and a logout or a deleted token takes effect within that time. Tools get the user with
``await user_of(ctx.principal)``.
"""

from __future__ import annotations

import hashlib
import time
from importlib import import_module
from types import SimpleNamespace
from typing import Any

from asgiref.sync import sync_to_async
from django.apps import apps
from django.conf import settings
from django.contrib.auth import aget_user, get_user_model
from django.http.cookie import parse_cookie

from .responses import HTTPError, Scope

PREFIX = "django-user:"
CACHE_SECONDS = 10.0
CACHE_LIMIT = 10_000
_verified: dict[bytes, tuple[float, str]] = {}
CHALLENGE = [(b"www-authenticate", b'Bearer realm="mcp"')]


def _header(scope: Scope, name: bytes) -> str:
    # Several Cookie headers (HTTP/2 splits them) join with "; " (RFC 9113 §8.2.3).
    return "; ".join(v.decode("latin-1") for k, v in scope["headers"] if k.lower() == name)


def _credential(scope: Scope) -> tuple[str, str] | None:
    authorization = _header(scope, b"authorization")
    if authorization:
        scheme, _, key = authorization.partition(" ")
        if scheme.lower() == "bearer" and key.strip():
            return "token", key.strip()
        return None  # another scheme is not ours to accept
    cookie = _header(scope, b"cookie")
    if cookie:
        key = parse_cookie(cookie).get(settings.SESSION_COOKIE_NAME)
        if key:
            return "session", key
    return None


async def _session_user(key: str) -> Any:
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key=key)
    return await aget_user(SimpleNamespace(session=store))


async def _token_user(key: str) -> Any:
    if not apps.is_installed("management_api"):
        return None
    tokens = apps.get_model("management_api", "ManagementToken")
    row = await sync_to_async(tokens.authenticate)(key)
    return None if row is None else row.user


async def django_user(scope: Scope) -> str:
    """The ``PrincipalResolver`` of a logged-in Django user; 401 without one."""
    found = _credential(scope)
    if found is None:
        raise HTTPError(
            401, "Unauthorized: log in to the site or send 'Authorization: Bearer <management API token>'",
            headers=CHALLENGE,
        )
    kind, key = found
    digest = hashlib.sha256(f"{kind}:{key}".encode()).digest()
    now = time.monotonic()
    cached = _verified.get(digest)
    if cached is not None and cached[0] > now:
        return cached[1]
    user = await (_session_user(key) if kind == "session" else _token_user(key))
    if user is None or not user.is_authenticated or not user.is_active:
        _verified.pop(digest, None)
        raise HTTPError(401, "Unauthorized: the session or token is not valid", headers=CHALLENGE)
    principal = f"{PREFIX}{user.pk}"
    if len(_verified) >= CACHE_LIMIT:
        _verified.clear()  # rare, and only costs lookups: simpler than an LRU
    _verified[digest] = (now + CACHE_SECONDS, principal)
    return principal


def forget_credentials() -> None:
    """Drop every remembered credential (tests; after revoking tokens in bulk)."""
    _verified.clear()


async def user_of(principal: str | None) -> Any:
    """The Django user a ``django-user:<pk>`` principal names (``ctx.principal`` in a tool), or
    None for any other principal."""
    if not principal or not principal.startswith(PREFIX):
        return None
    model = get_user_model()
    try:
        return await model._default_manager.aget(pk=principal.removeprefix(PREFIX))
    except (model.DoesNotExist, ValueError):
        return None
