"""Who may call the management API, and how often.

- Authentication: Django's session (the browsable API and the docs page after an admin login;
  DRF enforces CSRF on it) or ``Authorization: Bearer mcpm_…``, a management API token
  (``management_api.tokens``: stored as its SHA-256 digest, acting as its user).
- Permissions: staff users only (the people who may open the admin), then Django's model
  permissions — reading needs ``view_<model>`` too, so a staff user who may only view tools reads
  them and gets 403 on every write.
- Throttles: DRF's, counted in Django's cache (Redis when ``REDIS_URL`` is set, so every worker
  shares the counts); rates from ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]``, read per request so
  ``override_settings`` and the environment both apply. With the cache unreachable (Redis down)
  a request is answered 503 with ``Retry-After`` and a JSON ``detail``, as ``/mcp`` answers for its
  store, before the view runs (``mcp_django.cache_outage``, issue 38 item 5): never a 500.
"""

from __future__ import annotations

from typing import Any

from rest_framework import authentication, exceptions, permissions, throttling
from rest_framework.request import Request
from rest_framework.settings import api_settings

from mcp_django.cache_outage import CACHE_DOWN, MESSAGE, RETRY_AFTER_SECONDS, warn

from .tokens import PREFIX, ManagementToken


class ManagementTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Any, ManagementToken] | None:
        parts = authentication.get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword.lower().encode():
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Authorization: Bearer takes exactly one token.")
        try:
            token = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Invalid token.") from None
        if not token.startswith(PREFIX):
            return None  # someone else's bearer scheme (a later /mcp API key, OAuth): not ours
        row = ManagementToken.authenticate(token)
        if row is None:
            raise exceptions.AuthenticationFailed("Invalid, expired or revoked token.")
        return row.user, row

    def authenticate_header(self, request: Request) -> str:
        # Makes DRF answer 401 (with WWW-Authenticate) rather than 403 to anonymous callers.
        return f'{self.keyword} realm="api"'


class ModelPermissions(permissions.DjangoModelPermissions):
    """``DjangoModelPermissions`` with reading guarded by ``view_<model>``."""

    perms_map = {
        **permissions.DjangoModelPermissions.perms_map,
        "GET": ["%(app_label)s.view_%(model_name)s"],
        "HEAD": ["%(app_label)s.view_%(model_name)s"],
        "OPTIONS": ["%(app_label)s.view_%(model_name)s"],
    }


DEFINITION_PERMISSIONS = [permissions.IsAdminUser, ModelPermissions]


class CacheUnavailable(exceptions.APIException):
    """The throttle's counts are out of reach: DRF's handler answers 503 with ``detail`` and, from
    ``wait``, ``Retry-After``."""

    status_code = 503
    default_detail = MESSAGE
    default_code = "service_unavailable"
    wait = RETRY_AFTER_SECONDS


class _SettingsRate:
    """Read the rate at request time (DRF binds ``THROTTLE_RATES`` at import); a cache outage is
    ``CacheUnavailable``, not the connection error DRF would turn into a 500."""

    scope: str

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def allow_request(self, request: Request, view: Any) -> bool:
        try:
            return bool(super().allow_request(request, view))  # type: ignore[misc]
        except CACHE_DOWN as exc:
            warn(exc)
            raise CacheUnavailable() from exc


class UserRateThrottle(_SettingsRate, throttling.UserRateThrottle):
    pass


class AnonRateThrottle(_SettingsRate, throttling.AnonRateThrottle):
    pass
